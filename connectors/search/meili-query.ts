import type { MultiSearchQuery } from 'meilisearch';
import { analyzer } from '../../src/search-text/analyzer.ts';
import { QUERY_TEXT_MAX_CHARS } from '../../src/search-text/query.ts';
import type { TermFrequencies } from './contract.ts';

/*
 * The queries Meilisearch is asked for a question's candidates (meilisearch.ts): a query per
 * informative word and per stem that differs from it, and the whole question.
 */

// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;

/** One multi-search sends at most 32 one-word queries (and the whole question): the first 32 distinct terms of a question. */
export const QUERY_WORDS_MAX = 32;
/**
 * A word held by more than this share of the caller's documents, and by at least
 * COMMON_TERM_DOCS_MIN of them, gets no query of its own (the whole question still holds it).
 * Chosen on Cranfield's odd queries: 0.25 left them as they were (nDCG@10 0.410, MAP@100 0.356),
 * 0.1 lowered them (0.407, 0.350).
 */
export const COMMON_TERM_SHARE = 0.25;
export const COMMON_TERM_DOCS_MIN = 1000;
/** Candidates each query of a multi-search returns (distinct documents). */
export const CANDIDATES_PER_QUERY = 100;

/** Each distinct term of a question with its first surface form (what a one-word query sends), in order, at most QUERY_WORDS_MAX. */
export function queryTerms(text: string, language: string): { readonly word: string; readonly term: string }[] {
  const seen = new Set<string>();
  const terms: { word: string; term: string }[] = [];
  for (const token of analyzer(language).tokens(text)) {
    if (seen.has(token.term)) continue;
    seen.add(token.term);
    terms.push({ word: text.slice(token.start, token.end), term: token.term });
    if (terms.length === QUERY_WORDS_MAX) break;
  }
  return terms;
}

/**
 * The words a multi-search asks about one by one: all but the common ones, those held by more
 * than COMMON_TERM_SHARE of the caller's documents and by at least COMMON_TERM_DOCS_MIN (by
 * the ranker's statistics); when every word is common, the rarest. A word nearly every
 * document holds adds almost nothing to a BM25 score, and Meilisearch ranks every document
 * holding it to find its first 100: at 100 k files a word of every path ("notes") took about
 * 450 ms. In a small collection every word is cheap to ask about, so none is left out there.
 */
export function informativeWords(terms: readonly { word: string; term: string }[], frequencies: TermFrequencies): string[] {
  const df = (term: string) => frequencies.df.get(term) ?? 0;
  const common = (term: string) => df(term) >= COMMON_TERM_DOCS_MIN && df(term) > frequencies.documents * COMMON_TERM_SHARE;
  const kept = terms.filter((t) => !common(t.term));
  if (kept.length > 0) return kept.map((t) => t.word);
  const rarest = terms.reduce<{ word: string; term: string } | undefined>(
    (best, t) => (best === undefined || df(t.term) < df(best.term) ? t : best),
    undefined,
  );
  return rarest === undefined ? [] : [rarest.word];
}

/**
 * The stems of the words asked about that differ from the words as typed (at least three
 * letters). Meilisearch matches words as written, not stems, and takes a query's last word as a
 * prefix: asking for the stem as well finds the files that hold the word only in another form
 * ("deploy", "deployed" for "deploying"; "own", "owner" for "owned"), which the ranker scores
 * by the same stems as the built-in engine, so both engines see the same candidates.
 */
export function stemWords(terms: readonly { word: string; term: string }[], words: readonly string[]): string[] {
  const asked = new Set(words);
  const stems = new Set<string>();
  for (const { word, term } of terms) {
    if (asked.has(word) && term.length >= 3 && term !== word.toLowerCase() && !asked.has(term)) stems.add(term);
  }
  return [...stems];
}

/**
 * The queries of a multi-search: one per word asked about, all of it required, one per stem of
 * such a word that differs from it (stemWords), and the whole
 * question with Meilisearch's own `last` strategy, which finds the files holding most of its
 * words. The whole question is left out when one word is asked about (that query is the
 * word's), and loses its common words when some were left out: Meilisearch's `last` drops
 * words from the end until enough files match, down to a common word every file holds, and
 * then ranks them all (questions holding a word of every path took 400-490 ms at 100 k files).
 */
export function candidateQueries(
  text: string,
  terms: number,
  words: readonly string[],
  stems: readonly string[] = [],
): Pick<MultiSearchQuery, 'q' | 'matchingStrategy'>[] {
  const whole = words.length < 2 ? undefined : words.length < terms ? words.join(' ') : text;
  return [
    ...words.map((word) => ({ q: word, matchingStrategy: 'all' as const })),
    ...stems.map((stem) => ({ q: stem, matchingStrategy: 'all' as const })),
    // Serde refuses a lone surrogate's JSON escape, and controls only separate words anyway.
    ...(whole === undefined ? [] : [{ q: whole.slice(0, QUERY_TEXT_MAX_CHARS).toWellFormed().replace(CONTROLS, ' '), matchingStrategy: 'last' as const }]),
  ];
}
