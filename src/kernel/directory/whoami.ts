import type { Caller } from '../access/caller.ts';
import type { Queryable } from '../../store/db.ts';

type Role = 'viewer' | 'editor' | 'admin';

/** Who the caller is, in its organisation, with its team roles, groups and scopes. */
export interface CallerProfile {
  tenant: { slug: string; name: string; language: string };
  principal: { id: string; kind: 'person' | 'agent'; name: string; email: string | null };
  teams: { team_id: string; slug: string; name: string; role: Role }[];
  groups: { group_id: string; name: string }[];
  scopes: string[];
}

/** The profile, and the cap an agent's policy puts on every team role (null: none; people have none). */
export interface CallerStanding {
  readonly profile: CallerProfile;
  readonly teamRoleCap: Role | null;
}

interface StandingRow {
  cap: Role | null;
  teams: CallerProfile['teams'];
  groups: CallerProfile['groups'];
}

/**
 * The caller's memberships in one statement, one round trip (a `whoami` is the cheapest tool
 * call there is, and each round trip to the store cost more than the rest of it): teams by slug
 * in byte order, the same on every store, and groups by name.
 */
const STANDING_SQL = `SELECT p.policy_max_team_role AS cap,
       coalesce((SELECT json_agg(json_build_object('team_id', t.id, 'slug', t.slug, 'name', t.name, 'role', m.role) ORDER BY t.slug COLLATE "C")
                   FROM team_members m JOIN teams t ON t.tenant_id = m.tenant_id AND t.id = m.team_id
                  WHERE m.tenant_id = p.tenant_id AND m.principal_id = p.id), '[]'::json) AS teams,
       coalesce((SELECT json_agg(json_build_object('group_id', g.id, 'name', g.name) ORDER BY g.name)
                   FROM group_members m JOIN groups g ON g.tenant_id = m.tenant_id AND g.id = m.group_id
                  WHERE m.tenant_id = p.tenant_id AND m.principal_id = p.id), '[]'::json) AS groups
  FROM principals p
 WHERE p.tenant_id = $1 AND p.id = $2`;

export async function readStanding(db: Queryable, caller: Caller): Promise<CallerStanding> {
  const [row] = await db.query<StandingRow>(STANDING_SQL, [caller.tenant.id, caller.principal.id], { prepare: 'kgw_caller_memberships' });
  const { principal, tenant } = caller;
  return {
    profile: {
      tenant: { slug: tenant.slug, name: tenant.name, language: tenant.language },
      principal: { id: principal.id, kind: principal.kind, name: principal.name, email: principal.email ?? null },
      teams: row?.teams ?? [],
      groups: row?.groups ?? [],
      scopes: [...caller.scopes],
    },
    teamRoleCap: row?.cap ?? null,
  };
}

export async function describeCaller(db: Queryable, caller: Caller): Promise<CallerProfile> {
  return (await readStanding(db, caller)).profile;
}
