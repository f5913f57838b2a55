import { randomUUID } from 'node:crypto';
import type { Transaction } from '../../store/db.ts';
import { quote } from '../../kernel/org/problems.ts';
import type { TeamRole } from '../access/team-roles.ts';
import { displayNameRule, principalReferenceRule, slugRule, teamRoleRule } from '../../kernel/org/rules.ts';
import type { PlannedStep } from '../../kernel/org/section.ts';
import { defineSection, DuplicateCheck, readEntries } from '../../kernel/org/section.ts';
import type { Located } from '../../kernel/org/yaml-reader.ts';
import { planMembership, resolveMembers } from '../../kernel/org/sections/members.ts';
import type { ShareSpec } from './team-shares.ts';
import { loadTeamShares, planShares, readShares } from './team-shares.ts';

interface TeamSpec {
  readonly slug: Located;
  readonly name: string;
  readonly members: { reference: Located; role: TeamRole }[];
  /** The team's complete list of shares; undefined when the file leaves `shares` out (kept as stored). */
  readonly shares: ShareSpec[] | undefined;
}

interface StoredTeam {
  id: string;
  name: string;
  members: Map<string, TeamRole>;
}

/**
 * `teams:` — each team by slug (its identity) with a name, its complete member → role map
 * and, optionally, its complete list of shares (team-shares.ts).
 */
export const teamsSection = defineSection<TeamSpec[]>({
  key: 'teams',

  read(slot, context) {
    const { reader } = context;
    const duplicates = new DuplicateCheck('team');
    return readEntries(slot, context, (item) => {
      const fields = reader.fields(item, ['slug', 'name', 'members', 'shares'], ['slug', 'name', 'members']);
      if (!fields) return undefined;
      const slugSlot = fields.get('slug');
      const nameSlot = fields.get('name');
      const membersSlot = fields.get('members');
      const sharesSlot = fields.get('shares');
      const slug = slugSlot && reader.string(slugSlot, slugRule);
      if (slug) context.declaredTeams.add(slug.value);
      const name = nameSlot && reader.string(nameSlot, displayNameRule);
      const entries = membersSlot && reader.entries(membersSlot);
      // Keys differing only in an email's case name the same person, which YAML cannot see.
      const repeated = new DuplicateCheck('member');
      const members: TeamSpec['members'] = [];
      for (const entry of entries ?? []) {
        const key = reader.string(entry.key, principalReferenceRule);
        // Later messages about this member name the entry (`members["bob@x.test"]`), not "key".
        const reference = key && { ...key, path: entry.value.path };
        const role = reader.string(entry.value, teamRoleRule);
        if (reference && repeated.first(reference, reader) && role) members.push({ reference, role: role.value as TeamRole });
      }
      const shares = sharesSlot && readShares(sharesSlot, reader, slug?.value);
      if (!slug || !duplicates.first(slug, reader) || !name || !entries) return undefined;
      return { slug, name: name.value, members, shares };
    });
  },

  async plan(teams, context) {
    const { tx, tenant, principals, problems } = context;
    const stored = await loadTeams(tx, tenant.id);
    const storedShares = await loadTeamShares(tx, tenant.id);
    const steps: PlannedStep[] = [];
    // Shares are planned once every team of the file has an id, so that they may name teams
    // declared later in the file, and written after those teams are created.
    const shares: { slug: string; teamId: string; specs: ShareSpec[] }[] = [];
    for (const team of teams) {
      const slug = team.slug.value;
      const desired = resolveMembers(team.members, principals, problems);
      let existing = stored.get(slug);
      if (!existing) {
        existing = { id: randomUUID(), name: team.name, members: new Map() };
        const id = existing.id;
        context.teams.add(slug, id); // so that shares (and later sections) can name the new team
        const write = async (q: Transaction): Promise<void> => {
          await q.query('INSERT INTO teams (tenant_id, id, slug, name) VALUES ($1, $2, $3, $4)', [tenant.id, id, slug, team.name]);
        };
        steps.push({ change: { action: 'create', kind: 'team', name: slug }, write });
      } else if (existing.name !== team.name) {
        const id = existing.id;
        const write = async (q: Transaction): Promise<void> => {
          await q.query('UPDATE teams SET name = $3, updated_at = now() WHERE tenant_id = $1 AND id = $2', [tenant.id, id, team.name]);
        };
        steps.push({ change: { action: 'update', kind: 'team', name: slug, detail: `name ${quote(existing.name)} → ${quote(team.name)}` }, write });
      }
      const teamId = existing.id;
      steps.push(
        ...planMembership({
          kind: 'team member',
          container: `team ${slug}`,
          current: existing.members,
          desired,
          principals,
          writes: {
            add: async (q, principalId, role) => {
              await q.query('INSERT INTO team_members (tenant_id, team_id, principal_id, role) VALUES ($1, $2, $3, $4)', [
                tenant.id,
                teamId,
                principalId,
                role,
              ]);
            },
            changeRole: async (q, principalId, role) => {
              await q.query('UPDATE team_members SET role = $4 WHERE tenant_id = $1 AND team_id = $2 AND principal_id = $3', [
                tenant.id,
                teamId,
                principalId,
                role,
              ]);
            },
            remove: async (q, principalId) => {
              await q.query('DELETE FROM team_members WHERE tenant_id = $1 AND team_id = $2 AND principal_id = $3', [tenant.id, teamId, principalId]);
            },
          },
        }),
      );
      if (team.shares !== undefined) shares.push({ slug, teamId, specs: team.shares });
    }
    for (const { slug, teamId, specs } of shares) steps.push(...planShares({ slug, teamId, specs, stored: storedShares, context }));
    return steps;
  },
});

async function loadTeams(tx: Transaction, tenantId: string): Promise<Map<string, StoredTeam>> {
  const rows = await tx.query<{ id: string; slug: string; name: string; principal_id: string | null; role: TeamRole | null }>(
    `SELECT t.id, t.slug, t.name, m.principal_id, m.role
       FROM teams t LEFT JOIN team_members m ON m.tenant_id = t.tenant_id AND m.team_id = t.id
      WHERE t.tenant_id = $1`,
    [tenantId],
  );
  const teams = new Map<string, StoredTeam>();
  for (const row of rows) {
    const team = teams.get(row.slug) ?? { id: row.id, name: row.name, members: new Map<string, TeamRole>() };
    teams.set(row.slug, team);
    if (row.principal_id !== null && row.role !== null) team.members.set(row.principal_id, row.role);
  }
  return teams;
}
