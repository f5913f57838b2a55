import { effectiveKbRole } from '../access/team-roles.ts';
import type { Queryable } from '../../store/db.ts';
import type { TenantRef } from '../../kernel/access/caller.ts';
import type { KbWithAccess } from './access.ts';
import { kbName, kbNameWhere } from './access.ts';
import type { KbRow } from './queries.ts';
import { KB_COLUMNS, KB_FROM, toKb } from './queries.ts';
import { refuseKb } from './refusals.ts';

/*
 * The KBs an anonymous connection may search: the tenant's live public ones, each with the
 * access `effectiveKbRole` gives a caller with no role, no share and no policy (`search`). A KB
 * named that is not public (a team or private one, an archived one, another tenant's, one that
 * does not exist) is the same `not_found` a signed-in caller gets for a KB out of its reach, so
 * an anonymous connection cannot tell a hidden KB from a missing one.
 */

const PUBLIC_KBS = `SELECT ${KB_COLUMNS} FROM ${KB_FROM} WHERE k.tenant_id = $1 AND k.visibility = 'public' AND k.archived_at IS NULL`;

function withSearch(row: KbRow): KbWithAccess | undefined {
  const kb = toKb(row);
  const access = effectiveKbRole({ teamRole: undefined, shareRoles: [], agentPolicyMax: undefined, isPublic: kb.visibility === 'public' });
  return access === 'none' ? undefined : { kb, access };
}

/** The tenant's public KBs (every one, by slug, or those named by id, slug or tenant-qualified slug), each with `search` access. */
export async function publicKbs(q: Queryable, tenant: TenantRef, named: readonly string[] = []): Promise<KbWithAccess[]> {
  if (named.length === 0) {
    const rows = await q.query<KbRow>(`${PUBLIC_KBS} ORDER BY k.slug`, [tenant.id]);
    return rows.flatMap((row) => withSearch(row) ?? []);
  }
  const found = new Map<string, KbWithAccess>();
  for (const given of named) {
    const name = kbName(tenant, given);
    if (name === undefined) throw refuseKb.kbNotFound(given);
    const { where, param } = kbNameWhere(name);
    const [row] = await q.query<KbRow>(`${PUBLIC_KBS} AND ${where}`, [tenant.id, param]);
    const kb = row === undefined ? undefined : withSearch(row);
    if (kb === undefined) throw refuseKb.kbNotFound(given);
    found.set(kb.kb.id, kb);
  }
  return [...found.values()];
}
