import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ContextType } from '../../../src/alignbase/access/context-roles.ts';
import { setContextResourceStatus } from '../../../src/alignbase/access/resources.ts';
import type { RouteTarget } from '../../../src/alignbase/access/routes.ts';
import { addRoute, isRoutedTo, removeRoute, routedTo } from '../../../src/alignbase/access/routes.ts';
import { isKgwError } from '../../../src/kernel/errors.ts';
import type { TestStore } from '../../support/stores.ts';
import { storeBackends } from '../../support/stores.ts';
import type { World } from './support.ts';
import { buildWorld, id } from './support.ts';

const RESOURCES: [ContextType, string][] = [
  ['knowledge', 'Handbook'],
  ['knowledge', 'Old rules'],
  ['skill', 'release-check'],
  ['memory', 'Working state'],
  ['artifact', 'Report'],
];

for (const backend of storeBackends()) {
  describe(`Always routes on ${backend.name}`, () => {
    let store: TestStore;
    let acme: World;
    let other: World;

    const route = (world: World, resource: string, to: string): Promise<boolean> => {
      const target: RouteTarget = to.startsWith('group:') ? { groupId: id(world.ids, to) } : { agentId: id(world.ids, to) };
      return store.db.tx((tx) => addRoute(tx, { tenantId: world.tenantId, resourceId: id(world.resources, resource), target }));
    };
    const routed = async (world: World, principal: string): Promise<string[]> =>
      (await routedTo(store.db, world.tenantId, id(world.ids, principal))).map((r) => `${r.type}:${r.name}`);

    before(async () => {
      store = await backend.open({ migrated: true });
      acme = await buildWorld(store.db, 'acme', RESOURCES);
      other = await buildWorld(store.db, 'other', RESOURCES);
      await route(acme, 'knowledge:Handbook', 'group:eng');
      await route(acme, 'skill:release-check', 'bot');
      await route(acme, 'memory:Working state', 'bot');
      await route(acme, 'knowledge:Old rules', 'bot');
      await store.db.tx((tx) => setContextResourceStatus(tx, acme.tenantId, id(acme.resources, 'knowledge:Old rules'), 'archived'));
      await route(other, 'knowledge:Handbook', 'helper');
    });
    after(async () => {
      await store.dispose();
    });

    it('delivers routes to the agent and through its groups, active resources only', async () => {
      assert.deepEqual(await routed(acme, 'bot'), ['knowledge:Handbook', 'memory:Working state', 'skill:release-check']);
      assert.deepEqual(await routed(acme, 'helper'), []);
      assert.equal(await isRoutedTo(store.db, acme.tenantId, id(acme.ids, 'bot'), id(acme.resources, 'knowledge:Handbook')), true);
      assert.equal(await isRoutedTo(store.db, acme.tenantId, id(acme.ids, 'bot'), id(acme.resources, 'knowledge:Old rules')), false, 'archived');
    });

    it('covers a group member who joins later', async () => {
      assert.deepEqual(await routed(acme, 'newcomer'), []);
      await store.db.tx((tx) =>
        tx.query('INSERT INTO group_members (tenant_id, group_id, principal_id) VALUES ($1, $2, $3)', [
          acme.tenantId,
          id(acme.ids, 'group:eng'),
          id(acme.ids, 'newcomer'),
        ]),
      );
      assert.deepEqual(await routed(acme, 'newcomer'), ['knowledge:Handbook']);
    });

    it('delivers nothing to a person, even in a routed group', async () => {
      assert.deepEqual(await routed(acme, 'alice@acme.test'), []);
    });

    it("never delivers another tenant's routes", async () => {
      assert.deepEqual(await routed(other, 'helper'), ['knowledge:Handbook']);
      assert.deepEqual(await routed(acme, 'helper'), []);
      assert.deepEqual(await routedTo(store.db, acme.tenantId, id(other.ids, 'helper')), []);
    });

    it('adds a route once and removes it', async () => {
      assert.equal(await route(acme, 'knowledge:Handbook', 'helper'), true);
      assert.equal(await route(acme, 'knowledge:Handbook', 'helper'), false);
      const input = { tenantId: acme.tenantId, resourceId: id(acme.resources, 'knowledge:Handbook'), target: { agentId: id(acme.ids, 'helper') } };
      assert.equal(await store.db.tx((tx) => removeRoute(tx, input)), true);
      assert.equal(await store.db.tx((tx) => removeRoute(tx, input)), false);
    });

    it('refuses an Artifact, a person, and an unknown resource', async () => {
      await assert.rejects(route(acme, 'artifact:Report', 'bot'), (error) => isKgwError(error, 'validation'));
      await assert.rejects(route(acme, 'knowledge:Handbook', 'alice@acme.test'), /foreign key/);
      await assert.rejects(
        store.db.tx((tx) =>
          addRoute(tx, { tenantId: acme.tenantId, resourceId: id(other.resources, 'knowledge:Handbook'), target: { agentId: id(acme.ids, 'bot') } }),
        ),
        (error) => isKgwError(error, 'not_found'),
      );
    });
  });
}
