import type { BlobStore } from '../../../connectors/blob/contract.ts';
import { blobKey } from '../../../connectors/blob/contract.ts';
import type { ResourceRef } from '../../../connectors/projection.ts';
import type { SearchDocument, SearchSource } from '../../../connectors/search/contract.ts';
import { SEARCH_BODY_MAX_BYTES } from '../../../connectors/search/contract.ts';
import type { Queryable } from '../../store/db.ts';
import { readAsset } from '../kb/asset-rows.ts';
import type { FileRow } from '../kb/queries.ts';
import { FILE_COLUMNS, toFile } from '../kb/queries.ts';
import { parseFrontMatter } from '../kb/text/front-matter.ts';
import { analyzerLanguage } from './analyzer.ts';

/*
 * KB files as search documents. The outbox rows of a file name it; this reads it as it now is
 * (in the transaction that claimed the rows): its path, tags and title, and as its body the
 * text of a text file (its first SEARCH_BODY_MAX_BYTES) or an Asset's Companion text. A file
 * deleted, or in an archived KB, is not returned, so search drops it.
 */

/** The access scope of a KB's files: whoever may search the KB may find them. */
export const kbScope = (kbId: string): string => `kb:${kbId}`;

const KEY_PREFIX = 'kb_file:';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const HEADING = /^#{1,6}[ \t]+(.+?)[ \t#]*$/m;
/** A title found in a heading is cut to this many characters. */
const TITLE_MAX_CHARS = 300;

// Search reads what it can of a file: bytes that are not UTF-8 become U+FFFD, never a failure.
const UTF8 = new TextDecoder('utf-8', { fatal: false, ignoreBOM: false });

async function headText(blob: BlobStore, sha256: string, sizeBytes: number, signal: AbortSignal): Promise<string> {
  if (sizeBytes === 0) return '';
  const chunks: Buffer[] = [];
  const stream = await blob.get(blobKey(sha256), { start: 0, end: Math.min(sizeBytes, SEARCH_BODY_MAX_BYTES) - 1 });
  for await (const chunk of stream) {
    if (signal.aborted) {
      stream.destroy();
      throw signal.reason instanceof Error ? signal.reason : new Error('search: reading a file was aborted');
    }
    chunks.push(chunk as Buffer);
  }
  return UTF8.decode(Buffer.concat(chunks));
}

/** The title of a Markdown text: its front-matter title, else its first heading, else nothing. */
export function titleOf(markdown: string): string {
  const front = parseFrontMatter(markdown);
  if (front.title !== undefined) return front.title;
  return (HEADING.exec(markdown)?.[1] ?? '').slice(0, TITLE_MAX_CHARS);
}

export function kbFileSearchSource(blob: BlobStore): SearchSource {
  return {
    async load(tx: Queryable, refs: readonly ResourceRef[], signal: AbortSignal): Promise<SearchDocument[]> {
      const byTenant = new Map<string, string[]>();
      for (const ref of refs) {
        const id = ref.resourceKey.startsWith(KEY_PREFIX) ? ref.resourceKey.slice(KEY_PREFIX.length) : '';
        if (UUID.test(id)) byTenant.set(ref.tenantId, [...(byTenant.get(ref.tenantId) ?? []), id]);
      }
      const docs: SearchDocument[] = [];
      for (const [tenantId, ids] of byTenant) {
        const rows = await tx.query<FileRow & { language: string }>(
          `SELECT ${FILE_COLUMNS}, t.language FROM kb_files f
             JOIN kbs k ON k.tenant_id = f.tenant_id AND k.id = f.kb_id
             JOIN tenants t ON t.id = f.tenant_id
            WHERE f.tenant_id = $1 AND f.id = ANY($2::uuid[]) AND f.deleted_at IS NULL AND k.archived_at IS NULL
            ORDER BY f.id`,
          [tenantId, ids],
        );
        for (const row of rows) {
          const file = toFile(row);
          let body: string;
          if (file.kind === 'asset') body = (await readAsset(tx, tenantId, file.id, file.version))?.companion ?? '';
          else body = await headText(blob, file.sha256, file.sizeBytes, signal);
          docs.push({
            tenantId,
            id: `${KEY_PREFIX}${file.id}`,
            kind: 'kb_file',
            scope: kbScope(file.kbId),
            language: analyzerLanguage(row.language),
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
      }
      return docs;
    },
  };
}
