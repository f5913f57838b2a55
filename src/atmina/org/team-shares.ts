import type { ShareGrantee } from '../access/team-shares.ts';
import { revokeTeamShare, shareTeamKbs } from '../access/team-shares.ts';
import type { TeamRole } from '../access/team-roles.ts';
import type { Queryable, Transaction } from '../../store/db.ts';
import { quote } from '../../kernel/org/problems.ts';
import type { ValueRule } from '../../kernel/org/rules.ts';
import { principalReferenceRule, slugRule, teamRoleRule } from '../../kernel/org/rules.ts';
import type { OrgChange, PlanContext, PlannedStep } from '../../kernel/org/section.ts';
import { DuplicateCheck } from '../../kernel/org/section.ts';
import type { Located, Slot, YamlReader } from '../../kernel/org/yaml-reader.ts';

/**
 * `shares:` of a team — the team's KBs, present and future, shared with another team
 * (`team:SLUG`), a person (email) or an agent (name) at a team role. When a team lists
 * `shares`, its shares become exactly that list; a team without the key keeps its shares.
 */

const TEAM_PREFIX = 'team:';

/** Whom a share is for, as the file names it; `label` is how changes name it. */
export type ShareGranteeRef = { readonly team: string; readonly label: string } | { readonly principal: string; readonly label: string };

export interface ShareSpec {
  readonly with: Located<ShareGranteeRef>;
  readonly role: TeamRole;
}

const shareGranteeRule: ValueRule = {
  expected: "a team (team:SLUG), a person's email or an agent's name",
  valid: (value) => (value.startsWith(TEAM_PREFIX) ? slugRule.valid(value.slice(TEAM_PREFIX.length)) : principalReferenceRule.valid(value)),
  normalize: (value) => (value.startsWith(TEAM_PREFIX) ? value : (principalReferenceRule.normalize?.(value) ?? value)),
};

/**
 * Reads a team's `shares` list; `shares:` with nothing under it is the empty list. `ownSlug`
 * is the team's own slug (undefined when it has a problem of its own), which it cannot share
 * with. Returns undefined when the value is not a list (the problem is reported).
 */
export function readShares(slot: Slot, reader: YamlReader, ownSlug: string | undefined): ShareSpec[] | undefined {
  if (reader.isEmpty(slot)) return [];
  const items = reader.list(slot);
  if (!items) return undefined;
  const duplicates = new DuplicateCheck('share');
  const shares: ShareSpec[] = [];
  for (const item of items) {
    const fields = reader.fields(item, ['with', 'role'], ['with', 'role']);
    if (!fields) continue;
    const withSlot = fields.get('with');
    const roleSlot = fields.get('role');
    const grantee = withSlot && readGrantee(withSlot, reader, ownSlug);
    const role = roleSlot && reader.string(roleSlot, teamRoleRule);
    if (!grantee || !role) continue;
    if (!duplicates.first({ value: grantee.value.label, line: fields.line, path: item.path }, reader)) continue;
    shares.push({ with: grantee, role: role.value as TeamRole });
  }
  return shares;
}

function readGrantee(slot: Slot, reader: YamlReader, ownSlug: string | undefined): Located<ShareGranteeRef> | undefined {
  const value = reader.string(slot, shareGranteeRule);
  if (!value) return undefined;
  const text = value.value;
  if (!text.startsWith(TEAM_PREFIX)) return { ...value, value: { principal: text, label: text } };
  const team = text.slice(TEAM_PREFIX.length);
  if (team === ownSlug) {
    reader.fail(slot, `${slot.path}: team ${quote(team)} cannot share with itself`);
    return undefined;
  }
  return { ...value, value: { team, label: text } };
}

/** One share by ids, as stored or as the file wants it. */
interface ShareRow {
  readonly grantee: ShareGrantee;
  readonly role: TeamRole;
}

/** The stored shares of one tenant: team id → grantee key → share. */
export type StoredShares = ReadonlyMap<string, ReadonlyMap<string, ShareRow>>;

const keyOf = (grantee: ShareGrantee): string => ('teamId' in grantee ? `team:${grantee.teamId}` : `principal:${grantee.principalId}`);

export async function loadTeamShares(q: Queryable, tenantId: string): Promise<StoredShares> {
  const rows = await q.query<{ team_id: string; grantee_team_id: string | null; principal_id: string | null; role: TeamRole }>(
    'SELECT team_id, grantee_team_id, principal_id, role FROM team_shares WHERE tenant_id = $1',
    [tenantId],
  );
  const shares = new Map<string, Map<string, ShareRow>>();
  for (const row of rows) {
    const grantee: ShareGrantee = row.grantee_team_id !== null ? { teamId: row.grantee_team_id } : { principalId: row.principal_id ?? '' };
    const ofTeam = shares.get(row.team_id) ?? new Map<string, ShareRow>();
    shares.set(row.team_id, ofTeam);
    ofTeam.set(keyOf(grantee), { grantee, role: row.role });
  }
  return shares;
}

/**
 * The steps that make one team's shares exactly `specs`: adds and role changes in the file's
 * order, then removals of the shares the file no longer lists. Run after every team of the
 * file is planned, so that a share may name a team declared later in the file.
 */
export function planShares(options: { slug: string; teamId: string; specs: readonly ShareSpec[]; stored: StoredShares; context: PlanContext }): PlannedStep[] {
  const { slug, teamId, specs, context } = options;
  const tenantId = context.tenant.id;
  const current = options.stored.get(teamId) ?? new Map<string, ShareRow>();
  const desired = new Map<string, ShareRow>();
  for (const spec of specs) {
    const grantee = resolveGrantee(spec.with, context);
    if (grantee !== undefined) desired.set(keyOf(grantee), { grantee, role: spec.role });
  }
  const container = `team ${slug}`;
  const change = (action: OrgChange['action'], grantee: ShareGrantee, detail: string): OrgChange => ({
    action,
    kind: 'team share',
    name: granteeLabel(grantee, context),
    detail,
  });
  const steps: PlannedStep[] = [];
  for (const [key, { grantee, role }] of desired) {
    const was = current.get(key);
    if (was?.role === role) continue;
    const write = async (tx: Transaction): Promise<void> => {
      await shareTeamKbs(tx, { tenantId, teamId, grantee, role });
    };
    steps.push({ change: change(was ? 'update' : 'add', grantee, was ? `${container}: role ${was.role} → ${role}` : `${container} as ${role}`), write });
  }
  const leaving = [...current].filter(([key]) => !desired.has(key)).map(([, row]) => ({ grantee: row.grantee, label: granteeLabel(row.grantee, context) }));
  leaving.sort((a, b) => a.label.localeCompare(b.label));
  for (const { grantee } of leaving) {
    const write = async (tx: Transaction): Promise<void> => {
      await revokeTeamShare(tx, { tenantId, teamId, grantee });
    };
    steps.push({ change: change('remove', grantee, container), write });
  }
  return steps;
}

/** The ids a share names; undefined (reported) when it names nothing. */
function resolveGrantee(ref: Located<ShareGranteeRef>, context: PlanContext): ShareGrantee | undefined {
  const value = ref.value;
  if ('team' in value) {
    const teamId = context.teams.resolve(value.team, ref, `team ${quote(value.team)}`, context.problems);
    return teamId === undefined ? undefined : { teamId };
  }
  const principalId = context.principals.resolve({ ...ref, value: value.principal }, context.problems);
  return principalId === undefined ? undefined : { principalId };
}

/** How the file names a grantee: `team:SLUG`, an email or an agent's name. */
function granteeLabel(grantee: ShareGrantee, context: PlanContext): string {
  return 'teamId' in grantee ? `${TEAM_PREFIX}${context.teams.referenceOf(grantee.teamId)}` : context.principals.referenceOf(grantee.principalId);
}
