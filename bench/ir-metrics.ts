/**
 * Relevance measures of a ranking against graded judgements, as the Cranfield collection's
 * README defines them (so figures compare with its reference): nDCG@10 with gain 2^g - 1,
 * discount log2(rank + 1) and the ideal ranking built from the query's judged documents, and
 * average precision over the top 100 with codes 1..4 relevant.
 */

/** Ranks nDCG looks at. */
export const NDCG_DEPTH = 10;
/** Ranks average precision looks at (MAP@100). */
export const MAP_DEPTH = 100;

/** The judgements of one query: document key to relevance code (1 = complete answer … 4 = minimal interest; -1 and 5 not relevant). */
export type Judgments = ReadonlyMap<string, number>;

/** A code 1..4 is relevant; -1, 5 and an unjudged document are not. */
export function isRelevant(code: number | undefined): boolean {
  return code !== undefined && Number.isInteger(code) && code >= 1 && code <= 4;
}

/** The graded gain of a code: 5 - code for codes 1..4 (4 … 1), 0 for anything else. */
export function gradedGain(code: number | undefined): number {
  return code !== undefined && isRelevant(code) ? 5 - code : 0;
}

/** What one rank adds to DCG: (2^g - 1) / log2(rank + 1), ranks from 1. */
function discounted(gain: number, rank: number): number {
  return (2 ** gain - 1) / Math.log2(rank + 1);
}

/** Refuses a ranking that names a document twice: it would be counted at both ranks. */
function assertDistinct(ranking: readonly string[]): void {
  const seen = new Set<string>();
  for (const key of ranking) {
    if (seen.has(key)) throw new Error(`the ranking names document ${key} twice`);
    seen.add(key);
  }
}

/** The ranking with each document at its first rank only, later repeats removed. */
export function distinct(ranking: readonly string[]): string[] {
  return [...new Set(ranking)];
}

/**
 * nDCG at `depth` (10 by default) of `ranking` (best first, each document once). The ideal
 * DCG is that of the query's judged documents sorted by gain, cut at the same depth; a query
 * without a relevant judged document scores 0.
 */
export function ndcgAt(ranking: readonly string[], judgments: Judgments, depth: number = NDCG_DEPTH): number {
  assertDistinct(ranking);
  let dcg = 0;
  ranking.slice(0, depth).forEach((key, index) => {
    dcg += discounted(gradedGain(judgments.get(key)), index + 1);
  });
  const ideal = [...judgments.values()]
    .map(gradedGain)
    .sort((a, b) => b - a)
    .slice(0, depth)
    .reduce((sum, gain, index) => sum + discounted(gain, index + 1), 0);
  return ideal === 0 ? 0 : dcg / ideal;
}

/**
 * Average precision of `ranking` over its first `depth` ranks (100 by default): the precision
 * at the rank of each relevant document found there, summed and divided by the number of
 * relevant judged documents of the query (as trec_eval's map_cut does; no Cranfield query has
 * more than 100, so cutting that count at the depth would change nothing). A query without a
 * relevant judged document scores 0.
 */
export function averagePrecisionAt(ranking: readonly string[], judgments: Judgments, depth: number = MAP_DEPTH): number {
  assertDistinct(ranking);
  const relevant = [...judgments.values()].filter(isRelevant).length;
  if (relevant === 0) return 0;
  let found = 0;
  let sum = 0;
  ranking.slice(0, depth).forEach((key, index) => {
    if (!isRelevant(judgments.get(key))) return;
    found += 1;
    sum += found / (index + 1);
  });
  return sum / relevant;
}

/** The arithmetic mean; 0 for no values. */
export function mean(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length;
}

/** Ranks recall looks at (recall@10). */
export const RECALL_DEPTH = 10;

/**
 * Recall at `depth` (10 by default): the share of the `relevant` documents found in the first
 * `depth` ranks of `ranking` (best first, each document once). A query without a relevant
 * document scores 0, as for the other measures, so it never lifts an average.
 */
export function recallAt(ranking: readonly string[], relevant: ReadonlySet<string>, depth: number = RECALL_DEPTH): number {
  assertDistinct(ranking);
  if (relevant.size === 0) return 0;
  return ranking.slice(0, depth).filter((key) => relevant.has(key)).length / relevant.size;
}
