import { randomUUID } from 'node:crypto';
import type { Caller, PrincipalKind } from '../../kernel/access/caller.ts';
import type { TeamRole } from '../access/team-roles.ts';
import { TEAM_ROLES } from '../access/team-roles.ts';
import type { AuditTrail } from '../../kernel/audit/trail.ts';
import { unsafeName } from '../../kernel/text.ts';
import type { Db, Queryable, Transaction } from '../../store/db.ts';
import { kbFor } from './access.ts';
import type { Kb } from './queries.ts';
import { refuseKb } from './refusals.ts';

/**
 * Per-KB shares (`kb_shares`, migration 0014): an Admin of a KB gives one role on that KB to a
 * person or agent, to every member of a team, or by email to a person the tenant may not know
 * yet. Their roles join the team shares' in effectiveKbRole's `shareRoles` (access.ts),
 * so they add up with team roles, are capped by an agent's policy, and reach `private` KBs.
 *
 * - One share per KB and grantee: sharing again replaces the role. Every share write of a KB
 *   locks the KB row first, so concurrent shares of one target take turns: no duplicate, and
 *   the last one's role wins (each is answered and audited with the role it replaced).
 * - A target the tenant does not have (another tenant's id, a malformed one) is one `not_found`.
 * - An invitation to an unknown email is pending: it reaches nobody until a person with that
 *   email signs in (acceptKbInvitations, called where sessions start), when it becomes a share
 *   of that person with the same grant id.
 *
 * docs/atmina.md, "Sharing".
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TEAM_SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;
const EMAIL_MAX = 254;

/** Who a KB share is for. */
export type ShareTarget =
  | { readonly type: 'principal'; readonly id: string; readonly kind: PrincipalKind; readonly name: string }
  | { readonly type: 'team'; readonly id: string; readonly slug: string; readonly name: string }
  | { readonly type: 'invitation'; readonly email: string };

export interface KbShare {
  readonly grantId: string;
  readonly kb: Kb;
  readonly target: ShareTarget;
  readonly role: TeamRole;
  /** The role the target held by this share before; undefined for a new share. */
  readonly previousRole: TeamRole | undefined;
  /** Whether anything changed: false when the target already held this role. */
  readonly changed: boolean;
}

function checkRole(role: string): TeamRole {
  const found = TEAM_ROLES.find((known) => known === role);
  if (found === undefined) throw refuseKb.invalidField('role', `must be one of ${TEAM_ROLES.join(', ')}`);
  return found;
}

/** An email as people sign in with it: trimmed and lower case, one @ with something either side. */
function checkEmail(raw: string): string {
  const email = raw.trim().toLowerCase();
  if (email.length > EMAIL_MAX) throw refuseKb.invalidField('email', `must be at most ${EMAIL_MAX} characters`);
  if (unsafeName(email) !== undefined || !/^[^\s@]+@[^\s@]+$/u.test(email))
    throw refuseKb.invalidField('email', 'must be an email address such as person@example.com');
  return email;
}

async function principalTarget(q: Queryable, tenantId: string, given: string): Promise<ShareTarget> {
  if (!UUID.test(given)) throw refuseKb.shareTargetNotFound(given);
  const [row] = await q.query<{ id: string; kind: PrincipalKind; name: string }>(
    'SELECT id, kind, name FROM principals WHERE tenant_id = $1 AND id = $2::uuid',
    [tenantId, given.toLowerCase()],
  );
  if (row === undefined) throw refuseKb.shareTargetNotFound(given);
  return { type: 'principal', id: row.id, kind: row.kind, name: row.name };
}

async function teamTarget(q: Queryable, tenantId: string, given: string): Promise<ShareTarget> {
  const byId = UUID.test(given);
  if (!byId && !TEAM_SLUG.test(given)) throw refuseKb.shareTargetNotFound(given);
  const [row] = await q.query<{ id: string; slug: string; name: string }>(
    `SELECT id, slug, name FROM teams WHERE tenant_id = $1 AND ${byId ? 'id = $2::uuid' : 'slug = $2'}`,
    [tenantId, byId ? given.toLowerCase() : given],
  );
  if (row === undefined) throw refuseKb.shareTargetNotFound(given);
  return { type: 'team', id: row.id, slug: row.slug, name: row.name };
}

function granteeColumns(target: ShareTarget): [string | null, string | null, string | null] {
  if (target.type === 'team') return [target.id, null, null];
  if (target.type === 'principal') return [null, target.id, null];
  return [null, null, target.email];
}

/**
 * Gives the target `role` on the KB, or replaces the role its share had, under the KB's row
 * lock (taken by the caller's kbFor). Records `kb.share` (or `action`) when something changed.
 */
async function putShare(tx: Transaction, caller: Caller, kb: Kb, target: ShareTarget, role: TeamRole, audit: AuditTrail, action: string): Promise<KbShare> {
  const tenantId = caller.tenant.id;
  const [teamId, principalId, email] = granteeColumns(target);
  const [existing] = await tx.query<{ id: string; role: TeamRole }>(
    `SELECT id, role FROM kb_shares
      WHERE tenant_id = $1 AND kb_id = $2
        AND grantee_team_id IS NOT DISTINCT FROM $3 AND principal_id IS NOT DISTINCT FROM $4 AND invited_email IS NOT DISTINCT FROM $5`,
    [tenantId, kb.id, teamId, principalId, email],
  );
  if (existing?.role === role) return { grantId: existing.id, kb, target, role, previousRole: role, changed: false };
  const grantId = existing?.id ?? randomUUID();
  if (existing === undefined) {
    await tx.query(
      `INSERT INTO kb_shares (tenant_id, id, kb_id, grantee_team_id, principal_id, invited_email, role, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [tenantId, grantId, kb.id, teamId, principalId, email, role, caller.principal.id],
    );
  } else {
    await tx.query('UPDATE kb_shares SET role = $3, updated_at = clock_timestamp() WHERE tenant_id = $1 AND id = $2', [tenantId, grantId, role]);
  }
  // Identifiers and roles only: an invitation's email stays out of the audit log.
  await audit.recordIn(
    tx,
    action,
    [
      { type: 'kb', id: kb.id, changed: true },
      { type: 'kb_share', id: grantId, changed: true },
    ],
    {
      target_type: target.type,
      ...(target.type === 'invitation' ? {} : { target_id: target.id }),
      role,
      previous_role: existing?.role ?? null,
    },
  );
  return { grantId, kb, target, role, previousRole: existing?.role, changed: true };
}

export interface ShareKbInput {
  readonly kbId: string;
  readonly role: string;
  /** The person or agent, by principal id; or else `team`. */
  readonly principalId?: string | undefined;
  /** The team, by slug or team_id; or else `principalId`. */
  readonly team?: string | undefined;
}

/** share_kb (Admin of the KB): a role on the KB for a person, an agent or a team of the tenant. */
export async function shareKb(db: Db, caller: Caller, input: ShareKbInput, audit: AuditTrail): Promise<KbShare> {
  const role = checkRole(input.role);
  if ((input.principalId === undefined) === (input.team === undefined)) throw refuseKb.invalidField('share_kb', 'give exactly one of principal_id and team');
  return db.tx(async (tx) => {
    const { kb } = await kbFor(tx, caller, input.kbId, 'admin', 'sharing a Knowledge Base', { lock: 'update' });
    const target =
      input.principalId !== undefined
        ? await principalTarget(tx, caller.tenant.id, input.principalId)
        : await teamTarget(tx, caller.tenant.id, input.team ?? '');
    if (target.type === 'team' && target.id === kb.team.id)
      throw refuseKb.invalidField('team', 'is the team that owns this Knowledge Base; its members have their team roles already');
    return putShare(tx, caller, kb, target, role, audit, 'kb.share');
  });
}

export interface InviteToKbInput {
  readonly kbId: string;
  readonly email: string;
  readonly role: string;
}

/** What invite_to_kb did: shared with a person the tenant has, or left an invitation pending. */
export interface KbInvitation extends KbShare {
  readonly status: 'shared' | 'invited';
}

/**
 * invite_to_kb (Admin of the KB): a person of the tenant with that email gets the share at
 * once; an email the tenant does not know gets a pending invitation, which that person's first
 * sign-in accepts. Inviting again replaces the role, as sharing does.
 */
export async function inviteToKb(db: Db, caller: Caller, input: InviteToKbInput, audit: AuditTrail): Promise<KbInvitation> {
  const role = checkRole(input.role);
  const email = checkEmail(input.email);
  return db.tx(async (tx) => {
    const { kb } = await kbFor(tx, caller, input.kbId, 'admin', 'inviting to a Knowledge Base', { lock: 'update' });
    const [person] = await tx.query<{ id: string; name: string }>("SELECT id, name FROM principals WHERE tenant_id = $1 AND kind = 'person' AND email = $2", [
      caller.tenant.id,
      email,
    ]);
    const target: ShareTarget = person === undefined ? { type: 'invitation', email } : { type: 'principal', id: person.id, kind: 'person', name: person.name };
    const share = await putShare(tx, caller, kb, target, role, audit, 'kb.invite');
    return { ...share, status: person === undefined ? 'invited' : 'shared' };
  });
}

/** revoke_share (Admin of the KB): removes a share or a pending invitation by its grant id, at once. */
export async function revokeShare(
  db: Db,
  caller: Caller,
  input: { kbId: string; grantId: string },
  audit: AuditTrail,
): Promise<{ grantId: string; kb: Kb; role: TeamRole }> {
  return db.tx(async (tx) => {
    const { kb } = await kbFor(tx, caller, input.kbId, 'admin', 'revoking a share of a Knowledge Base', { lock: 'update' });
    if (!UUID.test(input.grantId)) throw refuseKb.shareNotFound(input.grantId);
    const [row] = await tx.query<{ id: string; role: TeamRole; grantee_team_id: string | null; principal_id: string | null }>(
      'DELETE FROM kb_shares WHERE tenant_id = $1 AND kb_id = $2 AND id = $3::uuid RETURNING id, role, grantee_team_id, principal_id',
      [caller.tenant.id, kb.id, input.grantId.toLowerCase()],
    );
    if (row === undefined) throw refuseKb.shareNotFound(input.grantId);
    const target =
      row.grantee_team_id !== null
        ? { target_type: 'team', target_id: row.grantee_team_id }
        : row.principal_id !== null
          ? { target_type: 'principal', target_id: row.principal_id }
          : { target_type: 'invitation' };
    await audit.recordIn(
      tx,
      'kb.share.revoke',
      [
        { type: 'kb', id: kb.id, changed: true },
        { type: 'kb_share', id: row.id, changed: true },
      ],
      { ...target, role: row.role },
    );
    return { grantId: row.id, kb, role: row.role };
  });
}

const rank = (role: TeamRole): number => TEAM_ROLES.indexOf(role);

/**
 * Accepts the pending invitations of a person's email, inside the transaction that signs the
 * person in: each becomes a share of the person with its grant id. Where the person already
 * holds a share of that KB (given meanwhile), the higher of the two roles stays on that share
 * and the invitation goes. Records `kb.invitation.accept` when there was any; returns how many.
 */
export async function acceptKbInvitations(tx: Transaction, tenantId: string, personId: string, audit: AuditTrail): Promise<number> {
  const [person] = await tx.query<{ email: string }>("SELECT email FROM principals WHERE tenant_id = $1 AND id = $2 AND kind = 'person'", [tenantId, personId]);
  if (person === undefined) return 0;
  const waiting = await tx.query<{ kb_id: string }>('SELECT DISTINCT kb_id FROM kb_shares WHERE tenant_id = $1 AND invited_email = $2', [
    tenantId,
    person.email,
  ]);
  if (waiting.length === 0) return 0;
  // The KB rows first, in one order, as every share write of a KB locks its row before its
  // shares: a share_kb of this person meanwhile waits, so the two never both add a share.
  await tx.query('SELECT 1 FROM kbs WHERE tenant_id = $1 AND id = ANY($2::uuid[]) ORDER BY id FOR UPDATE', [tenantId, waiting.map((row) => row.kb_id)]);
  const pending = await tx.query<{ id: string; kb_id: string; role: TeamRole }>(
    'SELECT id, kb_id, role FROM kb_shares WHERE tenant_id = $1 AND invited_email = $2 ORDER BY created_at, id FOR UPDATE',
    [tenantId, person.email],
  );
  if (pending.length === 0) return 0;
  const resources = [];
  for (const invitation of pending) {
    const [held] = await tx.query<{ id: string; role: TeamRole }>(
      'SELECT id, role FROM kb_shares WHERE tenant_id = $1 AND kb_id = $2 AND principal_id = $3 FOR UPDATE',
      [tenantId, invitation.kb_id, personId],
    );
    if (held === undefined) {
      await tx.query('UPDATE kb_shares SET principal_id = $3, invited_email = NULL, updated_at = clock_timestamp() WHERE tenant_id = $1 AND id = $2', [
        tenantId,
        invitation.id,
        personId,
      ]);
    } else {
      await tx.query('DELETE FROM kb_shares WHERE tenant_id = $1 AND id = $2', [tenantId, invitation.id]);
      if (rank(invitation.role) > rank(held.role))
        await tx.query('UPDATE kb_shares SET role = $3, updated_at = clock_timestamp() WHERE tenant_id = $1 AND id = $2', [tenantId, held.id, invitation.role]);
    }
    resources.push({ type: 'kb', id: invitation.kb_id, changed: true }, { type: 'kb_share', id: held?.id ?? invitation.id, changed: true });
  }
  await audit.about({ tenantId, principalId: personId }).recordIn(tx, 'kb.invitation.accept', resources, { invitations: pending.length });
  return pending.length;
}
