import type { Analyzer } from './analyzer.ts';

/*
 * What a search query asks for, as both engines read it: its terms (analysed as a file's words
 * are, each with how often the query repeats it), the phrases it quotes, and the word prefixes
 * it marks with a trailing `*`. Everything else is text: there is no other operator, so a
 * question pasted as is never fails to parse.
 */

/** The longest query text read: 4,000 characters (longer text is cut, not refused, by the engines). */
export const QUERY_TEXT_MAX_CHARS = 4_000;
/** Distinct terms a query ranks by; the rest (the query's later words) are left out. */
export const QUERY_TERMS_MAX = 64;
/** Quoted phrases a query may hold; later quotes are read as plain words. */
export const QUERY_PHRASES_MAX = 8;
/** Prefixes (`wing*`) a query may hold, each at least PREFIX_MIN_CHARS long. */
export const QUERY_PREFIXES_MAX = 4;
export const PREFIX_MIN_CHARS = 2;

export interface QueryTerm {
  readonly term: string;
  /** Times the query holds it. */
  readonly count: number;
  /** The word as the query wrote it first (for engines that match surface words). */
  readonly word: string;
}

export interface ParsedQuery {
  readonly terms: readonly QueryTerm[];
  /** Each phrase as its terms at their relative positions ('.' where a stop word stands). */
  readonly phrases: readonly { readonly text: string; readonly pattern: readonly string[] }[];
  /** Lower-cased, not stemmed: matched against the start of indexed terms. */
  readonly prefixes: readonly string[];
}

const QUOTED = /"([^"]*)"/g;
const PREFIX = /([\p{L}\p{M}\p{N}]+)\*/gu;

/** The terms of some text at their positions, stop words as '.', as search_docs.stems holds them. */
export function positionedTerms(analyzer: Analyzer, text: string): string[] {
  const out: string[] = [];
  for (const token of analyzer.tokens(text)) {
    while (out.length < token.position) out.push('.');
    out.push(token.term);
  }
  return out;
}

export function parseQuery(analyzer: Analyzer, rawText: string): ParsedQuery {
  let text = rawText.slice(0, QUERY_TEXT_MAX_CHARS);
  const phrases: { text: string; pattern: string[] }[] = [];
  text = text.replace(QUOTED, (whole, inner: string) => {
    if (phrases.length >= QUERY_PHRASES_MAX) return ` ${inner} `;
    const pattern = positionedTerms(analyzer, inner);
    // A phrase of one term is that term; a phrase of none (only stop words) asks for nothing.
    while (pattern[0] === '.') pattern.shift();
    while (pattern.at(-1) === '.') pattern.pop();
    if (pattern.length > 1) phrases.push({ text: inner.trim(), pattern });
    return ` ${inner} `;
  });
  const prefixes: string[] = [];
  text = text.replace(PREFIX, (whole, word: string) => {
    const prefix = word.normalize('NFKC').toLowerCase();
    if (prefixes.length >= QUERY_PREFIXES_MAX || [...prefix].length < PREFIX_MIN_CHARS) return word;
    if (!prefixes.includes(prefix)) prefixes.push(prefix);
    return ' ';
  });
  const counts = new Map<string, { count: number; word: string }>();
  for (const token of analyzer.tokens(text)) {
    const seen = counts.get(token.term);
    if (seen !== undefined) seen.count++;
    else if (counts.size < QUERY_TERMS_MAX) counts.set(token.term, { count: 1, word: text.slice(token.start, token.end) });
  }
  return { terms: [...counts].map(([term, { count, word }]) => ({ term, count, word })), phrases, prefixes };
}

/**
 * Optimal-string-alignment distance (insertions, deletions, substitutions, adjacent swaps) in
 * characters (code points, so a character outside the BMP counts once, as the length filter
 * of the candidates in SQL counts it), or `max + 1` as soon as it must exceed `max`: typo
 * correction asks only "within 1 or 2?".
 */
export function editDistance(first: string, second: string, max: number): number {
  const a = [...first];
  const b = [...second];
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let before = new Array<number>(b.length + 1).fill(0);
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, (before[j - 2] ?? 0) + 1);
      current.push(value);
      rowMin = Math.min(rowMin, value);
    }
    if (rowMin > max) return max + 1;
    before = previous;
    previous = current;
  }
  return Math.min(previous[b.length] ?? max + 1, max + 1);
}

/** How many typos a term of this length may hold and still be corrected: none below 4 characters, 1 up to 7, 2 from 8. */
export function typoBudget(term: string): number {
  const length = [...term].length;
  return length < 4 ? 0 : length < 8 ? 1 : 2;
}
