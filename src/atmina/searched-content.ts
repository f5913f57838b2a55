import type { SearchHit } from '../../connectors/search/contract.ts';
import type { Caller } from '../kernel/access/caller.ts';
import type { Services } from '../kernel/services.ts';
import type { Queryable } from '../store/db.ts';
import type { CallerScopes } from '../search/search.ts';

/*
 * What Atmina's `search` finds beside KB files: Knowledge, Memories and Artifacts, which another
 * product holds. Atmina names what it needs of them here and the composition root plugs in the
 * product that has them (src/search-sources.ts), handing it beside the gateway's services; a
 * gateway that plugs in nothing searches KB files alone.
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

const NONE: SearchedContent = {
  scopesFor: () => Promise.resolve({ scopes: [], prefixes: [] }),
  resourceOf: () => undefined,
};

// Keyed by the services object the composition root built: the content goes with those services.
const plugged = new WeakMap<Services, SearchedContent>();

/** Plugs `content` into the searches run with `services` (the composition root, once, as it opens them). */
export function plugSearchedContent(services: Services, content: SearchedContent): void {
  plugged.set(services, content);
}

/** The content searches run with `services` cover beside KB files. */
export const searchedContentOf = (services: Services): SearchedContent => plugged.get(services) ?? NONE;
