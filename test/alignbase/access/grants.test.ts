import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { contextRoleTable, effectiveContextRole, grantContextRole, revokeContextGrant } from '../../../src/alignbase/access/grants.ts';
import type { Grantee } from '../../../src/alignbase/access/grants.ts';
import type { ContextRole, ContextType } from '../../../src/alignbase/access/context-roles.ts';
import { createContextResource, findContextResource, getContextResource, setContextResourceStatus } from '../../../src/alignbase/access/resources.ts';
import { isKgwError } from '../../../src/kernel/errors.ts';
import type { TestStore } from '../../support/stores.ts';
import { storeBackends } from '../../support/stores.ts';
import type { World } from './support.ts';
import { buildWorld, id } from './support.ts';

const RESOURCES: [ContextType, string][] = [
  ['knowledge', 'Handbook'],
  ['knowledge', 'Runbook'],
  ['skill', 'release-check'],
  ['memory', 'Working state'],
];

for (const backend of storeBackends()) {
  describe(`effective context roles on ${backend.name}`, () => {
    let store: TestStore;
    let acme: World;
    let other: World;

    const grant = async (world: World, grantee: string, type: ContextType, resource: string | undefined, role: ContextRole): Promise<boolean> => {
      const to: Grantee = grantee.startsWith('group:') ? { groupId: id(world.ids, grantee) } : { principalId: id(world.ids, grantee) };
      const resourceId = resource === undefined ? undefined : id(world.resources, `${type}:${resource}`);
      return store.db.tx((tx) => grantContextRole(tx, { tenantId: world.tenantId, grantee: to, type, resourceId, role }));
    };
    const roleOf = (world: World, principal: string, type: ContextType, resource: string | undefined): Promise<ContextRole | undefined> =>
      effectiveContextRole(
        store.db,
        world.tenantId,
        id(world.ids, principal),
        type,
        resource === undefined ? undefined : id(world.resources, `${type}:${resource}`),
      );

    before(async () => {
      store = await backend.open({ migrated: true });
      acme = await buildWorld(store.db, 'acme', RESOURCES);
      other = await buildWorld(store.db, 'other', RESOURCES);
      await grant(acme, 'group:eng', 'knowledge', 'Handbook', 'viewer');
      await grant(acme, 'bot', 'knowledge', 'Handbook', 'editor');
      await grant(acme, 'helper', 'knowledge', undefined, 'publisher');
      await grant(acme, 'helper', 'knowledge', 'Runbook', 'viewer');
      await grant(acme, 'group:ops', 'skill', undefined, 'editor');
      await grant(acme, 'bot', 'memory', 'Working state', 'editor');
      // The other tenant's agent of the same name holds Owner everywhere: it must never leak.
      await grant(other, 'bot', 'knowledge', undefined, 'owner');
      await grant(other, 'newcomer', 'knowledge', 'Handbook', 'owner');
    });
    after(async () => {
      await store.dispose();
    });

    it('adds group Viewer and direct Editor up to Editor', async () => {
      assert.equal(await roleOf(acme, 'bot', 'knowledge', 'Handbook'), 'editor');
      assert.equal(await roleOf(acme, 'alice@acme.test', 'knowledge', 'Handbook'), 'viewer');
    });

    it('lets a whole-type Publisher beat a specific Viewer', async () => {
      assert.equal(await roleOf(acme, 'helper', 'knowledge', 'Runbook'), 'publisher');
      assert.equal(await roleOf(acme, 'helper', 'knowledge', 'Handbook'), 'publisher');
      assert.equal(await roleOf(acme, 'helper', 'knowledge', undefined), 'publisher');
    });

    it('reaches through a group to a whole type, and only that type', async () => {
      assert.equal(await roleOf(acme, 'helper', 'skill', 'release-check'), 'editor');
      assert.equal(await roleOf(acme, 'helper', 'skill', undefined), 'editor');
      assert.equal(await roleOf(acme, 'helper', 'memory', 'Working state'), undefined);
      assert.equal(await roleOf(acme, 'bot', 'knowledge', undefined), undefined, 'specific grants give no create role');
    });

    it('never applies a grant of another tenant', async () => {
      assert.equal(await roleOf(acme, 'newcomer', 'knowledge', 'Handbook'), undefined);
      assert.equal(await roleOf(other, 'bot', 'knowledge', 'Handbook'), 'owner');
      // Asking about acme's resource with other's principal, or the reverse, finds nothing.
      assert.equal(
        await effectiveContextRole(store.db, other.tenantId, id(other.ids, 'bot'), 'knowledge', id(acme.resources, 'knowledge:Handbook')),
        undefined,
      );
      assert.equal(await effectiveContextRole(store.db, acme.tenantId, id(other.ids, 'bot'), 'knowledge', id(acme.resources, 'knowledge:Handbook')), undefined);
    });

    it('gives no role on a resource that is not of the asked type', async () => {
      assert.equal(
        await effectiveContextRole(store.db, acme.tenantId, id(acme.ids, 'helper'), 'knowledge', id(acme.resources, 'skill:release-check')),
        undefined,
      );
    });

    it('answers list tools from one table per type', async () => {
      const table = await contextRoleTable(store.db, acme.tenantId, id(acme.ids, 'bot'), 'knowledge');
      assert.equal(table.typeRole, undefined);
      assert.equal(table.roleOn(id(acme.resources, 'knowledge:Handbook')), 'editor');
      assert.equal(table.roleOn(id(acme.resources, 'knowledge:Runbook')), undefined);
      assert.deepEqual([...table.grantedResourceIds], [id(acme.resources, 'knowledge:Handbook')]);
      const helper = await contextRoleTable(store.db, acme.tenantId, id(acme.ids, 'helper'), 'knowledge');
      assert.equal(helper.roleOn(id(acme.resources, 'knowledge:Runbook')), 'publisher');
    });

    it('replaces the role when granting again, and revokes', async () => {
      assert.equal(await grant(acme, 'newcomer', 'memory', 'Working state', 'viewer'), true);
      assert.equal(await grant(acme, 'newcomer', 'memory', 'Working state', 'viewer'), false, 'the same role again changes nothing');
      assert.equal(await grant(acme, 'newcomer', 'memory', 'Working state', 'owner'), true);
      assert.equal(await roleOf(acme, 'newcomer', 'memory', 'Working state'), 'owner');
      const [count] = await store.db.query<{ n: number }>('SELECT count(*)::int AS n FROM context_grants WHERE tenant_id = $1 AND principal_id = $2', [
        acme.tenantId,
        id(acme.ids, 'newcomer'),
      ]);
      assert.equal(count?.n, 1);
      const input = {
        tenantId: acme.tenantId,
        grantee: { principalId: id(acme.ids, 'newcomer') },
        type: 'memory' as const,
        resourceId: id(acme.resources, 'memory:Working state'),
      };
      assert.equal(await store.db.tx((tx) => revokeContextGrant(tx, input)), true);
      assert.equal(await store.db.tx((tx) => revokeContextGrant(tx, input)), false);
      assert.equal(await roleOf(acme, 'newcomer', 'memory', 'Working state'), undefined);
    });

    it('keeps a whole-type grant and a specific one apart', async () => {
      assert.equal(await grant(acme, 'newcomer', 'skill', undefined, 'viewer'), true);
      assert.equal(await grant(acme, 'newcomer', 'skill', 'release-check', 'editor'), true);
      assert.equal(await roleOf(acme, 'newcomer', 'skill', undefined), 'viewer');
      assert.equal(await roleOf(acme, 'newcomer', 'skill', 'release-check'), 'editor');
    });

    it('refuses a grant whose type does not match its resource', async () => {
      await assert.rejects(
        store.db.tx((tx) =>
          grantContextRole(tx, {
            tenantId: acme.tenantId,
            grantee: { principalId: id(acme.ids, 'bot') },
            type: 'skill',
            resourceId: id(acme.resources, 'knowledge:Handbook'),
            role: 'viewer',
          }),
        ),
        /foreign key/,
      );
    });
  });

  describe(`context resources on ${backend.name}`, () => {
    let store: TestStore;
    let acme: World;
    before(async () => {
      store = await backend.open({ migrated: true });
      acme = await buildWorld(store.db, 'acme', [['artifact', 'Report']]);
    });
    after(async () => {
      await store.dispose();
    });

    it('creates, finds and archives a resource', async () => {
      const created = await store.db.tx((tx) =>
        createContextResource(tx, { tenantId: acme.tenantId, type: 'knowledge', name: 'Style guide', createdBy: id(acme.ids, 'bot') }),
      );
      assert.equal(created.status, 'active');
      assert.equal(created.createdBy, id(acme.ids, 'bot'));
      assert.deepEqual(await findContextResource(store.db, acme.tenantId, 'knowledge', 'Style guide'), created);
      assert.equal(await findContextResource(store.db, acme.tenantId, 'skill', 'Style guide'), undefined);
      assert.equal(await store.db.tx((tx) => setContextResourceStatus(tx, acme.tenantId, created.id, 'archived')), true);
      assert.equal(await store.db.tx((tx) => setContextResourceStatus(tx, acme.tenantId, created.id, 'archived')), false);
      assert.equal((await getContextResource(store.db, acme.tenantId, created.id))?.status, 'archived');
    });

    it('refuses a taken Skill name, and a blank or long name; other types may repeat a name', async () => {
      const create = (type: ContextType, name: string) => store.db.tx((tx) => createContextResource(tx, { tenantId: acme.tenantId, type, name }));
      await create('skill', 'report');
      await assert.rejects(create('skill', 'report'), (error) => isKgwError(error, 'conflict'));
      // Knowledge titles, Memory and Artifact names may repeat, as in Alignbase.
      await create('artifact', 'Report');
      await create('knowledge', 'Report');
      await create('knowledge', 'Report');
      await assert.rejects(create('memory', '  '), (error) => isKgwError(error, 'validation'));
      await assert.rejects(create('memory', 'x'.repeat(201)), (error) => isKgwError(error, 'validation'));
    });
  });
}
