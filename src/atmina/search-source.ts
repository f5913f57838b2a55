import type { BlobStore } from '../../connectors/blob/contract.ts';
import type { ResourceRef } from '../../connectors/projection.ts';
import type { SearchDocument, SearchSource } from '../../connectors/search/contract.ts';
import { SEARCH_BODY_MAX_BYTES } from '../../connectors/search/contract.ts';
import type { Queryable } from '../store/db.ts';
import { readAsset } from './kb/asset-rows.ts';
import { headTexts, kbFileResourceKey, shownFiles } from './kb/projection.ts';
import { parseFrontMatter } from './kb/text/front-matter.ts';
import { analyzerLanguage } from '../search-text/analyzer.ts';

/*
 * KB files as search documents. The outbox rows of a file name it; this reads it as it now is
 * (in the transaction that claimed the rows): its path, tags and title, and as its body the
 * text of a text file (its first SEARCH_BODY_MAX_BYTES) or an Asset's Companion text. A file
 * deleted, or in an archived KB, is not returned, so search drops it.
 */

/** The access scope of a KB's files: whoever may search the KB may find them. */
export const kbScope = (kbId: string): string => `kb:${kbId}`;

const HEADING = /^#{1,6}[ \t]+(.+?)[ \t#]*$/m;
/** A title found in a heading is cut to this many characters. */
const TITLE_MAX_CHARS = 300;

/** The title of a Markdown text: its front-matter title, else its first heading, else nothing. */
export function titleOf(markdown: string): string {
  const front = parseFrontMatter(markdown);
  if (front.title !== undefined) return front.title;
  return (HEADING.exec(markdown)?.[1] ?? '').slice(0, TITLE_MAX_CHARS);
}

export function kbFileSearchSource(blob: BlobStore): SearchSource {
  return {
    async load(tx: Queryable, refs: readonly ResourceRef[], signal: AbortSignal): Promise<SearchDocument[]> {
      const files = await shownFiles(tx, refs);
      const languages = new Map(
        (
          await tx.query<{ id: string; language: string }>('SELECT id, language FROM tenants WHERE id = ANY($1::uuid[])', [
            [...new Set(files.map((f) => f.tenantId))],
          ])
        ).map((t) => [t.id, analyzerLanguage(t.language)]),
      );
      const docs: SearchDocument[] = [];
      const texts = await headTexts(
        blob,
        files.map((f) => f.file),
        SEARCH_BODY_MAX_BYTES,
        signal,
        (file) => file.kind !== 'asset',
      );
      for (const [i, { tenantId, file }] of files.entries()) {
        const body = file.kind === 'asset' ? ((await readAsset(tx, tenantId, file.id, file.version))?.companion ?? '') : texts[i]!;
        docs.push({
          tenantId,
          id: kbFileResourceKey(file.id),
          kind: 'kb_file',
          scope: kbScope(file.kbId),
          language: languages.get(tenantId) ?? 'simple',
          path: file.path,
          title: file.kind === 'text' && /\.(?:md|markdown)$/i.test(file.path) ? titleOf(body) : '',
          body,
          tags: file.tags.map((t) => t.toLowerCase()),
          mediaType: file.mediaType,
          contentKind: file.kind === 'asset' ? 'asset' : 'text',
          updatedAt: file.updatedAt.toISOString(),
          ref: { kb_id: file.kbId, file_id: file.id, version: file.version, sha256: file.sha256 },
        });
      }
      return docs;
    },
  };
}
