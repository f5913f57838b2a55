/*
 * What the built-in engine ranks by (BM25's parameters, the fields' weights, feedback and
 * pruning) and how it carries a query out, with their defaults: read by the engine
 * (builtin.ts) and by the indexing of one document (index-doc.ts), which runs on a worker.
 */

export interface RankingOptions {
  readonly k1: number;
  readonly b: number;
  readonly weights: { readonly path: number; readonly title: number; readonly body: number };
  /**
   * Pseudo-relevance feedback; `minTerms` 0 turns it off. The expanded query re-ranks the first
   * pass's top `rerank` documents (or the page's window, when deeper), as a rescoring window:
   * 1,000, the deepest result a caller can page to, ranks Cranfield exactly as re-ranking every
   * match did (100 cost 0.004 of MAP@100 on the odd queries; docs/search.md, "Speed").
   */
  readonly feedback: { readonly minTerms: number; readonly docs: number; readonly terms: number; readonly originalWeight: number; readonly rerank: number };
  /**
   * Leaving frequent terms out of a query's candidates (see #pruned): a term is left out only
   * when at least `dfMin` documents hold it (below that, scoring its postings costs less than
   * looking it up), and while the left-out terms' factors together stay below the larger of
   * `share` of the smallest kept one and `reach` times the largest factor of a term that at
   * least `limit` documents hold (what the `limit`-th best score is expected to reach: a
   * document holding such a term once, at the average length, scores 1 / (1 + k1) ≈ 0.45 of
   * its factor). Either way the result is checked, so a guess too bold costs time, never
   * results. `dfMin` Infinity scores every posting. The default `reach` is low (0.1): a
   * left-out term whose factor is near the scores found makes nearly every candidate need
   * its lookup, which costs more than joining its postings (docs/search.md, "How it ranks").
   */
  readonly prune: { readonly dfMin: number; readonly share: number; readonly reach: number };
}

export const DEFAULT_RANKING: RankingOptions = {
  k1: 1.2,
  b: 0.75,
  weights: { path: 3, title: 2, body: 1 },
  feedback: { minTerms: 3, docs: 10, terms: 30, originalWeight: 0.5, rerank: 100 },
  prune: { dfMin: 2_000, share: 0.25, reach: 0.1 },
};

/** The deepest page a query may ask for: results beyond the 1,000th are not ranked. */
export const SEARCH_WINDOW_MAX = 1_000;
/** How a query's scoring is carried out (not what it ranks): see DEFAULT_SCORING. */
export interface ScoringLimits {
  /**
   * Postings a query's scoring reads, from which it is split in two halves by document number
   * and the halves scored at once on two connections (PostgreSQL; PGlite has one connection).
   * Below it, one statement costs less than the second round trip. See #halves.
   */
  readonly splitPostingsMin: number;
  /**
   * Index lookups (candidates × terms) a scoring of given candidates makes, from which the
   * candidates are split in two halves scored at once (PostgreSQL). See #candidateHalves.
   */
  readonly splitLookupsMin: number;
  /** Postings up to which a query without filters counts its matches exactly; past it the total is estimated (#estimatedTotal). */
  readonly countedPostingsMax: number;
}

export const DEFAULT_SCORING: ScoringLimits = { splitPostingsMin: 10_000, splitLookupsMin: 1_000, countedPostingsMax: 10_000 };
