import type { ParsedQuery } from '../../src/search-text/query.ts';
import type { SearchFilters } from './contract.ts';

/*
 * The SQL pieces the built-in engine's queries are made of (builtin.ts): a term's postings and
 * their BM25 scores, the documents holding any of a query's terms, the scopes a caller may read
 * and the filters on search_docs, and the ranges a split query runs over. The hybrid vector
 * search (src/search/vectors.ts) filters with the same scopeSql and filterSql.
 */

/**
 * The postings `p` of the query's terms, each beside its term's row `q` (q.term, q.factor,
 * q.original) from the parallel arrays `terms`, `factors` and `originals`: one index scan per
 * term, and the factor read from the joined row rather than looked up in the arrays per posting
 * (array_position per posting was a third of a full scoring's time at 100 k files).
 */
export const termPostingsSql = (terms: string, factors: string, originals: string) =>
  `unnest(${terms}::text[], ${factors}::float8[], ${originals}::boolean[]) AS q(term, factor, original)
   JOIN search_postings p ON p.term = q.term`;
/**
 * One posting's (p's) BM25 score, beside its term's row q (termPostingsSql): the term's factor
 * (weight × IDF × (k1 + 1)) × tf / (tf + K), where K is k1·(1 − b) (`free`) + k1·b·length /
 * avgdl (`perUnit` per unit of length).
 */
export const scoreSql = (free: string, perUnit: string) => `q.factor * p.tf / (p.tf + ${free}::float8 + ${perUnit}::float8 * p.length)`;
/** All document numbers: the range of a query that is not split. */
export const ALL_DOCS: DocRange = { from: '0', to: '9223372036854775807' };

/** Document numbers from `from` to `to`, both included (bigint as decimal text). */
export interface DocRange {
  readonly from: string;
  readonly to: string;
}

/**
 * Terms up to which a query's documents are found by joining each term's postings; from one
 * more, by grouping them (documentScoresSql).
 */
const JOINED_TERMS_MAX = 2;

/**
 * The documents holding any of the `count` terms of the arrays `terms` and `factors` (exactly
 * `count` long), in the scopes `scopes` and the document range `from`–`to`, with their BM25
 * scores: a FROM item (`from`) with the columns scope_no and doc_no, and the score's expression
 * (`score`). One index range per term either way. Up to JOINED_TERMS_MAX terms the terms' rows
 * are joined on the document (FULL JOIN, so a document holding one term is kept); past it the
 * postings are grouped by document, as each further FULL JOIN re-hashes every row the earlier
 * ones produced. Measured at 100 k files, one half of a split (docs/search.md, "Speed"): two
 * common words 12.5 ms joined, 15.9 grouped; four words 21.9 and 18.4; eight 73.3 and 38.6.
 */
export function documentScoresSql(
  count: number,
  p: { terms: string; factors: string; scopes: string; from: string; to: string; free: string; perUnit: string },
) {
  if (count > JOINED_TERMS_MAX)
    return {
      from: `(SELECT p.scope_no, p.doc_no, sum(q.factor * p.tf / (p.tf + ${p.free}::float8 + ${p.perUnit}::float8 * p.length)) AS x
                FROM unnest(${p.terms}::text[], ${p.factors}::float8[]) AS q(term, factor)
                JOIN search_postings p ON p.term = q.term
               WHERE p.scope_no = ANY(${p.scopes}::int[]) AND p.doc_no BETWEEN ${p.from}::bigint AND ${p.to}::bigint
               GROUP BY p.doc_no, p.scope_no) g`,
      score: 'g.x',
    };
  const branch = (i: number) =>
    `(SELECT scope_no, doc_no, (${p.factors}::float8[])[${i + 1}] * tf / (tf + ${p.free}::float8 + ${p.perUnit}::float8 * length) AS x
        FROM search_postings
       WHERE term = (${p.terms}::text[])[${i + 1}] AND scope_no = ANY(${p.scopes}::int[]) AND doc_no BETWEEN ${p.from}::bigint AND ${p.to}::bigint) t${i}`;
  let from = branch(0);
  let score = 'coalesce(t0.x, 0)';
  for (let i = 1; i < count; i++) {
    from += ` FULL JOIN ${branch(i)} USING (scope_no, doc_no)`;
    score += ` + coalesce(t${i}.x, 0)`;
  }
  return { from, score };
}

/** Whether document number `no` (decimal text) falls in `range`. */
export const within = (no: string, range: DocRange): boolean => {
  const n = BigInt(no);
  return n >= BigInt(range.from) && n <= BigInt(range.to);
};

/** Rows of both halves in one ranking: score descending, then document number. */
export function mergeRanked<R extends ScoredRow>(halves: readonly (readonly R[])[], limit: number): R[] {
  const byNo = (a: string, b: string) => (a.length !== b.length ? a.length - b.length : a < b ? -1 : a > b ? 1 : 0);
  return halves
    .flat()
    .sort((x, y) => Number(y.score) - Number(x.score) || byNo(x.doc_no, y.doc_no))
    .slice(0, limit);
}

export interface ScoredRow {
  doc_no: string;
  score: number;
}

/**
 * The condition that `column` holds a scope the query may read: one of the scopes (the text[]
 * parameter `scopes`) or one starting with one of the prefixes (`prefixes`). `left` counts
 * characters and `=` compares them exactly under any deterministic collation, so it means the
 * same whatever the column's collation (LIKE would need its wildcards escaped, and a range
 * `>= prefix` would follow the collation's order). Without prefixes (`withPrefixes` false) it is
 * the plain `= ANY`, which the keys on (tenant, scope) serve (search_scopes, search_docs); the prefixes'
 * parameter is still named, so the statement's parameters stay the same.
 */
export function scopeSql(column: string, scopes: string, prefixes: string, withPrefixes: boolean): string {
  if (!withPrefixes) return `(${column} = ANY(${scopes}::text[]) AND cardinality(${prefixes}::text[]) = 0)`;
  return `(${column} = ANY(${scopes}::text[])
           OR EXISTS (SELECT 1 FROM unnest(${prefixes}::text[]) AS sp(prefix) WHERE left(${column}, length(sp.prefix)) = sp.prefix))`;
}

/** Parameters and the WHERE text of the filters on search_docs d ($n numbered from `first`). */
export function filterSql(filters: SearchFilters | undefined, phrases: ParsedQuery['phrases'], first: number): { sql: string; params: unknown[] } {
  const clauses: string[] = [];
  const params: unknown[] = [];
  const param = (value: unknown) => {
    params.push(value);
    return `$${first + params.length - 1}`;
  };
  if (filters?.kinds !== undefined) clauses.push(`d.kind = ANY(${param(filters.kinds)}::text[])`);
  if (filters?.paths !== undefined && filters.paths.length > 0) {
    const scopes = param(filters.paths.map((p) => p.scope));
    const prefixes = param(filters.paths.map((p) => p.prefix));
    clauses.push(`EXISTS (SELECT 1 FROM unnest(${scopes}::text[], ${prefixes}::text[]) AS f(scope, prefix)
                   WHERE f.scope = d.scope AND left(d.path, length(f.prefix)) = f.prefix)`);
  }
  if (filters?.tags !== undefined) clauses.push(`d.tags && ${param(filters.tags)}::text[]`);
  if (filters?.mediaTypes !== undefined) clauses.push(`d.media_type = ANY(${param(filters.mediaTypes)}::text[])`);
  if (filters?.contentKind !== undefined) clauses.push(`d.content_kind = ${param(filters.contentKind)}`);
  if (filters?.updatedSince !== undefined) clauses.push(`d.updated_at >= ${param(filters.updatedSince)}::timestamptz`);
  for (const phrase of phrases) clauses.push(`strpos(d.stems, ${param(` ${phrase.pattern.join(' ')} `)}) > 0`);
  return { sql: clauses.join(' AND '), params };
}
