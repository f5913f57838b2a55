import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyPatch, checkPatch } from '../../src/core/kb/patch.ts';
import { assertKgwError } from '../support/fixtures.ts';

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
    assert.equal(applyPatch('a b c', [{ find: 'b', replace: 'B' }], false), 'a B c');
  });

  it('counts occurrences without overlap, left to right', () => {
    assert.equal(applyPatch('aaaa', [{ find: 'aa', replace: 'x', occurrence: 2 }], false), 'aax');
  });

  it('replaces every occurrence with "all"', () => {
    assert.equal(applyPatch('a-a-a', [{ find: 'a', replace: 'bb', occurrence: 'all' }], false), 'bb-bb-bb');
  });

  it('deletes with an empty replacement', () => {
    assert.equal(applyPatch('keep this, drop this', [{ find: ', drop this', replace: '' }], false), 'keep this');
  });

  it('refuses an ambiguous find as validation, with the count', () => {
    assertKgwError(
      refusal(() => applyPatch('x x', [{ find: 'x', replace: 'y' }], false)),
      'validation',
      'patch[0].find occurs 2 times; set occurrence to 1..2, or "all", or make find longer; nothing was written',
    );
  });

  it('refuses an occurrence past the last one as validation', () => {
    assertKgwError(
      refusal(() => applyPatch('x x', [{ find: 'x', replace: 'y', occurrence: 3 }], false)),
      'validation',
      /occurs 2 times/,
    );
  });

  it('never takes a nearest match: a find differing in case or space is absent', () => {
    assertKgwError(
      refusal(() => applyPatch('Hello  world', [{ find: 'hello world', replace: 'x' }], true)),
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
});
