import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyPatch, checkPatch } from '../../src/atmina/kb/patch.ts';
import { assertKgwError } from '../support/fixtures.ts';

const MAX = 1024 * 1024;

function refusal(work: () => unknown): unknown {
  try {
    work();
  } catch (error) {
    return error;
  }
  assert.fail('expected a refusal');
}

describe('find/replace patches', () => {
  it('replaces the one occurrence', () => {
    assert.equal(applyPatch('a b c', [{ find: 'b', replace: 'B' }], false, MAX), 'a B c');
  });

  it('counts occurrences without overlap, left to right', () => {
    assert.equal(applyPatch('aaaa', [{ find: 'aa', replace: 'x', occurrence: 2 }], false, MAX), 'aax');
  });

  it('replaces every occurrence with "all"', () => {
    assert.equal(applyPatch('a-a-a', [{ find: 'a', replace: 'bb', occurrence: 'all' }], false, MAX), 'bb-bb-bb');
  });

  it('deletes with an empty replacement', () => {
    assert.equal(applyPatch('keep this, drop this', [{ find: ', drop this', replace: '' }], false, MAX), 'keep this');
  });

  it('refuses an ambiguous find as validation, with the count', () => {
    assertKgwError(
      refusal(() => applyPatch('x x', [{ find: 'x', replace: 'y' }], false, MAX)),
      'validation',
      'patch[0].find occurs 2 times; set occurrence to 1..2, or "all", or make find longer; nothing was written',
    );
  });

  it('refuses an occurrence past the last one as validation', () => {
    assertKgwError(
      refusal(() => applyPatch('x x', [{ find: 'x', replace: 'y', occurrence: 3 }], false, MAX)),
      'validation',
      /occurs 2 times/,
    );
  });

  it('never takes a nearest match: a find differing in case or space is absent', () => {
    assertKgwError(
      refusal(() => applyPatch('Hello  world', [{ find: 'hello world', replace: 'x' }], true, MAX)),
      'validation',
      /does not occur/,
    );
  });

  it('names the edit that failed', () => {
    assertKgwError(
      refusal(() =>
        applyPatch(
          'a',
          [
            { find: 'a', replace: 'b' },
            { find: 'a', replace: 'c' },
          ],
          false,
          MAX,
        ),
      ),
      'conflict',
      /^patch\[1\]\.find does not occur in the current file/,
    );
  });

  it('refuses an empty find and an edit list out of bounds before anything is read', () => {
    assertKgwError(
      refusal(() => checkPatch([{ find: '', replace: 'x' }])),
      'validation',
      'mode patch: patch[0].find must not be empty',
    );
    assertKgwError(
      refusal(() => checkPatch([])),
      'validation',
      'mode patch: patch must hold 1 to 50 edits',
    );
  });

  it('bounds the text after each edit, before building it: a doubling edit list stops at the limit', () => {
    const edits = Array.from({ length: 50 }, () => ({ find: 'a', replace: 'aa', occurrence: 'all' as const }));
    // 1 KiB doubles past 1 MiB at the eleventh edit: refused there, with the size that edit would make.
    assertKgwError(
      refusal(() => applyPatch('a'.repeat(1024), edits, false, MAX)),
      'payload_too_large',
      `the file would be ${2 * MAX} bytes; text writes keep files to ${MAX} bytes of UTF-8 (use request_uploads for larger files)`,
    );
  });

  it('refuses a replacement of every occurrence whose result would pass the limit without building it', () => {
    // 1 MiB × 1,000 characters is 1 GiB of UTF-16, past V8's longest string: it must never be built.
    assertKgwError(
      refusal(() => applyPatch('a'.repeat(MAX), [{ find: 'a', replace: 'b'.repeat(1000), occurrence: 'all' }], false, MAX)),
      'payload_too_large',
      /^the file would be 1048576000 bytes/,
    );
  });

  it('counts the limit in UTF-8 bytes, exactly at the limit and one past it', () => {
    const text = 'x'.repeat(MAX - 4);
    assert.equal(Buffer.byteLength(applyPatch(text, [{ find: 'x', replace: 'xé', occurrence: 2 }], false, MAX)), MAX - 2);
    assert.equal(Buffer.byteLength(applyPatch(text, [{ find: 'x', replace: 'x😀', occurrence: 1 }], false, MAX)), MAX);
    assertKgwError(
      refusal(() => applyPatch(text, [{ find: 'x', replace: 'xx😀', occurrence: 1 }], false, MAX)),
      'payload_too_large',
      /would be 1048577 bytes/,
    );
  });
});
