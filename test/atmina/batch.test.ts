import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { storeBackends } from '../support/stores.ts';
import type { ReadWire } from './support.ts';
import { KbSuite, assertAtminaError, backendLabel, sha256 } from './support.ts';

interface Item {
  index: number;
  path: string;
  ok: boolean;
  version?: number;
  sha256?: string;
  operation?: string;
  code?: string;
  error?: string;
}
interface Batch {
  kb_id: string;
  results: Item[];
  written: number;
  failed: number;
}

for (const backend of storeBackends()) {
  describe(`Atmina write_files on ${backendLabel(backend)}`, () => {
    let suite: KbSuite;
    before(async () => {
      suite = await KbSuite.open(backend);
    });
    after(async () => {
      await suite?.close();
    });

    const editor = () => suite.agent('editor-bot');

    it('writes 50 files in one call, one result per item in the order given', async () => {
      const kb = await suite.kb();
      const items = Array.from({ length: 50 }, (_, n) => ({ path: `notes/${String(n).padStart(2, '0')}.md`, mode: 'create', content: `note ${n}\n` }));
      const batch = await (await editor()).ok<Batch>('write_files', { kb_id: kb.kb_id, items });
      assert.deepEqual(
        { written: batch.written, failed: batch.failed, indexes: batch.results.map((r) => r.index), versions: new Set(batch.results.map((r) => r.version)) },
        { written: 50, failed: 0, indexes: items.map((_, n) => n), versions: new Set([1]) },
      );
      const { files } = await (await editor()).ok<{ files: unknown[] }>('list_files', { kb_id: kb.kb_id, path_prefix: 'notes/' });
      assert.equal(files.length, 50);
    });

    it('applies ordered edits of one path in order, each on the hash of the one before', async () => {
      const kb = await suite.kb();
      const batch = await (
        await editor()
      ).ok<Batch>('write_files', {
        kb_id: kb.kb_id,
        items: [
          { path: 'log.md', mode: 'create', content: '# Log\n' },
          { path: 'other.md', mode: 'create', content: 'other' },
          { path: 'log.md', mode: 'append', content: '- one\n' },
          { path: 'log.md', mode: 'patch', patch: [{ find: 'one', replace: 'first' }] },
          { path: 'log.md', mode: 'append', content: '- two\n' },
        ],
      });
      assert.deepEqual(
        batch.results.filter((r) => r.path === 'log.md').map((r) => ({ version: r.version, operation: r.operation })),
        [
          { version: 1, operation: 'create' },
          { version: 2, operation: 'append' },
          { version: 3, operation: 'patch' },
          { version: 4, operation: 'append' },
        ],
      );
      const read = await (await editor()).ok<ReadWire>('read_file', { kb_id: kb.kb_id, path: 'log.md' });
      assert.partialDeepStrictEqual(read, { content: '# Log\n- first\n- two\n', sha256: sha256('# Log\n- first\n- two\n') });
    });

    it('rejects the whole batch when a path repeats as a second create, writing nothing', async () => {
      const kb = await suite.kb();
      const before = await suite.snapshot();
      const text = await (
        await editor()
      ).fail('write_files', {
        kb_id: kb.kb_id,
        items: [
          { path: 'fine.md', mode: 'create', content: 'fine' },
          { path: 'a.md', mode: 'create', content: 'one' },
          { path: 'a.md', mode: 'overwrite', content: 'two' },
        ],
      });
      assert.equal(
        text,
        'validation: items 1, 2 name the same path "a.md"; a path may repeat only as later append, patch or overwrite items, each applied to the result of the one before (an overwrite must carry that result\'s sha256 as if_match); nothing was written',
      );
      assert.deepEqual(await suite.snapshot(), before);
    });

    it('counts two spellings of one path (NFC) as the same path', async () => {
      const kb = await suite.kb();
      const text = await (
        await editor()
      ).fail('write_files', {
        kb_id: kb.kb_id,
        items: [
          { path: 'caf\u00e9.md', mode: 'create', content: 'one' },
          { path: 'cafe\u0301.md', mode: 'create', content: 'two' },
        ],
      });
      assertAtminaError(text, 'validation', 'name the same path "café.md"');
    });

    it('applies edits of one path that carry each new hash forward as the next if_match, as the spec says', async () => {
      const kb = await suite.kb();
      const file = await suite.file(kb.kb_id, 'chain.md', 'one\n');
      const steps = ['one\n', 'one\ntwo\n', 'one\n2\n', 'three\n'];
      const batch = await (
        await editor()
      ).ok<Batch>('write_files', {
        kb_id: kb.kb_id,
        items: [
          { path: 'chain.md', mode: 'append', content: 'two\n', if_match: file.sha256 },
          { path: 'chain.md', mode: 'patch', patch: [{ find: 'two', replace: '2' }], if_match: sha256(steps[1] ?? '') },
          { path: 'chain.md', mode: 'overwrite', content: 'three\n', if_match: sha256(steps[2] ?? '') },
        ],
      });
      assert.deepEqual(
        batch.results.map((r) => ({ ok: r.ok, version: r.version, sha256: r.sha256 })),
        [
          { ok: true, version: 2, sha256: sha256(steps[1] ?? '') },
          { ok: true, version: 3, sha256: sha256(steps[2] ?? '') },
          { ok: true, version: 4, sha256: sha256(steps[3] ?? '') },
        ],
      );
      const read = await (await editor()).ok<ReadWire>('read_file', { kb_id: kb.kb_id, path: 'chain.md' });
      assert.equal(read.content, 'three\n');
    });

    it('refuses a later item whose if_match is not the hash the item before produced as a conflict of that item, skipping the rest of its path', async () => {
      const kb = await suite.kb();
      const file = await suite.file(kb.kb_id, 'a.md', 'one');
      const batch = await (
        await editor()
      ).ok<Batch>('write_files', {
        kb_id: kb.kb_id,
        items: [
          { path: 'a.md', mode: 'append', content: ' two' },
          { path: 'a.md', mode: 'append', content: ' three', if_match: file.sha256 },
          { path: 'a.md', mode: 'append', content: ' four' },
          { path: 'b.md', mode: 'create', content: 'b' },
        ],
      });
      assert.deepEqual(
        batch.results.map((r) => r.error),
        [
          undefined,
          `conflict: not applied: if_match is not the sha256 item 0 of this batch left at this path (${sha256('one two')}); carry each item's new sha256 forward as the next one's if_match, or leave if_match out`,
          'conflict: not applied: item 1 for the same path failed, and this edit builds on it',
          undefined,
        ],
      );
      const read = await (await editor()).ok<ReadWire>('read_file', { kb_id: kb.kb_id, path: 'a.md' });
      assert.deepEqual({ content: read.content, version: read.version }, { content: 'one two', version: 2 });
    });

    it('rejects a repeated path whose later item is an overwrite without if_match as a duplicate, writing nothing', async () => {
      const kb = await suite.kb();
      await suite.file(kb.kb_id, 'a.md', 'one');
      const before = await suite.snapshot();
      const text = await (
        await editor()
      ).fail('write_files', {
        kb_id: kb.kb_id,
        items: [
          { path: 'a.md', mode: 'append', content: ' two' },
          { path: 'a.md', mode: 'overwrite', content: 'three' },
        ],
      });
      assertAtminaError(text, 'validation', 'items 0, 1 name the same path');
      assert.deepEqual(await suite.snapshot(), before);
    });

    it('answers a failed item on its own and applies the others', async () => {
      const kb = await suite.kb();
      await suite.file(kb.kb_id, 'exists.md', 'x');
      const batch = await (
        await editor()
      ).ok<Batch>('write_files', {
        kb_id: kb.kb_id,
        items: [
          { path: 'new.md', mode: 'create', content: 'new' },
          { path: 'exists.md', mode: 'create', content: 'again' },
          { path: '../escape.md', mode: 'create', content: 'x' },
          { path: 'integrity.md', mode: 'create', content: 'abc', expected_bytes: 4 },
        ],
      });
      assert.deepEqual(
        batch.results.map((r) => ({ index: r.index, ok: r.ok, code: r.code })),
        [
          { index: 0, ok: true, code: undefined },
          { index: 1, ok: false, code: 'conflict' },
          { index: 2, ok: false, code: 'validation' },
          { index: 3, ok: false, code: 'content_integrity' },
        ],
      );
      assert.deepEqual({ written: batch.written, failed: batch.failed }, { written: 1, failed: 3 });
    });

    it('words a failed item as Atmina does, code: message', async () => {
      const kb = await suite.kb();
      const batch = await (await editor()).ok<Batch>('write_files', { kb_id: kb.kb_id, items: [{ path: 'missing.md', mode: 'append', content: 'x' }] });
      assert.equal(batch.results[0]?.error, 'not_found: no file "missing.md" in this Knowledge Base; list_files shows the ones there are');
    });

    it('skips the later edits of a path whose earlier item failed', async () => {
      const kb = await suite.kb();
      const batch = await (
        await editor()
      ).ok<Batch>('write_files', {
        kb_id: kb.kb_id,
        items: [
          { path: 'a.md', mode: 'append', content: 'x' },
          { path: 'a.md', mode: 'append', content: 'y' },
        ],
      });
      assert.deepEqual(
        batch.results.map((r) => r.error),
        [
          'not_found: no file "a.md" in this Knowledge Base; list_files shows the ones there are',
          'conflict: not applied: item 0 for the same path failed, and this edit builds on it',
        ],
      );
    });

    it('refuses more than 50 items and a concurrency outside 1 to 5 as validation', async () => {
      const kb = await suite.kb();
      const item = (n: number) => ({ path: `f${n}.md`, mode: 'create', content: 'x' });
      const e = await editor();
      assertAtminaError(await e.fail('write_files', { kb_id: kb.kb_id, items: Array.from({ length: 51 }, (_, n) => item(n)) }), 'validation', 'items');
      assertAtminaError(await e.fail('write_files', { kb_id: kb.kb_id, items: [item(0)], concurrency: 6 }), 'validation', 'concurrency');
      assertAtminaError(await e.fail('write_files', { kb_id: kb.kb_id, items: [item(0)], concurrency: 0 }), 'validation', 'concurrency');
    });

    it('writes one at a time with concurrency 1', async () => {
      const kb = await suite.kb();
      const batch = await (
        await editor()
      ).ok<Batch>('write_files', {
        kb_id: kb.kb_id,
        concurrency: 1,
        items: [
          { path: 'a.md', mode: 'create', content: 'a' },
          { path: 'b.md', mode: 'create', content: 'b' },
        ],
      });
      assert.equal(batch.written, 2);
    });

    it('refuses a Viewer’s batch whole as permission_denied', async () => {
      const kb = await suite.kb();
      const text = await (await suite.agent('viewer-bot')).fail('write_files', { kb_id: kb.kb_id, items: [{ path: 'a.md', mode: 'create', content: 'a' }] });
      assertAtminaError(text, 'permission_denied', 'needs the Editor role');
    });
  });
}
