import type { OutboxEntry } from '../../../connectors/projection.ts';
import type { KbFile } from './queries.ts';

/**
 * What a file write tells the projections: one outbox row per projection (search, graph) under
 * the resource key `kb_file:<id>`, enqueued in the write's own transaction. The rows carry
 * identifiers and where the bytes are, never the content: a projector reads the file's current
 * state (and its bytes, by SHA-256) when it applies them. A projection that does not show KB
 * files yet skips them (connectors/graph/projection.ts, connectors/search/contract.ts).
 */

/** The projections a KB file feeds. */
export const KB_FILE_PROJECTIONS = ['search', 'graph'] as const;

export const kbFileResourceKey = (fileId: string): string => `kb_file:${fileId}`;

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
