import type { Analyzer, Token } from './analyzer.ts';

/*
 * Snippets: the passages of a body where the matched terms are densest, the matched words
 * marked. Passages do not overlap and come in the order of the body.
 */

/** How a snippet marks a matched word. */
export const SNIPPET_MARK = { open: '<mark>', close: '</mark>' } as const;

/** Words a snippet spans at most. */
export const SNIPPET_WORDS = 32;
/** Snippets per hit at most. */
export const SNIPPETS_MAX = 5;
/** Matched words read at most for a body's snippets (the windows are chosen among them). */
export const SNIPPET_HITS_MAX = 64;
/** How much of a body is read for snippets: its first 256 Ki characters. */
export const SNIPPET_SCAN_CHARS = 256 * 1024;
/** Characters shown of a body that holds no matched word (the query matched its path or title). */
const LEAD_CHARS = 240;

const collapse = (text: string) => text.replace(/\s+/g, ' ');

function render(body: string, tokens: readonly Token[], from: number, to: number, matched: ReadonlySet<string>): string {
  const first = tokens[from];
  const last = tokens[to];
  if (first === undefined || last === undefined) return '';
  let out = from === 0 && first.start < 40 ? collapse(body.slice(0, first.start)) : '…';
  let at = first.start;
  for (let i = from; i <= to; i++) {
    const token = tokens[i];
    if (token === undefined) continue;
    out += collapse(body.slice(at, token.start));
    const word = body.slice(token.start, token.end);
    out += matched.has(token.term) ? `${SNIPPET_MARK.open}${word}${SNIPPET_MARK.close}` : word;
    at = token.end;
  }
  return `${out}${to === tokens.length - 1 && body.length - last.end < 40 ? collapse(body.slice(last.end)) : '…'}`.trim();
}

/** Up to `count` snippets of `body` around the terms of `matched`. */
export function snippetsOf(analyzer: Analyzer, rawBody: string, matched: ReadonlySet<string>, count: number): string[] {
  if (count <= 0) return [];
  const body = rawBody.slice(0, SNIPPET_SCAN_CHARS).toWellFormed();
  // The words are read until SNIPPET_HITS_MAX matches and a window's width past the last: a
  // common word in a large body then costs a few hundred words, not the whole scan.
  const tokens: Token[] = [];
  const hits: number[] = [];
  let stopAt = Number.POSITIVE_INFINITY;
  for (const token of analyzer.eachToken(body)) {
    if (tokens.length >= stopAt) break;
    if (matched.has(token.term)) {
      hits.push(tokens.length);
      if (hits.length === SNIPPET_HITS_MAX) stopAt = tokens.length + SNIPPET_WORDS;
    }
    tokens.push(token);
  }
  if (hits.length === 0) {
    const lead = collapse(body.slice(0, LEAD_CHARS)).trim();
    return lead === '' ? [] : [body.length > LEAD_CHARS ? `${lead}…` : lead];
  }
  // Each window starts a little before a matched word; its worth is the distinct terms it
  // holds, then how many matches. Best windows first, without overlaps, shown in body order.
  const windows = hits.map((hit) => {
    const from = Math.max(0, hit - 4);
    const to = Math.min(tokens.length - 1, from + SNIPPET_WORDS - 1);
    const terms = new Set<string>();
    let matches = 0;
    for (let i = from; i <= to; i++) {
      const term = tokens[i]?.term;
      if (term !== undefined && matched.has(term)) {
        terms.add(term);
        matches++;
      }
    }
    return { from, to, worth: terms.size * 1000 + matches };
  });
  windows.sort((a, b) => b.worth - a.worth || a.from - b.from);
  const chosen: { from: number; to: number }[] = [];
  for (const window of windows) {
    if (chosen.length >= Math.min(count, SNIPPETS_MAX)) break;
    if (chosen.some((c) => window.from <= c.to && c.from <= window.to)) continue;
    chosen.push(window);
  }
  chosen.sort((a, b) => a.from - b.from);
  return chosen.map((c) => render(body, tokens, c.from, c.to, matched));
}
