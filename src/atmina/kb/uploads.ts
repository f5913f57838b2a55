import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { BlobStore } from '../../../connectors/blob/contract.ts';
import { MAX_PRESIGNED_PUT_BYTES, blobKey } from '../../../connectors/blob/contract.ts';
import type { Caller } from '../../kernel/access/caller.ts';
import type { AuditTrail } from '../../kernel/audit/trail.ts';
import { isKgwError } from '../../kernel/errors.ts';
import type { KgwError } from '../../kernel/errors.ts';
import { iso } from '../../kernel/instants.ts';
import type { Transaction } from '../../store/db.ts';
import { isUniqueViolation } from '../../store/db.ts';
import type { AssetRecord } from './asset-rows.ts';
import { readAsset } from './asset-rows.ts';
import { ASSET_MAX_BYTES, detectAsset, normaliseMimeType } from './assets/detect.ts';
import type { Detected } from './assets/detect.ts';
import { buildCompanion } from './assets/companion.ts';
import { kbFor } from './access.ts';
import type { KbStores } from './files.ts';
import { KB_TEXT_MAX_BYTES, findFile, headBytes, saveVersion, tagsOf } from './files.ts';
import { mediaTypeOf, parseKbPath } from './paths.ts';
import type { FileKind, FileOperation, KbFile } from './queries.ts';
import { refuseKb } from './refusals.ts';
import { refuseUpload } from './upload-refusals.ts';

/**
 * Uploads of a Knowledge Base: presigned batches (request_uploads, then a PUT of each file's
 * exact bytes straight to the blob store, then confirm_uploads) and inline content of at most
 * 1 MiB (upload_file, update_file). Every uploaded file is catalogued through saveVersion, the
 * write path of the text tools (history, outbox, contribution, audit in one transaction); an
 * image or PDF becomes an Asset with its Companion (core/kb/assets/companion.ts) saved beside
 * its version. docs/atmina.md has the rules and the bounds.
 */

export const UPLOAD_ITEMS_MAX = 50;
/** The single-PUT ceiling of a file that is not an image or PDF Asset. */
export const UPLOAD_FILE_MAX_BYTES = MAX_PRESIGNED_PUT_BYTES;
/** Inline content of upload_file and update_file, decoded. */
export const INLINE_MAX_BYTES = 1024 * 1024;
/** PDF extractions at once in this process: each runs in a worker thread with a 512 MiB budget. */
export const PDF_EXTRACTIONS_MAX = 2;
/** A confirmation that died holds its batch this long before another may take it over. */
const CLAIM_LEASE_SECONDS = 5 * 60;
/** Expired batches collected per request_uploads: keeps each request's extra work bounded. */
const SWEEP_BATCHES = 20;

const SHA256 = /^[0-9a-f]{64}$/i;
// As kb_files.media_type checks it.
const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/;

const ASSET_EXTENSIONS: Readonly<Record<string, string>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  pdf: 'application/pdf',
};
const ASSET_TYPES = new Set(Object.values(ASSET_EXTENSIONS));

const sha256Of = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

function extensionOf(path: string): string {
  const dot = path.lastIndexOf('.');
  return dot > path.lastIndexOf('/') ? path.slice(dot + 1).toLowerCase() : '';
}

/**
 * The media type a file is uploaded as: the declared one in canonical form, or else one its
 * extension implies (an image or PDF type, a text type, otherwise application/octet-stream).
 */
function uploadType(path: string, declared: string | undefined, field: string): string {
  if (declared !== undefined && declared.trim() !== '') {
    const type = normaliseMimeType(declared);
    if (!MEDIA_TYPE.test(type)) throw refuseKb.invalidField(field, 'must be a MIME type such as image/png or text/markdown');
    return type;
  }
  const extension = extensionOf(path);
  const asset = ASSET_EXTENSIONS[extension];
  if (asset !== undefined) return asset;
  return extension === '' ? 'application/octet-stream' : mediaTypeOf(path);
}

/** Whether an upload is an image or PDF Asset by what was declared: its ceiling is 25 MiB. */
const declaredAsset = (path: string, mediaType: string): boolean => ASSET_TYPES.has(mediaType) || ASSET_EXTENSIONS[extensionOf(path)] !== undefined;

function checkSize(bytes: number, path: string, mediaType: string): void {
  const asset = declaredAsset(path, mediaType);
  const max = asset ? ASSET_MAX_BYTES : UPLOAD_FILE_MAX_BYTES;
  if (bytes > max) throw refuseUpload.tooLarge(bytes, max, asset);
}

function parseSha(field: string, value: string): string {
  if (!SHA256.test(value)) throw refuseKb.invalidField(field, 'must be a SHA-256 as 64 hex digits');
  return value.toLowerCase();
}

// ---------------------------------------------------------------------------------------------
// Cataloguing bytes that are stored

/** What an uploaded file is, found from its bytes: the kind, media type and an Asset's record. */
interface Classified {
  readonly kind: FileKind;
  readonly mediaType: string;
  readonly asset: AssetRecord | undefined;
  /** A text file's front-matter tags, kept on the head as a text write keeps them. */
  readonly tags: readonly string[];
  /** The writer sent an image's description (an empty one clears it); otherwise a new version keeps the one before. */
  readonly descriptionGiven?: boolean;
}

/** A tiny semaphore: at most PDF_EXTRACTIONS_MAX PDF extractions at once in the process. */
let pdfRunning = 0;
const pdfWaiting: (() => void)[] = [];
async function withPdfSlot<T>(work: () => Promise<T>): Promise<T> {
  if (pdfRunning >= PDF_EXTRACTIONS_MAX) await new Promise<void>((resolve) => pdfWaiting.push(resolve));
  else pdfRunning += 1;
  try {
    return await work();
  } finally {
    const next = pdfWaiting.shift();
    if (next === undefined) pdfRunning -= 1;
    else next();
  }
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
function isUtf8(bytes: Buffer): boolean {
  try {
    UTF8.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/**
 * Classifies bytes (`bytes` undefined: a file too large to hold, never an Asset since Assets
 * stop at 25 MiB): an image or PDF is an Asset with its Companion; UTF-8 of at most 1 MiB whose
 * type is not binary is a text file the text tools can read and edit; anything else is an
 * Asset without a Companion (kept and listed, its bytes never interpreted).
 */
async function classify(path: string, mediaType: string, bytes: Buffer | undefined): Promise<Classified> {
  if (bytes === undefined) return { kind: 'asset', mediaType, asset: undefined, tags: [] };
  const detected: Detected = detectAsset(bytes, mediaType);
  if (detected.kind === 'other') {
    const textual = bytes.length <= KB_TEXT_MAX_BYTES && isUtf8(bytes) && (detected.mimeType.startsWith('text/') || mediaType === mediaTypeOf(path));
    return { kind: textual ? 'text' : 'asset', mediaType: detected.mimeType, asset: undefined, tags: textual ? tagsOf(detected.mimeType, bytes) : [] };
  }
  const companion = detected.kind === 'pdf' ? await withPdfSlot(() => buildCompanion(bytes, detected)) : await buildCompanion(bytes, detected);
  const { meta } = companion;
  return {
    kind: 'asset',
    mediaType: detected.mimeType,
    tags: [],
    asset: {
      format: meta.format,
      width: meta.width,
      height: meta.height,
      pages: meta.pages,
      state: meta.state,
      reason: meta.reason,
      companion: companion.text,
      truncated: companion.truncated,
    },
  };
}

/** Where the catalogued bytes go: a path (a new file, or the next version of the live one there) or a guarded file. */
type Target = { readonly path: string; readonly replace: boolean } | { readonly fileId: string; readonly ifMatch: string };

export interface CatalogResult {
  readonly file: KbFile;
  readonly changed: boolean;
  readonly operation: FileOperation;
  readonly asset: AssetRecord | undefined;
}

/**
 * Saves stored bytes as a file of the KB in one transaction (the KB's Editor role checked
 * again under its lock): a new file (`upload`), or a new version of an existing one (`update`).
 * Bytes the file already holds save nothing (`changed: false`).
 */
async function catalog(
  stores: KbStores,
  caller: Caller,
  kbId: string,
  target: Target,
  stored: { sha256: string; sizeBytes: number },
  classified: Classified,
  audit: AuditTrail,
): Promise<CatalogResult> {
  const tenantId = caller.tenant.id;
  const next = (path: string, operation: FileOperation, asset: AssetRecord | undefined) => ({
    path,
    sha256: stored.sha256,
    sizeBytes: stored.sizeBytes,
    mediaType: classified.mediaType,
    kind: classified.kind,
    operation,
    asset,
    tags: classified.tags,
  });
  const save = async (tx: Transaction): Promise<CatalogResult> => {
    await kbFor(tx, caller, kbId, 'editor', 'uploading files', { lock: 'share' });
    let head: KbFile | undefined;
    if ('fileId' in target) {
      head = await findFile(tx, tenantId, kbId, { fileId: target.fileId, given: target.fileId }, { lock: true });
      if (head.sha256 !== target.ifMatch) throw refuseKb.staleIfMatch(head.sha256);
    } else if (target.replace) {
      const [live] = await tx.query<{ id: string }>('SELECT id FROM kb_files WHERE tenant_id = $1 AND kb_id = $2 AND path = $3 AND deleted_at IS NULL', [
        tenantId,
        kbId,
        target.path,
      ]);
      if (live !== undefined) head = await findFile(tx, tenantId, kbId, { fileId: live.id, given: live.id }, { lock: true });
    }
    if (head === undefined) {
      const path = 'path' in target ? target.path : '';
      return {
        file: await saveVersion(tx, caller, kbId, undefined, next(path, 'upload', classified.asset), audit),
        changed: true,
        operation: 'upload',
        asset: classified.asset,
      };
    }
    const { asset, before } = await describedAsIntended(tx, tenantId, head, classified);
    const sameCompanion = asset === undefined || before === undefined || before.companion === asset.companion;
    if (head.sha256 === stored.sha256 && head.kind === classified.kind && sameCompanion) return { file: head, changed: false, operation: 'update', asset };
    return { file: await saveVersion(tx, caller, kbId, head, next(head.path, 'update', asset), audit), changed: true, operation: 'update', asset };
  };
  try {
    return await stores.db.tx(save);
  } catch (error) {
    // A file created at the path between the look and the insert: the next version of it, once.
    if ('path' in target && target.replace && isUniqueViolation(error, 'kb_files_live_path')) return stores.db.tx(save);
    throw error;
  }
}

/**
 * The Asset record a new version of `head` saves, and what the head's version holds: an image
 * keeps the description (its Companion text) of the image before it unless the writer sent one
 * (an empty one clears it), so update_file with new pixels and no description, or a presigned
 * upload over an image, does not silently drop what the image was said to show. A PDF's
 * Companion is its own text, and an image replacing a PDF or a text file has nothing to keep.
 */
async function describedAsIntended(
  tx: Transaction,
  tenantId: string,
  head: KbFile,
  classified: Classified,
): Promise<{ asset: AssetRecord | undefined; before: AssetRecord | undefined }> {
  const asset = classified.asset;
  if (asset === undefined || asset.format === 'pdf' || head.kind !== 'asset') return { asset, before: undefined };
  const before = await readAsset(tx, tenantId, head.id, head.version);
  if (before === undefined || before.format === 'pdf' || classified.descriptionGiven === true) return { asset, before };
  return { asset: { ...asset, companion: before.companion }, before };
}

// ---------------------------------------------------------------------------------------------
// upload_file and update_file: inline content

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

// ---------------------------------------------------------------------------------------------
// request_uploads

export interface UploadDeclaration {
  readonly path: string;
  readonly mimeType?: string | undefined;
  readonly sizeBytes: number;
  readonly sha256: string;
}

/** A declared item. */
interface Declared {
  readonly path: string;
  readonly mediaType: string;
  readonly sizeBytes: number;
  readonly sha256: string;
}

/**
 * A declared item as the batch keeps it: with the staging key its URL PUTs to, the only place
 * confirm_uploads takes its bytes from. Batches requested before uploads were staged have none.
 */
interface BatchItem extends Declared {
  readonly stagingKey?: string;
}

export interface UploadTicket extends Declared {
  /** The item's place among those declared. */
  readonly index: number;
  readonly url: string;
  readonly method: 'PUT';
  readonly headers: Readonly<Record<string, string>>;
  readonly expiresAt: string;
}

export interface UploadBatch {
  readonly kbId: string;
  readonly batchToken: string;
  readonly expiresAt: string;
  /** Items refused on their own (too large, a bad path, type or hash), in the order declared. */
  readonly refused: readonly RefusedUpload[];
  readonly uploads: readonly UploadTicket[];
}

/** A declared item that was refused on its own, reported in its place while the rest are issued. */
export interface RefusedUpload {
  readonly index: number;
  readonly path: string;
  readonly error: KgwError;
}

/**
 * The declarations, each checked on its own: "batch failures are per item, except duplicate
 * paths reject the whole batch" (the spec). An item whose path does not parse cannot take part
 * in the duplicate check and is refused in its place like any other bad item.
 */
function parseDeclarations(items: readonly UploadDeclaration[]): { declared: (Declared & { index: number })[]; refused: RefusedUpload[] } {
  if (items.length < 1 || items.length > UPLOAD_ITEMS_MAX) throw refuseKb.invalidField('items', `must hold 1 to ${UPLOAD_ITEMS_MAX} uploads`);
  const declared: (Declared & { index: number })[] = [];
  const refused: RefusedUpload[] = [];
  const seen = new Map<string, number[]>();
  items.forEach((item, n) => {
    let path: string;
    try {
      path = parseKbPath(item.path, `items[${n}].path`);
    } catch (error) {
      if (!isKgwError(error)) throw error;
      refused.push({ index: n, path: item.path, error });
      return;
    }
    seen.set(path, [...(seen.get(path) ?? []), n]);
    try {
      const mediaType = uploadType(path, item.mimeType, `items[${n}].mime_type`);
      if (!Number.isSafeInteger(item.sizeBytes) || item.sizeBytes < 0) throw refuseKb.invalidField(`items[${n}].size_bytes`, 'must be a whole number of bytes');
      checkSize(item.sizeBytes, path, mediaType);
      declared.push({ index: n, path, mediaType, sizeBytes: item.sizeBytes, sha256: parseSha(`items[${n}].sha256`, item.sha256) });
    } catch (error) {
      if (!isKgwError(error)) throw error;
      refused.push({ index: n, path, error });
    }
  });
  for (const [path, indexes] of seen) {
    if (indexes.length > 1)
      throw refuseKb.invalidField('items', `items ${indexes.join(', ')} name the same path ${JSON.stringify(path)}; nothing was requested`);
  }
  // Nothing to issue: the call fails as a one-item request always did, with the first item's refusal.
  const [first] = refused;
  if (declared.length === 0 && first !== undefined) throw first.error;
  return { declared, refused: refused.sort((a, b) => a.index - b.index) };
}

/**
 * request_uploads (Editor): a presigned PUT per declared file (its URL, the exact headers to
 * send, its expiry) and one batch_token for confirm_uploads. The store itself refuses other
 * bytes and another size (S3: the signed length and checksum; disk: the gateway's ticket).
 * Only the token's SHA-256 is kept. Expired, unconfirmed batches are collected first.
 */
export async function requestUploads(
  stores: KbStores,
  caller: Caller,
  input: {
    readonly kbId: string;
    readonly items: readonly UploadDeclaration[];
    /** How long the URLs and the batch stay valid: KGW_UPLOAD_URL_TTL_SECONDS (src/config.ts). */
    readonly urlSeconds: number;
  },
  audit: AuditTrail,
): Promise<UploadBatch> {
  const { declared: items, refused } = parseDeclarations(input.items);
  const { kb } = await kbFor(stores.db, caller, input.kbId, 'editor', 'uploading files');
  await collectExpiredUploads(stores);
  const uploads = await Promise.all(
    items.map(async (item) => {
      const put = await stores.blob.presignPut({
        size: item.sizeBytes,
        sha256: item.sha256,
        contentType: item.mediaType,
        expiresInSeconds: input.urlSeconds,
      });
      const kept: BatchItem = { path: item.path, mediaType: item.mediaType, sizeBytes: item.sizeBytes, sha256: item.sha256, stagingKey: put.key };
      return {
        ticket: { ...item, url: put.url, method: put.method, headers: put.headers, expiresAt: put.expiresAt },
        kept,
      };
    }),
  );
  const kept: BatchItem[] = uploads.map((u) => u.kept);
  const token = `kgwub_${randomBytes(32).toString('base64url')}`;
  const id = randomUUID();
  const [row] = await stores.db.tx(async (tx) => {
    await kbFor(tx, caller, kb.id, 'editor', 'uploading files', { lock: 'share' });
    const inserted = await tx.query<{ expires_at: Date | string }>(
      `INSERT INTO kb_upload_batches (tenant_id, id, kb_id, token_sha256, principal_id, items, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, clock_timestamp() + make_interval(secs => $7))
       RETURNING expires_at`,
      [caller.tenant.id, id, kb.id, sha256Of(Buffer.from(token)), caller.principal.id, JSON.stringify(kept), input.urlSeconds],
    );
    await audit.recordIn(tx, 'kb.upload.request', [{ type: 'kb_upload_batch', id }], { kb_id: kb.id, items: items.length, refused: refused.length });
    return inserted;
  });
  const expiresAt = row === undefined ? (uploads[0]?.ticket.expiresAt ?? '') : iso(new Date(row.expires_at));
  return { kbId: kb.id, batchToken: token, expiresAt, uploads: uploads.map((u) => u.ticket), refused };
}

// ---------------------------------------------------------------------------------------------
// confirm_uploads

export type UploadItemResult =
  | {
      readonly path: string;
      readonly ok: true;
      readonly fileId: string;
      readonly version: number;
      readonly sha256: string;
      readonly sizeBytes: number;
      readonly kind: FileKind;
      readonly mediaType: string;
      readonly operation: FileOperation;
      readonly changed: boolean;
      readonly asset:
        { readonly format: string; readonly state: string; readonly width?: number; readonly height?: number; readonly pages?: number } | undefined;
    }
  | { readonly path: string; readonly ok: false; readonly code: string; readonly message: string };

export interface ConfirmResult {
  readonly kbId: string;
  readonly confirmedAt: string;
  readonly items: readonly UploadItemResult[];
}

interface BatchRow {
  id: string;
  items: BatchItem[] | string;
  expired: boolean;
  expires_at: Date | string;
  claimable: boolean;
  result: ConfirmResult | string | null;
}

const asJson = <T>(value: T | string): T => (typeof value === 'string' ? (JSON.parse(value) as T) : value);

function failed(path: string, error: KgwError): UploadItemResult {
  return { path, ok: false, code: error.code === 'unauthenticated' ? 'permission_denied' : error.code, message: error.message };
}

/**
 * Confirms one item: its bytes come only from the object this batch's own URL staged (never
 * from a blob that happens to exist by that SHA-256: that would let anyone who knows a hash read
 * another tenant's file), are checked, made a blob and catalogued. The staged object is removed
 * once the item has its final result; an unexpected failure keeps it for a repeated confirmation.
 */
async function confirmItem(stores: KbStores, caller: Caller, kbId: string, item: BatchItem, audit: AuditTrail): Promise<UploadItemResult> {
  const notUploaded = (): KgwError => refuseKb.invalidField('path', `nothing was uploaded for ${JSON.stringify(item.path)}; PUT its bytes to its URL first`);
  try {
    if (item.stagingKey === undefined) throw notUploaded();
    try {
      await stores.blob.promoteUpload({ key: item.stagingKey, size: item.sizeBytes, sha256: item.sha256 });
    } catch (error) {
      if (isKgwError(error, 'not_found')) throw notUploaded();
      throw error;
    }
    const bytes = item.sizeBytes <= ASSET_MAX_BYTES ? await headBytes(stores.blob, { sha256: item.sha256 }) : undefined;
    const classified = await classify(item.path, item.mediaType, bytes);
    const saved = await catalog(
      stores,
      caller,
      kbId,
      { path: item.path, replace: true },
      { sha256: item.sha256, sizeBytes: item.sizeBytes },
      classified,
      audit,
    );
    await stores.blob.discardStaged(item.stagingKey);
    const { file, asset } = saved;
    return {
      path: file.path,
      ok: true,
      fileId: file.id,
      version: file.version,
      sha256: file.sha256,
      sizeBytes: file.sizeBytes,
      kind: file.kind,
      mediaType: file.mediaType,
      operation: saved.operation,
      changed: saved.changed,
      asset:
        asset === undefined
          ? undefined
          : {
              format: asset.format,
              state: asset.state,
              ...(asset.width === undefined ? {} : { width: asset.width }),
              ...(asset.height === undefined ? {} : { height: asset.height }),
              ...(asset.pages === undefined ? {} : { pages: asset.pages }),
            },
    };
  } catch (error) {
    if (!isKgwError(error)) throw error;
    if (item.stagingKey !== undefined) await stores.blob.discardStaged(item.stagingKey);
    return failed(item.path, error);
  }
}

/**
 * confirm_uploads (Editor): verifies each uploaded object (size and SHA-256), catalogues it and
 * builds an Asset's Companion, with a result per item. The batch's result is stored: a retried
 * confirmation answers it again and catalogues nothing twice. A batch is claimed while it is
 * confirmed, so a concurrent confirmation waits for the result instead of repeating the work.
 */
export async function confirmUploads(
  stores: KbStores,
  caller: Caller,
  input: { readonly kbId: string; readonly batchToken: string },
  audit: AuditTrail,
): Promise<ConfirmResult> {
  const { kb } = await kbFor(stores.db, caller, input.kbId, 'editor', 'uploading files');
  const tenantId = caller.tenant.id;
  const tokenHash = sha256Of(Buffer.from(input.batchToken));
  const batch = await stores.db.tx(async (tx) => {
    const [row] = await tx.query<BatchRow>(
      `SELECT id, items, expires_at, expires_at <= clock_timestamp() AS expired,
              (claimed_at IS NULL OR claimed_at <= clock_timestamp() - make_interval(secs => $4)) AS claimable, result
         FROM kb_upload_batches
        WHERE tenant_id = $1 AND kb_id = $2 AND token_sha256 = $3
        FOR UPDATE`,
      [tenantId, kb.id, tokenHash, CLAIM_LEASE_SECONDS],
    );
    if (row === undefined) throw refuseUpload.batchNotFound();
    if (row.result !== null) return { id: row.id, result: asJson<ConfirmResult>(row.result), items: [] };
    if (row.expired) throw refuseUpload.batchExpired(iso(new Date(row.expires_at)));
    if (!row.claimable) throw refuseUpload.batchBusy();
    await tx.query('UPDATE kb_upload_batches SET claimed_at = clock_timestamp() WHERE tenant_id = $1 AND id = $2', [tenantId, row.id]);
    return { id: row.id, result: undefined, items: asJson<BatchItem[]>(row.items) };
  });
  if (batch.result !== undefined) return batch.result;
  // One at a time: items of one batch may name one file's paths in turn, and the PDF slots are shared.
  const items: UploadItemResult[] = [];
  for (const item of batch.items) items.push(await confirmItem(stores, caller, kb.id, item, audit));
  const result: ConfirmResult = { kbId: kb.id, confirmedAt: iso(new Date()), items };
  await stores.db.tx((tx) =>
    tx.query('UPDATE kb_upload_batches SET result = $3::jsonb, confirmed_at = clock_timestamp(), claimed_at = NULL WHERE tenant_id = $1 AND id = $2', [
      tenantId,
      batch.id,
      JSON.stringify(result),
    ]),
  );
  return result;
}

// ---------------------------------------------------------------------------------------------
// Collecting what was never confirmed

/** When each blob store last collected its staged leftovers in this process (at most once a minute). */
const stagedCollected = new WeakMap<BlobStore, number>();

/**
 * Forgets expired batches that were never confirmed and removes what their URLs staged (a
 * staged object belongs to its batch alone). Runs on each request_uploads, at most
 * SWEEP_BATCHES batches at a time, so bytes of an abandoned upload stay at most until the next
 * request after their expiry; at most once a minute it also has the blob store remove staged
 * objects no batch names any more (a PUT after its batch was confirmed) once their URL expired.
 */
export async function collectExpiredUploads(stores: { readonly db: KbStores['db']; readonly blob: BlobStore }): Promise<number> {
  const expired = await stores.db.tx((tx) =>
    tx.query<{ tenant_id: string; id: string; items: BatchItem[] | string }>(
      `DELETE FROM kb_upload_batches
        WHERE (tenant_id, id) IN (
          SELECT tenant_id, id FROM kb_upload_batches
           WHERE confirmed_at IS NULL AND expires_at <= clock_timestamp()
           ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)
        RETURNING tenant_id, id, items`,
      [SWEEP_BATCHES],
    ),
  );
  let removed = 0;
  for (const batch of expired) {
    for (const item of asJson<BatchItem[]>(batch.items)) {
      if (item.stagingKey !== undefined) {
        await stores.blob.discardStaged(item.stagingKey);
        removed += 1;
        continue;
      }
      // A batch from before uploads were staged PUT straight to the content address. Any
      // reference keeps those bytes, whichever tenant or kind of content holds it (KB files, open
      // batches, Knowledge attachments).
      const [held] = await stores.db.query<{ held: boolean }>(
        `SELECT EXISTS (SELECT 1 FROM kb_file_versions WHERE sha256 = $1)
             OR EXISTS (SELECT 1 FROM kb_upload_batches WHERE items @> jsonb_build_array(jsonb_build_object('sha256', $1::text)))
             OR EXISTS (SELECT 1 FROM context_versions WHERE attachments @> jsonb_build_array(jsonb_build_object('sha256', $1::text)))
             OR EXISTS (SELECT 1 FROM context_proposals WHERE attachments @> jsonb_build_array(jsonb_build_object('sha256', $1::text))) AS held`,
        [item.sha256],
      );
      if (held?.held === true) continue;
      await stores.blob.delete(blobKey(item.sha256));
      removed += 1;
    }
  }
  const now = Date.now();
  if (now - (stagedCollected.get(stores.blob) ?? 0) >= 60_000) {
    stagedCollected.set(stores.blob, now);
    removed += await stores.blob.collectStaged();
  }
  return removed;
}
