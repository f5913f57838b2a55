import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { effectiveContextRole } from '../../../src/alignbase/access/grants.ts';
import { createContextResource } from '../../../src/alignbase/access/resources.ts';
import { routedTo } from '../../../src/alignbase/access/routes.ts';
import { saveVersion } from '../../../src/alignbase/versions/versions.ts';
import { isKgwError } from '../../../src/kernel/errors.ts';
import { applyOrgFile, readReferencedFiles } from '../../../src/org-sections.ts';
import type { Db } from '../../../src/store/db.ts';
import { openPostgres } from '../../../src/store/postgres.ts';
import { Agent } from '../../support/harness.ts';
import { cliTrail } from '../../support/audit.ts';
import { pick, records } from '../../support/fixtures.ts';
import { connectClient, issueToken, startGateway } from '../../support/gateway.ts';
import { storeBackends } from '../../support/stores.ts';
import type { ContextStore, TenantScope } from './context-support.ts';
import { applyIn, countVersions, idsOf, openContextStore, resourceNamed, resourcesNamed, sharedStore, writeTree } from './context-support.ts';
import type { RefusalCase } from '../../org/support.ts';
import { itRefuses, snapshot } from '../../org/support.ts';

/**
 * The org file's `memories` section (docs/org-file.md): Memories by name, content inline or
 * from a file, one live version per change of the file's content, and the agents' later writes
 * kept when the file applied again has not changed.
 */

const BASE = `tenant: acme
name: Acme Inc.
people:
  - { email: alice@acme.test, name: Alice }
agents:
  - { name: release-bot, owner: alice@acme.test }
  - { name: watch-bot, owner: alice@acme.test }
groups:
  - { name: eng, members: [release-bot, watch-bot] }
`;

const MEMORIES = `${BASE}memories:
  - name: "  Release state  "
    content: No release in progress.
  - name: Support notes
    file: ./memories//support.md
grants:
  - { to: release-bot, on: "memory:Release state", role: editor }
  - { to: group:eng, on: memory:Support notes, role: viewer }
routes:
  - { deliver: memory:Release state, to: group:eng }
  - { deliver: memory:Support notes, to: watch-bot }
`;

const SUPPORT = '# Support notes\n\nCustomers on plan B get a call back within a day. – ünïcode ✓\n';

const BASE_CHANGES = 7; // tenant, person, two agents, group, two members

/** What the file last applied to a Memory (migration 0012), by the Memory's id. */
async function appliedOf(db: Db, resourceId: string): Promise<{ version: number; sha256: string } | undefined> {
  const [row] = await db.query<{ version: number; content_sha256: string }>('SELECT version, content_sha256 FROM org_applied_content WHERE resource_id = $1', [
    resourceId,
  ]);
  return row && { version: Number(row.version), sha256: row.content_sha256 };
}

/** A Memory made as create_memory makes it: created by `createdBy`, version 1 by it too. */
async function agentMemory(db: Db, tenantId: string, createdBy: string, name: string, content: string): Promise<string> {
  return db.tx(async (tx) => {
    const resource = await createContextResource(tx, { tenantId, type: 'memory', name, createdBy });
    await saveVersion(tx, tenantId, { id: resource.id, latestVersion: 0 }, { content, createdBy });
    return resource.id;
  });
}

/** A later write of an agent, as write_memory saves it. */
async function agentWrite(db: Db, tenantId: string, resourceId: string, createdBy: string, content: string): Promise<void> {
  await db.tx(async (tx) => {
    const [row] = await tx.query<{ latest_version: number }>('SELECT latest_version FROM context_resources WHERE id = $1 FOR UPDATE', [resourceId]);
    await saveVersion(tx, tenantId, { id: resourceId, latestVersion: Number(row!.latest_version) }, { content, createdBy });
  });
}

const BACKENDS = storeBackends();

for (const backend of BACKENDS) {
  describe(`org file memories on ${backend.name}`, () => {
    // One store for the suite; each test works in a tenant of its own (`acme` in the files).
    const withStore = sharedStore(backend);

    it('creates Memories inline and from a file, by no one, and grants and routes name them', async () => {
      await withStore('m-create', async (store) => {
        await writeTree(store.folder, { 'memories/support.md': SUPPORT });
        const result = await applyIn(store, MEMORIES);
        assert.deepEqual(result.changes.slice(BASE_CHANGES), [
          { action: 'create', kind: 'memory', name: 'Release state' },
          { action: 'create', kind: 'memory', name: 'Support notes' },
          { action: 'add', kind: 'grant', name: 'release-bot', detail: 'on memory:Release state as editor' },
          { action: 'add', kind: 'grant', name: 'group:eng', detail: 'on memory:Support notes as viewer' },
          { action: 'add', kind: 'route', name: 'memory:Release state', detail: 'to group:eng' },
          { action: 'add', kind: 'route', name: 'memory:Support notes', detail: 'to watch-bot' },
        ]);
        const state = await resourceNamed(store.db, store.slug, 'memory', 'Release state');
        assert.partialDeepStrictEqual(state, { latest: 1, published: null, createdBy: null }, 'one live version, nothing to publish, no author');
        assert.deepEqual(
          state.versions.map((v) => pick(v, ['version', 'content', 'authority', 'created_by'])),
          [{ version: 1, content: 'No release in progress.', authority: null, created_by: null }],
        );
        const notes = await resourceNamed(store.db, store.slug, 'memory', 'Support notes');
        assert.deepEqual(
          notes.versions.map((v) => v.content),
          [SUPPORT],
          'the file exactly as it is',
        );
        assert.equal((await appliedOf(store.db, notes.id))?.version, 1);

        const { tenantId: tenant, principalId: bot } = await idsOf(store.db, store.slug, 'release-bot');
        const { principalId: watcher } = await idsOf(store.db, store.slug, 'watch-bot');
        assert.equal(await effectiveContextRole(store.db, tenant, bot, 'memory', state.id), 'editor');
        assert.equal(await effectiveContextRole(store.db, tenant, bot, 'memory', notes.id), 'viewer');
        assert.deepEqual((await routedTo(store.db, tenant, watcher)).map((r) => r.name).sort(), ['Release state', 'Support notes']);

        const rows = await snapshot(store.db);
        assert.deepEqual((await applyIn(store, MEMORIES)).changes, [], 'applying the unchanged file again changes nothing');
        assert.deepEqual(await snapshot(store.db), rows, 'and writes nothing: no new versions');
      });
    });

    it('saves exactly one live version when the content in the file changes, and none when it does not', async () => {
      await withStore('m-versions', async (store) => {
        await writeTree(store.folder, { 'memories/support.md': SUPPORT });
        await applyIn(store, MEMORIES);
        const versions = await countVersions(store.db, store.slug);

        const edited = MEMORIES.replace('No release in progress.', 'Release 1.2 is being prepared.');
        await writeTree(store.folder, { 'memories/support.md': `${SUPPORT}Plan C: two days.\n` });
        const changed = await applyIn(store, edited);
        assert.deepEqual(changed.changes, [
          { action: 'update', kind: 'memory', name: 'Release state', detail: 'content changed; version 1 → 2' },
          { action: 'update', kind: 'memory', name: 'Support notes', detail: 'content changed; version 1 → 2' },
        ]);
        assert.equal(await countVersions(store.db, store.slug), versions + 2);
        const state = await resourceNamed(store.db, store.slug, 'memory', 'Release state');
        assert.partialDeepStrictEqual(state, { latest: 2, published: null }, 'live at once: Memory has no publish step');
        assert.deepEqual(
          state.versions.map((v) => pick(v, ['content', 'created_by'])),
          records(
            ['content', 'created_by'],
            [
              ['No release in progress.', null],
              ['Release 1.2 is being prepared.', null],
            ],
          ),
        );
        assert.deepEqual((await applyIn(store, edited)).changes, []);
        assert.equal(await countVersions(store.db, store.slug), versions + 2);

        // Back to the first text: a change of the file like any other.
        const back = await applyIn(store, MEMORIES);
        assert.deepEqual(back.changes, [{ action: 'update', kind: 'memory', name: 'Release state', detail: 'content changed; version 2 → 3' }]);
      });
    });

    it('keeps what agents wrote when the unchanged file is applied again, and replaces it when the file changes', async () => {
      await withStore('m-agents', async (store) => {
        await writeTree(store.folder, { 'memories/support.md': SUPPORT });
        await applyIn(store, MEMORIES);
        const { tenantId: tenant, principalId: bot } = await idsOf(store.db, store.slug, 'release-bot');
        const state = await resourceNamed(store.db, store.slug, 'memory', 'Release state');
        await agentWrite(store.db, tenant, state.id, bot, 'Release 1.2 tagged.');
        await agentWrite(store.db, tenant, state.id, bot, 'Release 1.2 tagged; changelog pending.');

        const rows = await snapshot(store.db);
        assert.deepEqual((await applyIn(store, MEMORIES)).changes, [], 'the file still says what it said: the agents’ writes stay');
        assert.deepEqual((await applyIn(store, MEMORIES, { dryRun: true })).changes, []);
        assert.deepEqual(await snapshot(store.db), rows);

        const edited = MEMORIES.replace('No release in progress.', 'Release 1.3 is planned.');
        const dry = await applyIn(store, edited, { dryRun: true });
        const expected = [
          {
            action: 'update',
            kind: 'memory',
            name: 'Release state',
            detail: 'content changed; version 3 → 4; replaces versions 2–3, written since the last apply',
          },
        ];
        assert.deepEqual(dry.changes, expected, 'a dry run says which writes the change replaces');
        assert.deepEqual(await snapshot(store.db), rows);
        assert.deepEqual((await applyIn(store, edited)).changes, expected);
        const after = await resourceNamed(store.db, store.slug, 'memory', 'Release state');
        assert.deepEqual(
          after.versions.map((v) => pick(v, ['version', 'content', 'created_by'])),
          records(
            ['version', 'content', 'created_by'],
            [
              [1, 'No release in progress.', null],
              [2, 'Release 1.2 tagged.', bot],
              [3, 'Release 1.2 tagged; changelog pending.', bot],
              [4, 'Release 1.3 is planned.', null],
            ],
          ),
        );
        assert.equal((await appliedOf(store.db, state.id))?.version, 4);

        // One agent write later, the replaced range is that one version.
        await agentWrite(store.db, tenant, state.id, bot, 'Release 1.3 branch cut.');
        assert.deepEqual((await applyIn(store, edited)).changes, []);
        const again = await applyIn(store, MEMORIES);
        assert.deepEqual(again.changes, [
          {
            action: 'update',
            kind: 'memory',
            name: 'Release state',
            detail: 'content changed; version 5 → 6; replaces version 5, written since the last apply',
          },
        ]);
      });
    });

    it('takes over Memories agents created, by name: a different content is saved, the same is remembered, a versionless one gets its first', async () => {
      await withStore('m-takeover', async (store) => {
        await applyIn(store, BASE);
        const { tenantId: tenant, principalId: bot } = await idsOf(store.db, store.slug, 'release-bot');
        const stateId = await agentMemory(store.db, tenant, bot, 'Release state', 'Started the release.');
        const notesId = await agentMemory(store.db, tenant, bot, 'Support notes', SUPPORT);
        await store.db.tx((tx) =>
          tx.query("INSERT INTO context_resources (tenant_id, id, type, name) VALUES ($1, gen_random_uuid(), 'memory', 'Empty')", [tenant]),
        );
        await writeTree(store.folder, { 'memories/support.md': SUPPORT });
        const source = `${BASE}memories:
  - { name: Release state, content: Declared by the file. }
  - { name: Support notes, file: memories/support.md }
  - { name: Empty, content: Filled by the file. }
`;
        const result = await applyIn(store, source);
        assert.deepEqual(result.changes, [
          { action: 'update', kind: 'memory', name: 'Release state', detail: 'content changed; version 1 → 2' },
          { action: 'update', kind: 'memory', name: 'Support notes', detail: "version 1 already holds the file's content" },
          { action: 'update', kind: 'memory', name: 'Empty', detail: 'content set; version 0 → 1' },
        ]);
        const state = await resourceNamed(store.db, store.slug, 'memory', 'Release state');
        assert.equal(state.createdBy, bot, 'the Memory keeps its creator');
        assert.deepEqual(
          state.versions.map((v) => pick(v, ['content', 'created_by'])),
          records(
            ['content', 'created_by'],
            [
              ['Started the release.', bot],
              ['Declared by the file.', null],
            ],
          ),
        );
        assert.equal((await resourceNamed(store.db, store.slug, 'memory', 'Support notes')).latest, 1, 'no version for the same content');
        assert.deepEqual(
          await appliedOf(store.db, notesId),
          { version: 1, sha256: createHash('sha256').update(SUPPORT).digest('hex') },
          "remembered as the file's",
        );
        assert.equal((await resourceNamed(store.db, store.slug, 'memory', 'Empty')).versions[0]?.content, 'Filled by the file.');

        // Remembered: an agent's later write to Support notes survives the same file.
        await agentWrite(store.db, tenant, notesId, bot, `${SUPPORT}Plan C: two days.\n`);
        await agentWrite(store.db, tenant, stateId, bot, 'The agent again.');
        assert.deepEqual((await applyIn(store, source)).changes, []);
        assert.equal((await resourceNamed(store.db, store.slug, 'memory', 'Support notes')).versions.at(-1)?.content, `${SUPPORT}Plan C: two days.\n`);
      });
    });

    it('refuses a name several active Memories share, in the section and in grants and routes, with their lines', async () => {
      await withStore('m-ambiguous', async (store) => {
        await applyIn(store, BASE);
        const { tenantId: tenant, principalId: bot } = await idsOf(store.db, store.slug, 'release-bot');
        for (const content of ['One.', 'Two.']) await agentMemory(store.db, tenant, bot, 'Release state', content);
        const rows = await snapshot(store.db);
        const source = `${BASE}memories:
  - name: Release state
    content: Three.
grants:
  - { to: release-bot, on: memory:Release state, role: editor }
routes:
  - { deliver: memory:Release state, to: release-bot }
`;
        for (const dryRun of [false, true]) {
          await assert.rejects(applyIn(store, source, { dryRun }), (error) => {
            assert.ok(isKgwError(error, 'validation'), String(error));
            assert.deepEqual(error.details, {
              errors: [
                {
                  line: 11,
                  message: `memories[0].name: tenant "${store.slug}" has 2 Memories named "Release state"; the file cannot tell which one it declares (rename all but one)`,
                },
                {
                  line: 14,
                  message: `grants[0].on: memory "Release state" is ambiguous: tenant "${store.slug}" has 2 with that name (rename all but one to name it here)`,
                },
                {
                  line: 16,
                  message: `routes[0].deliver: memory "Release state" is ambiguous: tenant "${store.slug}" has 2 with that name (rename all but one to name it here)`,
                },
              ],
            });
            return true;
          });
        }
        assert.deepEqual(await snapshot(store.db), rows);
        // An archived Memory of that name does not count: the active one is meant.
        await store.db.tx((tx) =>
          tx.query(
            "UPDATE context_resources SET status = 'archived' WHERE id = (SELECT min(id::text)::uuid FROM context_resources WHERE tenant_id = $1 AND name = 'Release state')",
            [tenant],
          ),
        );
        const result = await applyIn(store, source);
        assert.deepEqual(
          result.changes.map((c) => `${c.action} ${c.kind} ${c.name}`),
          ['update memory Release state', 'add grant release-bot', 'add route memory:Release state'],
        );
        assert.equal((await resourcesNamed(store.db, store.slug, 'memory', 'Release state')).length, 2);
      });
    });

    it('takes content of exactly 25 KiB of UTF-8, inline and from a file', async () => {
      await withStore('m-limit', async (store) => {
        const full = `${'é'.repeat(12 * 1024)}${'x'.repeat(1024)}`; // 25,600 bytes
        assert.equal(Buffer.byteLength(full), 25 * 1024);
        await writeTree(store.folder, { 'memories/full.md': full });
        const result = await applyIn(store, `${BASE}memories:\n  - { name: Inline, content: "${full}" }\n  - { name: From a file, file: memories/full.md }\n`);
        assert.deepEqual(
          result.changes.slice(BASE_CHANGES).map((c) => `${c.action} ${c.name}`),
          ['create Inline', 'create From a file'],
        );
        assert.equal((await resourceNamed(store.db, store.slug, 'memory', 'From a file')).versions[0]?.content, full);
      });
    });

    it('a dry run shows the plan and writes nothing', async () => {
      await withStore('m-dry', async (store) => {
        await writeTree(store.folder, { 'memories/support.md': SUPPORT });
        const rows = await snapshot(store.db);
        const dry = await applyIn(store, MEMORIES, { dryRun: true });
        assert.equal(dry.dryRun, true);
        assert.deepEqual(
          dry.changes.filter((c) => c.kind === 'memory').map((c) => `${c.action} ${c.name}`),
          ['create Release state', 'create Support notes'],
        );
        assert.deepEqual(await snapshot(store.db), rows);
        const real = await applyIn(store, MEMORIES);
        assert.deepEqual(real.changes, dry.changes);
      });
    });

    it('counts the Memory changes in the org.apply audit event', async () => {
      await withStore('m-audit', async (store) => {
        await writeTree(store.folder, { 'memories/support.md': SUPPORT });
        await applyIn(store, MEMORIES);
        await applyIn(store, MEMORIES);
        await applyIn(store, MEMORIES.replace('No release', 'A release'));
        const events = await store.db.query<{ details: { changes: Record<string, number> } }>(
          "SELECT e.details FROM audit_events e JOIN tenants t ON t.id = e.tenant_id WHERE t.slug = $1 AND e.action = 'org.apply' ORDER BY e.at",
          [store.slug],
        );
        assert.deepEqual(
          events.map((e) => e.details.changes),
          [
            {
              'create tenant': 1,
              'create person': 1,
              'create agent': 2,
              'create group': 1,
              'add group member': 2,
              'create memory': 2,
              'add grant': 2,
              'add route': 2,
            },
            { 'update memory': 1 },
          ],
        );
      });
    });

    it('creates each Memory once when the same file is applied several times at once', async () => {
      await withStore('m-race', async (store) => {
        await writeTree(store.folder, { 'memories/support.md': SUPPORT });
        const url = store.databaseUrl;
        // Separate pools on real PostgreSQL, so the applies really race; PGlite serialises them itself.
        const dbs = url === undefined ? [store.db, store.db, store.db, store.db] : Array.from({ length: 4 }, () => openPostgres(url, { max: 2 }));
        try {
          const results = await Promise.all(dbs.map((db) => applyIn(store, MEMORIES, { db })));
          assert.deepEqual(
            results
              .map((r) => r.changes.length)
              .sort((a, b) => a - b)
              .slice(0, 3),
            [0, 0, 0],
            'one apply does it all, the others find it done',
          );
          assert.equal((await resourcesNamed(store.db, store.slug, 'memory', 'Release state')).length, 1);
          assert.equal(await countVersions(store.db, store.slug), 2);
          const edited = MEMORIES.replace('No release', 'A release');
          const again = await Promise.all(dbs.map((db) => applyIn(store, edited, { db })));
          assert.deepEqual(again.map((r) => r.changes.length).sort(), [0, 0, 0, 1]);
          assert.equal(await countVersions(store.db, store.slug), 3, 'one new version, not one per apply');
        } finally {
          await Promise.all(dbs.filter((db) => db !== store.db).map((db) => db.close()));
        }
      });
    });

    it('delivers routed Memories in get_current_context through the MCP client, and the agents’ writes survive the file', async () => {
      await withStore('m-gateway', async (store) => {
        await writeTree(store.folder, { 'memories/support.md': SUPPORT });
        await applyIn(store, MEMORIES);
        const running = await startGateway(store.db);
        const clients: Client[] = [];
        const agent = async (name: string): Promise<Agent> => {
          const client = await connectClient(`${running.url}/alignbase/mcp`, await issueToken(store.db, store.slug, name, 'context.read'));
          clients.push(client);
          await client.listTools();
          return new Agent(name, client);
        };
        try {
          await gatewayChecks(store, agent);
        } finally {
          for (const client of clients) await client.close();
          await running.close();
        }
      });
    });
  });
}

async function gatewayChecks(store: TenantScope, agent: (name: string) => Promise<Agent>): Promise<void> {
  const releaseBot = await agent('release-bot');
  const watchBot = await agent('watch-bot');
  const state = await resourceNamed(store.db, store.slug, 'memory', 'Release state');
  const notes = await resourceNamed(store.db, store.slug, 'memory', 'Support notes');
  const open = (id: string, name: string, version: number, canWrite: boolean) =>
    new RegExp(
      `<alignbase_memory id="${id}" name="${name}" version="${version}" version_id="[0-9a-f-]{36}" assignment_state="enabled" can_write="${canWrite}">\\n\\n`,
    );

  const watched = await watchBot.context();
  assert.match(watched, open(state.id, 'Release state', 1, false));
  assert.match(watched, open(notes.id, 'Support notes', 1, false));
  assert.ok(watched.includes('No release in progress.') && watched.includes('Customers on plan B get a call back within a day. – ünïcode ✓'), watched);
  const own = await releaseBot.context();
  assert.match(own, open(state.id, 'Release state', 1, true), 'release-bot is an Editor of the Memory the route delivers through its group');
  assert.ok(!own.includes('Support notes'), 'Support notes is routed to watch-bot only');

  // The agent keeps its working state in the Memory; applying the unchanged file leaves it.
  const written = await releaseBot.ok<{ version: number }>('write_memory', { memory_id: state.id, expected_version: 1, content: 'Release 1.2 tagged.' });
  assert.equal(written.version, 2);
  assert.deepEqual((await applyIn(store, MEMORIES)).changes, []);
  const read = await releaseBot.ok<{ version: number; content: string }>('read_memory', { memory_id: state.id });
  assert.partialDeepStrictEqual(read, { version: 2, content: 'Release 1.2 tagged.' });
  assert.match(await watchBot.context(), open(state.id, 'Release state', 2, false));

  // A change of the file is a new live version at once; the agent's stale write is refused.
  await applyIn(store, MEMORIES.replace('No release in progress.', 'Release 1.3 is planned.'));
  const context = await watchBot.context();
  assert.match(context, open(state.id, 'Release state', 3, false));
  assert.ok(context.includes('Release 1.3 is planned.') && !context.includes('Release 1.2 tagged.'));
  assert.equal(
    await releaseBot.fail('write_memory', { memory_id: state.id, expected_version: 2, content: 'Stale.' }),
    'memory_changed: read Memory again, preserve relevant changes, and retry',
  );
  assert.equal(
    await watchBot.fail('write_memory', { memory_id: notes.id, expected_version: 1, content: 'x' }),
    'memory_write_forbidden: the agent lacks Editor permission on this Memory; keep it read-only',
  );
}

// ---------------------------------------------------------------------------------------------
// Refusals

/** The org file's folder for the refusal cases. */
const FOLDER = mkdtempSync(path.join(os.tmpdir(), 'kgw-org-memories-'));
for (const [relative, content] of Object.entries({
  'memories/ok.md': 'Fine.\n',
  'memories/empty.md': '',
  'memories/latin1.md': Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]),
  'memories/big.md': 'é'.repeat(13 * 1024),
  'memories/folder/a.md': 'a\n',
})) {
  mkdirSync(path.dirname(path.join(FOLDER, relative)), { recursive: true });
  writeFileSync(path.join(FOLDER, relative), content);
}

/** BASE (9 lines) followed by `rest`: line 10 is the first line of `rest`. */
const file = (rest: string): string => `${BASE}${rest}`;

const TOO_LARGE = 'Memory content must be 25 KB or smaller (25,600 bytes of UTF-8)';

const CASES: RefusalCase[] = [
  {
    title: 'memory entries that break the rules of their keys',
    folder: FOLDER,
    source: file(`memories:
  - { content: No name. }
  - { name: "   ", content: Blank name. }
  - { name: "${'x'.repeat(201)}", content: Too long. }
  - { name: Neither }
  - { name: Both, content: Inline., file: memories/ok.md }
  - { name: Empty, content: "" }
  - { name: Number, content: 42 }
  - { name: Large, content: "${'x'.repeat(25 * 1024 + 1)}" }
  - { name: Wide, content: "${'é'.repeat(12 * 1024 + 513)}" }
  - { name: Notes, content: x }
  - { name: " Notes ", content: again }
  - { name: Published, content: x, publish: true }
  - name: Keys
    content: x
    authority: must_follow
`),
    errors: [
      [11, 'memories[0] is missing the required key "name"'],
      [12, 'memories[1].name: "   " is not a name of 1 to 200 characters'],
      [13, `memories[2].name: "${'x'.repeat(75)}…" is not a name of 1 to 200 characters`],
      [14, 'memories[3] needs content (the text itself) or file (a path to it)'],
      [15, 'memories[4] has both content and file; give one of them'],
      [16, 'memories[5].content: "" is not text (markdown) of at least one character'],
      [17, 'memories[6].content must be text (markdown) of at least one character, not a number; put it in quotes to make it text'],
      [18, `memories[7].content: ${TOO_LARGE}; the content is 25,601 bytes`],
      [19, `memories[8].content: ${TOO_LARGE}; the content is 25,602 bytes`],
      [21, 'memories[10].name: duplicate memory name "Notes" (already listed at line 20)'],
      [22, 'unknown key "publish" in memories[11] (expected name, content, file)'],
      [25, 'unknown key "authority" in memories[12] (expected name, content, file)'],
    ],
  },
  {
    title: 'memory files that cannot be used',
    folder: FOLDER,
    source: file(`memories:
  - { name: Escaping, file: ../secrets.md }
  - { name: Missing, file: memories/missing.md }
  - { name: Folder, file: memories/folder }
  - { name: Empty, file: memories/empty.md }
  - { name: Latin-1, file: memories/latin1.md }
  - { name: Big, file: memories/big.md }
`),
    errors: [
      [11, 'memories[0].file: "../secrets.md" must stay inside the org file\'s folder (no ..)'],
      [12, 'memories[1].file: "memories/missing.md" does not exist'],
      [13, 'memories[2].file: "memories/folder" is a folder, not a file'],
      [14, 'memories[3].file: "memories/empty.md" is empty'],
      [15, 'memories[4].file: "memories/latin1.md" is not UTF-8 text; Memory content is text'],
      [16, `memories[5].file: ${TOO_LARGE}; "memories/big.md" is 26,624 bytes`],
    ],
  },
  {
    title: 'grants and routes naming declared Memories that have problems of their own, reported once',
    folder: FOLDER,
    source: file(`memories:
  - { name: Broken, file: memories/missing.md }
grants:
  - { to: release-bot, on: memory:Broken, role: editor }
  - { to: release-bot, on: memory:Undeclared, role: viewer }
routes:
  - { deliver: memory:Broken, to: watch-bot }
`),
    errors: [
      [11, 'memories[0].file: "memories/missing.md" does not exist'],
      [14, 'grants[1].on: no memory "Undeclared" is declared in the file or exists in tenant "acme"'],
    ],
  },
];

for (const backend of BACKENDS) {
  describe(`org file memories errors on ${backend.name}`, () => {
    let store: ContextStore;
    before(async () => {
      store = await openContextStore(backend);
      await applyOrgFile(store.db, { source: BASE }, cliTrail(store.db));
    });
    after(() => store.dispose());

    itRefuses(
      () => store.db,
      CASES,
      {},
      () => store.blob,
    );

    it('applies the good file of the same fixtures, so the refusals above are about the bad ones only', async () => {
      const source = file('memories:\n  - { name: OK, file: memories/ok.md }\n');
      const result = await applyOrgFile(store.db, { source, files: await readReferencedFiles(source, FOLDER), dryRun: true }, cliTrail(store.db));
      assert.deepEqual(
        result.changes.map((c) => `${c.action} ${c.kind} ${c.name}`),
        ['create memory OK'],
      );
    });
  });
}

after(() => rmSync(FOLDER, { recursive: true, force: true }));
