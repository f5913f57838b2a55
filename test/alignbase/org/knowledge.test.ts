import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { effectiveContextRole } from '../../../src/alignbase/access/grants.ts';
import { routedTo } from '../../../src/alignbase/access/routes.ts';
import { createKnowledge } from '../../../src/alignbase/context/knowledge.ts';
import { isKgwError } from '../../../src/kernel/errors.ts';
import { publishVersion, saveVersion } from '../../../src/alignbase/versions/versions.ts';
import { openPostgres } from '../../../src/store/postgres.ts';
import { ACME_RELEASE_BOT_ORG, pick, records } from '../../support/fixtures.ts';
import { storeBackends } from '../../support/stores.ts';
import { applyIn, countVersions, idsOf, resourceNamed, resourcesNamed, sharedStore, writeTree } from './context-support.ts';
import { snapshot } from '../../org/support.ts';

const BASE = `${ACME_RELEASE_BOT_ORG}groups:
  - { name: eng, members: [release-bot] }
`;

const KNOWLEDGE = `${BASE}knowledge:
  - title: Release policy
    content: "Always run the release check."
    authority: must_follow
    publish: true
  - title: "  Handbook  "
    file: ./docs//handbook.md
    review_by: 2030-01-01
    expires_at: 2031-06-30
grants:
  - { to: release-bot, on: "knowledge:Release policy", role: publisher }
  - { to: group:eng, on: knowledge:Handbook, role: viewer }
routes:
  - { deliver: knowledge:Release policy, to: release-bot }
`;

const HANDBOOK = '# Handbook\n\nWelcome to Acme. – ünïcode ✓\n';

const BACKENDS = storeBackends();

for (const backend of BACKENDS) {
  describe(`org file knowledge on ${backend.name}`, () => {
    // One store for the suite; each test works in a tenant of its own (`acme` in the files).
    const withStore = sharedStore(backend);

    it('creates Knowledge inline and from a file, publishes when asked, and grants and routes name it by title', async () => {
      await withStore('k-create', async (store) => {
        await writeTree(store.folder, { 'docs/handbook.md': HANDBOOK });
        const result = await applyIn(store, KNOWLEDGE);
        assert.deepEqual(result.changes.slice(5), [
          { action: 'create', kind: 'knowledge', name: 'Release policy', detail: 'authority must_follow' },
          { action: 'publish', kind: 'knowledge', name: 'Release policy', detail: 'version 1' },
          { action: 'create', kind: 'knowledge', name: 'Handbook', detail: 'review_by 2030-01-01; expires_at 2031-06-30' },
          { action: 'add', kind: 'grant', name: 'release-bot', detail: 'on knowledge:Release policy as publisher' },
          { action: 'add', kind: 'grant', name: 'group:eng', detail: 'on knowledge:Handbook as viewer' },
          { action: 'add', kind: 'route', name: 'knowledge:Release policy', detail: 'to release-bot' },
        ]);
        const policy = await resourceNamed(store.db, store.slug, 'knowledge', 'Release policy');
        assert.equal(policy.latest, 1);
        assert.equal(policy.published, 1);
        assert.equal(policy.createdBy, null);
        assert.deepEqual(
          policy.versions.map((v) => pick(v, ['version', 'content', 'authority', 'created_by'])),
          [{ version: 1, content: 'Always run the release check.', authority: 'must_follow', created_by: null }],
        );
        const handbook = await resourceNamed(store.db, store.slug, 'knowledge', 'Handbook');
        assert.partialDeepStrictEqual(handbook, { published: null, reviewBy: '2030-01-01', expiresAt: '2031-06-30' });
        assert.deepEqual(
          handbook.versions.map((v) => pick(v, ['content', 'authority'])),
          [{ content: HANDBOOK, authority: 'informational' }],
        );

        const { tenantId: tenant, principalId: bot } = await idsOf(store.db, store.slug, 'release-bot');
        assert.equal(await effectiveContextRole(store.db, tenant, bot, 'knowledge', policy.id), 'publisher');
        assert.equal(await effectiveContextRole(store.db, tenant, bot, 'knowledge', handbook.id), 'viewer');
        assert.deepEqual(
          (await routedTo(store.db, tenant, bot)).map((r) => r.name),
          ['Release policy'],
        );

        const before = await snapshot(store.db);
        assert.deepEqual((await applyIn(store, KNOWLEDGE)).changes, [], 'applying the unchanged file again changes nothing');
        assert.deepEqual(await snapshot(store.db), before, 'and writes nothing: no new versions');
      });
    });

    it('saves exactly one new version when the content or the authority changes, and publishes only when asked', async () => {
      await withStore('k-versions', async (store) => {
        await writeTree(store.folder, { 'docs/handbook.md': HANDBOOK });
        await applyIn(store, KNOWLEDGE);
        const versions = await countVersions(store.db, store.slug);

        const edited = KNOWLEDGE.replace('Always run the release check.', 'Always run the release check twice.').replace('    publish: true\n', '');
        const changed = await applyIn(store, edited);
        assert.deepEqual(changed.changes, [{ action: 'update', kind: 'knowledge', name: 'Release policy', detail: 'content changed; version 1 → 2' }]);
        assert.equal(await countVersions(store.db, store.slug), versions + 1);
        let policy = await resourceNamed(store.db, store.slug, 'knowledge', 'Release policy');
        assert.partialDeepStrictEqual(policy, { latest: 2, published: 1 }, 'publish left out: the new version waits, version 1 stays published');
        assert.deepEqual((await applyIn(store, edited)).changes, []);

        const published = await applyIn(store, edited.replace('authority: must_follow\n', 'authority: must_follow\n    publish: true\n'));
        assert.deepEqual(published.changes, [{ action: 'publish', kind: 'knowledge', name: 'Release policy', detail: 'version 1 → 2' }]);
        assert.equal(await countVersions(store.db, store.slug), versions + 1);

        // The file is the whole truth for authority (informational when left out) and the dates.
        const relaxed = edited
          .replace('    authority: must_follow\n', '')
          .replace('    expires_at: 2031-06-30\n', '')
          .replace('review_by: 2030-01-01', 'review_by: 2030-02-01');
        await writeTree(store.folder, { 'docs/handbook.md': `${HANDBOOK}More.\n` });
        const second = await applyIn(store, relaxed);
        assert.deepEqual(second.changes, [
          { action: 'update', kind: 'knowledge', name: 'Release policy', detail: 'authority must_follow → informational; version 2 → 3' },
          {
            action: 'update',
            kind: 'knowledge',
            name: 'Handbook',
            detail: 'content changed; version 1 → 2; review_by 2030-01-01 → 2030-02-01; expires_at 2031-06-30 → none',
          },
        ]);
        assert.equal(await countVersions(store.db, store.slug), versions + 3);
        policy = await resourceNamed(store.db, store.slug, 'knowledge', 'Release policy');
        assert.deepEqual(
          policy.versions.map((v) => pick(v, ['version', 'authority', 'created_by'])),
          records(
            ['version', 'authority', 'created_by'],
            [
              [1, 'must_follow', null],
              [2, 'must_follow', null],
              [3, 'informational', null],
            ],
          ),
        );
        assert.equal(policy.published, 2, 'publish: false never unpublishes');
        const handbook = await resourceNamed(store.db, store.slug, 'knowledge', 'Handbook');
        assert.partialDeepStrictEqual(handbook, { latest: 2, reviewBy: '2030-02-01', expiresAt: null });
        assert.equal(handbook.versions[1]?.content, `${HANDBOOK}More.\n`);

        const datesOnly = await applyIn(store, relaxed.replace('review_by: 2030-02-01', 'review_by: 2030-03-01'));
        assert.deepEqual(datesOnly.changes, [{ action: 'update', kind: 'knowledge', name: 'Handbook', detail: 'review_by 2030-02-01 → 2030-03-01' }]);
        assert.equal(await countVersions(store.db, store.slug), versions + 3, 'dates alone save no version');
      });
    });

    it('takes over Knowledge made through the tools by its title, keeping its attachments, and gives a versionless one its first version', async () => {
      await withStore('k-takeover', async (store) => {
        await applyIn(store, BASE);
        const { tenantId: tenant } = await idsOf(store.db, store.slug, 'release-bot');
        const attachment = { path: 'a.txt', mediaType: 'text/plain', size: 1, sha256: 'a'.repeat(64), digestEncoding: 'text' as const };
        await store.db.tx(async (tx) => {
          await createKnowledge(tx, tenant, {
            title: 'Release policy',
            content: 'Old text.',
            authority: 'informational',
            createdBy: undefined,
            publish: true,
            attachments: [attachment],
          });
          await tx.query("INSERT INTO context_resources (tenant_id, id, type, name) VALUES ($1, gen_random_uuid(), 'knowledge', 'Handbook')", [tenant]);
        });
        await writeTree(store.folder, { 'docs/handbook.md': HANDBOOK });
        const result = await applyIn(
          store,
          `${BASE}knowledge:
  - { title: Release policy, content: New text. }
  - { title: Handbook, file: docs/handbook.md, publish: true }
`,
        );
        assert.deepEqual(result.changes, [
          { action: 'update', kind: 'knowledge', name: 'Release policy', detail: 'content changed; version 1 → 2' },
          { action: 'update', kind: 'knowledge', name: 'Handbook', detail: 'content set; version 0 → 1' },
          { action: 'publish', kind: 'knowledge', name: 'Handbook', detail: 'version 1' },
        ]);
        const policy = await resourceNamed(store.db, store.slug, 'knowledge', 'Release policy');
        assert.deepEqual(
          policy.versions.map((v) => ({ content: v.content, attachments: v.attachments.map((a) => a.path) })),
          [
            { content: 'Old text.', attachments: ['a.txt'] },
            { content: 'New text.', attachments: ['a.txt'] },
          ],
        );
        assert.equal(policy.published, 1);
      });
    });

    it('keeps a version saved since when the unchanged file is applied again, also where the file wrote before it recorded what it applied', async () => {
      await withStore('k-reviewed', async (store) => {
        await writeTree(store.folder, { 'docs/handbook.md': HANDBOOK });
        await applyIn(store, KNOWLEDGE);
        const { tenantId, principalId } = await idsOf(store.db, store.slug, 'release-bot');
        const policy = await resourceNamed(store.db, store.slug, 'knowledge', 'Release policy');
        // What a reviewer's accepted draft does: a version by someone, published.
        await store.db.tx(async (tx) => {
          await saveVersion(tx, tenantId, { id: policy.id, latestVersion: 1 }, { content: 'Reviewed.', authority: 'must_follow', createdBy: principalId });
          await publishVersion(tx, tenantId, { id: policy.id, publishedVersion: 1 }, 2);
        });
        assert.deepEqual((await applyIn(store, KNOWLEDGE)).changes, []);
        // Knowledge the file wrote before org_applied_content held it: its own latest version is the baseline.
        await store.db.tx((tx) => tx.query('DELETE FROM org_applied_content WHERE tenant_id = $1', [tenantId]));
        assert.deepEqual((await applyIn(store, KNOWLEDGE, { dryRun: true })).changes, []);
        assert.deepEqual((await applyIn(store, KNOWLEDGE)).changes, []);
        assert.partialDeepStrictEqual(await resourceNamed(store.db, store.slug, 'knowledge', 'Release policy'), { latest: 2, published: 2 });

        // A changed entry replaces it, and says so.
        const edited = KNOWLEDGE.replace('Always run the release check.', 'Always run the release check twice.');
        assert.deepEqual((await applyIn(store, edited)).changes, [
          {
            action: 'update',
            kind: 'knowledge',
            name: 'Release policy',
            detail: 'content changed; version 2 → 3; replaces version 2, written since the last apply',
          },
          { action: 'publish', kind: 'knowledge', name: 'Release policy', detail: 'version 2 → 3' },
        ]);
        assert.deepEqual((await applyIn(store, edited)).changes, []);
        // An entry changed to what the latest version holds saves nothing; it is remembered.
        await store.db.tx((tx) =>
          saveVersion(tx, tenantId, { id: policy.id, latestVersion: 3 }, { content: 'Agreed.', authority: 'must_follow', createdBy: principalId }),
        );
        const agreed = KNOWLEDGE.replace('Always run the release check.', 'Agreed.').replace('    publish: true\n', '');
        assert.deepEqual((await applyIn(store, agreed)).changes, [
          { action: 'update', kind: 'knowledge', name: 'Release policy', detail: "version 4 already holds the file's content" },
        ]);
        assert.deepEqual((await applyIn(store, agreed)).changes, []);
        assert.equal(await countVersions(store.db, store.slug), 5);
      });
    });

    it('refuses a title several Knowledge share, in the section and in grants and routes, with their lines', async () => {
      await withStore('k-ambiguous', async (store) => {
        await applyIn(store, BASE);
        const { tenantId: tenant } = await idsOf(store.db, store.slug, 'release-bot');
        await store.db.tx(async (tx) => {
          for (const content of ['One.', 'Two.'])
            await createKnowledge(tx, tenant, { title: 'Handbook', content, authority: 'informational', createdBy: undefined, publish: false });
        });
        const rows = await snapshot(store.db);
        const source = `${BASE}knowledge:
  - title: Handbook
    content: Three.
grants:
  - { to: release-bot, on: knowledge:Handbook, role: viewer }
routes:
  - { deliver: knowledge:Handbook, to: release-bot }
`;
        for (const dryRun of [false, true]) {
          await assert.rejects(applyIn(store, source, { dryRun }), (error) => {
            assert.ok(isKgwError(error, 'validation'), String(error));
            assert.deepEqual(error.details, {
              errors: [
                {
                  line: 10,
                  message: `knowledge[0].title: tenant "${store.slug}" has 2 Knowledge titled "Handbook"; the file cannot tell which one it declares (rename all but one)`,
                },
                {
                  line: 13,
                  message: `grants[0].on: knowledge "Handbook" is ambiguous: tenant "${store.slug}" has 2 with that name (rename all but one to name it here)`,
                },
                {
                  line: 15,
                  message: `routes[0].deliver: knowledge "Handbook" is ambiguous: tenant "${store.slug}" has 2 with that name (rename all but one to name it here)`,
                },
              ],
            });
            return true;
          });
        }
        assert.deepEqual(await snapshot(store.db), rows);
        // An archived Knowledge of that title does not count: the active one is meant.
        await store.db.tx((tx) =>
          tx.query(
            "UPDATE context_resources SET status = 'archived' WHERE id = (SELECT min(id::text)::uuid FROM context_resources WHERE tenant_id = $1 AND name = 'Handbook')",
            [tenant],
          ),
        );
        const result = await applyIn(store, source);
        assert.deepEqual(
          result.changes.map((c) => `${c.action} ${c.kind} ${c.name}`),
          ['update knowledge Handbook', 'add grant release-bot', 'add route knowledge:Handbook'],
        );
        assert.equal((await resourcesNamed(store.db, store.slug, 'knowledge', 'Handbook')).length, 2);
      });
    });

    it('a dry run shows the plan and writes nothing', async () => {
      await withStore('k-dry', async (store) => {
        await writeTree(store.folder, { 'docs/handbook.md': HANDBOOK });
        const rows = await snapshot(store.db);
        const dry = await applyIn(store, KNOWLEDGE, { dryRun: true });
        assert.equal(dry.dryRun, true);
        assert.deepEqual(
          dry.changes.filter((c) => c.kind === 'knowledge').map((c) => `${c.action} ${c.name}`),
          ['create Release policy', 'publish Release policy', 'create Handbook'],
        );
        assert.deepEqual(await snapshot(store.db), rows);
        const real = await applyIn(store, KNOWLEDGE);
        assert.deepEqual(
          real.changes,
          dry.changes.map((c) => c),
        );
      });
    });

    it('counts the Knowledge changes in the org.apply audit event', async () => {
      await withStore('k-audit', async (store) => {
        await writeTree(store.folder, { 'docs/handbook.md': HANDBOOK });
        await applyIn(store, KNOWLEDGE);
        await applyIn(store, KNOWLEDGE.replace('Always run', 'Never skip'));
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
              'create agent': 1,
              'create group': 1,
              'add group member': 1,
              'create knowledge': 2,
              'publish knowledge': 1,
              'add grant': 2,
              'add route': 1,
            },
            { 'update knowledge': 1, 'publish knowledge': 1 },
          ],
        );
      });
    });

    it('creates each Knowledge once when the same file is applied several times at once', async () => {
      await withStore('k-race', async (store) => {
        await writeTree(store.folder, { 'docs/handbook.md': HANDBOOK });
        const url = store.databaseUrl;
        // Separate pools on real PostgreSQL, so the applies really race; PGlite serialises them itself.
        const dbs = url === undefined ? [store.db, store.db, store.db, store.db] : Array.from({ length: 4 }, () => openPostgres(url, { max: 2 }));
        try {
          const results = await Promise.all(dbs.map((db) => applyIn(store, KNOWLEDGE, { db })));
          const counts = results.map((r) => r.changes.length).sort((a, b) => a - b);
          assert.deepEqual(counts.slice(0, 3), [0, 0, 0], 'one apply does it all, the others find it done');
          assert.equal((await resourcesNamed(store.db, store.slug, 'knowledge', 'Release policy')).length, 1);
          assert.equal((await resourcesNamed(store.db, store.slug, 'knowledge', 'Handbook')).length, 1);
          assert.equal(await countVersions(store.db, store.slug), 2);
          const edited = KNOWLEDGE.replace('Always run', 'Never skip');
          const again = await Promise.all(dbs.map((db) => applyIn(store, edited, { db })));
          assert.deepEqual(again.map((r) => r.changes.length).sort(), [0, 0, 0, 2]);
          assert.equal(await countVersions(store.db, store.slug), 3, 'one new version, not one per apply');
        } finally {
          await Promise.all(dbs.filter((db) => db !== store.db).map((db) => db.close()));
        }
      });
    });
  });
}
