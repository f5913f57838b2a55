import type { Caller } from '../../kernel/access/caller.ts';
import type { AuditTrail } from '../../kernel/audit/trail.ts';
import { buildCompanion } from './assets/companion.ts';
import { kbFor } from './access.ts';
import type { KbStores } from './files.ts';
import { findFile, parseSha, sha256Of } from './files.ts';
import { parseKbPath } from './paths.ts';
import { refuseKb } from './refusals.ts';
import { refuseUpload } from './upload-refusals.ts';
import type { CatalogResult, Classified } from './upload-catalog.ts';
import { catalog, checkSize, classify, uploadType } from './upload-catalog.ts';

/**
 * upload_file and update_file: a file's bytes sent inline (base64, at most 1 MiB decoded), stored
 * as a blob and catalogued at once (upload-catalog.ts). An image may come with its description.
 */

/** Inline content of upload_file and update_file, decoded. */
export const INLINE_MAX_BYTES = 1024 * 1024;

/** Decodes base64 strictly (standard or URL alphabet, padding optional); `validation` otherwise. */
export function decodeBase64(field: string, value: string): Buffer {
  // A string longer than the encoding of the ceiling decodes to more than it: no need to decode.
  if (value.length > Math.ceil((INLINE_MAX_BYTES * 4) / 3) + 4) throw refuseUpload.inlineTooLarge(Math.floor((value.length * 3) / 4), INLINE_MAX_BYTES);
  const compact = value.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(compact) || compact.replace(/=+$/, '').length % 4 === 1) throw refuseKb.invalidField(field, 'must be base64');
  const bytes = Buffer.from(compact.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  if (bytes.length > INLINE_MAX_BYTES) throw refuseUpload.inlineTooLarge(bytes.length, INLINE_MAX_BYTES);
  return bytes;
}

export interface InlineUpload {
  readonly kbId: string;
  readonly contentBase64: string;
  readonly mimeType?: string | undefined;
  /** An image's description, its Companion text (at most 16 KiB). */
  readonly description?: string | undefined;
}

function inlineBytes(path: string, input: InlineUpload): { bytes: Buffer; sha256: string; mediaType: string } {
  const mediaType = uploadType(path, input.mimeType, 'mime_type');
  const bytes = decodeBase64('content_base64', input.contentBase64);
  checkSize(bytes.length, path, mediaType);
  const sha256 = sha256Of(bytes);
  return { bytes, sha256, mediaType };
}

async function classifyInline(path: string, mediaType: string, bytes: Buffer, description: string | undefined): Promise<Classified> {
  const classified = await classify(path, mediaType, bytes);
  if (description === undefined) return classified;
  // An empty description is an explicit one: it clears what an earlier version of an image was said to show.
  if (description === '') return { ...classified, descriptionGiven: true };
  if (classified.asset === undefined || classified.asset.format === 'pdf') throw refuseKb.invalidField('description', 'is taken only for an image Asset');
  const withText = await buildCompanion(bytes, { kind: 'image', format: classified.asset.format, mimeType: classified.mediaType }, { description });
  return { ...classified, descriptionGiven: true, asset: { ...classified.asset, companion: withText.text } };
}

/** upload_file (Editor): a new file from inline content; `conflict` when a live file has the path (use update_file). */
export async function uploadFile(stores: KbStores, caller: Caller, input: InlineUpload & { readonly path: string }, audit: AuditTrail): Promise<CatalogResult> {
  const path = parseKbPath(input.path, 'filename');
  const { kb } = await kbFor(stores.db, caller, input.kbId, 'editor', 'uploading files');
  const { bytes, sha256, mediaType } = inlineBytes(path, input);
  const classified = await classifyInline(path, mediaType, bytes, input.description);
  await stores.blob.put({ body: bytes, size: bytes.length, sha256 });
  return catalog(stores, caller, kb.id, { path, replace: false }, { sha256, sizeBytes: bytes.length }, classified, audit);
}

/** update_file (Editor): a new version of a file from inline content, guarded by `if_match` (the SHA-256 read). */
export async function updateFile(
  stores: KbStores,
  caller: Caller,
  input: InlineUpload & { readonly fileId: string; readonly ifMatch: string },
  audit: AuditTrail,
): Promise<CatalogResult> {
  const ifMatch = parseSha('if_match', input.ifMatch);
  const { kb } = await kbFor(stores.db, caller, input.kbId, 'editor', 'uploading files');
  const current = await findFile(stores.db, caller.tenant.id, kb.id, { fileId: input.fileId.toLowerCase(), given: input.fileId });
  if (current.sha256 !== ifMatch) throw refuseKb.staleIfMatch(current.sha256);
  const { bytes, sha256, mediaType } = inlineBytes(current.path, input);
  const classified = await classifyInline(current.path, mediaType, bytes, input.description);
  await stores.blob.put({ body: bytes, size: bytes.length, sha256 });
  return catalog(stores, caller, kb.id, { fileId: current.id, ifMatch }, { sha256, sizeBytes: bytes.length }, classified, audit);
}
