import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { effectiveContextRole } from '../../../src/alignbase/access/grants.ts';
import { routedTo } from '../../../src/alignbase/access/routes.ts';
import { applyOrgFile, readReferencedFiles } from '../../../src/org-sections.ts';
import { cliTrail } from '../../support/audit.ts';
import { ACME_RELEASE_BOT_ORG, pick, records } from '../../support/fixtures.ts';
import { storeBackends } from '../../support/stores.ts';
import { PNG, applyIn, blobBytes, blobCount, countVersions, idsOf, resourceNamed, sharedStore, skillMd, writeTree } from './context-support.ts';
import { snapshot } from '../../org/support.ts';

const BASE = ACME_RELEASE_BOT_ORG;

const SKILLS = `${BASE}skills:
  - dir: skills/release-check
    publish: true
  - dir: ./skills/triage/
    review_by: 2030-01-01
grants:
  - { to: release-bot, on: skill:release-check, role: editor }
routes:
  - { deliver: skill:triage, to: release-bot }
`;

const FILES = {
  'skills/release-check/SKILL.md': skillMd('release-check', 'Checks that a release is ready.'),
  'skills/release-check/scripts/check.sh': '#!/bin/sh\necho ready\n',
  'skills/release-check/assets/logo.png': PNG,
  'skills/release-check/.hidden-notes.txt': 'hidden files are files too\n',
  'skills/triage/SKILL.md': skillMd('triage'),
};

const sha256 = (bytes: string | Buffer): string => createHash('sha256').update(bytes).digest('hex');

for (const backend of storeBackends()) {
  describe(`org file skills on ${backend.name}`, () => {
    // One store for the suite (and one blob store: tests count only the blobs they expect); each test has a tenant of its own.
    const withStore = sharedStore(backend);

    it('creates Skills from folders: SKILL.md and every file as an attachment, bytes in the blob store', async () => {
      await withStore('s-create', async (store) => {
        await writeTree(store.folder, FILES);
        const result = await applyIn(store, SKILLS);
        assert.deepEqual(result.changes.slice(3), [
          { action: 'create', kind: 'skill', name: 'release-check', detail: '3 files besides SKILL.md' },
          { action: 'publish', kind: 'skill', name: 'release-check', detail: 'version 1' },
          { action: 'create', kind: 'skill', name: 'triage', detail: 'review_by 2030-01-01' },
          { action: 'add', kind: 'grant', name: 'release-bot', detail: 'on skill:release-check as editor' },
          { action: 'add', kind: 'route', name: 'skill:triage', detail: 'to release-bot' },
        ]);
        const skill = await resourceNamed(store.db, store.slug, 'skill', 'release-check');
        assert.partialDeepStrictEqual(skill, { latest: 1, published: 1, createdBy: null });
        const [version] = skill.versions;
        assert.ok(version);
        assert.equal(version.content, FILES['skills/release-check/SKILL.md']);
        assert.partialDeepStrictEqual(version, { name: 'release-check', description: 'Checks that a release is ready.', created_by: null });
        assert.deepEqual(
          version.attachments.map((a) => pick(a, ['path', 'media_type', 'size', 'digest_encoding'])),
          records(
            ['path', 'media_type', 'size', 'digest_encoding'],
            [
              ['.hidden-notes.txt', 'text/plain', 27, 'text'],
              ['assets/logo.png', 'image/png', PNG.length, 'binary'],
              ['scripts/check.sh', 'text/x-shellscript', 21, 'text'],
            ],
          ),
        );
        const { attachments } = version;
        for (const [relative, content] of Object.entries(FILES).filter(([p]) => p.startsWith('skills/release-check/') && !p.endsWith('SKILL.md'))) {
          const entry = attachments.find((a) => `skills/release-check/${a.path}` === relative);
          assert.equal(entry?.sha256, sha256(content));
          assert.deepEqual(await blobBytes(store.blob, sha256(content)), Buffer.from(content), `${relative} is in the blob store`);
        }
        const triage = await resourceNamed(store.db, store.slug, 'skill', 'triage');
        assert.partialDeepStrictEqual(triage, { published: null, reviewBy: '2030-01-01' });
        assert.deepEqual(triage.versions[0]?.attachments, []);

        const { tenantId, principalId } = await idsOf(store.db, store.slug, 'release-bot');
        assert.equal(await effectiveContextRole(store.db, tenantId, principalId, 'skill', skill.id), 'editor');
        assert.deepEqual(
          (await routedTo(store.db, tenantId, principalId)).map((r) => r.name),
          ['triage'],
        );

        const rows = await snapshot(store.db);
        const blobs = await blobCount(store.blob);
        assert.deepEqual((await applyIn(store, SKILLS)).changes, []);
        assert.deepEqual(await snapshot(store.db), rows, 'no new versions, nothing written');
        assert.equal(await blobCount(store.blob), blobs);
      });
    });

    it('saves one new version when SKILL.md or a file changes, is added or removed, and stores only the new bytes', async () => {
      await withStore('s-versions', async (store) => {
        await writeTree(store.folder, FILES);
        await applyIn(store, SKILLS);
        const versions = await countVersions(store.db, store.slug);
        await writeTree(store.folder, {
          'skills/release-check/scripts/check.sh': '#!/bin/sh\necho still ready\n',
          'skills/release-check/docs/usage.md': '# Usage\n',
        });
        await rm(path.join(store.folder, 'skills/release-check/.hidden-notes.txt'));
        const changed = await applyIn(store, SKILLS);
        assert.deepEqual(changed.changes, [
          {
            action: 'update',
            kind: 'skill',
            name: 'release-check',
            detail: 'added docs/usage.md; changed scripts/check.sh; removed .hidden-notes.txt; version 1 → 2',
          },
          { action: 'publish', kind: 'skill', name: 'release-check', detail: 'version 1 → 2' },
        ]);
        assert.equal(await countVersions(store.db, store.slug), versions + 1);
        assert.deepEqual(await blobBytes(store.blob, sha256('# Usage\n')), Buffer.from('# Usage\n'));

        await writeTree(store.folder, { 'skills/triage/SKILL.md': skillMd('triage', 'Sorts incoming issues.') });
        const edited = await applyIn(store, SKILLS.replace('review_by: 2030-01-01', 'review_by: 2030-01-01\n    expires_at: 2030-12-31'));
        assert.deepEqual(edited.changes, [
          { action: 'update', kind: 'skill', name: 'triage', detail: 'SKILL.md changed; version 1 → 2; expires_at none → 2030-12-31' },
        ]);
        const triage = await resourceNamed(store.db, store.slug, 'skill', 'triage');
        assert.deepEqual(
          triage.versions.map((v) => pick(v, ['version', 'description'])),
          records(
            ['version', 'description'],
            [
              [1, 'Does triage.'],
              [2, 'Sorts incoming issues.'],
            ],
          ),
        );
        assert.equal(await countVersions(store.db, store.slug), versions + 2);
      });
    });

    it('a dry run shows the plan and writes nothing, not even blobs', async () => {
      await withStore('s-dry', async (store) => {
        // Bytes of this test's own (the blob store is the suite's): none of them may be stored by the dry run.
        const own = {
          'skills/release-check/scripts/check.sh': '#!/bin/sh\necho dry run\n',
          'skills/release-check/assets/logo.png': Buffer.concat([PNG, Buffer.from('dry')]),
        };
        await writeTree(store.folder, { ...FILES, ...own });
        const rows = await snapshot(store.db);
        const blobs = await blobCount(store.blob);
        const dry = await applyIn(store, SKILLS, { dryRun: true });
        assert.deepEqual(
          dry.changes.filter((c) => c.kind === 'skill').map((c) => `${c.action} ${c.name}`),
          ['create release-check', 'publish release-check', 'create triage'],
        );
        assert.deepEqual(await snapshot(store.db), rows);
        assert.equal(await countVersions(store.db, store.slug), 0);
        assert.equal(await blobCount(store.blob), blobs);
        for (const content of Object.values(own)) assert.equal(await blobBytes(store.blob, sha256(content)), undefined);
        const real = await applyIn(store, SKILLS);
        assert.deepEqual(real.changes, dry.changes);
        for (const content of Object.values(own)) assert.deepEqual(await blobBytes(store.blob, sha256(content)), Buffer.from(content));
      });
    });

    it('counts the Skill changes in the org.apply audit event', async () => {
      await withStore('s-audit', async (store) => {
        await writeTree(store.folder, FILES);
        await applyIn(store, SKILLS);
        const [event] = await store.db.query<{ details: { changes: Record<string, number> } }>(
          "SELECT e.details FROM audit_events e JOIN tenants t ON t.id = e.tenant_id WHERE t.slug = $1 AND e.action = 'org.apply'",
          [store.slug],
        );
        assert.deepEqual(event?.details.changes, {
          'create tenant': 1,
          'create person': 1,
          'create agent': 1,
          'create skill': 2,
          'publish skill': 1,
          'add grant': 1,
          'add route': 1,
        });
      });
    });

    it('refuses an archived Skill of that name with the line, and needs a blob store for a skills section', async () => {
      await withStore('s-archived', async (store) => {
        await writeTree(store.folder, FILES);
        await applyIn(store, SKILLS);
        const { tenantId } = await idsOf(store.db, store.slug, 'release-bot');
        await store.db.tx((tx) => tx.query("UPDATE context_resources SET status = 'archived' WHERE tenant_id = $1 AND name = 'triage'", [tenantId]));
        await writeTree(store.folder, { 'skills/triage/SKILL.md': skillMd('triage', 'Changed.') });
        await assert.rejects(applyIn(store, SKILLS), {
          message: `org.yaml:10: skills[1].dir: the Skill "triage" is archived in tenant "${store.slug}"; the org file does not change archived Skills`,
        });
        const source = SKILLS.replace('tenant: acme', `tenant: ${store.slug}`);
        const files = await readReferencedFiles(source, store.folder);
        await assert.rejects(applyOrgFile(store.db, { source, files }, cliTrail(store.db)), /the org file has a skills section, so it needs a blob store/);
      });
    });
  });
}
