import type { SearchHit } from '../../connectors/search/contract.ts';
import type { Caller } from '../kernel/access/caller.ts';
import type { Queryable } from '../store/db.ts';
import type { CallerScopes } from '../search/search.ts';

/*
 * What Atmina's `search` finds beside KB files: Knowledge, Memories and Artifacts, which another
 * product holds. Atmina names what it needs of them here and the composition root plugs in the
 * product that has them (src/search-sources.ts) when it builds Atmina's tools (src/products.ts);
 * built with NO_CONTENT, search finds KB files alone.
 */

/** The kinds of content search finds beside KB files (search's `filters.kinds` besides `file`). */
export const CONTENT_KINDS = ['knowledge', 'memory', 'artifact'] as const;
export type ContentKind = (typeof CONTENT_KINDS)[number];

/** A hit on content, by the identifiers its own tools take. */
export interface ContentResource {
  readonly type: ContentKind;
  readonly id: string;
  /** A Knowledge found as its latest version (by a Viewer), not as its published one. */
  readonly latest: boolean;
  /** The version found is the published one. */
  readonly published: boolean;
}

export interface SearchedContent {
  /** The engine scopes of the content of `kinds` the caller may read. */
  scopesFor(q: Queryable, caller: Caller, kinds: readonly ContentKind[]): Promise<CallerScopes>;
  /** What a hit in one of those scopes is; undefined for a hit of another scope. */
  resourceOf(hit: SearchHit): ContentResource | undefined;
}

/** No content beside KB files: what a search that names KBs, or a gateway that wires in no other product, covers. */
export const NO_CONTENT: SearchedContent = {
  scopesFor: () => Promise.resolve({ scopes: [], prefixes: [] }),
  resourceOf: () => undefined,
};
