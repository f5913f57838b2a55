import type { Queryable } from '../store/db.ts';
import { validation } from '../kernel/errors.ts';
import { unstorableText } from '../kernel/text.ts';
import { analyzer } from './analyzer.ts';
import { positionedTerms } from './query.ts';

/*
 * The ranking controls a search may ask for (search's `ranking`), applied after relevance: a
 * file's BM25 score is multiplied by a factor per control, and the documents of a rescoring
 * window are ordered again by the result. Both engines rank through the built-in engine's
 * scoring (Meilisearch hands it its candidates), so both apply this one function over the same
 * rows: the same order whichever engine serves. docs/search.md, "Ranking controls".
 */

/** How deep the relevance order is rescored: a boosted file can rise from at most this far down. */
export const RANKING_DEPTH = 200;
/** Recency: a file's factor halves every this many days of age (at recency 1). */
export const RECENCY_HALF_LIFE_DAYS = 30;
/** Path boosts a search may give, and the weights each may have. */
export const PATH_BOOSTS_MAX = 10;
export const PATH_BOOST_WEIGHT_MIN = 0.1;
export const PATH_BOOST_WEIGHT_MAX = 10;
/** The longest prefix a path boost may name: a path's own bound. */
export const PATH_BOOST_PREFIX_MAX_CHARS = 1024;
/** prefer_exact_phrase: how much more a file holding the whole query as a phrase weighs. */
export const EXACT_PHRASE_FACTOR = 2;

const DAY_MS = 86_400_000;

/**
 * Ranking controls applied after relevance (below): each multiplies a
 * document's score by a factor, and the top of the relevance order is ordered again.
 */
export interface SearchRanking {
  /** 0 to 1: how much a document's age lowers its score (at 1, it halves every 30 days). */
  readonly recency?: number;
  /** Documents whose path starts with a prefix weigh `weight` times as much (the longest prefix that matches). */
  readonly pathBoosts?: readonly { readonly prefix: string; readonly weight: number }[];
  /** Documents holding the query's words in order, as one phrase, weigh more. */
  readonly preferExactPhrase?: boolean;
}

/** What ranking reads of a search query (the engines' SearchQuery is one). */
export interface RankedQuery {
  /** The question or keywords as the caller wrote them. */
  readonly text: string;
  /** The analyser language of the tenant. */
  readonly language: string;
  readonly ranking?: SearchRanking;
}

/** The ranking as asked, checked; `validation` naming the field otherwise. Undefined when it asks for nothing. */
export function checkRanking(ranking: SearchRanking | undefined): SearchRanking | undefined {
  if (ranking === undefined) return undefined;
  const { recency, pathBoosts, preferExactPhrase } = ranking;
  if (recency !== undefined && !(Number.isFinite(recency) && recency >= 0 && recency <= 1))
    throw validation('ranking.recency must be a number from 0 to 1 (0: relevance alone; 1: a file’s score halves every 30 days of age)');
  if (pathBoosts !== undefined) {
    if (pathBoosts.length > PATH_BOOSTS_MAX) throw validation(`ranking.path_boosts holds at most ${PATH_BOOSTS_MAX} boosts; it has ${pathBoosts.length}`);
    for (const [i, boost] of pathBoosts.entries()) {
      const problem = unstorableText(boost.prefix);
      if (problem !== undefined) throw validation(`ranking.path_boosts[${i}].prefix ${problem}`);
      if (boost.prefix === '' || boost.prefix.length > PATH_BOOST_PREFIX_MAX_CHARS)
        throw validation(`ranking.path_boosts[${i}].prefix must be 1 to ${PATH_BOOST_PREFIX_MAX_CHARS} characters, the start of a path such as "policies/"`);
      if (!(Number.isFinite(boost.weight) && boost.weight >= PATH_BOOST_WEIGHT_MIN && boost.weight <= PATH_BOOST_WEIGHT_MAX))
        throw validation(
          `ranking.path_boosts[${i}].weight must be a number from ${PATH_BOOST_WEIGHT_MIN} to ${PATH_BOOST_WEIGHT_MAX} (above 1 lifts the files under prefix, below 1 lowers them)`,
        );
    }
  }
  const asks = (recency ?? 0) > 0 || (pathBoosts?.length ?? 0) > 0 || preferExactPhrase === true;
  return asks ? ranking : undefined;
}

/** How many of the relevance order to score for a page ending at `window`: deeper when ranking controls may reorder it. */
export function rankingDepth(query: Pick<RankedQuery, 'ranking'>, window: number, max: number): number {
  return query.ranking === undefined ? window : Math.min(max, Math.max(window, RANKING_DEPTH));
}

/** The query's words in order as one phrase pattern (search_docs.stems' form), or undefined for fewer than two words. */
function wholeQueryPattern(query: RankedQuery): string | undefined {
  const pattern = positionedTerms(analyzer(query.language), query.text.replace(/["*]/g, ' '));
  while (pattern[0] === '.') pattern.shift();
  while (pattern.at(-1) === '.') pattern.pop();
  return pattern.length < 2 ? undefined : ` ${pattern.join(' ')} `;
}

/** The factor of a path: the weight of the longest boost prefix it starts with, else 1. */
function pathFactor(path: string, boosts: SearchRanking['pathBoosts']): number {
  let best: { length: number; weight: number } | undefined;
  for (const boost of boosts ?? []) {
    if (path.startsWith(boost.prefix) && (best === undefined || boost.prefix.length > best.length))
      best = { length: boost.prefix.length, weight: boost.weight };
  }
  return best?.weight ?? 1;
}

/**
 * The rows (documents of the built-in engine's search_docs by doc_no, best first) ordered again
 * under the query's ranking controls, each with its score multiplied by its factors: recency
 * (1 − r) + r · 0.5^(age in days / 30), the path boost of its longest matching prefix, and
 * EXACT_PHRASE_FACTOR when it holds the query's words in order (forms aside, stop words as gaps).
 * Equal scores keep the relevance order. Without controls the rows come back as they are.
 */
export async function rerank<R extends { readonly doc_no: string; readonly score: number }>(
  db: Queryable,
  query: RankedQuery,
  rows: readonly R[],
  now: number = Date.now(),
): Promise<R[]> {
  const ranking = query.ranking;
  if (ranking === undefined || rows.length === 0) return [...rows];
  const phrase = ranking.preferExactPhrase === true ? wholeQueryPattern(query) : undefined;
  const facts = await db.query<{ doc_no: string; path: string; updated_at: Date | string; phrase: boolean }>(
    `SELECT doc_no, path, updated_at, ($2::text IS NOT NULL AND strpos(stems, $2) > 0) AS phrase
       FROM search_docs WHERE doc_no = ANY($1::bigint[])`,
    [rows.map((r) => r.doc_no), phrase ?? null],
  );
  const byNo = new Map(facts.map((f) => [String(f.doc_no), f]));
  const recency = ranking.recency ?? 0;
  const scored = rows.map((row, index) => {
    const fact = byNo.get(String(row.doc_no));
    let factor = 1;
    if (fact !== undefined) {
      if (recency > 0) {
        const ageDays = Math.max(0, now - new Date(fact.updated_at).getTime()) / DAY_MS;
        factor *= 1 - recency + recency * 0.5 ** (ageDays / RECENCY_HALF_LIFE_DAYS);
      }
      factor *= pathFactor(fact.path, ranking.pathBoosts);
      if (fact.phrase) factor *= EXACT_PHRASE_FACTOR;
    }
    return { row: { ...row, score: Number(row.score) * factor }, index };
  });
  scored.sort((a, b) => b.row.score - a.row.score || a.index - b.index);
  return scored.map((s) => s.row);
}
