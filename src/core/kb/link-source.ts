import type { BlobStore } from '../../../connectors/blob/contract.ts';
import { blobKey } from '../../../connectors/blob/contract.ts';
import type { KbFileNode, KbLinkInput } from '../../../connectors/graph/contract.ts';
import type { KbFileGraphSource } from '../../../connectors/graph/projection.ts';
import type { ResourceRef } from '../../../connectors/projection.ts';
import type { Queryable } from '../../store/db.ts';
import { KB_TEXT_MAX_BYTES } from './files.ts';
import type { FileRow, KbFile } from './queries.ts';
import { FILE_COLUMNS, toFile } from './queries.ts';
import { hasReferences, referencesOf } from './text/references.ts';

/*
 * KB files as the graph keeps them for `related`. The outbox rows of a file name it; this reads
 * it as it now is, in the transaction that claimed the rows: its KB, path and kind, and for a
 * Markdown file the references in its bytes. A file deleted, or in an archived KB, is not
 * returned, so the graph forgets it.
 */

const KEY_PREFIX = 'kb_file:';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

// References are read from what a file holds: bytes that are not UTF-8 become U+FFFD, never a failure.
const UTF8 = new TextDecoder('utf-8', { fatal: false, ignoreBOM: false });

async function textOf(blob: BlobStore, file: KbFile, signal: AbortSignal): Promise<string> {
  if (file.sizeBytes === 0) return '';
  const chunks: Buffer[] = [];
  // A text file is at most KB_TEXT_MAX_BYTES; the range keeps a mislabelled large blob from being read whole.
  const stream = await blob.get(blobKey(file.sha256), { start: 0, end: Math.min(file.sizeBytes, KB_TEXT_MAX_BYTES) - 1 });
  for await (const chunk of stream) {
    if (signal.aborted) {
      stream.destroy();
      throw signal.reason instanceof Error ? signal.reason : new Error('graph: reading a file was aborted');
    }
    chunks.push(chunk as Buffer);
  }
  return UTF8.decode(Buffer.concat(chunks));
}

export function kbFileGraphSource(blob: BlobStore): KbFileGraphSource {
  return {
    async load(tx: Queryable, refs: readonly ResourceRef[], signal: AbortSignal) {
      const byTenant = new Map<string, string[]>();
      for (const ref of refs) {
        const id = ref.resourceKey.startsWith(KEY_PREFIX) ? ref.resourceKey.slice(KEY_PREFIX.length) : '';
        if (UUID.test(id)) byTenant.set(ref.tenantId, [...(byTenant.get(ref.tenantId) ?? []), id]);
      }
      const loaded: { file: KbFileNode; links: KbLinkInput[] }[] = [];
      for (const [tenantId, ids] of byTenant) {
        const rows = await tx.query<FileRow>(
          `SELECT ${FILE_COLUMNS} FROM kb_files f JOIN kbs k ON k.tenant_id = f.tenant_id AND k.id = f.kb_id
            WHERE f.tenant_id = $1 AND f.id = ANY($2::uuid[]) AND f.deleted_at IS NULL AND k.archived_at IS NULL
            ORDER BY f.id`,
          [tenantId, ids],
        );
        for (const row of rows) {
          const file = toFile(row);
          const links = hasReferences(file) ? referencesOf(await textOf(blob, file, signal), file.path).references : [];
          loaded.push({
            file: { tenantId, kbId: file.kbId, fileId: file.id, path: file.path, kind: file.kind, mediaType: file.mediaType },
            links: links.map((l) => ({ type: l.type, key: l.key, target: l.target, paths: l.paths, name: l.name })),
          });
        }
      }
      return loaded;
    },
  };
}
