import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mediaTypeOf, parseKbPath, parseKbPathPrefix, pathProblem } from '../../src/atmina/kb/paths.ts';
import { rejectsWithKgwError } from '../support/fixtures.ts';
import { HOSTILE_PATHS } from './support.ts';

describe('KB paths', () => {
  for (const { name, path, problem } of HOSTILE_PATHS) {
    it(`refuses ${name}`, () => {
      assert.ok(pathProblem(path)?.startsWith(problem), `${JSON.stringify(path.slice(0, 40))}: ${pathProblem(path)}`);
    });
  }

  it('refuses with validation naming the field', async () => {
    await rejectsWithKgwError(
      Promise.resolve().then(() => parseKbPath('../x', 'to_path')),
      'validation',
      'to_path: must not have . or .. segments',
    );
  });

  it('normalises to NFC, so the two spellings of é name one file', () => {
    assert.equal(parseKbPath('caf\u0065\u0301.md'), parseKbPath('caf\u00e9.md'));
  });

  it('keeps case: Notes.md and notes.md are two paths', () => {
    assert.notEqual(parseKbPath('Notes.md'), parseKbPath('notes.md'));
  });

  it('accepts other Unicode: scripts, emoji, spaces inside names', () => {
    assert.deepEqual(
      ['文档/说明.md', 'notes/🚀 launch plan.md', 'ملاحظات.txt', 'a/b/c/d.md'].map((p) => pathProblem(p)),
      [undefined, undefined, undefined, undefined],
    );
  });

  it('accepts 32 segments and a segment of 255 bytes', () => {
    assert.deepEqual([pathProblem(Array.from({ length: 32 }, () => 'a').join('/')), pathProblem(`${'é'.repeat(126)}.md`)], [undefined, undefined]);
  });

  it('takes a prefix with or without a trailing slash, and the empty prefix', () => {
    assert.deepEqual([parseKbPathPrefix('policies/'), parseKbPathPrefix('policies/re'), parseKbPathPrefix('')], ['policies/', 'policies/re', '']);
  });

  it('refuses a prefix that escapes or starts with a slash', async () => {
    await rejectsWithKgwError(
      Promise.resolve().then(() => parseKbPathPrefix('../')),
      'validation',
      'path_prefix: must not have . or .. segments',
    );
    await rejectsWithKgwError(
      Promise.resolve().then(() => parseKbPathPrefix('/')),
      'validation',
      'path_prefix: must be relative (no leading /)',
    );
  });

  it('names the media type of common text formats by extension, and text/plain otherwise', () => {
    assert.deepEqual(['a.md', 'b/C.JSON', 'c.yml', 'noext', 'dir.d/file', 'x.weird'].map(mediaTypeOf), [
      'text/markdown',
      'application/json',
      'application/yaml',
      'text/plain',
      'text/plain',
      'text/plain',
    ]);
  });
});
