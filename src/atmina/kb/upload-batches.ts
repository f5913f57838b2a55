import { randomBytes, randomUUID } from 'node:crypto';
import type { BlobStore } from '../../../connectors/blob/contract.ts';
import { blobKey } from '../../../connectors/blob/contract.ts';
import type { Caller } from '../../kernel/access/caller.ts';
import type { AuditTrail } from '../../kernel/audit/trail.ts';
import { isKgwError } from '../../kernel/errors.ts';
import type { KgwError } from '../../kernel/errors.ts';
import { iso } from '../../kernel/instants.ts';
import { ASSET_MAX_BYTES } from './assets/detect.ts';
import { kbFor } from './access.ts';
import type { KbStores } from './files.ts';
import { headBytes, parseSha, sha256Of } from './files.ts';
import { parseKbPath } from './paths.ts';
import type { FileKind, FileOperation } from './queries.ts';
import { refuseKb } from './refusals.ts';
import { refuseUpload } from './upload-refusals.ts';
import { catalog, checkSize, classify, uploadType } from './upload-catalog.ts';

/**
 * Presigned upload batches of a Knowledge Base: request_uploads issues a URL per declared file,
 * the client PUTs each file's exact bytes straight to the blob store, and confirm_uploads
 * catalogues what arrived (upload-catalog.ts); batches never confirmed are collected here too.
 * docs/atmina.md has the rules and the bounds.
 */

export const UPLOAD_ITEMS_MAX = 50;
/** A confirmation that died holds its batch this long before another may take it over. */
const CLAIM_LEASE_SECONDS = 5 * 60;
/** Expired batches collected per request_uploads: keeps each request's extra work bounded. */
const SWEEP_BATCHES = 20;

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
