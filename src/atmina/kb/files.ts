import { createHash } from 'node:crypto';
import type { BlobStore } from '../../../connectors/blob/contract.ts';
import { readBlobBytes } from '../../../connectors/blob/contract.ts';
import type { Caller } from '../../kernel/access/caller.ts';
import type { AuditTrail } from '../../kernel/audit/trail.ts';
import type { Db, Queryable } from '../../store/db.ts';
import { isUniqueViolation } from '../../store/db.ts';
import type { KbWithAccess } from './access.ts';
import { kbFor } from './access.ts';
import type { WriteResult } from './file-versions.ts';
import { saveVersion } from './file-versions.ts';
import { mediaTypeOf, parseKbPath } from './paths.ts';
import { parseFrontMatter } from './text/front-matter.ts';
import type { FileRow, KbFile } from './queries.ts';
import { FILE_COLUMNS, toFile } from './queries.ts';
import type { AssetRecord } from './asset-rows.ts';
import { readAsset } from './asset-rows.ts';
import { refuseKb } from './refusals.ts';

/**
 * Files of a Knowledge Base, text files and Assets alike: naming one (by path or id) and finding
 * it, its bytes and text, reading it (read_file), and the changes that keep its bytes: moving,
 * restoring an old version and deleting. Writing text is file-writes.ts; every change saves its
 * version through file-versions.ts, the one write path. docs/atmina.md has the rules and the
 * decisions behind them.
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

export function requireText(file: KbFile): void {
  if (file.kind !== 'text') throw refuseKb.fileNotText(file.kind);
}

export const sha256Of = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

// Files are kept as sent: a byte-order mark at the start is content, not dropped.
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** A text file's head as UTF-8 text; `validation` for an Asset. */
export async function textOf(blob: BlobStore, file: KbFile): Promise<string> {
  requireText(file);
  try {
    return UTF8.decode(await readBlobBytes(blob, file.sha256));
  } catch (error) {
    if (error instanceof TypeError) throw refuseKb.fileNotText('asset');
    throw error;
  }
}

const LOSSY_UTF8 = new TextDecoder('utf-8', { fatal: false });

/**
 * The tags a version of a text file carries in the catalog: its front matter's, for Markdown
 * (text/front-matter.ts); other files have none.
 */
export function tagsOf(mediaType: string, bytes: Buffer): readonly string[] {
  return mediaType === 'text/markdown' ? parseFrontMatter(LOSSY_UTF8.decode(bytes)).tags : [];
}

/** An if_match or content_sha256 as given: 64 hex digits, either case. */
export function parseSha(field: string, value: string): string {
  if (!SHA256.test(value)) throw refuseKb.invalidField(field, 'must be a SHA-256 as 64 hex digits');
  return value.toLowerCase();
}

export function checkIfMatch(file: KbFile, ifMatch: string | undefined): void {
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
  return readBlobBytes(blob, file.sha256);
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
      const tags = mediaType === head.mediaType ? head.tags : tagsOf(mediaType, await readBlobBytes(stores.blob, head.sha256));
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
        tags: head.kind === 'text' ? tagsOf(mediaType, await readBlobBytes(stores.blob, old.sha256)) : [],
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
