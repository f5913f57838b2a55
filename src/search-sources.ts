import { hitResource, readableContextScopes } from './alignbase/index.ts';
import type { SearchedContent } from './atmina/index.ts';

/*
 * What crosses products in search, wired here: Atmina's `search` finds, beside KB files, the
 * Alignbase Knowledge, Memories and Artifacts a caller may read (their engine scopes, and what a
 * hit on one is). products.ts hands it to Atmina's tools.
 */
export const alignbaseContent: SearchedContent = {
  scopesFor: (q, caller, kinds) => readableContextScopes(q, caller, kinds),
  resourceOf: (hit) => hitResource(hit),
};
