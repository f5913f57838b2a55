import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { storeBackends } from '../support/stores.ts';
import type { KbWire, ReadWire, WriteWire } from './support.ts';
import { KbSuite, assertAtminaError, backendLabel, sha256 } from './support.ts';

interface OutlineWire {
  contribution_note?: string;
  kind: string;
  tags: string[];
  kb_id: string;
  file_id: string;
  path: string;
  sha256: string;
  size_bytes: number;
  front_matter: { status: string; keys: string[] };
  headings: { level: number; text: string; line: number }[];
  truncated: boolean;
}

interface GeneratedWire {
  kb_id: string;
  operation: 'preview' | 'apply';
  path: string;
  sha256: string;
  size_bytes: number;
  listed: number;
  omitted: number;
  content?: string;
  current_sha256?: string | null;
  differs?: boolean;
  hand_written?: boolean;
  file_id?: string;
  version?: number;
  etag?: string;
  changed?: boolean;
}

const PAGE = '---\ntitle: Setup guide\ndescription: How to start.\ntags: [onboarding]\n---\n# Setup\n\nText.\n\n## Install\n\nMore.\n';

for (const backend of storeBackends()) {
  describe(`Atmina page tools on ${backendLabel(backend)}`, () => {
    let suite: KbSuite;
    before(async () => {
      suite = await KbSuite.open(backend);
    });
    after(async () => {
      await suite?.close();
    });

    const admin = () => suite.agent('admin-bot');
    const editor = () => suite.agent('editor-bot');
    const viewer = () => suite.agent('viewer-bot');

    describe('get_file_outline', () => {
      it('answers the headings, front-matter keys, size and SHA-256 without the body', async () => {
        const kb = await suite.kb();
        const written = await suite.file(kb.kb_id, 'guides/setup.md', PAGE);
        const outline = await (await admin()).ok<OutlineWire>('get_file_outline', { kb_id: kb.kb_id, path: 'guides/setup.md' });
        assert.deepStrictEqual(
          { ...outline, updated_at: undefined },
          {
            kb_id: kb.kb_id,
            file_id: written.file_id,
            path: 'guides/setup.md',
            version: 1,
            sha256: sha256(PAGE),
            etag: sha256(PAGE),
            size_bytes: Buffer.byteLength(PAGE),
            media_type: 'text/markdown',
            kind: 'text',
            tags: ['onboarding'],
            updated_at: undefined,
            front_matter: { status: 'parsed', keys: ['title', 'description', 'tags'] },
            headings: [
              { level: 1, text: 'Setup', line: 6 },
              { level: 2, text: 'Install', line: 10 },
            ],
            truncated: false,
          },
        );
      });

      it('finds the file by file_id, and the path wins when both are sent', async () => {
        const kb = await suite.kb();
        const a = await suite.file(kb.kb_id, 'a.md', '# A\n');
        const b = await suite.file(kb.kb_id, 'b.md', '# B\n');
        const byId = await (await admin()).ok<OutlineWire>('get_file_outline', { kb_id: kb.kb_id, file_id: a.file_id });
        assert.partialDeepStrictEqual(byId, { path: 'a.md', headings: [{ level: 1, text: 'A', line: 1 }] });
        const both = await (await admin()).ok<OutlineWire>('get_file_outline', { kb_id: kb.kb_id, path: 'b.md', file_id: a.file_id });
        assert.partialDeepStrictEqual(both, { file_id: b.file_id, path: 'b.md' });
      });

      it('gives a file that is not Markdown no headings', async () => {
        const kb = await suite.kb();
        await suite.file(kb.kb_id, 'config.yaml', '# a YAML comment\nkey: value\n');
        const outline = await (await admin()).ok<OutlineWire>('get_file_outline', { kb_id: kb.kb_id, path: 'config.yaml' });
        assert.partialDeepStrictEqual(outline, { front_matter: { status: 'absent', keys: [] }, headings: [], truncated: false });
      });

      it('gives an Asset the size and SHA-256 of its original bytes and no headings, without reading them', async () => {
        const kb = await suite.kb();
        const tenantId = await suite.tenantIdOf('acme');
        // An Asset head whose bytes are in no blob store: an outline that read them would fail.
        const sha = 'c'.repeat(64);
        await suite.db.tx((tx) =>
          tx.query(
            `INSERT INTO kb_files (tenant_id, id, kb_id, path, latest_version, sha256, size_bytes, media_type, kind)
             VALUES ($1, gen_random_uuid(), $2, 'scan.pdf', 1, $3, 12345, 'application/pdf', 'asset')`,
            [tenantId, kb.kb_id, sha],
          ),
        );
        const outline = await (await admin()).ok<OutlineWire>('get_file_outline', { kb_id: kb.kb_id, path: 'scan.pdf' });
        assert.partialDeepStrictEqual(outline, {
          path: 'scan.pdf',
          kind: 'asset',
          sha256: sha,
          size_bytes: 12345,
          tags: [],
          front_matter: { status: 'absent', keys: [] },
          headings: [],
        });
      });

      it('refuses a missing file, a hostile path, and a caller without access', async () => {
        const kb = await suite.kb();
        assertAtminaError(await (await admin()).fail('get_file_outline', { kb_id: kb.kb_id, path: 'missing.md' }), 'not_found', 'no file "missing.md"');
        assertAtminaError(
          await (await admin()).fail('get_file_outline', { kb_id: kb.kb_id, path: '../x.md' }),
          'validation',
          'path: must not have . or .. segments',
        );
        assertAtminaError(await (await admin()).fail('get_file_outline', { kb_id: kb.kb_id }), 'validation', 'path');
        assertAtminaError(
          // support-bot has a role elsewhere, so get_file_outline is its tool, and this KB is out of its reach.
          await (await suite.agent('support-bot')).fail('get_file_outline', { kb_id: kb.kb_id, path: 'a.md' }),
          'not_found',
          'no Knowledge Base',
        );
      });
    });

    describe('the contribution note', () => {
      it('is there for a reader that has never written to the KB, on read_file and get_file_outline', async () => {
        const kb = await suite.kb();
        await suite.file(kb.kb_id, 'a.md', '# A\n');
        const read = await (await viewer()).ok<ReadWire & { contribution_note?: string }>('read_file', { kb_id: kb.kb_id, path: 'a.md' });
        assert.equal(read.contribution_note, 'You have never written to this Knowledge Base.');
        assert.equal(Object.keys(read)[0], 'contribution_note', 'the note comes ahead of the content');
        const outline = await (await viewer()).ok<OutlineWire>('get_file_outline', { kb_id: kb.kb_id, path: 'a.md' });
        assert.equal(outline.contribution_note, 'You have never written to this Knowledge Base.');
      });

      it('is absent for a reader that wrote to the KB lately', async () => {
        const kb = await suite.kb();
        await (await editor()).ok('write_file', { kb_id: kb.kb_id, path: 'mine.md', mode: 'create', content: 'x' });
        const read = await (await editor()).ok<ReadWire & { contribution_note?: string }>('read_file', { kb_id: kb.kb_id, path: 'mine.md' });
        assert.equal(read.contribution_note, undefined);
        const outline = await (await editor()).ok<OutlineWire>('get_file_outline', { kb_id: kb.kb_id, path: 'mine.md' });
        assert.equal(outline.contribution_note, undefined);
      });

      it('is not silenced by another agent’s writes', async () => {
        const kb = await suite.kb();
        await suite.file(kb.kb_id, 'a.md', '# A\n');
        await (await editor()).ok('write_file', { kb_id: kb.kb_id, path: 'b.md', mode: 'create', content: 'b' });
        const read = await (await suite.agent('share-bot')).ok<ReadWire & { contribution_note?: string }>('read_file', { kb_id: kb.kb_id, path: 'a.md' });
        assert.equal(read.contribution_note, 'You have never written to this Knowledge Base.');
      });

      it('comes back when the reader’s last write is older than the team’s window (14 days unless set)', async () => {
        const kb = await suite.kb();
        await (await editor()).ok('write_file', { kb_id: kb.kb_id, path: 'old.md', mode: 'create', content: 'x' });
        const tenantId = await suite.tenantIdOf('acme');
        await suite.db.tx((tx) =>
          tx.query(`UPDATE kb_contributions SET last_write_at = clock_timestamp() - interval '15 days' WHERE kb_id = $1 AND tenant_id = $2`, [
            kb.kb_id,
            tenantId,
          ]),
        );
        const read = await (await editor()).ok<ReadWire & { contribution_note?: string }>('read_file', { kb_id: kb.kb_id, path: 'old.md' });
        assert.equal(read.contribution_note, 'You have not written to this Knowledge Base in the last 14 days.');
      });

      it('follows the team’s contribution_note_days: a 15-day-old write is recent in a 60-day window', async () => {
        const kb = await suite.kb();
        await (await editor()).ok('write_file', { kb_id: kb.kb_id, path: 'window.md', mode: 'create', content: 'x' });
        const tenantId = await suite.tenantIdOf('acme');
        await suite.db.tx((tx) =>
          tx.query(`UPDATE kb_contributions SET last_write_at = clock_timestamp() - interval '15 days' WHERE kb_id = $1 AND tenant_id = $2`, [
            kb.kb_id,
            tenantId,
          ]),
        );
        await (await admin()).ok('update_team_settings', { contribution_note_days: 60 });
        try {
          const read = await (await editor()).ok<ReadWire & { contribution_note?: string }>('read_file', { kb_id: kb.kb_id, path: 'window.md' });
          assert.equal(read.contribution_note, undefined);
        } finally {
          await (await admin()).ok('update_team_settings', { contribution_note_days: 14 });
        }
      });
    });

    describe('generate_hub_index', () => {
      const seed = async (kb: KbWire): Promise<void> => {
        await suite.file(kb.kb_id, 'guides/setup.md', PAGE);
        await suite.file(kb.kb_id, 'guides/faq.md', '# FAQ\n');
        await suite.file(kb.kb_id, 'guides/advanced/tuning.md', 'no heading\n');
        await suite.file(kb.kb_id, 'other/x.md', '# Elsewhere\n');
      };
      const EXPECTED = [
        '# guides',
        '',
        '<!-- Generated by generate_hub_index. Regenerating replaces this file. -->',
        '',
        '- [FAQ](faq.md)',
        '- [Setup guide](setup.md) — How to start.',
        '',
        '## advanced',
        '',
        '- [tuning](advanced/tuning.md)',
        '',
      ].join('\n');

      it('previews the exact content, its path and SHA-256, and writes nothing', async () => {
        const kb = await suite.kb();
        await seed(kb);
        const before = await suite.snapshot();
        const preview = await (await editor()).ok<GeneratedWire>('generate_hub_index', { kb_id: kb.kb_id, folder: 'guides' });
        assert.deepStrictEqual(preview, {
          kb_id: kb.kb_id,
          operation: 'preview',
          path: 'guides/index.md',
          sha256: sha256(EXPECTED),
          size_bytes: Buffer.byteLength(EXPECTED),
          listed: 3,
          omitted: 0,
          content: EXPECTED,
          current_sha256: null,
          differs: true,
          hand_written: false,
        });
        assert.deepStrictEqual(await suite.snapshot(), before);
      });

      it('applies the preview through the write path: a version, then the same content again changes nothing', async () => {
        const kb = await suite.kb();
        await seed(kb);
        const preview = await (await editor()).ok<GeneratedWire>('generate_hub_index', { kb_id: kb.kb_id, folder: 'guides' });
        const applied = await (
          await editor()
        ).ok<GeneratedWire>('generate_hub_index', {
          kb_id: kb.kb_id,
          folder: 'guides',
          operation: 'apply',
          sha256: preview.sha256,
        });
        assert.partialDeepStrictEqual(applied, { operation: 'apply', path: 'guides/index.md', sha256: preview.sha256, version: 1, changed: true, listed: 3 });
        const read = await (await editor()).ok<ReadWire>('read_file', { kb_id: kb.kb_id, path: 'guides/index.md' });
        assert.equal(read.content, preview.content);
        const history = await (
          await editor()
        ).ok<{ versions: { operation: string; author: { name: string } }[] }>('file_history', {
          kb_id: kb.kb_id,
          path: 'guides/index.md',
        });
        assert.partialDeepStrictEqual(history.versions, [{ operation: 'create', author: { name: 'editor-bot' } }]);

        const again = await (await editor()).ok<GeneratedWire>('generate_hub_index', { kb_id: kb.kb_id, folder: 'guides' });
        assert.partialDeepStrictEqual(again, { sha256: preview.sha256, current_sha256: preview.sha256, differs: false, hand_written: false });
        const unchanged = await (
          await editor()
        ).ok<GeneratedWire>('generate_hub_index', {
          kb_id: kb.kb_id,
          folder: 'guides',
          operation: 'apply',
          sha256: again.sha256,
          if_match: again.current_sha256,
        });
        assert.partialDeepStrictEqual(unchanged, { version: 1, changed: false });
      });

      it('is conflict when the folder’s files changed after the preview, nothing written', async () => {
        const kb = await suite.kb();
        await seed(kb);
        const preview = await (await editor()).ok<GeneratedWire>('generate_hub_index', { kb_id: kb.kb_id, folder: 'guides' });
        await suite.file(kb.kb_id, 'guides/new.md', '# New\n');
        const before = await suite.snapshot();
        const text = await (await editor()).fail('generate_hub_index', { kb_id: kb.kb_id, folder: 'guides', operation: 'apply', sha256: preview.sha256 });
        assertAtminaError(text, 'conflict', 'changed since the preview');
        assert.deepStrictEqual(await suite.snapshot(), before);
      });

      it('is conflict when the index file’s head moved after the preview', async () => {
        const kb = await suite.kb();
        await seed(kb);
        await suite.file(kb.kb_id, 'guides/index.md', '# Hand-written\n');
        const preview = await (await editor()).ok<GeneratedWire>('generate_hub_index', { kb_id: kb.kb_id, folder: 'guides' });
        assert.partialDeepStrictEqual(preview, { current_sha256: sha256('# Hand-written\n'), differs: true, hand_written: true, listed: 3 });
        await (await admin()).ok('write_file', { kb_id: kb.kb_id, path: 'guides/index.md', mode: 'append', content: 'more\n' });
        const moved = await (
          await editor()
        ).fail('generate_hub_index', {
          kb_id: kb.kb_id,
          folder: 'guides',
          operation: 'apply',
          sha256: preview.sha256,
          if_match: preview.current_sha256,
        });
        assertAtminaError(moved, 'conflict', '"guides/index.md" changed since the preview');
      });

      it('is conflict when a file appeared where the preview saw none (if_match null, its current_sha256 as it was)', async () => {
        const kb = await suite.kb();
        await seed(kb);
        const preview = await (await editor()).ok<GeneratedWire>('generate_hub_index', { kb_id: kb.kb_id, folder: 'guides' });
        assert.equal(preview.current_sha256, null);
        await suite.file(kb.kb_id, 'guides/index.md', '# Hand-written\n');
        const before = await suite.snapshot();
        const created = await (
          await editor()
        ).fail('generate_hub_index', {
          kb_id: kb.kb_id,
          folder: 'guides',
          operation: 'apply',
          sha256: preview.sha256,
          if_match: preview.current_sha256,
        });
        assertAtminaError(created, 'conflict', 'a file was written at "guides/index.md" since the preview, which saw none');
        assert.deepStrictEqual(await suite.snapshot(), before);
      });

      it('applies with operation "apply" alone, as the spec says: what the preview would show now, over the file that is there', async () => {
        const kb = await suite.kb();
        await seed(kb);
        const first = await (await editor()).ok<GeneratedWire>('generate_hub_index', { kb_id: kb.kb_id, folder: 'guides', operation: 'apply' });
        assert.partialDeepStrictEqual(first, { operation: 'apply', path: 'guides/index.md', sha256: sha256(EXPECTED), version: 1, changed: true, listed: 3 });
        // Files changed and the index was edited by hand since: the apply writes what a preview shows now.
        await suite.file(kb.kb_id, 'guides/new.md', '# New\n');
        await (await admin()).ok('write_file', { kb_id: kb.kb_id, path: 'guides/index.md', mode: 'append', content: 'by hand\n' });
        const preview = await (await editor()).ok<GeneratedWire>('generate_hub_index', { kb_id: kb.kb_id, folder: 'guides' });
        const second = await (await editor()).ok<GeneratedWire>('generate_hub_index', { kb_id: kb.kb_id, folder: 'guides', operation: 'apply' });
        assert.partialDeepStrictEqual(second, { sha256: preview.sha256, version: 3, changed: true, listed: 4 });
        const read = await (await editor()).ok<ReadWire>('read_file', { kb_id: kb.kb_id, path: 'guides/index.md' });
        assert.equal(read.content, preview.content);
        // The guards stay optional: the preview's sha256 and current_sha256, while nothing moved, apply too.
        const third = await (await editor()).ok<GeneratedWire>('generate_hub_index', { kb_id: kb.kb_id, folder: 'guides' });
        const guarded = await (
          await editor()
        ).ok<GeneratedWire>('generate_hub_index', {
          kb_id: kb.kb_id,
          folder: 'guides',
          operation: 'apply',
          sha256: third.sha256,
          if_match: third.current_sha256,
        });
        assert.partialDeepStrictEqual(guarded, { version: 3, changed: false });
      });

      it('indexes the root as index.md', async () => {
        const kb = await suite.kb();
        await suite.file(kb.kb_id, 'a.md', '# Alpha\n');
        const preview = await (await editor()).ok<GeneratedWire>('generate_hub_index', { kb_id: kb.kb_id });
        assert.partialDeepStrictEqual(preview, { path: 'index.md', listed: 1 });
        assert.ok(preview.content?.startsWith('# Index\n'));
      });

      it('leaves what a write leaves: the outbox rows, the writer’s contribution and the audit event', async () => {
        const kb = await suite.kb();
        await seed(kb);
        const tenantId = await suite.tenantIdOf('acme');
        const preview = await (await suite.agent('share-bot')).ok<GeneratedWire>('generate_hub_index', { kb_id: kb.kb_id, folder: 'guides' });
        const applied = await (
          await suite.agent('share-bot')
        ).ok<GeneratedWire>('generate_hub_index', {
          kb_id: kb.kb_id,
          folder: 'guides',
          operation: 'apply',
          sha256: preview.sha256,
        });
        const outbox = await suite.db.query<{ projection: string; operation: string }>(
          'SELECT projection, operation FROM outbox WHERE tenant_id = $1 AND resource_key = $2 ORDER BY projection',
          [tenantId, `kb_file:${applied.file_id}`],
        );
        assert.deepStrictEqual(
          outbox.map((row) => ({ projection: row.projection, operation: row.operation })),
          [
            { projection: 'graph', operation: 'upsert' },
            { projection: 'search', operation: 'upsert' },
          ],
        );
        const events = await suite.db.query<{ tool: string }>(
          "SELECT tool FROM audit_events WHERE tenant_id = $1 AND action = 'kb.file.create' AND resources::text LIKE $2",
          [tenantId, `%${applied.file_id}%`],
        );
        assert.deepStrictEqual(
          events.map((event) => ({ tool: event.tool })),
          [{ tool: 'generate_hub_index' }],
        );
        const read = await (
          await suite.agent('share-bot')
        ).ok<ReadWire & { contribution_note?: string }>('read_file', { kb_id: kb.kb_id, path: 'guides/index.md' });
        assert.equal(read.contribution_note, undefined, 'the apply is the caller’s contribution');
      });

      it('is refused to a Viewer, to an Admin capped at Viewer, and to bad input', async () => {
        const kb = await suite.kb();
        assertAtminaError(await (await viewer()).fail('generate_hub_index', { kb_id: kb.kb_id }), 'permission_denied', 'the Editor role');
        assertAtminaError(await (await suite.agent('capped-bot')).fail('generate_hub_index', { kb_id: kb.kb_id }), 'permission_denied', 'the Editor role');
        assertAtminaError(await (await editor()).fail('generate_hub_index', { kb_id: kb.kb_id, folder: '../up' }), 'validation', 'folder:');
        assertAtminaError(await (await editor()).fail('generate_hub_index', { kb_id: kb.kb_id, sha256: 'a'.repeat(64) }), 'validation', 'operation:');
        assertAtminaError(
          await (await editor()).fail('generate_hub_index', { kb_id: kb.kb_id, operation: 'apply', sha256: 'nope' }),
          'validation',
          'sha256: must be a SHA-256',
        );
      });
    });

    describe('generate_nav', () => {
      it('previews wiki/nav.yaml from the KB’s Markdown pages and applies it', async () => {
        const kb = await suite.kb();
        await suite.file(kb.kb_id, 'index.md', '# Home\n');
        await suite.file(kb.kb_id, 'guides/setup.md', PAGE);
        await suite.file(kb.kb_id, 'data.json', '{}');
        const preview = await (await editor()).ok<GeneratedWire>('generate_nav', { kb_id: kb.kb_id });
        const expected = [
          '# Generated by generate_nav. Regenerating replaces this file.',
          '',
          'nav:',
          '  - title: "Home"',
          '    path: "index.md"',
          '  - title: "guides"',
          '    folder: "guides"',
          '    children:',
          '      - title: "Setup guide"',
          '        path: "guides/setup.md"',
          '',
        ].join('\n');
        assert.partialDeepStrictEqual(preview, { path: 'wiki/nav.yaml', content: expected, sha256: sha256(expected), listed: 2, current_sha256: null });
        const applied = await (await editor()).ok<GeneratedWire>('generate_nav', { kb_id: kb.kb_id, operation: 'apply', sha256: preview.sha256 });
        assert.partialDeepStrictEqual(applied, { path: 'wiki/nav.yaml', version: 1, changed: true });
        const read = await (await editor()).ok<ReadWire>('read_file', { kb_id: kb.kb_id, path: 'wiki/nav.yaml' });
        assert.partialDeepStrictEqual(read, { content: expected, media_type: 'application/yaml' });
      });

      it('is conflict when a page changed after the preview', async () => {
        const kb = await suite.kb();
        const page = await suite.file(kb.kb_id, 'a.md', '# A\n');
        const preview = await (await editor()).ok<GeneratedWire>('generate_nav', { kb_id: kb.kb_id });
        await (await editor()).ok('write_file', { kb_id: kb.kb_id, path: 'a.md', mode: 'overwrite', content: '# Renamed\n', if_match: page.sha256 });
        assertAtminaError(
          await (await editor()).fail('generate_nav', { kb_id: kb.kb_id, operation: 'apply', sha256: preview.sha256 }),
          'conflict',
          'preview again',
        );
      });

      it('applies with operation "apply" alone, as the spec says, over an existing nav, and keeps the preview’s hashes as guards', async () => {
        const kb = await suite.kb();
        await suite.file(kb.kb_id, 'a.md', '# A\n');
        await suite.file(kb.kb_id, 'wiki/nav.yaml', 'nav: []\n');
        const preview = await (await editor()).ok<GeneratedWire>('generate_nav', { kb_id: kb.kb_id });
        assert.equal(preview.current_sha256, sha256('nav: []\n'));
        const applied = await (await editor()).ok<GeneratedWire>('generate_nav', { kb_id: kb.kb_id, operation: 'apply' });
        assert.partialDeepStrictEqual(applied, { path: 'wiki/nav.yaml', sha256: preview.sha256, version: 2, changed: true });
        // The preview's current_sha256 is stale now: as if_match, the apply is refused and writes nothing.
        const before = await suite.snapshot();
        assertAtminaError(
          await (await editor()).fail('generate_nav', { kb_id: kb.kb_id, operation: 'apply', if_match: preview.current_sha256 }),
          'conflict',
          '"wiki/nav.yaml" changed since the preview',
        );
        assert.deepStrictEqual(await suite.snapshot(), before);
      });

      it('lets concurrent applies without if_match all succeed: one writes, the others find it written (they read again when they lose the race)', async () => {
        const kb = await suite.kb();
        await suite.file(kb.kb_id, 'a.md', '# A\n');
        await suite.file(kb.kb_id, 'wiki/nav.yaml', 'nav: []\n');
        const calls = await Promise.all(
          ['editor-bot', 'admin-bot', 'share-bot', 'multi-bot', 'editor-bot', 'admin-bot'].map(async (agent) =>
            (await suite.agent(agent)).call('generate_nav', { kb_id: kb.kb_id, operation: 'apply' }),
          ),
        );
        const answers = calls.map((c) => (c.structuredContent ?? { error: c.content }) as { changed?: boolean; version?: number });
        assert.deepEqual(
          answers.map((a) => a.version),
          answers.map(() => 2),
        );
        assert.equal(answers.filter((a) => a.changed === true).length, 1);
      });

      it('is refused to a Viewer', async () => {
        const kb = await suite.kb();
        assertAtminaError(await (await viewer()).fail('generate_nav', { kb_id: kb.kb_id }), 'permission_denied', 'the Editor role');
      });
    });

    describe('tags in list_files', () => {
      it('lists each file’s front-matter tags and filters by one, case-insensitively', async () => {
        const kb = await suite.kb();
        await suite.file(kb.kb_id, 'a.md', '---\ntags: [Policy, retention]\n---\n# A\n');
        await suite.file(kb.kb_id, 'b.md', '---\ntags: policy\n---\n');
        await suite.file(kb.kb_id, 'c.md', '# none\n');
        const all = await (await viewer()).ok<{ files: { path: string; tags: string[] }[] }>('list_files', { kb_id: kb.kb_id });
        assert.deepStrictEqual(
          all.files.map((f) => ({ path: f.path, tags: f.tags })),
          [
            { path: 'a.md', tags: ['Policy', 'retention'] },
            { path: 'b.md', tags: ['policy'] },
            { path: 'c.md', tags: [] },
          ],
        );
        const tagged = await (await viewer()).ok<{ files: { path: string }[] }>('list_files', { kb_id: kb.kb_id, tag: 'POLICY' });
        assert.deepStrictEqual(
          tagged.files.map((f) => f.path),
          ['a.md', 'b.md'],
        );
      });

      it('follows the current version: an overwrite replaces the tags', async () => {
        const kb = await suite.kb();
        const file = await suite.file(kb.kb_id, 'a.md', '---\ntags: [old]\n---\n');
        await (
          await editor()
        ).ok<WriteWire>('write_file', { kb_id: kb.kb_id, path: 'a.md', mode: 'overwrite', content: '---\ntags: [new]\n---\n', if_match: file.sha256 });
        const listed = await (await viewer()).ok<{ files: { path: string }[] }>('list_files', { kb_id: kb.kb_id, tag: 'old' });
        assert.deepStrictEqual(listed.files, []);
        const current = await (await viewer()).ok<{ files: { path: string; tags: string[] }[] }>('list_files', { kb_id: kb.kb_id, tag: 'new' });
        assert.partialDeepStrictEqual(current.files, [{ path: 'a.md', tags: ['new'] }]);
      });

      it('recomputes the tags on a move out of Markdown and back, and on a restore', async () => {
        const kb = await suite.kb();
        const v1 = await suite.file(kb.kb_id, 'a.md', '---\ntags: [first]\n---\n');
        const v2 = await (
          await editor()
        ).ok<WriteWire>('write_file', { kb_id: kb.kb_id, path: 'a.md', mode: 'overwrite', content: '---\ntags: [second]\n---\n' });
        const tagsOf = async () => (await (await viewer()).ok<{ files: { path: string; tags: string[] }[] }>('list_files', { kb_id: kb.kb_id })).files;
        await (await editor()).ok('move_file', { kb_id: kb.kb_id, file_id: v1.file_id, to_path: 'a.txt' });
        assert.deepStrictEqual(await tagsOf(), [{ ...(await tagsOf())[0], path: 'a.txt', tags: [] }]);
        await (await editor()).ok('move_file', { kb_id: kb.kb_id, file_id: v1.file_id, to_path: 'b.md' });
        assert.partialDeepStrictEqual(await tagsOf(), [{ path: 'b.md', tags: ['second'] }]);
        await (await editor()).ok('restore_version', { kb_id: kb.kb_id, file_id: v1.file_id, version: 1, if_match: v2.sha256 });
        assert.partialDeepStrictEqual(await tagsOf(), [{ path: 'b.md', tags: ['first'] }]);
      });

      it('refuses an empty tag', async () => {
        const kb = await suite.kb();
        assertAtminaError(await (await viewer()).fail('list_files', { kb_id: kb.kb_id, tag: ' ' }), 'validation', 'tag:');
      });
    });
  });
}
