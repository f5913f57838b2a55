import type { BlobStore } from '../../../connectors/blob/contract.ts';
import { blobKey } from '../../../connectors/blob/contract.ts';
import type { OutboxEntry, Rebuilder, ResourceRef } from '../../../connectors/projection.ts';
import type { Queryable } from '../../store/db.ts';
import { mapInParallel } from '../../kernel/concurrency.ts';
import type { FileRow, KbFile } from './queries.ts';
import { FILE_COLUMNS, toFile } from './queries.ts';

/**
 * What a file write tells the projections: one outbox row per projection (search, graph) under
 * the resource key `kb_file:<id>`, enqueued in the write's own transaction. The rows carry
 * identifiers and where the bytes are, never the content: a projector reads the file's current
 * state (and its bytes, by SHA-256) when it applies them (src/atmina/kb/link-source.ts for the
 * graph, src/atmina/search-source.ts for search).
 */

/** The projections a KB file feeds. */
export const KB_FILE_PROJECTIONS = ['search', 'graph'] as const;

export const KB_FILE_KEY_PREFIX = 'kb_file:';
export const kbFileResourceKey = (fileId: string): string => `${KB_FILE_KEY_PREFIX}${fileId}`;

/** The outbox payload of a KB file row. */
export interface KbFilePayload {
  readonly fileId: string;
  readonly kbId: string;
  readonly path: string;
  readonly sha256: string;
  readonly version: number;
  readonly kind: KbFile['kind'];
  readonly mediaType: string;
}

/** One entry per projection: the file as it now is (upsert), or its removal (delete). */
export function kbFileEntries(tenantId: string, file: KbFile, operation: 'upsert' | 'delete'): OutboxEntry[] {
  const payload: KbFilePayload = {
    fileId: file.id,
    kbId: file.kbId,
    path: file.path,
    sha256: file.sha256,
    version: file.version,
    kind: file.kind,
    mediaType: file.mediaType,
  };
  return KB_FILE_PROJECTIONS.map((projection) => ({ tenantId, projection, resourceKey: kbFileResourceKey(file.id), operation, payload: { ...payload } }));
}

// ---------------------------------------------------------------------------------------------
// Rebuilding from the store (kgw reindex)

/** Files listed per query while the keys are walked, so no tenant's files are held at once. */
const KEY_PAGE = 500;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
// A file is shown while it is live and its KB is not archived: archiving takes a KB's files out
// of the projections, restoring puts them back (kbs.ts), and a rebuild agrees with both.
const SHOWN = `kb_files f JOIN kbs k ON k.tenant_id = f.tenant_id AND k.id = f.kb_id
  WHERE f.tenant_id = $1 AND f.deleted_at IS NULL AND k.archived_at IS NULL`;

/** The ids of a tenant's shown files, by id, a page at a time. */
async function* shownFileIds(db: Queryable, tenantId: string): AsyncIterable<string> {
  let after: string | null = null;
  for (;;) {
    const page: { id: string }[] = await db.query<{ id: string }>(
      `SELECT f.id FROM ${SHOWN} AND ($2::uuid IS NULL OR f.id > $2::uuid) ORDER BY f.id LIMIT $3`,
      [tenantId, after, KEY_PAGE],
    );
    for (const row of page) yield row.id;
    const last = page.at(-1);
    if (last === undefined || page.length < KEY_PAGE) return;
    after = last.id;
  }
}

/**
 * The shown files (live, in a live KB) among the `kb_file:<id>` resources named, as they now
 * are, by tenant then id; other keys and files no longer shown are left out. What each
 * projection's source reads when it applies a KB file's rows, and what a rebuild enqueues.
 */
export async function shownFiles(tx: Queryable, refs: readonly ResourceRef[]): Promise<{ tenantId: string; file: KbFile }[]> {
  const byTenant = new Map<string, string[]>();
  for (const ref of refs) {
    const id = ref.resourceKey.startsWith(KB_FILE_KEY_PREFIX) ? ref.resourceKey.slice(KB_FILE_KEY_PREFIX.length) : '';
    if (UUID.test(id)) byTenant.set(ref.tenantId, [...(byTenant.get(ref.tenantId) ?? []), id]);
  }
  const shown: { tenantId: string; file: KbFile }[] = [];
  for (const [tenantId, ids] of [...byTenant].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const rows = await tx.query<FileRow>(`SELECT ${FILE_COLUMNS} FROM ${SHOWN} AND f.id = ANY($2::uuid[]) ORDER BY f.id`, [tenantId, ids]);
    for (const row of rows) shown.push({ tenantId, file: toFile(row) });
  }
  return shown;
}

/** The first `maxBytes` of a file's bytes as UTF-8, for a projection: bytes that are not UTF-8 become U+FFFD, never a failure. */
export async function headText(blob: BlobStore, file: KbFile, maxBytes: number, signal: AbortSignal): Promise<string> {
  if (file.sizeBytes === 0) return '';
  const chunks: Buffer[] = [];
  // The range keeps a mislabelled large blob from being read whole.
  const stream = await blob.get(blobKey(file.sha256), { start: 0, end: Math.min(file.sizeBytes, maxBytes) - 1 });
  for await (const chunk of stream) {
    if (signal.aborted) {
      stream.destroy();
      throw signal.reason instanceof Error ? signal.reason : new Error('reading a file for a projection was aborted');
    }
    chunks.push(chunk as Buffer);
  }
  return LENIENT_UTF8.decode(Buffer.concat(chunks));
}

const LENIENT_UTF8 = new TextDecoder('utf-8', { fatal: false, ignoreBOM: false });

/**
 * Blob reads a projection keeps in flight while it loads a batch's files: read one after the
 * other, a batch of 400 files waited on 400 round trips to the blob store (an HTTP request
 * each on S3) while its transaction stayed open.
 */
export const HEAD_READS_IN_FLIGHT = 16;

/** headText of each file (those `wanted` says to read; '' for the others), HEAD_READS_IN_FLIGHT at a time, in the files' order. */
export function headTexts(
  blob: BlobStore,
  files: readonly KbFile[],
  maxBytes: number,
  signal: AbortSignal,
  wanted: (file: KbFile) => boolean = () => true,
): Promise<string[]> {
  return mapInParallel(files, HEAD_READS_IN_FLIGHT, (file) => (wanted(file) ? headText(blob, file, maxBytes, signal) : Promise.resolve('')));
}

/**
 * Rebuilds one projection's KB files: every shown file of every tenant (by tenant, then file
 * id), each as the upsert its latest write enqueued. A file deleted, or its KB archived, after
 * its key was listed is left out: its own delete row tells the projection.
 */
function kbFileRebuilder(projection: (typeof KB_FILE_PROJECTIONS)[number]): Rebuilder {
  return {
    projection,
    async *keys(db: Queryable): AsyncIterable<ResourceRef> {
      for (const tenant of await db.query<{ id: string }>('SELECT id FROM tenants ORDER BY id')) {
        for await (const id of shownFileIds(db, tenant.id)) yield { tenantId: tenant.id, resourceKey: kbFileResourceKey(id) };
      }
    },
    async load(tx: Queryable, refs: readonly ResourceRef[]): Promise<OutboxEntry[]> {
      return (await shownFiles(tx, refs)).flatMap(({ tenantId, file }) =>
        kbFileEntries(tenantId, file, 'upsert').filter((entry) => entry.projection === projection),
      );
    },
  };
}

/** A rebuilder of KB files for each projection they feed. */
export const kbFileRebuilders: readonly Rebuilder[] = KB_FILE_PROJECTIONS.map(kbFileRebuilder);
