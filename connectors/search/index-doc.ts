import { analyzer } from '../../src/search-text/analyzer.ts';
import { positionedTerms } from '../../src/search-text/query.ts';
import type { RankingOptions } from './builtin-options.ts';
import type { SearchDocument } from './contract.ts';
import { SEARCH_BODY_MAX_BYTES } from './contract.ts';

/*
 * A document as the built-in engine indexes it: its body cut to the bound, the positioned stems
 * phrases are matched on, and per term its weighted frequency and the fields holding it. Pure,
 * with no store: the engine runs it on a worker thread for a large body (src/kernel/offload.ts),
 * so this module imports nothing that needs the gateway's process.
 */

/** This module, for the worker that runs indexDoc. */
export const INDEX_DOC_MODULE = new URL(import.meta.url);

/**
 * Distinct terms one document posts at most: those of the highest weighted frequency (the first
 * met first among equals). A body of 120,000 distinct words would otherwise write as many
 * postings in one round; the terms left out are those a document mentions least, and its
 * phrases still match on every word (the stems keep them all).
 */
export const SEARCH_TERMS_PER_DOC_MAX = 20_000;

export const FIELD_BITS = { path: 1, title: 2, body: 4 } as const;
export type FieldName = keyof typeof FIELD_BITS;

/** Cuts text to at most `max` bytes of UTF-8 without splitting a character. */
export function cutUtf8(text: string, max: number): string {
  if (text.length * 3 <= max) return text;
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= max) return text;
  return bytes
    .subarray(0, max)
    .toString('utf8')
    .replace(/\uFFFD$/, '');
}

export interface IndexedDoc {
  readonly doc: SearchDocument;
  readonly body: string;
  readonly stems: string;
  readonly length: number;
  readonly terms: string[];
  readonly tfs: number[];
  readonly fields: number[];
}

export function indexDoc(doc: SearchDocument, ranking: RankingOptions): IndexedDoc {
  const a = analyzer(doc.language);
  const body = cutUtf8(doc.body.toWellFormed(), SEARCH_BODY_MAX_BYTES);
  const stats = new Map<string, { tf: number; fields: number }>();
  let length = 0;
  const add = (field: FieldName, text: string) => {
    const weight = ranking.weights[field];
    for (const term of a.terms(text)) {
      const entry = stats.get(term) ?? { tf: 0, fields: 0 };
      entry.tf += weight;
      entry.fields |= FIELD_BITS[field];
      stats.set(term, entry);
      length += weight;
    }
  };
  add('path', doc.path);
  add('title', doc.title);
  add('body', body);
  const stems = ` ${positionedTerms(a, doc.title).join(' ')} | ${positionedTerms(a, body).join(' ')} `;
  let kept = [...stats];
  // Map order is first occurrence, and the sort is stable: among equal frequencies the first met stay.
  if (kept.length > SEARCH_TERMS_PER_DOC_MAX) kept = kept.sort(([, x], [, y]) => y.tf - x.tf).slice(0, SEARCH_TERMS_PER_DOC_MAX);
  const entries = kept.sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
  return {
    doc,
    body,
    stems,
    length: Math.max(length, 1),
    terms: entries.map(([term]) => term),
    tfs: entries.map(([, s]) => s.tf),
    fields: entries.map(([, s]) => s.fields),
  };
}
