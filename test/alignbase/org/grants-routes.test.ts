import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { effectiveContextRole } from '../../../src/alignbase/access/grants.ts';
import { routedTo } from '../../../src/alignbase/access/routes.ts';
import { applyOrgFile } from '../../../src/org-sections.ts';
import type { Db } from '../../../src/store/db.ts';
import { cliTrail } from '../../support/audit.ts';
import { storeBackends } from '../../support/stores.ts';
import { BASE, prepare } from './access-support.ts';
import { snapshot } from '../../org/support.ts';

const ACCESS = `${BASE}grants:
  - { to: group:eng, on: all_knowledge, role: viewer }
  - { to: release-bot, on: "knowledge:Release: checklist", role: publisher }
  - { to: Alice@Acme.test, on: all_skills, role: owner }
  - { to: triage-bot, on: memory:Working state, role: editor }
routes:
  - { deliver: knowledge:Handbook, to: group:eng }
  - { deliver: skill:release-check, to: release-bot }
  - { deliver: memory:Working state, to: triage-bot }
`;

async function principalId(db: Db, tenantId: string, name: string): Promise<string> {
  const [row] = await db.query<{ id: string }>('SELECT id FROM principals WHERE tenant_id = $1 AND coalesce(email, name) = $2', [tenantId, name]);
  return row?.id ?? '';
}

for (const backend of storeBackends()) {
  describe(`org file grants and routes on ${backend.name}`, () => {
    it('adds the grants and routes, which the access core then sees, and finds nothing to change again', async () => {
      const store = await backend.open({ migrated: true });
      try {
        const tenantId = await prepare(store.db);
        const first = await applyOrgFile(store.db, { source: ACCESS }, cliTrail(store.db));
        assert.deepEqual(first.changes, [
          { action: 'add', kind: 'grant', name: 'group:eng', detail: 'on all_knowledge as viewer' },
          { action: 'add', kind: 'grant', name: 'release-bot', detail: 'on knowledge:Release: checklist as publisher' },
          { action: 'add', kind: 'grant', name: 'alice@acme.test', detail: 'on all_skills as owner' },
          { action: 'add', kind: 'grant', name: 'triage-bot', detail: 'on memory:Working state as editor' },
          { action: 'add', kind: 'route', name: 'knowledge:Handbook', detail: 'to group:eng' },
          { action: 'add', kind: 'route', name: 'skill:release-check', detail: 'to release-bot' },
          { action: 'add', kind: 'route', name: 'memory:Working state', detail: 'to triage-bot' },
        ]);
        const bot = await principalId(store.db, tenantId, 'release-bot');
        const [checklist] = await store.db.query<{ id: string }>("SELECT id FROM context_resources WHERE name = 'Release: checklist'");
        assert.equal(await effectiveContextRole(store.db, tenantId, bot, 'knowledge', checklist?.id), 'publisher');
        assert.equal(await effectiveContextRole(store.db, tenantId, bot, 'knowledge', undefined), 'viewer');
        assert.deepEqual(
          (await routedTo(store.db, tenantId, bot)).map((r) => r.name),
          ['Handbook', 'release-check'],
        );

        const before = await snapshot(store.db);
        assert.deepEqual((await applyOrgFile(store.db, { source: ACCESS }, cliTrail(store.db))).changes, []);
        assert.deepEqual(await snapshot(store.db), before);
      } finally {
        await store.dispose();
      }
    });

    it("makes the file's sets exact: role updates, additions and removals; a left-out section is untouched", async () => {
      const store = await backend.open({ migrated: true });
      try {
        await prepare(store.db);
        await applyOrgFile(store.db, { source: ACCESS }, cliTrail(store.db));
        const changed = `${BASE}grants:
  - { to: group:eng, on: all_knowledge, role: editor }
  - { to: triage-bot, on: memory:Working state, role: editor }
  - { to: triage-bot, on: artifact:Q3 report, role: viewer }
routes:
  - { deliver: knowledge:Handbook, to: group:eng }
  - { deliver: "knowledge:Release: checklist", to: triage-bot }
`;
        const result = await applyOrgFile(store.db, { source: changed }, cliTrail(store.db));
        assert.deepEqual(result.changes, [
          { action: 'update', kind: 'grant', name: 'group:eng', detail: 'on all_knowledge: role viewer → editor' },
          { action: 'add', kind: 'grant', name: 'triage-bot', detail: 'on artifact:Q3 report as viewer' },
          { action: 'remove', kind: 'grant', name: 'alice@acme.test', detail: 'on all_skills' },
          { action: 'remove', kind: 'grant', name: 'release-bot', detail: 'on knowledge:Release: checklist' },
          { action: 'add', kind: 'route', name: 'knowledge:Release: checklist', detail: 'to triage-bot' },
          { action: 'remove', kind: 'route', name: 'memory:Working state', detail: 'to triage-bot' },
          { action: 'remove', kind: 'route', name: 'skill:release-check', detail: 'to release-bot' },
        ]);
        const before = await snapshot(store.db);
        assert.deepEqual((await applyOrgFile(store.db, { source: BASE }, cliTrail(store.db))).changes, [], 'no grants or routes section: untouched');
        assert.deepEqual(await snapshot(store.db), before);

        const emptied = await applyOrgFile(store.db, { source: `${BASE}grants: []\nroutes:\n` }, cliTrail(store.db));
        assert.deepEqual(
          emptied.changes.map((c) => `${c.action} ${c.kind} ${c.name}`),
          [
            'remove grant group:eng',
            'remove grant triage-bot',
            'remove grant triage-bot',
            'remove route knowledge:Handbook',
            'remove route knowledge:Release: checklist',
          ],
        );
        const [counts] = await store.db.query<{ grants: number; routes: number }>(
          'SELECT (SELECT count(*)::int FROM context_grants) AS grants, (SELECT count(*)::int FROM context_routes) AS routes',
        );
        assert.deepEqual(counts, { grants: 0, routes: 0 });
      } finally {
        await store.dispose();
      }
    });

    it('lets grants and routes name principals and groups the same file creates, and plans the same in a dry run', async () => {
      const store = await backend.open({ migrated: true });
      try {
        const tenantId = await prepare(store.db);
        const file = ACCESS.replace('groups:\n', 'groups:\n  - { name: new-team, members: [new-bot] }\n')
          .replace('agents:\n', 'agents:\n  - { name: new-bot, owner: alice@acme.test }\n')
          .replace('grants:\n', 'grants:\n  - { to: new-bot, on: all_memories, role: editor }\n')
          .replace('routes:\n', 'routes:\n  - { deliver: knowledge:Handbook, to: group:new-team }\n');
        const before = await snapshot(store.db);
        const dry = await applyOrgFile(store.db, { source: file, dryRun: true }, cliTrail(store.db));
        assert.deepEqual(await snapshot(store.db), before);
        const real = await applyOrgFile(store.db, { source: file }, cliTrail(store.db));
        assert.deepEqual(real.changes, dry.changes);
        assert.ok(real.changes.some((c) => c.kind === 'route' && c.detail === 'to group:new-team'));
        const bot = await principalId(store.db, tenantId, 'new-bot');
        assert.deepEqual(
          (await routedTo(store.db, tenantId, bot)).map((r) => r.name),
          ['Handbook'],
        );
        assert.equal(await effectiveContextRole(store.db, tenantId, bot, 'memory', undefined), 'editor');
      } finally {
        await store.dispose();
      }
    });
  });
}
