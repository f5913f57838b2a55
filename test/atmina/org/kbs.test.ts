import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { isKgwError } from '../../../src/kernel/errors.ts';
import type { Db } from '../../../src/store/db.ts';
import { ACME_RELEASE_BOT_ORG } from '../../support/fixtures.ts';
import { storeBackends } from '../../support/stores.ts';
import { PNG, applyIn, blobBytes, sharedStore, writeTree } from '../../alignbase/org/context-support.ts';

const BASE = `${ACME_RELEASE_BOT_ORG}teams:
  - slug: docs
    name: Docs team
    members: { alice@acme.test: admin, release-bot: editor }
  - slug: support
    name: Support
    members: { alice@acme.test: admin }
`;

const KBS = `${BASE}kbs:
  - slug: handbook
    name: Handbook
    team: docs
    visibility: public
    description: What everyone should know.
    files_from: ./handbook
  - slug: notes
    name: Notes
    team: support
`;

const README = '# Handbook\n\nStart here. – ünïcode ✓\n';
const POLICY = '# Retention\n\nKeep records 7 years.\n';

interface FileState {
  path: string;
  version: number;
  author: string | null;
  operations: string[];
}

async function kbRows(db: Db, tenant: string): Promise<{ slug: string; name: string; team: string; visibility: string; description: string }[]> {
  return db.query(
    `SELECT k.slug, k.name, t.slug AS team, k.visibility, k.description
       FROM kbs k JOIN teams t ON t.tenant_id = k.tenant_id AND t.id = k.team_id JOIN tenants n ON n.id = k.tenant_id
      WHERE n.slug = $1 ORDER BY k.slug`,
    [tenant],
  );
}

async function files(db: Db, tenant: string, kb: string): Promise<FileState[]> {
  const rows = await db.query<{ path: string; version: number; author: string | null; operations: string[] }>(
    `SELECT f.path, f.latest_version AS version, f.updated_by AS author,
            ARRAY(SELECT v.operation FROM kb_file_versions v WHERE v.tenant_id = f.tenant_id AND v.file_id = f.id ORDER BY v.version) AS operations
       FROM kb_files f JOIN kbs k ON k.tenant_id = f.tenant_id AND k.id = f.kb_id JOIN tenants n ON n.id = f.tenant_id
      WHERE n.slug = $1 AND k.slug = $2 AND f.deleted_at IS NULL ORDER BY f.path`,
    [tenant, kb],
  );
  return rows.map((r) => ({ path: r.path, version: r.version, author: r.author, operations: [...r.operations] }));
}

function kbChanges<C extends { kind: string }>(changes: readonly C[]): C[] {
  return changes.filter((c) => c.kind === 'knowledge base' || c.kind === 'kb file');
}

for (const backend of storeBackends()) {
  describe(`org file kbs on ${backend.name}`, () => {
    const withStore = sharedStore(backend);

    it('declares Knowledge Bases and seeds one from a folder next to the file', async () => {
      await withStore('kb-create', async (store) => {
        await writeTree(store.folder, { 'handbook/README.md': README, 'handbook/policies/retention.md': POLICY });
        const result = await applyIn(store, KBS);
        assert.deepEqual(kbChanges(result.changes), [
          { action: 'create', kind: 'knowledge base', name: 'handbook', detail: 'team docs, public' },
          { action: 'create', kind: 'kb file', name: 'handbook/README.md' },
          { action: 'create', kind: 'kb file', name: 'handbook/policies/retention.md' },
          { action: 'create', kind: 'knowledge base', name: 'notes', detail: 'team support, team' },
        ]);
        assert.deepEqual(await kbRows(store.db, store.slug), [
          { slug: 'handbook', name: 'Handbook', team: 'docs', visibility: 'public', description: 'What everyone should know.' },
          { slug: 'notes', name: 'Notes', team: 'support', visibility: 'team', description: '' },
        ]);
        assert.deepEqual(await files(store.db, store.slug, 'handbook'), [
          { path: 'README.md', version: 1, author: null, operations: ['create'] },
          { path: 'policies/retention.md', version: 1, author: null, operations: ['create'] },
        ]);
        const [readme] = await store.db.query<{ sha256: string }>(
          `SELECT f.sha256 FROM kb_files f JOIN tenants n ON n.id = f.tenant_id WHERE n.slug = $1 AND f.path = 'README.md'`,
          [store.slug],
        );
        assert.equal((await blobBytes(store.blob, readme?.sha256 ?? ''))?.toString('utf8'), README);
      });
    });

    it('writes nothing when applied again with an unchanged folder', async () => {
      await withStore('kb-again', async (store) => {
        await writeTree(store.folder, { 'handbook/README.md': README });
        await applyIn(store, KBS);
        const [before] = await store.db.query<{ versions: number; outbox: number }>(
          `SELECT (SELECT count(*)::int FROM kb_file_versions) AS versions, (SELECT count(*)::int FROM outbox) AS outbox`,
        );
        assert.deepEqual(kbChanges((await applyIn(store, KBS)).changes), []);
        const [after] = await store.db.query<{ versions: number; outbox: number }>(
          `SELECT (SELECT count(*)::int FROM kb_file_versions) AS versions, (SELECT count(*)::int FROM outbox) AS outbox`,
        );
        assert.deepEqual(after, before);
      });
    });

    it('saves one new version of a changed file and leaves files removed from the folder alone', async () => {
      await withStore('kb-change', async (store) => {
        await writeTree(store.folder, { 'handbook/README.md': README, 'handbook/policies/retention.md': POLICY });
        await applyIn(store, KBS);
        await writeTree(store.folder, { 'handbook/README.md': `${README}\nMore.\n` });
        await rm(path.join(store.folder, 'handbook', 'policies'), { recursive: true });
        const result = await applyIn(store, KBS);
        assert.deepEqual(kbChanges(result.changes), [{ action: 'update', kind: 'kb file', name: 'handbook/README.md', detail: 'content changed' }]);
        assert.deepEqual(await files(store.db, store.slug, 'handbook'), [
          { path: 'README.md', version: 2, author: null, operations: ['create', 'overwrite'] },
          { path: 'policies/retention.md', version: 1, author: null, operations: ['create'] },
        ]);
      });
    });

    it('enqueues each seeded file for search and the graph', async () => {
      await withStore('kb-outbox', async (store) => {
        await writeTree(store.folder, { 'handbook/README.md': README });
        await applyIn(store, KBS);
        const rows = await store.db.query<{ projection: string; operation: string }>(
          `SELECT o.projection, o.operation FROM outbox o JOIN tenants n ON n.id = o.tenant_id
            WHERE n.slug = $1 AND o.resource_key LIKE 'kb_file:%' ORDER BY o.projection`,
          [store.slug],
        );
        assert.deepEqual(
          rows.map((r) => ({ ...r })),
          [
            { projection: 'graph', operation: 'upsert' },
            { projection: 'search', operation: 'upsert' },
          ],
        );
      });
    });

    it('updates a declared KB’s name, team, visibility and description', async () => {
      await withStore('kb-update', async (store) => {
        await writeTree(store.folder, { 'handbook/README.md': README });
        await applyIn(store, KBS);
        const changed = KBS.replace('name: Handbook', 'name: The Handbook')
          .replace('visibility: public', 'visibility: private')
          .replace('team: support', 'team: docs');
        const result = await applyIn(store, changed);
        assert.deepEqual(kbChanges(result.changes), [
          { action: 'update', kind: 'knowledge base', name: 'handbook', detail: 'name "Handbook" → "The Handbook"; visibility public → private' },
          { action: 'update', kind: 'knowledge base', name: 'notes', detail: 'team → docs' },
        ]);
        assert.partialDeepStrictEqual(await kbRows(store.db, store.slug), [
          { slug: 'handbook', name: 'The Handbook', visibility: 'private' },
          { slug: 'notes', team: 'docs' },
        ]);
      });
    });

    it('refuses a folder file that is not UTF-8 text, writing nothing', async () => {
      await withStore('kb-refuse', async (store) => {
        await writeTree(store.folder, { 'handbook/README.md': README, 'handbook/logo.png': PNG });
        await assert.rejects(applyIn(store, KBS), (error: unknown) => {
          assert.ok(isKgwError(error, 'validation'));
          assert.match(error.message, /"handbook\/logo\.png" is not UTF-8 text; upload Assets with request_uploads instead/);
          return true;
        });
        assert.deepEqual(await kbRows(store.db, store.slug), []);
      });
    });

    it('refuses a team the file does not declare and the tenant does not have', async () => {
      await withStore('kb-team', async (store) => {
        await writeTree(store.folder, { 'handbook/README.md': README });
        await assert.rejects(applyIn(store, KBS.replace('team: support', 'team: nowhere')), (error: unknown) => {
          assert.ok(isKgwError(error, 'validation'));
          assert.match(error.message, /kbs\[1\]\.team: no team "nowhere" is declared in the file or exists in tenant/);
          return true;
        });
      });
    });

    it('plans without writing in a dry run', async () => {
      await withStore('kb-dry', async (store) => {
        await writeTree(store.folder, { 'handbook/README.md': README });
        const result = await applyIn(store, KBS, { dryRun: true });
        assert.equal(kbChanges(result.changes).length, 3);
        assert.deepEqual(await kbRows(store.db, store.slug), []);
      });
    });
  });
}
