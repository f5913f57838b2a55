import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { storeBackends } from '../support/stores.ts';
import type { KbWire, ReadWire, WriteWire } from './support.ts';
import { HOSTILE_PATHS, KbSuite, assertAtminaError, backendLabel, sha256 } from './support.ts';

const SPEC_CONTENT = '# Search decision\n\nUse hybrid retrieval.\n';
const MISSING_ID = '0b1e7c5e-8f43-4d8e-9a51-3c2d1f0e9b7a';

interface HistoryWire {
  kb_id: string;
  file_id: string;
  path: string;
  deleted: boolean;
  versions: {
    version: number;
    operation: string;
    path: string;
    sha256: string;
    size_bytes: number;
    restored_from: number | null;
    author: { name: string } | null;
  }[];
  next_cursor: string | null;
}

for (const backend of storeBackends()) {
  describe(`Atmina file tools on ${backendLabel(backend)}`, () => {
    let suite: KbSuite;
    before(async () => {
      suite = await KbSuite.open(backend);
    });
    after(async () => {
      await suite?.close();
    });

    const admin = () => suite.agent('admin-bot');
    const editor = () => suite.agent('editor-bot');
    const read = async (kb: KbWire, path: string) => (await admin()).ok<ReadWire>('read_file', { kb_id: kb.kb_id, path });

    describe('write_file create and read_file', () => {
      it('writes the spec’s example byte for byte and answers the new head', async () => {
        const kb = await suite.kb();
        const written = await (
          await editor()
        ).ok<WriteWire>('write_file', {
          kb_id: kb.kb_id,
          path: 'decisions/search.md',
          content: SPEC_CONTENT,
          mode: 'create',
          expected_bytes: 41,
          content_sha256: sha256(SPEC_CONTENT),
        });
        assert.partialDeepStrictEqual(written, {
          kb_id: kb.kb_id,
          path: 'decisions/search.md',
          version: 1,
          sha256: sha256(SPEC_CONTENT),
          etag: sha256(SPEC_CONTENT),
          size_bytes: 41,
          changed: true,
          operation: 'create',
        });
      });

      it('reads the file back exactly, with its size, SHA-256, version and media type', async () => {
        const kb = await suite.kb();
        const written = await suite.file(kb.kb_id, 'decisions/search.md', SPEC_CONTENT);
        assert.partialDeepStrictEqual(await (await suite.agent('viewer-bot')).ok<ReadWire>('read_file', { kb_id: kb.kb_id, path: 'decisions/search.md' }), {
          kb_id: kb.kb_id,
          file_id: written.file_id,
          path: 'decisions/search.md',
          content: SPEC_CONTENT,
          size_bytes: 41,
          sha256: sha256(SPEC_CONTENT),
          etag: sha256(SPEC_CONTENT),
          version: 1,
          media_type: 'text/markdown',
          kind: 'text',
        });
      });

      it('reads by file_id, and by path when both are sent', async () => {
        const kb = await suite.kb();
        const a = await suite.file(kb.kb_id, 'a.md', 'A');
        await suite.file(kb.kb_id, 'b.md', 'B');
        const viewer = await suite.agent('viewer-bot');
        const byId = await viewer.ok<ReadWire>('read_file', { kb_id: kb.kb_id, file_id: a.file_id });
        const both = await viewer.ok<ReadWire>('read_file', { kb_id: kb.kb_id, file_id: a.file_id, path: 'b.md' });
        assert.deepEqual({ byId: byId.content, both: both.content }, { byId: 'A', both: 'B' });
      });

      it('keeps emoji, other scripts and a leading byte-order mark as sent', async () => {
        const kb = await suite.kb();
        const content = '\ufeff# Überblick 👩‍💻\n\n中文, العربية\r\n';
        await suite.file(kb.kb_id, 'notes/überblick.md', content);
        assert.partialDeepStrictEqual(await read(kb, 'notes/überblick.md'), { content, size_bytes: Buffer.byteLength(content), sha256: sha256(content) });
      });

      it('refuses a create where a file exists as a conflict, changing nothing', async () => {
        const kb = await suite.kb();
        await suite.file(kb.kb_id, 'a.md', 'A');
        const before = await suite.snapshot();
        const text = await (await editor()).fail('write_file', { kb_id: kb.kb_id, path: 'a.md', mode: 'create', content: 'again' });
        assertAtminaError(text, 'conflict', 'a file already exists at "a.md"');
        assert.deepEqual(await suite.snapshot(), before);
      });

      it('refuses a wrong expected_bytes as content_integrity, writing nothing', async () => {
        const kb = await suite.kb();
        const before = await suite.snapshot();
        const text = await (await editor()).fail('write_file', { kb_id: kb.kb_id, path: 'x.md', mode: 'create', content: SPEC_CONTENT, expected_bytes: 40 });
        assert.equal(text, 'content_integrity: expected_bytes is 40 but content has 41; recompute it from the exact UTF-8 bytes (nothing was written)');
        assert.deepEqual(await suite.snapshot(), before);
      });

      it('refuses a wrong content_sha256 as content_integrity, writing nothing', async () => {
        const kb = await suite.kb();
        const before = await suite.snapshot();
        const text = await (
          await editor()
        ).fail('write_file', {
          kb_id: kb.kb_id,
          path: 'x.md',
          mode: 'create',
          content: SPEC_CONTENT,
          content_sha256: sha256('something else'),
        });
        assertAtminaError(text, 'content_integrity', `content_sha256 is ${sha256('something else')} but content hashes to ${sha256(SPEC_CONTENT)}`);
        assert.deepEqual(await suite.snapshot(), before);
      });

      it('refuses content over 1 MiB as payload_too_large, pointing at uploads', async () => {
        const kb = await suite.kb();
        const text = await (await editor()).fail('write_file', { kb_id: kb.kb_id, path: 'big.md', mode: 'create', content: 'x'.repeat(1024 * 1024 + 1) });
        assertAtminaError(text, 'payload_too_large', 'use request_uploads');
      });

      it('refuses a patch that doubles the file per edit as payload_too_large at the edit that passes 1 MiB, writing nothing', async () => {
        const kb = await suite.kb();
        await suite.file(kb.kb_id, 'grow.md', 'a'.repeat(1024));
        const before = await suite.snapshot();
        const patch = Array.from({ length: 50 }, () => ({ find: 'a', replace: 'aa', occurrence: 'all' }));
        const text = await (await editor()).fail('write_file', { kb_id: kb.kb_id, path: 'grow.md', mode: 'patch', patch });
        assert.equal(
          text,
          'payload_too_large: the file would be 2097152 bytes; text writes keep files to 1048576 bytes of UTF-8 (use request_uploads for larger files)',
        );
        // The same edits as one item of write_files: that item fails alone, nothing is written.
        const batch = await (
          await editor()
        ).ok<{ results: { ok: boolean; code?: string }[] }>('write_files', { kb_id: kb.kb_id, items: [{ path: 'grow.md', mode: 'patch', patch }] });
        assert.partialDeepStrictEqual(batch.results, [{ ok: false, code: 'payload_too_large' }]);
        assert.deepEqual(await suite.snapshot(), before);
        assert.equal((await read(kb, 'grow.md')).content, 'a'.repeat(1024));
      });

      it('refuses a 1,000-character replacement of every letter of a 1 MiB file as payload_too_large, not an internal error', async () => {
        const kb = await suite.kb();
        await suite.file(kb.kb_id, 'full.md', 'a'.repeat(1024 * 1024));
        const before = await suite.snapshot();
        const text = await (
          await editor()
        ).fail('write_file', { kb_id: kb.kb_id, path: 'full.md', mode: 'patch', patch: [{ find: 'a', replace: 'b'.repeat(1000), occurrence: 'all' }] });
        assert.equal(
          text,
          'payload_too_large: the file would be 1048576000 bytes; text writes keep files to 1048576 bytes of UTF-8 (use request_uploads for larger files)',
        );
        assert.deepEqual(await suite.snapshot(), before);
        // The gateway still answers everyone.
        assert.equal((await read(kb, 'full.md')).size_bytes, 1024 * 1024);
      });

      it('refuses a file that is not there as not_found', async () => {
        const kb = await suite.kb();
        const viewer = await suite.agent('viewer-bot');
        assert.deepEqual(
          [await viewer.fail('read_file', { kb_id: kb.kb_id, path: 'nope.md' }), await viewer.fail('read_file', { kb_id: kb.kb_id, file_id: MISSING_ID })],
          [
            'not_found: no file "nope.md" in this Knowledge Base; list_files shows the ones there are',
            `not_found: no file "${MISSING_ID}" in this Knowledge Base; list_files shows the ones there are`,
          ],
        );
      });

      it('refuses a read naming no file as validation', async () => {
        const kb = await suite.kb();
        assert.equal(await (await editor()).fail('read_file', { kb_id: kb.kb_id }), 'validation: path: give the file as path or file_id');
      });
    });

    describe('overwrite, append and patch', () => {
      it('overwrites with the SHA-256 read as if_match: the next version', async () => {
        const kb = await suite.kb();
        const first = await suite.file(kb.kb_id, 'a.md', 'one');
        const written = await (
          await editor()
        ).ok<WriteWire>('write_file', { kb_id: kb.kb_id, path: 'a.md', mode: 'overwrite', content: 'two', if_match: first.sha256 });
        assert.partialDeepStrictEqual(written, {
          file_id: first.file_id,
          version: 2,
          sha256: sha256('two'),
          size_bytes: 3,
          changed: true,
          operation: 'overwrite',
        });
      });

      it('refuses a stale if_match as a conflict with the advice to reread, changing nothing', async () => {
        const kb = await suite.kb();
        const first = await suite.file(kb.kb_id, 'a.md', 'one');
        await (await editor()).ok('write_file', { kb_id: kb.kb_id, path: 'a.md', mode: 'overwrite', content: 'two' });
        const before = await suite.snapshot();
        const result = await (
          await editor()
        ).call('write_file', { kb_id: kb.kb_id, path: 'a.md', mode: 'overwrite', content: 'three', if_match: first.sha256 });
        assert.equal(result.isError, true);
        const [text, advice] = result.content.map((c) => (c.type === 'text' ? c.text : ''));
        assert.equal(text, 'conflict: the file changed since you read it: if_match is not the current SHA-256; read the file again and reapply your edit');
        assert.match(advice ?? '', /Read the latest version/);
        assert.deepEqual(await suite.snapshot(), before);
      });

      it('saves nothing for an overwrite with the same bytes: changed false, the same version', async () => {
        const kb = await suite.kb();
        await suite.file(kb.kb_id, 'a.md', 'one');
        const written = await (await editor()).ok<WriteWire>('write_file', { kb_id: kb.kb_id, path: 'a.md', mode: 'overwrite', content: 'one' });
        assert.partialDeepStrictEqual(written, { version: 1, changed: false });
      });

      it('refuses overwriting a file that does not exist as not_found', async () => {
        const kb = await suite.kb();
        assertAtminaError(await (await editor()).fail('write_file', { kb_id: kb.kb_id, path: 'a.md', mode: 'overwrite', content: 'x' }), 'not_found');
      });

      it('refuses if_match on a create as validation', async () => {
        const kb = await suite.kb();
        const text = await (await editor()).fail('write_file', { kb_id: kb.kb_id, path: 'a.md', mode: 'create', content: 'x', if_match: sha256('x') });
        assert.equal(text, 'validation: mode create: a new file has no SHA-256 to match; leave if_match out');
      });

      it('appends content at the end, checking expected_bytes against the appended bytes', async () => {
        const kb = await suite.kb();
        await suite.file(kb.kb_id, 'log.md', '# Log\n');
        const written = await (
          await editor()
        ).ok<WriteWire>('write_file', {
          kb_id: kb.kb_id,
          path: 'log.md',
          mode: 'append',
          content: '- entry\n',
          expected_bytes: 8,
          content_sha256: sha256('- entry\n'),
        });
        assert.partialDeepStrictEqual(written, { version: 2, size_bytes: 14, sha256: sha256('# Log\n- entry\n'), operation: 'append' });
        assert.equal((await read(kb, 'log.md')).content, '# Log\n- entry\n');
      });

      it('patches the one occurrence of the find text', async () => {
        const kb = await suite.kb();
        await suite.file(kb.kb_id, 'a.md', 'Use BM25.\n');
        const written = await (
          await editor()
        ).ok<WriteWire>('write_file', {
          kb_id: kb.kb_id,
          path: 'a.md',
          mode: 'patch',
          patch: [{ find: 'BM25', replace: 'hybrid retrieval' }],
        });
        assert.partialDeepStrictEqual(written, { version: 2, operation: 'patch', sha256: sha256('Use hybrid retrieval.\n') });
      });

      it('applies several edits in order, each to what the one before left', async () => {
        const kb = await suite.kb();
        await suite.file(kb.kb_id, 'a.md', 'a b c');
        await (
          await editor()
        ).ok('write_file', {
          kb_id: kb.kb_id,
          path: 'a.md',
          mode: 'patch',
          patch: [
            { find: 'a', replace: 'x' },
            { find: 'x b', replace: 'y' },
          ],
        });
        assert.equal((await read(kb, 'a.md')).content, 'y c');
      });

      it('refuses a find text that occurs more than once unless the edit names the occurrence', async () => {
        const kb = await suite.kb();
        await suite.file(kb.kb_id, 'a.md', 'one, one, one');
        const before = await suite.snapshot();
        const text = await (await editor()).fail('write_file', { kb_id: kb.kb_id, path: 'a.md', mode: 'patch', patch: [{ find: 'one', replace: 'two' }] });
        assert.equal(text, 'validation: patch[0].find occurs 3 times; set occurrence to 1..3, or "all", or make find longer; nothing was written');
        assert.deepEqual(await suite.snapshot(), before);
      });

      it('replaces the occurrence named, or all of them', async () => {
        const kb = await suite.kb();
        await suite.file(kb.kb_id, 'a.md', 'one, one, one');
        await suite.file(kb.kb_id, 'b.md', 'one, one, one');
        const e = await editor();
        await e.ok('write_file', { kb_id: kb.kb_id, path: 'a.md', mode: 'patch', patch: [{ find: 'one', replace: 'two', occurrence: 2 }] });
        await e.ok('write_file', { kb_id: kb.kb_id, path: 'b.md', mode: 'patch', patch: [{ find: 'one', replace: 'two', occurrence: 'all' }] });
        assert.deepEqual({ a: (await read(kb, 'a.md')).content, b: (await read(kb, 'b.md')).content }, { a: 'one, two, one', b: 'two, two, two' });
      });

      it('refuses a find text that is absent from the version if_match names as validation', async () => {
        const kb = await suite.kb();
        const file = await suite.file(kb.kb_id, 'a.md', 'text');
        const text = await (
          await editor()
        ).fail('write_file', {
          kb_id: kb.kb_id,
          path: 'a.md',
          mode: 'patch',
          if_match: file.sha256,
          patch: [{ find: 'absent', replace: 'x' }],
        });
        assertAtminaError(text, 'validation', 'patch[0].find does not occur in the file');
      });

      it('refuses a find text that is absent without if_match as a conflict: the file may have changed', async () => {
        const kb = await suite.kb();
        await suite.file(kb.kb_id, 'a.md', 'text');
        const text = await (await editor()).fail('write_file', { kb_id: kb.kb_id, path: 'a.md', mode: 'patch', patch: [{ find: 'absent', replace: 'x' }] });
        assertAtminaError(text, 'conflict', 'read it again');
      });

      it('checks a patch’s expected_bytes and content_sha256 against the whole patched file', async () => {
        const kb = await suite.kb();
        await suite.file(kb.kb_id, 'a.md', 'Use BM25.\n');
        const e = await editor();
        const patch = [{ find: 'BM25', replace: 'hybrid' }];
        const wrong = await e.fail('write_file', { kb_id: kb.kb_id, path: 'a.md', mode: 'patch', patch, expected_bytes: 3 });
        assert.equal(
          wrong,
          'content_integrity: expected_bytes is 3 but the patched file has 12; recompute it from the exact UTF-8 bytes (nothing was written)',
        );
        const right = await e.ok<WriteWire>('write_file', {
          kb_id: kb.kb_id,
          path: 'a.md',
          mode: 'patch',
          patch,
          expected_bytes: 12,
          content_sha256: sha256('Use hybrid.\n'),
        });
        assert.partialDeepStrictEqual(right, { version: 2, size_bytes: 12 });
      });

      it('refuses content in patch mode and patch in the other modes as validation', async () => {
        const kb = await suite.kb();
        await suite.file(kb.kb_id, 'a.md', 'text');
        const e = await editor();
        assert.deepEqual(
          [
            await e.fail('write_file', { kb_id: kb.kb_id, path: 'a.md', mode: 'patch', content: 'x' }),
            await e.fail('write_file', { kb_id: kb.kb_id, path: 'a.md', mode: 'append', patch: [{ find: 't', replace: 'x' }] }),
            await e.fail('write_file', { kb_id: kb.kb_id, path: 'a.md', mode: 'append' }),
          ],
          [
            'validation: mode patch: send the edits in patch, not content',
            'validation: mode append: patch is only for mode patch',
            'validation: mode append: content is required',
          ],
        );
      });
    });

    describe('roles on file tools', () => {
      it('refuses a Viewer’s write as permission_denied, writing nothing', async () => {
        const kb = await suite.kb();
        const before = await suite.snapshot();
        const text = await (await suite.agent('viewer-bot')).fail('write_file', { kb_id: kb.kb_id, path: 'a.md', mode: 'create', content: 'x' });
        assert.equal(text, 'permission_denied: write_file needs the Editor role on a Knowledge Base; you have Viewer at most');
        assert.deepEqual(await suite.snapshot(), before);
      });

      it('lets an Editor share write', async () => {
        const kb = await suite.kb();
        const written = await (await suite.agent('share-bot')).ok<WriteWire>('write_file', { kb_id: kb.kb_id, path: 'a.md', mode: 'create', content: 'x' });
        assert.equal(written.version, 1);
      });

      it('lets a team share at Viewer read but not write', async () => {
        const kb = await suite.kb();
        await suite.file(kb.kb_id, 'a.md', 'x');
        const eng = await suite.agent('eng-bot');
        assert.equal((await eng.ok<ReadWire>('read_file', { kb_id: kb.kb_id, path: 'a.md' })).content, 'x');
        assertAtminaError(await eng.fail('write_file', { kb_id: kb.kb_id, path: 'b.md', mode: 'create', content: 'x' }), 'permission_denied');
      });

      it('holds an Admin whose policy is Viewer to reading', async () => {
        const kb = await suite.kb();
        await suite.file(kb.kb_id, 'a.md', 'x');
        const capped = await suite.agent('capped-bot');
        assert.equal((await capped.ok<ReadWire>('read_file', { kb_id: kb.kb_id, path: 'a.md' })).content, 'x');
        assert.equal(
          await capped.fail('write_file', { kb_id: kb.kb_id, path: 'a.md', mode: 'overwrite', content: 'y' }),
          'permission_denied: write_file needs the Editor role on a Knowledge Base; you have Viewer at most',
        );
      });

      it('hides the files of a KB outside the caller’s reach behind the KB’s not_found', async () => {
        const kb = await suite.kb();
        await suite.file(kb.kb_id, 'a.md', 'x');
        // support-bot has a role elsewhere, so read_file is its tool, and this KB is out of its reach.
        assertAtminaError(await (await suite.agent('support-bot')).fail('read_file', { kb_id: kb.kb_id, path: 'a.md' }), 'not_found', 'no Knowledge Base');
        assertAtminaError(
          await (await suite.agent('globex-bot', undefined, 'globex')).fail('read_file', { kb_id: kb.kb_id, path: 'a.md' }),
          'not_found',
          'no Knowledge Base',
        );
      });
    });

    describe('list_files', () => {
      async function catalog(): Promise<KbWire> {
        const kb = await suite.kb();
        await (
          await admin()
        ).ok('write_files', {
          kb_id: kb.kb_id,
          items: [
            { path: 'policies/retention.md', mode: 'create', content: 'Keep 7 years.' },
            { path: 'policies/access.md', mode: 'create', content: 'Least privilege.' },
            { path: 'policies/archive/old.md', mode: 'create', content: 'Old' },
            { path: 'readme.md', mode: 'create', content: 'Start here, please.' },
            { path: 'policy.md', mode: 'create', content: 'x' },
          ],
        });
        return kb;
      }

      it('lists every live file under a prefix, by path', async () => {
        const kb = await catalog();
        const page = await (
          await suite.agent('viewer-bot')
        ).ok<{ files: { path: string }[]; next_cursor: string | null }>('list_files', {
          kb_id: kb.kb_id,
          path_prefix: 'policies/',
        });
        assert.deepEqual(
          { paths: page.files.map((f) => f.path), next: page.next_cursor },
          { paths: ['policies/access.md', 'policies/archive/old.md', 'policies/retention.md'], next: null },
        );
      });

      it('pages with a cursor until the last page, in the order asked', async () => {
        const kb = await catalog();
        const viewer = await suite.agent('viewer-bot');
        const paths: string[] = [];
        let cursor: string | undefined;
        let pages = 0;
        do {
          const page = await viewer.ok<{ files: { path: string }[]; next_cursor: string | null }>('list_files', {
            kb_id: kb.kb_id,
            sort: 'size',
            order: 'desc',
            limit: 2,
            ...(cursor === undefined ? {} : { cursor }),
          });
          paths.push(...page.files.map((f) => f.path));
          cursor = page.next_cursor ?? undefined;
          pages += 1;
        } while (cursor !== undefined);
        assert.deepEqual(
          { pages, paths },
          { pages: 3, paths: ['readme.md', 'policies/access.md', 'policies/retention.md', 'policies/archive/old.md', 'policy.md'] },
        );
      });

      it('refuses a cursor of another listing as validation', async () => {
        const kb = await catalog();
        const viewer = await suite.agent('viewer-bot');
        const { next_cursor } = await viewer.ok<{ next_cursor: string }>('list_files', { kb_id: kb.kb_id, limit: 1 });
        assert.deepEqual(
          [
            await viewer.fail('list_files', { kb_id: kb.kb_id, limit: 1, sort: 'size', cursor: next_cursor }),
            await viewer.fail('list_files', { kb_id: kb.kb_id, cursor: 'garbage' }),
          ],
          [
            'validation: cursor: not a cursor this tool returned; start again without it',
            'validation: cursor: not a cursor this tool returned; start again without it',
          ],
        );
      });
    });

    describe('file_history and restore_version', () => {
      async function threeVersions(): Promise<{ kb: KbWire; file: WriteWire; last: WriteWire }> {
        const kb = await suite.kb();
        const file = await suite.file(kb.kb_id, 'a.md', 'one');
        const e = await editor();
        await e.ok('write_file', { kb_id: kb.kb_id, path: 'a.md', mode: 'append', content: ' two' });
        const last = await e.ok<WriteWire>('write_file', { kb_id: kb.kb_id, path: 'a.md', mode: 'overwrite', content: 'three' });
        return { kb, file, last };
      }

      it('lists every version newest first with its operation, author, size and SHA-256', async () => {
        const { kb } = await threeVersions();
        const history = await (await suite.agent('viewer-bot')).ok<HistoryWire>('file_history', { kb_id: kb.kb_id, path: 'a.md' });
        assert.deepEqual(
          history.versions.map((v) => ({ version: v.version, operation: v.operation, author: v.author?.name, size: v.size_bytes, sha256: v.sha256 })),
          [
            { version: 3, operation: 'overwrite', author: 'editor-bot', size: 5, sha256: sha256('three') },
            { version: 2, operation: 'append', author: 'editor-bot', size: 7, sha256: sha256('one two') },
            { version: 1, operation: 'create', author: 'admin-bot', size: 3, sha256: sha256('one') },
          ],
        );
      });

      it('pages the history with a cursor', async () => {
        const { kb } = await threeVersions();
        const viewer = await suite.agent('viewer-bot');
        const first = await viewer.ok<HistoryWire>('file_history', { kb_id: kb.kb_id, path: 'a.md', limit: 2 });
        const second = await viewer.ok<HistoryWire>('file_history', { kb_id: kb.kb_id, path: 'a.md', limit: 2, cursor: first.next_cursor });
        assert.deepEqual(
          { first: first.versions.map((v) => v.version), second: second.versions.map((v) => v.version), end: second.next_cursor },
          { first: [3, 2], second: [1], end: null },
        );
      });

      it('restores an old version as a new head, guarded by the current head', async () => {
        const { kb, last } = await threeVersions();
        const restored = await (
          await editor()
        ).ok<WriteWire & { restored_from: number }>('restore_version', {
          kb_id: kb.kb_id,
          path: 'a.md',
          version: 1,
          if_match: last.sha256,
        });
        assert.partialDeepStrictEqual(restored, { version: 4, sha256: sha256('one'), operation: 'restore', restored_from: 1, changed: true });
        assert.equal((await read(kb, 'a.md')).content, 'one');
      });

      it('refuses a restore with a stale head guard as a conflict', async () => {
        const { kb, file } = await threeVersions();
        assertAtminaError(await (await editor()).fail('restore_version', { kb_id: kb.kb_id, path: 'a.md', version: 1, if_match: file.sha256 }), 'conflict');
      });

      it('refuses a version the file does not have as not_found', async () => {
        const { kb, last } = await threeVersions();
        const text = await (await editor()).fail('restore_version', { kb_id: kb.kb_id, path: 'a.md', version: 9, if_match: last.sha256 });
        assert.equal(text, 'not_found: this file has no version 9; file_history lists the retained versions');
      });

      it('refuses a version beyond what the store counts (2^53 - 1) as not_found, not as an internal error', async () => {
        const { kb, last } = await threeVersions();
        const version = Number.MAX_SAFE_INTEGER;
        const text = await (await editor()).fail('restore_version', { kb_id: kb.kb_id, path: 'a.md', version, if_match: last.sha256 });
        assert.equal(text, `not_found: this file has no version ${version}; file_history lists the retained versions`);
      });
    });

    describe('move_file', () => {
      it('moves a file to a free path, keeping its id, as a version of its own', async () => {
        const kb = await suite.kb();
        const file = await suite.file(kb.kb_id, 'drafts/plan.md', 'plan');
        const moved = await (await editor()).ok('move_file', { kb_id: kb.kb_id, file_id: file.file_id, to_path: 'plans/plan.txt' });
        assert.partialDeepStrictEqual(moved, {
          file_id: file.file_id,
          from_path: 'drafts/plan.md',
          path: 'plans/plan.txt',
          version: 2,
          sha256: file.sha256,
          changed: true,
        });
        assert.partialDeepStrictEqual(await read(kb, 'plans/plan.txt'), { file_id: file.file_id, content: 'plan', media_type: 'text/plain' });
      });

      it('leaves nothing at the old path', async () => {
        const kb = await suite.kb();
        const file = await suite.file(kb.kb_id, 'a.md', 'x');
        await (await editor()).ok('move_file', { kb_id: kb.kb_id, file_id: file.file_id, to_path: 'b.md' });
        assertAtminaError(await (await editor()).fail('read_file', { kb_id: kb.kb_id, path: 'a.md' }), 'not_found');
      });

      it('refuses a target path that holds a file as a conflict, changing nothing', async () => {
        const kb = await suite.kb();
        const file = await suite.file(kb.kb_id, 'a.md', 'a');
        await suite.file(kb.kb_id, 'b.md', 'b');
        const before = await suite.snapshot();
        assertAtminaError(await (await editor()).fail('move_file', { kb_id: kb.kb_id, file_id: file.file_id, to_path: 'b.md' }), 'conflict', '"b.md"');
        assert.deepEqual(await suite.snapshot(), before);
      });

      it('accepts no if_match', async () => {
        const kb = await suite.kb();
        const file = await suite.file(kb.kb_id, 'a.md', 'a');
        assertAtminaError(
          await (await editor()).fail('move_file', { kb_id: kb.kb_id, file_id: file.file_id, to_path: 'b.md', if_match: file.sha256 }),
          'validation',
        );
      });
    });

    describe('delete_file', () => {
      it('refuses an Editor as permission_denied', async () => {
        const kb = await suite.kb();
        await suite.file(kb.kb_id, 'a.md', 'a');
        assertAtminaError(await (await editor()).fail('delete_file', { kb_id: kb.kb_id, path: 'a.md', confirm: 'a.md' }), 'permission_denied');
      });

      it('refuses without the path as confirmation, changing nothing', async () => {
        const kb = await suite.kb();
        await suite.file(kb.kb_id, 'a.md', 'a');
        const before = await suite.snapshot();
        const text = await (await admin()).fail('delete_file', { kb_id: kb.kb_id, path: 'a.md', confirm: 'yes' });
        assert.equal(text, 'validation: confirm must be "a.md" to delete this file; nothing was changed');
        assert.deepEqual(await suite.snapshot(), before);
      });

      it('deletes the file: gone for reads, its path free for a new file', async () => {
        const kb = await suite.kb();
        const file = await suite.file(kb.kb_id, 'a.md', 'a');
        const deleted = await (await admin()).ok('delete_file', { kb_id: kb.kb_id, path: 'a.md', confirm: 'a.md' });
        assert.partialDeepStrictEqual(deleted, { file_id: file.file_id, path: 'a.md', deleted: true, version: 2 });
        assertAtminaError(await (await editor()).fail('read_file', { kb_id: kb.kb_id, file_id: file.file_id }), 'not_found');
        const again = await suite.file(kb.kb_id, 'a.md', 'new');
        assert.notEqual(again.file_id, file.file_id);
      });

      it('keeps a deleted file’s history for Admins, by file_id, and from everyone else', async () => {
        const kb = await suite.kb();
        const file = await suite.file(kb.kb_id, 'a.md', 'a');
        await (await admin()).ok('delete_file', { kb_id: kb.kb_id, path: 'a.md', confirm: 'a.md' });
        const history = await (await admin()).ok<HistoryWire>('file_history', { kb_id: kb.kb_id, file_id: file.file_id });
        assert.partialDeepStrictEqual(history, {
          deleted: true,
          versions: [
            { version: 2, operation: 'delete' },
            { version: 1, operation: 'create' },
          ],
        });
        assertAtminaError(await (await editor()).fail('file_history', { kb_id: kb.kb_id, file_id: file.file_id }), 'not_found');
      });
    });

    describe('hostile paths', () => {
      let kb: KbWire;
      before(async () => {
        kb = await suite.kb();
      });
      // The 10 MB one is the paths suite's; here each travels through the MCP client.
      for (const { name, path, problem } of HOSTILE_PATHS.filter((p) => p.path.length < 100_000)) {
        it(`refuses ${name} as validation naming the path, writing nothing`, async () => {
          const text = await (await editor()).fail('write_file', { kb_id: kb.kb_id, path, mode: 'create', content: 'x' });
          // NUL and lone surrogates are refused before any tool runs, in the gateway's own words.
          const expected = /NUL|lone surrogate/.test(name)
            ? /^validation: path: must (not contain NUL|be well-formed Unicode)/
            : `validation: path: ${problem}`;
          if (typeof expected === 'string') assert.ok(text.startsWith(expected), text);
          else assert.match(text, expected);
          assert.partialDeepStrictEqual(await (await editor()).ok('list_files', { kb_id: kb.kb_id }), { files: [] });
        });
      }
    });

    describe('what a write records', () => {
      it('enqueues the file for search and graph under kb_file:<id>, with ids, path, SHA-256 and version', async () => {
        const kb = await suite.kb();
        const file = await suite.file(kb.kb_id, 'a.md', 'a');
        const rows = await suite.db.query<{ projection: string; operation: string; payload: unknown }>(
          'SELECT projection, operation, payload FROM outbox WHERE resource_key = $1 ORDER BY projection',
          [`kb_file:${file.file_id}`],
        );
        const payload = { fileId: file.file_id, kbId: kb.kb_id, path: 'a.md', sha256: sha256('a'), version: 1, kind: 'text', mediaType: 'text/markdown' };
        assert.deepEqual(
          rows.map((r) => ({ ...r, payload: typeof r.payload === 'string' ? (JSON.parse(r.payload) as unknown) : r.payload })),
          [
            { projection: 'graph', operation: 'upsert', payload },
            { projection: 'search', operation: 'upsert', payload },
          ],
        );
      });

      it('records the writer’s contribution to the KB', async () => {
        const kb = await suite.kb();
        await (await editor()).ok('write_file', { kb_id: kb.kb_id, path: 'a.md', mode: 'create', content: 'a' });
        const rows = await suite.db.query<{ name: string }>(
          'SELECT p.name FROM kb_contributions c JOIN principals p ON p.tenant_id = c.tenant_id AND p.id = c.principal_id WHERE c.kb_id = $1',
          [kb.kb_id],
        );
        assert.deepEqual(
          rows.map((r) => r.name),
          ['editor-bot'],
        );
      });

      it('records one audit event per saved version, naming the file and versions but no content', async () => {
        const kb = await suite.kb();
        const file = await suite.file(kb.kb_id, 'secret-plan.md', 'top secret');
        const [event] = await suite.db.query<{ action: string; tool: string; resources: unknown; details: unknown }>(
          `SELECT action, tool, resources::text AS resources, details::text AS details FROM audit_events WHERE action = 'kb.file.create' AND resources::text LIKE $1`,
          [`%${file.file_id}%`],
        );
        assert.partialDeepStrictEqual(event, { action: 'kb.file.create', tool: 'write_file' });
        assert.doesNotMatch(`${String(event?.resources)} ${String(event?.details)}`, /top secret|secret-plan/);
      });
    });
  });
}
