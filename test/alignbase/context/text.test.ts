import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_JSON_DEPTH, findUnstorable, holdsMoreValues, unsafeName, unstorableText } from '../../../src/kernel/text.ts';

describe('text the store cannot keep', () => {
  it('names NUL and lone surrogates, and lets everything else through', () => {
    assert.equal(unstorableText('a\u0000b'), 'must not contain NUL (U+0000)');
    assert.equal(unstorableText('a\ud800'), 'must be well-formed Unicode (it has a lone surrogate)');
    assert.equal(unstorableText('\udc00a'), 'must be well-formed Unicode (it has a lone surrogate)');
    for (const fine of ['', 'plain', '😀', '\u202e\u0085\u001b[2J', 'tab\tline\n']) assert.equal(unstorableText(fine), undefined);
  });

  it('finds the first unstorable string or key with its path', () => {
    assert.deepEqual(findUnstorable({ a: [{ b: 'ok' }, { c: 'x\u0000' }] }), { path: ['a', 1, 'c'], message: 'must not contain NUL (U+0000)' });
    assert.deepEqual(findUnstorable({ a: { ['k\ud800']: 1 } }), {
      path: ['a'],
      message: 'has a key that must be well-formed Unicode (it has a lone surrogate)',
    });
    assert.equal(findUnstorable({ a: ['ok', 1, null, true, { b: '😀' }] }), undefined);
  });

  it('refuses nesting past the limit without recursion', () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 100_000; i += 1) deep = [deep];
    const found = findUnstorable(deep);
    assert.equal(found?.message, `must not be nested more than ${MAX_JSON_DEPTH} levels deep`);
    assert.equal(found?.path.length, MAX_JSON_DEPTH);
  });

  it('counts values without walking past the limit', () => {
    assert.equal(holdsMoreValues(new Array<number>(10).fill(0), 10), true);
    assert.equal(holdsMoreValues(new Array<number>(9).fill(0), 10), false);
    assert.equal(holdsMoreValues({ a: { b: [1, 2] } }, 5), false);
    assert.equal(holdsMoreValues({ a: { b: [1, 2, 3] } }, 5), true);
  });
});

describe('names shown to people', () => {
  it('refuses C0, DEL, C1 and bidi formatting characters', () => {
    for (const bad of ['a\u0001', 'a\u007f', 'x\u0085y', 'a\u009b', '\u202etxt.exe', 'a\u2066b', 'a\u200fb', 'a\u061cb'])
      assert.ok(unsafeName(bad) !== undefined, JSON.stringify(bad));
    for (const fine of ['notes.md', 'docs/über.md', '👨‍👩‍👧.png']) assert.equal(unsafeName(fine), undefined);
  });
});
