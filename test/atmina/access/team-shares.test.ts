import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ShareGrantee } from '../../../src/atmina/access/team-shares.ts';
import { kbRoleFor, revokeTeamShare, shareTeamKbs, teamKbAccess } from '../../../src/atmina/access/team-shares.ts';
import type { TeamRole } from '../../../src/atmina/access/team-roles.ts';
import { applyOrgFile } from '../../../src/org-sections.ts';
import type { Db } from '../../../src/store/db.ts';
import { cliTrail } from '../../support/audit.ts';
import type { TestStore } from '../../support/stores.ts';
import { storeBackends } from '../../support/stores.ts';
import { id } from '../../alignbase/access/support.ts';

/**
 * Two tenants with the same names, so that a leak across tenants would show. docs owns the
 * KBs asked about; eng and ops are teams its shares reach. Every person and agent is named
 * for how it reaches docs.
 */
const orgFile = (slug: string): string => `tenant: ${slug}
name: ${slug}
people:
  - { email: member@${slug}.test, name: Member }
  - { email: via-team@${slug}.test, name: Via team }
  - { email: direct@${slug}.test, name: Direct }
  - { email: both@${slug}.test, name: Both }
  - { email: stranger@${slug}.test, name: Stranger }
agents:
  - { name: capped-member, owner: member@${slug}.test, policy: { max_team_role: viewer } }
  - { name: capped-share, owner: member@${slug}.test, policy: { max_team_role: editor } }
  - { name: capped-stranger, owner: member@${slug}.test, policy: { max_team_role: admin } }
  - { name: uncapped, owner: member@${slug}.test }
teams:
  - { slug: docs, name: Docs, members: { member@${slug}.test: editor, both@${slug}.test: viewer, capped-member: admin } }
  - { slug: eng, name: Engineering, members: { via-team@${slug}.test: viewer, capped-share: viewer, uncapped: admin } }
  - { slug: ops, name: Operations, members: { both@${slug}.test: viewer } }
`;

interface World {
  readonly tenantId: string;
  /** Principal ids by email or name, team ids by `team:SLUG`. */
  readonly ids: Readonly<Record<string, string>>;
}

async function buildWorld(db: Db, slug: string): Promise<World> {
  await applyOrgFile(db, { source: orgFile(slug) }, cliTrail(db));
  const [tenant] = await db.query<{ id: string }>('SELECT id FROM tenants WHERE slug = $1', [slug]);
  const tenantId = tenant?.id ?? '';
  const ids: Record<string, string> = {};
  for (const row of await db.query<{ id: string; ref: string }>(
    "SELECT id, coalesce(split_part(email, '@', 1), name) AS ref FROM principals WHERE tenant_id = $1",
    [tenantId],
  ))
    ids[row.ref] = row.id;
  for (const row of await db.query<{ id: string; slug: string }>('SELECT id, slug FROM teams WHERE tenant_id = $1', [tenantId]))
    ids[`team:${row.slug}`] = row.id;
  return { tenantId, ids };
}

for (const backend of storeBackends()) {
  describe(`team shares and KB access on ${backend.name}`, () => {
    let store: TestStore;
    let acme: World;
    let other: World;

    const grantee = (world: World, name: string): ShareGrantee =>
      name.startsWith('team:') ? { teamId: id(world.ids, name) } : { principalId: id(world.ids, name) };
    const share = (world: World, team: string, to: string, role: TeamRole): Promise<boolean> =>
      store.db.tx((tx) => shareTeamKbs(tx, { tenantId: world.tenantId, teamId: id(world.ids, `team:${team}`), grantee: grantee(world, to), role }));
    const accessOf = (world: World, principal: string, team = 'docs'): ReturnType<typeof teamKbAccess> =>
      teamKbAccess(store.db, world.tenantId, id(world.ids, principal), id(world.ids, `team:${team}`));
    const roleOf = (world: World, principal: string, isPublic = false, team = 'docs'): ReturnType<typeof kbRoleFor> =>
      kbRoleFor(store.db, world.tenantId, id(world.ids, principal), id(world.ids, `team:${team}`), isPublic);

    before(async () => {
      store = await backend.open({ migrated: true });
      acme = await buildWorld(store.db, 'acme');
      other = await buildWorld(store.db, 'other');
      assert.equal(await share(acme, 'docs', 'team:eng', 'editor'), true);
      await share(acme, 'docs', 'direct', 'editor');
      await share(acme, 'docs', 'both', 'admin');
      await share(acme, 'docs', 'team:ops', 'editor');
      await share(acme, 'docs', 'capped-share', 'admin');
      // A share of eng's KBs: it must not reach docs' KBs.
      await share(acme, 'eng', 'stranger', 'admin');
      // The other tenant shares docs with everyone of the same names at Admin: it must never leak.
      for (const to of ['stranger', 'capped-stranger', 'team:eng', 'member']) await share(other, 'docs', to, 'admin');
    });
    after(async () => {
      await store.dispose();
    });

    it('gives a member its role in the owning team', async () => {
      assert.deepEqual(await accessOf(acme, 'member'), { teamRole: 'editor', shareRoles: [], agentPolicyMax: undefined });
      assert.equal(await roleOf(acme, 'member'), 'editor');
    });

    it("gives the members of a team shared with the share's role, whatever their role there", async () => {
      assert.deepEqual(await accessOf(acme, 'via-team'), { teamRole: undefined, shareRoles: ['editor'], agentPolicyMax: undefined });
      assert.equal(await roleOf(acme, 'via-team'), 'editor');
      assert.equal(await roleOf(acme, 'uncapped'), 'editor', "an Admin of eng gets the share's Editor on docs");
    });

    it("gives a principal shared with directly the share's role", async () => {
      assert.deepEqual(await accessOf(acme, 'direct'), { teamRole: undefined, shareRoles: ['editor'], agentPolicyMax: undefined });
      assert.equal(await roleOf(acme, 'direct'), 'editor');
    });

    it('takes the highest of the team role and every share that reaches the principal', async () => {
      // both: Viewer in docs, Editor through ops, Admin directly.
      assert.deepEqual(await accessOf(acme, 'both'), { teamRole: 'viewer', shareRoles: ['editor', 'admin'], agentPolicyMax: undefined });
      assert.equal(await roleOf(acme, 'both'), 'admin');
    });

    it('caps an agent at its policy, which never raises and grants nothing by itself', async () => {
      assert.deepEqual(await accessOf(acme, 'capped-member'), { teamRole: 'admin', shareRoles: [], agentPolicyMax: 'viewer' });
      assert.equal(await roleOf(acme, 'capped-member'), 'viewer');
      // capped-share: Editor through eng, Admin directly, policy Editor.
      assert.deepEqual(await accessOf(acme, 'capped-share'), { teamRole: undefined, shareRoles: ['editor', 'admin'], agentPolicyMax: 'editor' });
      assert.equal(await roleOf(acme, 'capped-share'), 'editor');
      assert.equal(await roleOf(acme, 'capped-stranger'), 'none');
      assert.equal(await roleOf(acme, 'capped-stranger', true), 'search');
    });

    it('gives a principal with no membership and no share nothing, or search on a public KB', async () => {
      assert.deepEqual(await accessOf(acme, 'stranger'), { teamRole: undefined, shareRoles: [], agentPolicyMax: undefined });
      assert.equal(await roleOf(acme, 'stranger'), 'none');
      assert.equal(await roleOf(acme, 'stranger', true), 'search');
      assert.equal(await roleOf(acme, 'stranger', false, 'eng'), 'admin', "eng's share reaches eng's KBs only");
      assert.equal(await roleOf(acme, 'member', false, 'eng'), 'none', 'shares go one way');
    });

    it('never applies a membership or share of another tenant', async () => {
      // Every principal of `other` is Admin on other's docs; acme's are untouched by it.
      assert.equal(await roleOf(other, 'stranger'), 'admin');
      assert.equal(await roleOf(other, 'via-team'), 'admin');
      assert.equal(await roleOf(acme, 'member'), 'editor');
      const { tenantId } = acme;
      const crossed = [
        // acme's tenant with other's principal or other's team, and the reverse.
        teamKbAccess(store.db, tenantId, id(other.ids, 'stranger'), id(acme.ids, 'team:docs')),
        teamKbAccess(store.db, tenantId, id(acme.ids, 'member'), id(other.ids, 'team:docs')),
        teamKbAccess(store.db, other.tenantId, id(acme.ids, 'both'), id(other.ids, 'team:docs')),
        teamKbAccess(store.db, other.tenantId, id(other.ids, 'stranger'), id(acme.ids, 'team:docs')),
      ];
      for (const access of await Promise.all(crossed)) {
        assert.deepEqual(access, { teamRole: undefined, shareRoles: [], agentPolicyMax: undefined });
      }
      assert.equal(await kbRoleFor(store.db, tenantId, id(other.ids, 'member'), id(acme.ids, 'team:docs'), true), 'search');
      assert.deepEqual(await teamKbAccess(store.db, tenantId, id(acme.ids, 'member'), '00000000-0000-4000-8000-000000000000'), {
        teamRole: undefined,
        shareRoles: [],
        agentPolicyMax: undefined,
      });
    });

    it("replaces a share's role when sharing again, and revokes it", async () => {
      const tenantId = acme.tenantId;
      const teamId = id(acme.ids, 'team:eng');
      const to: ShareGrantee = { teamId: id(acme.ids, 'team:ops') };
      assert.equal(await store.db.tx((tx) => shareTeamKbs(tx, { tenantId, teamId, grantee: to, role: 'viewer' })), true);
      assert.equal(await store.db.tx((tx) => shareTeamKbs(tx, { tenantId, teamId, grantee: to, role: 'viewer' })), false, 'the same role changes nothing');
      assert.equal(await store.db.tx((tx) => shareTeamKbs(tx, { tenantId, teamId, grantee: to, role: 'admin' })), true);
      assert.equal(await roleOf(acme, 'both', false, 'eng'), 'admin');
      assert.equal(await store.db.tx((tx) => revokeTeamShare(tx, { tenantId, teamId, grantee: to })), true);
      assert.equal(await store.db.tx((tx) => revokeTeamShare(tx, { tenantId, teamId, grantee: to })), false);
      assert.equal(await roleOf(acme, 'both', false, 'eng'), 'none');
    });

    it('refuses in the database a team sharing with itself, two grantees or none, and a grantee of another tenant', async () => {
      const tenantId = acme.tenantId;
      const docs = id(acme.ids, 'team:docs');
      await assert.rejects(
        store.db.tx((tx) => shareTeamKbs(tx, { tenantId, teamId: docs, grantee: { teamId: docs }, role: 'viewer' })),
        /team_shares_not_itself/,
      );
      const insert = (granteeTeamId: string | null, principalId: string | null) =>
        store.db.tx((tx) =>
          tx.query(
            "INSERT INTO team_shares (tenant_id, id, team_id, grantee_team_id, principal_id, role) VALUES ($1, gen_random_uuid(), $2, $3, $4, 'viewer')",
            [tenantId, docs, granteeTeamId, principalId],
          ),
        );
      await assert.rejects(insert(id(acme.ids, 'team:eng'), id(acme.ids, 'stranger')), /team_shares_one_grantee/);
      await assert.rejects(insert(null, null), /team_shares_one_grantee/);
      await assert.rejects(insert(null, id(other.ids, 'stranger')), /foreign key/);
      await assert.rejects(insert(id(other.ids, 'team:eng'), null), /foreign key/);
    });

    it('removes the shares of and to a team or principal that is deleted', async () => {
      const count = async (): Promise<number> =>
        (await store.db.query<{ n: number }>('SELECT count(*)::int AS n FROM team_shares WHERE tenant_id = $1', [acme.tenantId]))[0]?.n ?? -1;
      const before = await count();
      await store.db.tx((tx) => tx.query('DELETE FROM teams WHERE tenant_id = $1 AND id = $2', [acme.tenantId, id(acme.ids, 'team:ops')]));
      assert.equal(await count(), before - 1, 'the share with ops');
      await store.db.tx((tx) => tx.query('DELETE FROM principals WHERE tenant_id = $1 AND id = $2', [acme.tenantId, id(acme.ids, 'direct')]));
      assert.equal(await count(), before - 2, 'the share with direct');
      await store.db.tx((tx) => tx.query('DELETE FROM teams WHERE tenant_id = $1 AND id = $2', [acme.tenantId, id(acme.ids, 'team:docs')]));
      assert.equal(await count(), 1, "eng's share with stranger is all that is left");
      assert.equal(await roleOf(other, 'stranger'), 'admin', 'the other tenant keeps its shares');
    });
  });
}
