import type { Provenance } from '../../kernel/imports/provenance.ts';
import { MAX_PRESIGNED_PUT_BYTES } from '../../../connectors/blob/contract.ts';
import type { Caller } from '../../kernel/access/caller.ts';
import type { AuditTrail } from '../../kernel/audit/trail.ts';
import { isKgwError } from '../../kernel/errors.ts';
import type { Transaction } from '../../store/db.ts';
import { isUniqueViolation } from '../../store/db.ts';
import type { AssetRecord } from './asset-rows.ts';
import { readAsset } from './asset-rows.ts';
import { ASSET_MAX_BYTES, detectAsset, normaliseMimeType } from './assets/detect.ts';
import type { Detected } from './assets/detect.ts';
import { buildCompanion } from './assets/companion.ts';
import { kbFor } from './access.ts';
import type { KbStores } from './files.ts';
import { KB_TEXT_MAX_BYTES, findFile, tagsOf } from './files.ts';
import { saveVersion } from './file-versions.ts';
import { mediaTypeOf } from './paths.ts';
import type { FileKind, FileOperation, KbFile } from './queries.ts';
import { refuseKb } from './refusals.ts';
import { refuseUpload } from './upload-refusals.ts';

/**
 * What an uploaded file is and how it joins its Knowledge Base, for both ways its bytes arrive
 * (presigned batches, upload-batches.ts; inline content, inline-uploads.ts): the media type it
 * is uploaded as and its size ceiling, its kind found from its bytes, and its cataloguing through
 * saveVersion, the write path of the text tools (history, outbox, contribution, audit in one
 * transaction). An image or PDF becomes an Asset with its Companion (assets/companion.ts) saved
 * beside its version. docs/atmina.md has the rules and the bounds.
 */

/** The single-PUT ceiling of a file that is not an image or PDF Asset. */
export const UPLOAD_FILE_MAX_BYTES = MAX_PRESIGNED_PUT_BYTES;
/** PDF extractions at once in this process: each runs in a worker thread with a 512 MiB budget. */
export const PDF_EXTRACTIONS_MAX = 2;

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

function extensionOf(path: string): string {
  const dot = path.lastIndexOf('.');
  return dot > path.lastIndexOf('/') ? path.slice(dot + 1).toLowerCase() : '';
}

/**
 * The media type a file is uploaded as: the declared one in canonical form, or else one its
 * extension implies (an image or PDF type, a text type, otherwise application/octet-stream).
 */
export function uploadType(path: string, declared: string | undefined, field: string): string {
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

export function checkSize(bytes: number, path: string, mediaType: string): void {
  const asset = declaredAsset(path, mediaType);
  const max = asset ? ASSET_MAX_BYTES : UPLOAD_FILE_MAX_BYTES;
  if (bytes > max) throw refuseUpload.tooLarge(bytes, max, asset);
}

// ---------------------------------------------------------------------------------------------
// Cataloguing bytes that are stored

/** What an uploaded file is, found from its bytes: the kind, media type and an Asset's record. */
export interface Classified {
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
export async function classify(path: string, mediaType: string, bytes: Buffer | undefined): Promise<Classified> {
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
export async function catalog(
  stores: KbStores,
  caller: Caller,
  kbId: string,
  target: Target,
  stored: { sha256: string; sizeBytes: number; provenance?: Provenance | undefined },
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
    provenance: stored.provenance,
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
    // A file created at the path between the look and the insert (the insert's ON CONFLICT
    // refuses with file_exists; a unique violation where it raced otherwise): the next version
    // of it, once. Without `replace` the refusal is the answer.
    const raced = isUniqueViolation(error, 'kb_files_live_path') || (isKgwError(error) && error.reason === 'file_exists');
    if ('path' in target && target.replace && raced) return stores.db.tx(save);
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
