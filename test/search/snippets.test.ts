import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SNIPPET_MARK } from '../../connectors/search/contract.ts';
import { analyzer } from '../../src/search-text/analyzer.ts';
import type { Token } from '../../src/search-text/analyzer.ts';
import { SNIPPET_HITS_MAX, SNIPPET_SCAN_CHARS, SNIPPET_WORDS, snippetsOf } from '../../src/search-text/snippets.ts';

const english = analyzer('english');
const marked = (word: string) => `${SNIPPET_MARK.open}${word}${SNIPPET_MARK.close}`;

/** The analyser, counting the words a snippet reads. */
function counting(): { readonly read: () => number; readonly analyzer: typeof english } {
  let read = 0;
  const proxy = Object.create(english) as typeof english;
  proxy.eachToken = function* (text: string): Generator<Token> {
    for (const token of english.eachToken(text)) {
      read++;
      yield token;
    }
  };
  return { read: () => read, analyzer: proxy };
}

describe('snippets', () => {
  it('marks the matched words of the densest passages, in body order', () => {
    const body = 'Intro text here. The deploy failed at night. Later, more text. Then deploy again and the rollback worked.';
    const snippets = snippetsOf(english, body, new Set(['deploy', 'rollback']), 3);
    assert.ok(
      snippets.some((s) => s.includes(marked('rollback')) && s.includes(marked('deploy'))),
      snippets.join(' | '),
    );
  });

  it(`reads a common word's body only up to ${SNIPPET_HITS_MAX} matches and a window past them, not the whole scan`, () => {
    const body = 'the common word and more words '.repeat(40_000).slice(0, SNIPPET_SCAN_CHARS);
    const { read, analyzer: reader } = counting();
    const snippets = snippetsOf(reader, body, new Set(['common']), 3);
    assert.equal(snippets.length, 3);
    assert.ok(snippets.every((s) => s.includes(marked('common'))));
    // Each repetition has 5 words that are not stop words; 64 matches are 320 words, plus one window.
    assert.ok(read() <= SNIPPET_HITS_MAX * 5 + SNIPPET_WORDS + 1, String(read()));
  });

  it('still reads a rare word to the end of the scan', () => {
    const body = `${'filler words only '.repeat(5_000)}the needle is here`;
    const snippets = snippetsOf(english, body, new Set(['needl']), 3);
    assert.equal(snippets.length, 1);
    assert.match(snippets[0] ?? '', new RegExp(`${SNIPPET_MARK.open}needle${SNIPPET_MARK.close}`));
  });
});
