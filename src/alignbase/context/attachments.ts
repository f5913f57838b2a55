import type { BlobStore } from '../../../connectors/blob/contract.ts';
import { blobKey } from '../../../connectors/blob/contract.ts';
import type { Caller } from '../../kernel/access/caller.ts';
import { refusal } from '../../kernel/errors.ts';
import { refuse } from '../versions/refusals.ts';
import type { AuditTrail } from '../../kernel/audit/trail.ts';
import type { Db } from '../../store/db.ts';
import type { VersionedType } from '../versions/selectors.ts';
import { parseId, positiveVersion } from '../versions/selectors.ts';
import { resolveAccess, selectVersion } from '../versions/access.ts';
import type { SavedVersion } from '../versions/queries.ts';
import { artifactVersion } from './artifacts.ts';

/**
 * Attachment bytes live in the blob store under their SHA-256 (stored by manifests.ts before any
 * version points at them); a version's manifest lists path, media type, size and digest.
 * read_context_attachment hands them out in chunks of at most 256 KiB.
 */

export const CHUNK_BYTES = 256 * 1024;

/** At most CHUNK_BYTES of one attachment, from `offset`. */
export interface AttachmentChunk {
  readonly data: Buffer;
  readonly offset: number;
  readonly nextOffset: number;
  readonly size: number;
  readonly eof: boolean;
  readonly mediaType: string;
  /** The version read, so a reader can check every chunk came from the same one. */
  readonly versionId: string;
}

export interface AttachmentRequest {
  /** knowledge, skill or artifact, as the caller named it (checked here). */
  readonly contextType: string;
  readonly contextId: string;
  /** An exact version, as the caller gave it. */
  readonly version: unknown;
  readonly path: string;
  readonly offset?: number | undefined;
}

const CONTEXT_TYPES = ['knowledge', 'skill', 'artifact'] as const;

/**
 * read_context_attachment for Knowledge, Skills and Artifacts: an exact saved version only,
 * access checked on every call (a route-only reader of Knowledge or a Skill gets the current
 * published version only), at most 256 KiB from `offset`.
 */
export async function readContextAttachment(
  services: { db: Db; blob: BlobStore },
  caller: Caller,
  input: AttachmentRequest,
  audit: AuditTrail,
): Promise<AttachmentChunk> {
  if (!(CONTEXT_TYPES as readonly string[]).includes(input.contextType))
    throw refusal('validation', 'invalid_context_type', {}, 'context_type must be knowledge, skill, or artifact');
  const type = input.contextType as VersionedType | 'artifact';
  const exact = positiveVersion(input.version);
  const offset = input.offset ?? 0;
  const id = parseId(type, input.contextId);
  if (exact === undefined) throw refuse.invalidSelector('exact');
  if (!Number.isSafeInteger(offset) || offset < 0) throw refusal('validation', 'invalid_offset', {}, 'offset must be a non-negative integer');
  const version: SavedVersion =
    type === 'artifact'
      ? (await artifactVersion(services.db, caller, id, { exact })).version
      : await selectVersion(services.db, caller, type, await resolveAccess(services.db, caller, type, id, { allowRoute: true }), { exact });
  const entry = version.attachments.find((e) => e.path === input.path);
  if (entry === undefined) throw refuse.notFound('attachment');
  if (offset > entry.size) throw refusal('validation', 'invalid_offset', { size: entry.size }, `offset must not exceed the attachment size (${entry.size})`);
  const end = Math.min(entry.size, offset + CHUNK_BYTES);
  let data = Buffer.alloc(0);
  if (end > offset) {
    const chunks: Buffer[] = [];
    for await (const chunk of await services.blob.get(blobKey(entry.sha256), { start: offset, end: end - 1 })) chunks.push(chunk as Buffer);
    data = Buffer.concat(chunks);
  }
  audit.touch({ type, id, version: version.version, version_id: version.id });
  return {
    data,
    offset,
    nextOffset: offset + data.length,
    size: entry.size,
    eof: offset + data.length >= entry.size,
    mediaType: entry.mediaType,
    versionId: version.id,
  };
}
