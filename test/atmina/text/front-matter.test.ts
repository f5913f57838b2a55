import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FRONT_MATTER_MAX_CHARS, normaliseTags, parseFrontMatter, TAG_MAX_CHARS, TAGS_MAX, TITLE_MAX_CHARS } from '../../../src/atmina/kb/text/front-matter.ts';

describe('parseFrontMatter: where the block is', () => {
  it('reads a block from a --- first line to the next --- line', () => {
    assert.deepStrictEqual(parseFrontMatter('---\ntitle: Setup\nowner: ops\n---\n# Setup\n'), {
      status: 'parsed',
      data: { title: 'Setup', owner: 'ops' },
      keys: ['title', 'owner'],
      tags: [],
      title: 'Setup',
      endLine: 4,
      bodyLine: 5,
    });
  });

  it('closes the block at a ... line too', () => {
    assert.partialDeepStrictEqual(parseFrontMatter('---\na: 1\n...\nbody'), { status: 'parsed', keys: ['a'], endLine: 3, bodyLine: 4 });
  });

  it('allows trailing spaces and tabs on the fences', () => {
    assert.partialDeepStrictEqual(parseFrontMatter('--- \t\na: 1\n---\t\n'), { status: 'parsed', keys: ['a'], endLine: 3 });
  });

  it('ignores a leading byte order mark', () => {
    assert.partialDeepStrictEqual(parseFrontMatter('\uFEFF---\na: 1\n---\n'), { status: 'parsed', keys: ['a'] });
  });

  it('reads CRLF and CR line endings', () => {
    assert.partialDeepStrictEqual(parseFrontMatter('---\r\na: 1\r\nb: 2\r---\r\nbody'), { status: 'parsed', keys: ['a', 'b'], endLine: 4, bodyLine: 5 });
  });

  it('is absent when the first line is not ---', () => {
    assert.deepStrictEqual(parseFrontMatter('# Title\n---\na: 1\n---\n'), { status: 'absent', data: {}, keys: [], tags: [], bodyLine: 1 });
  });

  it('is absent when the fence is indented or longer', () => {
    assert.equal(parseFrontMatter(' ---\na: 1\n---\n').status, 'absent');
    assert.equal(parseFrontMatter('----\na: 1\n---\n').status, 'absent');
  });

  it('is unterminated without a closing line, and the body then starts at line 1', () => {
    assert.deepStrictEqual(parseFrontMatter('---\ntitle: x\n# Body\n'), { status: 'unterminated', data: {}, keys: [], tags: [], bodyLine: 1 });
  });

  it('is unterminated for a file that is only the opening fence', () => {
    assert.equal(parseFrontMatter('---').status, 'unterminated');
  });

  it('is an empty mapping when the block is empty', () => {
    assert.partialDeepStrictEqual(parseFrontMatter('---\n---\n'), { status: 'parsed', data: {}, keys: [], endLine: 2 });
  });

  it('is too large beyond FRONT_MATTER_MAX_CHARS, its lines still not body', () => {
    const big = `---\nnote: ${'x'.repeat(FRONT_MATTER_MAX_CHARS)}\n---\n# Body\n`;
    assert.deepStrictEqual(parseFrontMatter(big), { status: 'too_large', data: {}, keys: [], tags: [], endLine: 3, bodyLine: 4 });
  });
});

describe('parseFrontMatter: what the block holds', () => {
  it('is malformed when the YAML does not parse, with no keys', () => {
    assert.deepStrictEqual(parseFrontMatter('---\ntitle: [unclosed\n---\n'), { status: 'malformed', data: {}, keys: [], tags: [], endLine: 3, bodyLine: 4 });
  });

  it('is malformed for a duplicate key', () => {
    assert.equal(parseFrontMatter('---\na: 1\na: 2\n---\n').status, 'malformed');
  });

  it('is malformed for a scalar or a list', () => {
    assert.equal(parseFrontMatter('---\njust text\n---\n').status, 'malformed');
    assert.equal(parseFrontMatter('---\n- a\n- b\n---\n').status, 'malformed');
  });

  it('is malformed when an escape spells text the store cannot keep', () => {
    assert.equal(parseFrontMatter('---\ntitle: "a\\0b"\n---\n').status, 'malformed');
    assert.equal(parseFrontMatter('---\ntitle: "a\\uD800b"\n---\n').status, 'malformed');
  });

  it('is malformed, never a throw, for an alias bomb', () => {
    const bomb = [
      'a: &a [x, x, x, x, x, x, x, x, x]',
      ...Array.from({ length: 9 }, (_, i) => `${'bcdefghij'[i]}: &${'bcdefghij'[i]} [${Array(9).fill(`*${'abcdefghi'[i]}`).join(', ')}]`),
    ];
    assert.equal(parseFrontMatter(`---\n${bomb.join('\n')}\n---\n`).status, 'malformed');
  });

  it('is malformed, never a throw, for nesting deep enough to exhaust a recursive reader', () => {
    assert.equal(parseFrontMatter(`---\na: ${'['.repeat(20_000)}${']'.repeat(20_000)}\n---\n`).status, 'malformed');
  });

  it('uses YAML 1.2: yes, no and dates stay strings', () => {
    assert.partialDeepStrictEqual(parseFrontMatter('---\ndraft: no\nreviewed: 2026-09-10\n---\n'), { data: { draft: 'no', reviewed: '2026-09-10' } });
  });

  it('keeps a __proto__ key as data, not as the prototype', () => {
    const front = parseFrontMatter('---\n__proto__: {polluted: true}\n---\n');
    assert.deepStrictEqual(front.keys, ['__proto__']);
    assert.equal(Object.getPrototypeOf(front.data), Object.prototype);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it('stringifies a collection key without printing a warning', () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning.message);
    process.on('warning', onWarning);
    try {
      assert.deepStrictEqual(parseFrontMatter('---\n? [a]\n: 1\n---\n').keys, ['[ a ]']);
    } finally {
      process.off('warning', onWarning);
    }
    assert.deepStrictEqual(warnings, []);
  });

  it('reports at most 100 keys, each displayable and bounded', () => {
    const keys = Array.from({ length: 150 }, (_, i) => `k${i}: ${i}`);
    const front = parseFrontMatter(`---\n"\\u202Ebidi\\tkey": 1\n${keys.join('\n')}\n---\n`);
    assert.equal(front.keys.length, 100);
    assert.equal(front.keys[0], 'bidi key');
  });
});

describe('parseFrontMatter: title and description', () => {
  it('takes them when they are strings, one line, trimmed', () => {
    assert.partialDeepStrictEqual(parseFrontMatter('---\ntitle: |\n  Two\n  lines\ndescription: "  Short.  "\n---\n'), {
      title: 'Two lines',
      description: 'Short.',
    });
  });

  it('leaves them out when they are not strings or are blank', () => {
    const front = parseFrontMatter('---\ntitle: 1984\ndescription: "   "\n---\n');
    assert.equal(front.title, undefined);
    assert.equal(front.description, undefined);
  });

  it('bounds the title', () => {
    assert.equal([...(parseFrontMatter(`---\ntitle: ${'t'.repeat(1000)}\n---\n`).title ?? '')].length, TITLE_MAX_CHARS);
  });
});

describe('normaliseTags', () => {
  it('reads a list of strings', () => {
    assert.deepStrictEqual(parseFrontMatter('---\ntags: [search, decisions]\n---\n').tags, ['search', 'decisions']);
  });

  it('splits a string at commas', () => {
    assert.deepStrictEqual(parseFrontMatter('---\ntags: search,  hybrid retrieval , ,decisions\n---\n').tags, ['search', 'hybrid retrieval', 'decisions']);
  });

  it('keeps strings only', () => {
    assert.deepStrictEqual(normaliseTags(['a', 2024, true, null, ['b'], { c: 1 }, 'd']), ['a', 'd']);
  });

  it('has none for a number or a map', () => {
    assert.deepStrictEqual(normaliseTags(7), []);
    assert.deepStrictEqual(normaliseTags({ a: 'b' }), []);
  });

  it('trims, makes inner whitespace one space and NFC-normalises', () => {
    assert.deepStrictEqual(normaliseTags(['  machine \t learning ', 'cafe\u0301']), ['machine learning', 'caf\u00e9']);
  });

  it('drops duplicates case-insensitively, keeping the first spelling', () => {
    assert.deepStrictEqual(normaliseTags(['Draft', 'draft', 'DRAFT', 'final']), ['Draft', 'final']);
  });

  it('drops tags with controls, bidirectional formatting or lone surrogates', () => {
    assert.deepStrictEqual(normaliseTags(['ok', 'a\u0000b', 'a\u202Eb', 'a\uD800', 'a\u0007']), ['ok']);
  });

  it('drops tags longer than TAG_MAX_CHARS instead of cutting them', () => {
    assert.deepStrictEqual(normaliseTags(['x'.repeat(TAG_MAX_CHARS), 'y'.repeat(TAG_MAX_CHARS + 1), '😀'.repeat(TAG_MAX_CHARS)]), [
      'x'.repeat(TAG_MAX_CHARS),
      '😀'.repeat(TAG_MAX_CHARS),
    ]);
  });

  it('keeps at most TAGS_MAX', () => {
    assert.equal(normaliseTags(Array.from({ length: 500 }, (_, i) => `t${i}`)).length, TAGS_MAX);
  });
});
