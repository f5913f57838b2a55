import { setTimeout as sleep } from 'node:timers/promises';
import { readBlobBytes } from '../../../connectors/blob/contract.ts';
import type { Caller } from '../../kernel/access/caller.ts';
import type { AuditTrail } from '../../kernel/audit/trail.ts';
import type { Transaction } from '../../store/db.ts';
import { kbFor } from './access.ts';
import type { NextVersion, WriteResult } from './file-versions.ts';
import { saveVersion } from './file-versions.ts';
import type { KbStores } from './files.ts';
import { KB_TEXT_MAX_BYTES, checkIfMatch, findFile, parseSha, requireText, sha256Of, tagsOf, textOf } from './files.ts';
import type { PatchEdit } from './patch.ts';
import { applyPatch, checkPatch } from './patch.ts';
import { mediaTypeOf, parseKbPath } from './paths.ts';
import type { FileOperation } from './queries.ts';
import { refuseKb } from './refusals.ts';

/**
 * Writing text files of a Knowledge Base: write_file's four modes (create, overwrite, append,
 * patch), checked on their own first (prepareWrite) and then carried out (applyWrite), as
 * write_files does for each of its writes (batch.ts). Writers of one file are serialised on its
 * head row and compare its SHA-256, so no update is lost. docs/atmina.md has the rules.
 */

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
      bytes = Buffer.concat([await readBlobBytes(stores.blob, base.sha256), write.content ?? Buffer.alloc(0)]);
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
