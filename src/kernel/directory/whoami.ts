import type { Caller } from '../access/caller.ts';
import type { Queryable } from '../../store/db.ts';
import { groupsOf, teamsOf } from './directory.ts';

/** Who the caller is, in its organisation, with its team roles, groups and scopes. */
export interface CallerProfile {
  tenant: { slug: string; name: string; language: string };
  principal: { id: string; kind: 'person' | 'agent'; name: string; email: string | null };
  teams: { team_id: string; slug: string; name: string; role: 'viewer' | 'editor' | 'admin' }[];
  groups: { group_id: string; name: string }[];
  scopes: string[];
}

export async function describeCaller(db: Queryable, caller: Caller): Promise<CallerProfile> {
  const [teams, groups] = await Promise.all([teamsOf(db, caller.tenant.id, caller.principal.id), groupsOf(db, caller.tenant.id, caller.principal.id)]);
  const { principal, tenant } = caller;
  return {
    tenant: { slug: tenant.slug, name: tenant.name, language: tenant.language },
    principal: { id: principal.id, kind: principal.kind, name: principal.name, email: principal.email ?? null },
    teams: teams.map((t) => ({ team_id: t.teamId, slug: t.slug, name: t.name, role: t.role })),
    groups: groups.map((g) => ({ group_id: g.groupId, name: g.name })),
    scopes: [...caller.scopes],
  };
}
