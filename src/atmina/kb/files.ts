import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { BlobStore } from '../../../connectors/blob/contract.ts';
import { blobKey } from '../../../connectors/blob/contract.ts';
import type { Caller } from '../../kernel/access/caller.ts';
import type { AuditTrail } from '../../kernel/audit/trail.ts';
import { enqueue } from '../../kernel/outbox/outbox.ts';
import type { Db, Queryable, Transaction } from '../../store/db.ts';
import { isUniqueViolation } from '../../store/db.ts';
import type { KbWithAccess } from './access.ts';
import { kbFor } from './access.ts';
import { recordContribution } from './contributions.ts';
import type { PatchEdit } from './patch.ts';
import { applyPatch, checkPatch } from './patch.ts';
import { mediaTypeOf, parseKbPath } from './paths.ts';
import { kbFileEntries } from './projection.ts';
import { parseFrontMatter } from './text/front-matter.ts';
import type { FileKind, FileOperation, FileRow, KbFile } from './queries.ts';
import { FILE_COLUMNS, toFile } from './queries.ts';
import type { AssetRecord } from './asset-rows.ts';
import { copyAsset, insertAsset, readAsset } from './asset-rows.ts';
import { refuseKb } from './refusals.ts';

/**
 * Text files of a Knowledge Base: reading, the four write modes, moving, restoring an old
 * version and deleting. Every change saves a version (kb_file_versions) and moves the head
 * (kb_files) in one transaction, which also enqueues the file for search and graph, records the
 * writer's contribution and the audit event. The bytes go to the blob store first, outside any
 * transaction, under their SHA-256; a row never points at bytes that are not stored. Writers of
 * one file are serialised on its head row and compare its SHA-256, so no update is lost.
 * docs/atmina.md has the rules and the decisions behind them.
 */

/** The largest text file the file tools write: 1 MiB of UTF-8. Larger files go through uploads. */
export const KB_TEXT_MAX_BYTES = 1024 * 1024;

/** What the file core needs: the store and the blob store. */
export interface KbStores {
  readonly db: Db;
  readonly blob: BlobStore;
}

/** A file named by path or by id; the path wins when both are given (the Atmina spec). */
export interface FileRef {
  readonly path?: string | undefined;
  readonly fileId?: string | undefined;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SHA256 = /^[0-9a-f]{64}$/i;

export type ParsedRef = { readonly path: string } | { readonly fileId: string; readonly given: string };

export function parseRef(ref: FileRef): ParsedRef {
  if (ref.path !== undefined) return { path: parseKbPath(ref.path) };
  if (ref.fileId !== undefined) return { fileId: ref.fileId.toLowerCase(), given: ref.fileId };
  throw refuseKb.invalidField('path', 'give the file as path or file_id');
}

/**
 * The file a ref names in a KB: a live one, or with `deleted` also a deleted one (by id only:
 * several deleted files may have had one path). `lock` locks the head row for a change.
 */
export async function findFile(
  q: Queryable,
  tenantId: string,
  kbId: string,
  ref: ParsedRef,
  options: { lock?: boolean; deleted?: boolean } = {},
): Promise<KbFile> {
  const lock = options.lock === true ? 'FOR UPDATE' : '';
  if ('path' in ref) {
    const [row] = await q.query<FileRow>(
      `SELECT ${FILE_COLUMNS} FROM kb_files f WHERE f.tenant_id = $1 AND f.kb_id = $2 AND f.path = $3 AND f.deleted_at IS NULL ${lock}`,
      [tenantId, kbId, ref.path],
    );
    if (row === undefined) throw refuseKb.fileNotFound(ref.path);
    return toFile(row);
  }
  if (!UUID.test(ref.fileId)) throw refuseKb.fileNotFound(ref.given);
  const [row] = await q.query<FileRow>(
    `SELECT ${FILE_COLUMNS} FROM kb_files f
      WHERE f.tenant_id = $1 AND f.kb_id = $2 AND f.id = $3 ${options.deleted === true ? '' : 'AND f.deleted_at IS NULL'} ${lock}`,
    [tenantId, kbId, ref.fileId],
  );
  if (row === undefined) throw refuseKb.fileNotFound(ref.given);
  return toFile(row);
}

function requireText(file: KbFile): void {
  if (file.kind !== 'text') throw refuseKb.fileNotText(file.kind);
}

const sha256Of = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

// Files are kept as sent: a byte-order mark at the start is content, not dropped.
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

async function bytesOf(blob: BlobStore, sha256: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await blob.get(blobKey(sha256))) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A text file's head as UTF-8 text; `validation` for an Asset. */
export async function textOf(blob: BlobStore, file: KbFile): Promise<string> {
  requireText(file);
  try {
    return UTF8.decode(await bytesOf(blob, file.sha256));
  } catch (error) {
    if (error instanceof TypeError) throw refuseKb.fileNotText('asset');
    throw error;
  }
}

const LOSSY_UTF8 = new TextDecoder('utf-8', { fatal: false });

/**
 * The tags a version of a text file carries in the catalog: its front matter's, for Markdown
 * (core/kb/text/front-matter.ts); other files have none.
 */
export function tagsOf(mediaType: string, bytes: Buffer): readonly string[] {
  return mediaType === 'text/markdown' ? parseFrontMatter(LOSSY_UTF8.decode(bytes)).tags : [];
}

/** An if_match or content_sha256 as given: 64 hex digits, either case. */
export function parseSha(field: string, value: string): string {
  if (!SHA256.test(value)) throw refuseKb.invalidField(field, 'must be a SHA-256 as 64 hex digits');
  return value.toLowerCase();
}

function checkIfMatch(file: KbFile, ifMatch: string | undefined): void {
  if (ifMatch !== undefined && ifMatch !== file.sha256) throw refuseKb.staleIfMatch(file.sha256);
}

// ---------------------------------------------------------------------------------------------
// Reading

export interface FileContent {
  readonly kb: KbWithAccess;
  readonly file: KbFile;
  /** A text file's content; an Asset's Companion text (empty for an Asset without one). */
  readonly content: string;
  /** An image or PDF Asset's metadata at the head version; undefined for text and other binaries. */
  readonly asset: AssetRecord | undefined;
}

/**
 * read_file (Viewer): a text file's content as UTF-8 text, with its size, SHA-256 and version;
 * for an Asset, its Companion text and metadata instead of its bytes.
 */
export async function readFile(stores: KbStores, caller: Caller, input: { kbId: string } & FileRef, audit: AuditTrail): Promise<FileContent> {
  const ref = parseRef(input);
  const kb = await kbFor(stores.db, caller, input.kbId, 'viewer', 'reading files');
  const file = await findFile(stores.db, caller.tenant.id, kb.kb.id, ref);
  audit.touch({ type: 'kb_file', id: file.id, version: file.version });
  if (file.kind === 'asset') {
    const asset = await readAsset(stores.db, caller.tenant.id, file.id, file.version);
    return { kb, file, content: asset?.companion ?? '', asset };
  }
  const content = await textOf(stores.blob, file);
  return { kb, file, content, asset: undefined };
}

/** The bytes of a file's head (for an Asset's rendition: at most the 25 MiB Asset ceiling). */
export function headBytes(blob: BlobStore, file: { readonly sha256: string }): Promise<Buffer> {
  return bytesOf(blob, file.sha256);
}

// ---------------------------------------------------------------------------------------------
// Saving a version

/** What the next version of a file holds. */
export interface NextVersion {
  readonly path: string;
  readonly sha256: string;
  readonly sizeBytes: number;
  readonly mediaType: string;
  readonly kind: FileKind;
  readonly operation: FileOperation;
  readonly restoredFrom?: number | undefined;
  /** The front-matter tags of the content (tagsOf); none when left out (Assets). */
  readonly tags?: readonly string[] | undefined;
  /** What is known of an image or PDF Asset at this version: saved beside it (kb_file_assets). */
  readonly asset?: AssetRecord | undefined;
}

/**
 * Saves a version inside `tx`: the first one of a new file (`head` undefined; `conflict` when
 * a live file holds the path), or the next one of a locked head. Then the projections, the
 * contribution and the audit event, all in the same transaction.
 */
export async function saveVersion(
  tx: Transaction,
  caller: Caller,
  kbId: string,
  head: KbFile | undefined,
  next: NextVersion,
  audit: AuditTrail,
): Promise<KbFile> {
  const saved = await storeVersion(tx, { tenantId: caller.tenant.id, authorId: caller.principal.id }, kbId, head, next);
  await recordContribution(tx, caller.tenant.id, kbId, caller.principal.id);
  await audit.recordIn(
    tx,
    `kb.file.${next.operation}`,
    [{ type: 'kb_file', id: saved.id, before_version: head?.version ?? null, after_version: saved.version, changed: true }],
    { kb_id: kbId, operation: next.operation, ...(next.restoredFrom === undefined ? {} : { restored_from: next.restoredFrom }) },
  );
  return saved;
}

/**
 * The rows of a saved version: the head (inserted, or moved on under its lock), the immutable
 * version and the outbox rows. `authorId` undefined: by no one (the org file seeding a KB),
 * whose apply records its own audit event and leaves no contribution.
 */
export async function storeVersion(
  tx: Transaction,
  by: { readonly tenantId: string; readonly authorId: string | undefined },
  kbId: string,
  head: KbFile | undefined,
  next: NextVersion,
): Promise<KbFile> {
  const { tenantId } = by;
  const author = by.authorId ?? null;
  let row: FileRow | undefined;
  if (head === undefined) {
    [row] = await tx.query<FileRow>(
      `INSERT INTO kb_files AS f (tenant_id, id, kb_id, path, latest_version, sha256, size_bytes, media_type, kind, tags, created_by, updated_by)
       VALUES ($1, $2, $3, $4, 1, $5, $6, $7, $8, $10::text[], $9, $9)
       ON CONFLICT (tenant_id, kb_id, path) WHERE deleted_at IS NULL DO NOTHING
       RETURNING ${FILE_COLUMNS}`,
      [tenantId, randomUUID(), kbId, next.path, next.sha256, next.sizeBytes, next.mediaType, next.kind, author, next.tags ?? []],
    );
    if (row === undefined) throw refuseKb.fileExists(next.path);
  } else {
    const deleting = next.operation === 'delete';
    [row] = await tx.query<FileRow>(
      `UPDATE kb_files AS f
          SET latest_version = latest_version + 1, path = $3, sha256 = $4, size_bytes = $5, media_type = $6, kind = $9,
              tags = $8::text[], updated_at = clock_timestamp(), updated_by = $7
              ${deleting ? ', deleted_at = clock_timestamp(), deleted_by = $7' : ''}
        WHERE tenant_id = $1 AND id = $2
        RETURNING ${FILE_COLUMNS}`,
      [tenantId, head.id, next.path, next.sha256, next.sizeBytes, next.mediaType, author, next.tags ?? [], next.kind],
    );
  }
  if (row === undefined) throw new Error(`kb file ${head?.id ?? next.path} vanished under its lock`);
  const saved = toFile(row);
  await tx.query(
    `INSERT INTO kb_file_versions (tenant_id, file_id, version, id, path, sha256, size_bytes, media_type, operation, restored_from, author_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
    [
      tenantId,
      saved.id,
      saved.version,
      randomUUID(),
      saved.path,
      saved.sha256,
      saved.sizeBytes,
      saved.mediaType,
      next.operation,
      next.restoredFrom ?? null,
      author,
    ],
  );
  // An Asset's metadata follows its bytes: a version that keeps them (move, restore, delete)
  // keeps what was known of them, copied from the version it was made from.
  if (next.asset !== undefined) await insertAsset(tx, tenantId, saved.id, saved.version, next.asset);
  else if (head !== undefined && saved.kind === 'asset') await copyAsset(tx, tenantId, saved.id, saved.sha256, saved.version);
  await enqueue(tx, kbFileEntries(tenantId, saved, next.operation === 'delete' ? 'delete' : 'upsert'));
  return saved;
}

// ---------------------------------------------------------------------------------------------
// Writing text

export const WRITE_MODES = ['create', 'overwrite', 'append', 'patch'] as const;
export type WriteMode = (typeof WRITE_MODES)[number];

export interface WriteInput {
  readonly path: string;
  readonly mode: WriteMode;
  /** The UTF-8 text of create, overwrite and append. */
  readonly content?: string | undefined;
  /** The edits of patch. */
  readonly patch?: readonly PatchEdit[] | undefined;
  /**
   * Integrity of what the caller sent: the UTF-8 bytes of `content` (create, overwrite,
   * append), or for patch, which sends no content, of the whole file it expects to result.
   */
  readonly expectedBytes?: number | undefined;
  readonly contentSha256?: string | undefined;
  /** The SHA-256 the caller read: the write applies only to that head. */
  readonly ifMatch?: string | undefined;
}

export interface WriteResult {
  readonly file: KbFile;
  /** Whether a version was saved; false when the file already held exactly the result. */
  readonly changed: boolean;
  /** The operation of the saved version (or the one asked, when nothing changed). */
  readonly operation: FileOperation;
}

/** A write checked against everything that needs no store: what applyWrite carries out. */
export interface PreparedWrite {
  readonly path: string;
  readonly mode: WriteMode;
  readonly content: Buffer | undefined;
  readonly edits: readonly PatchEdit[];
  readonly expectedBytes: number | undefined;
  readonly contentSha256: string | undefined;
  readonly ifMatch: string | undefined;
}

function checkSize(bytes: number): void {
  if (bytes > KB_TEXT_MAX_BYTES) throw refuseKb.fileTooLarge(bytes, KB_TEXT_MAX_BYTES);
}

/** The integrity fields against the exact bytes they describe; `of` names them in the message. */
function checkIntegrity(write: Pick<PreparedWrite, 'expectedBytes' | 'contentSha256'>, bytes: Buffer, of: string): void {
  if (write.expectedBytes !== undefined && write.expectedBytes !== bytes.length)
    throw refuseKb.contentIntegrity('expected_bytes', write.expectedBytes, bytes.length, of);
  if (write.contentSha256 !== undefined) {
    const actual = sha256Of(bytes);
    if (actual !== write.contentSha256) throw refuseKb.contentIntegrity('content_sha256', write.contentSha256, actual, of);
  }
}

/** Checks a write's input on its own: path, mode and its fields, sizes and (but for patch) integrity. */
export function prepareWrite(input: WriteInput): PreparedWrite {
  const path = parseKbPath(input.path);
  const { mode } = input;
  if (!(WRITE_MODES as readonly string[]).includes(mode)) throw refuseKb.invalidField('mode', `must be one of ${WRITE_MODES.join(', ')}`);
  const ifMatch = input.ifMatch === undefined ? undefined : parseSha('if_match', input.ifMatch);
  if (mode === 'create' && ifMatch !== undefined) throw refuseKb.writeModeInput(mode, 'a new file has no SHA-256 to match; leave if_match out');
  const expectedBytes = input.expectedBytes;
  if (expectedBytes !== undefined && (!Number.isSafeInteger(expectedBytes) || expectedBytes < 0))
    throw refuseKb.invalidField('expected_bytes', 'must be a whole number of bytes');
  const contentSha256 = input.contentSha256 === undefined ? undefined : parseSha('content_sha256', input.contentSha256);
  const prepared = { path, mode, ifMatch, expectedBytes, contentSha256 };
  if (mode === 'patch') {
    if (input.content !== undefined) throw refuseKb.writeModeInput(mode, 'send the edits in patch, not content');
    if (input.patch === undefined) throw refuseKb.writeModeInput(mode, 'patch (a list of find/replace edits) is required');
    checkPatch(input.patch);
    return { ...prepared, content: undefined, edits: input.patch };
  }
  if (input.patch !== undefined) throw refuseKb.writeModeInput(mode, 'patch is only for mode patch');
  if (input.content === undefined) throw refuseKb.writeModeInput(mode, 'content is required');
  // A string of more UTF-16 units than the limit has more bytes than it too; skip encoding it.
  if (input.content.length > KB_TEXT_MAX_BYTES) throw refuseKb.fileTooLarge(Buffer.byteLength(input.content, 'utf8'), KB_TEXT_MAX_BYTES);
  const content = Buffer.from(input.content, 'utf8');
  checkSize(content.length);
  checkIntegrity(prepared, content, 'content');
  return { ...prepared, content, edits: [] };
}

/** How often an unguarded append or patch is recomputed when other writers keep moving the head. */
export const WRITE_ATTEMPTS = 12;

/** Full jitter, doubling from 5 ms up to 200 ms: concurrent appenders stop colliding quickly. */
const retryDelay = (attempt: number): number => Math.random() * Math.min(200, 5 * 2 ** attempt);

/**
 * Carries out a prepared write in a KB the caller was found to hold Editor on (`kbId`, its id;
 * the role is checked again, with the KB locked, in the write's transaction). create and
 * overwrite store the sent bytes; append and patch compute the new file from the head they
 * read and save it only if that head is still the current one, recomputing on the new head
 * when it is not (unless they carry an if_match, which names that one head only).
 */
export async function applyWrite(stores: KbStores, caller: Caller, kbId: string, write: PreparedWrite, audit: AuditTrail): Promise<WriteResult> {
  const tenantId = caller.tenant.id;
  const inTx = <T>(work: (tx: Transaction) => Promise<T>): Promise<T> =>
    stores.db.tx(async (tx) => {
      await kbFor(tx, caller, kbId, 'editor', 'writing files', { lock: 'share' });
      return work(tx);
    });
  const version = (bytes: Buffer, sha256: string, operation: FileOperation): NextVersion => ({
    path: write.path,
    sha256,
    sizeBytes: bytes.length,
    mediaType: mediaTypeOf(write.path),
    kind: 'text',
    operation,
    tags: tagsOf(mediaTypeOf(write.path), bytes),
  });

  if (write.mode === 'create' || write.mode === 'overwrite') {
    const bytes = write.content ?? Buffer.alloc(0);
    const sha256 = sha256Of(bytes);
    await stores.blob.put({ body: bytes, size: bytes.length, sha256 });
    return inTx(async (tx) => {
      if (write.mode === 'create')
        return { file: await saveVersion(tx, caller, kbId, undefined, version(bytes, sha256, 'create'), audit), changed: true, operation: 'create' };
      const head = await findFile(tx, tenantId, kbId, { path: write.path }, { lock: true });
      requireText(head);
      checkIfMatch(head, write.ifMatch);
      if (head.sha256 === sha256) return { file: head, changed: false, operation: 'overwrite' };
      return { file: await saveVersion(tx, caller, kbId, head, version(bytes, sha256, 'overwrite'), audit), changed: true, operation: 'overwrite' };
    });
  }

  const operation = write.mode;
  for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt += 1) {
    if (attempt > 0) await sleep(retryDelay(attempt));
    const base = await findFile(stores.db, tenantId, kbId, { path: write.path });
    requireText(base);
    checkIfMatch(base, write.ifMatch);
    let bytes: Buffer;
    if (operation === 'append') {
      bytes = Buffer.concat([await bytesOf(stores.blob, base.sha256), write.content ?? Buffer.alloc(0)]);
      checkSize(bytes.length);
    } else {
      bytes = Buffer.from(applyPatch(await textOf(stores.blob, base), write.edits, write.ifMatch !== undefined, KB_TEXT_MAX_BYTES), 'utf8');
      checkSize(bytes.length);
      checkIntegrity(write, bytes, 'the patched file');
    }
    const sha256 = sha256Of(bytes);
    if (sha256 === base.sha256) return { file: base, changed: false, operation };
    await stores.blob.put({ body: bytes, size: bytes.length, sha256 });
    const saved = await inTx(async (tx) => {
      const head = await findFile(tx, tenantId, kbId, { path: write.path }, { lock: true });
      if (head.id !== base.id || head.version !== base.version) {
        // Someone saved in between: a guarded write was meant for the head it named only.
        checkIfMatch(head, write.ifMatch);
        return undefined;
      }
      return saveVersion(tx, caller, kbId, head, version(bytes, sha256, operation), audit);
    });
    if (saved !== undefined) return { file: saved, changed: true, operation };
  }
  throw refuseKb.writeContended(WRITE_ATTEMPTS);
}

/** write_file (Editor): one write, checked, then applied. */
export async function writeFile(stores: KbStores, caller: Caller, input: { kbId: string } & WriteInput, audit: AuditTrail): Promise<WriteResult> {
  const write = prepareWrite(input);
  // Refuse a caller without Editor before any bytes reach the blob store.
  const { kb } = await kbFor(stores.db, caller, input.kbId, 'editor', 'writing files');
  return applyWrite(stores, caller, kb.id, write, audit);
}

// ---------------------------------------------------------------------------------------------
// Moving, restoring and deleting

export interface MoveResult {
  readonly file: KbFile;
  readonly fromPath: string;
  readonly changed: boolean;
}

/** move_file (Editor): a new path for the file, as a version of its own; `conflict` when a live file holds the target. No if_match, as the spec says. */
export async function moveFile(stores: KbStores, caller: Caller, input: { kbId: string; toPath: string } & FileRef, audit: AuditTrail): Promise<MoveResult> {
  const ref = parseRef(input);
  const to = parseKbPath(input.toPath, 'to_path');
  const tenantId = caller.tenant.id;
  try {
    return await stores.db.tx(async (tx) => {
      const { kb } = await kbFor(tx, caller, input.kbId, 'editor', 'moving files', { lock: 'share' });
      const head = await findFile(tx, tenantId, kb.id, ref, { lock: true });
      if (head.path === to) return { file: head, fromPath: head.path, changed: false };
      const taken = await tx.query('SELECT 1 FROM kb_files WHERE tenant_id = $1 AND kb_id = $2 AND path = $3 AND deleted_at IS NULL', [tenantId, kb.id, to]);
      if (taken.length > 0) throw refuseKb.fileExists(to);
      const mediaType = head.kind === 'text' ? mediaTypeOf(to) : head.mediaType;
      // The tags follow the media type: a file renamed to or from Markdown gains or loses them.
      const tags = mediaType === head.mediaType ? head.tags : tagsOf(mediaType, await bytesOf(stores.blob, head.sha256));
      const moved = await saveVersion(
        tx,
        caller,
        kb.id,
        head,
        {
          path: to,
          sha256: head.sha256,
          sizeBytes: head.sizeBytes,
          mediaType,
          kind: head.kind,
          operation: 'move',
          tags,
        },
        audit,
      );
      return { file: moved, fromPath: head.path, changed: true };
    });
  } catch (error) {
    // Two moves to one free path at once: the index lets one of them through.
    if (isUniqueViolation(error, 'kb_files_live_path')) throw refuseKb.fileExists(to);
    throw error;
  }
}

/** restore_version (Editor): a new head holding what an older version held, at the file's current path; if_match guards the head. */
export async function restoreVersion(
  stores: KbStores,
  caller: Caller,
  input: { kbId: string; version: number; ifMatch: string } & FileRef,
  audit: AuditTrail,
): Promise<WriteResult & { readonly restoredFrom: number }> {
  const ref = parseRef(input);
  if (!Number.isSafeInteger(input.version) || input.version < 1) throw refuseKb.invalidField('version', 'must be a whole number from 1');
  const ifMatch = parseSha('if_match', input.ifMatch);
  const tenantId = caller.tenant.id;
  return stores.db.tx(async (tx) => {
    const { kb } = await kbFor(tx, caller, input.kbId, 'editor', 'restoring versions', { lock: 'share' });
    const head = await findFile(tx, tenantId, kb.id, ref, { lock: true });
    checkIfMatch(head, ifMatch);
    // Compared as bigint: a version beyond the column's integer range is one the file does not have, not an overflow.
    const [old] = await tx.query<{ sha256: string; size_bytes: string | number; media_type: string }>(
      'SELECT sha256, size_bytes, media_type FROM kb_file_versions WHERE tenant_id = $1 AND file_id = $2 AND version = $3::bigint',
      [tenantId, head.id, input.version],
    );
    if (old === undefined) throw refuseKb.fileVersionNotFound(input.version);
    if (old.sha256 === head.sha256) return { file: head, changed: false, operation: 'restore', restoredFrom: input.version };
    const mediaType = head.kind === 'text' ? head.mediaType : old.media_type;
    const restored = await saveVersion(
      tx,
      caller,
      kb.id,
      head,
      {
        path: head.path,
        sha256: old.sha256,
        sizeBytes: Number(old.size_bytes),
        mediaType,
        kind: head.kind,
        operation: 'restore',
        restoredFrom: input.version,
        tags: head.kind === 'text' ? tagsOf(mediaType, await bytesOf(stores.blob, old.sha256)) : [],
      },
      audit,
    );
    return { file: restored, changed: true, operation: 'restore', restoredFrom: input.version };
  });
}

/**
 * delete_file (Admin): once `confirm` is the file's current path, a soft delete: the head is
 * marked deleted (its path is free again) and a `delete` version closes its history, which
 * stays readable to Admins through file_history by file_id.
 */
export async function deleteFile(stores: KbStores, caller: Caller, input: { kbId: string; confirm: string } & FileRef, audit: AuditTrail): Promise<KbFile> {
  const ref = parseRef(input);
  const tenantId = caller.tenant.id;
  return stores.db.tx(async (tx) => {
    const { kb } = await kbFor(tx, caller, input.kbId, 'admin', 'deleting files', { lock: 'share' });
    const head = await findFile(tx, tenantId, kb.id, ref, { lock: true });
    if (input.confirm !== head.path) throw refuseKb.confirmation('confirm', head.path, 'delete this file');
    return saveVersion(
      tx,
      caller,
      kb.id,
      head,
      { path: head.path, sha256: head.sha256, sizeBytes: head.sizeBytes, mediaType: head.mediaType, kind: head.kind, operation: 'delete', tags: head.tags },
      audit,
    );
  });
}
