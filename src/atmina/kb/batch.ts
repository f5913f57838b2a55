import type { Caller } from '../../kernel/access/caller.ts';
import type { AuditTrail } from '../../kernel/audit/trail.ts';
import type { KgwError } from '../../kernel/errors.ts';
import { mapInParallel } from '../../kernel/concurrency.ts';
import { isKgwError } from '../../kernel/errors.ts';
import { kbFor } from './access.ts';
import type { KbStores } from './files.ts';
import type { WriteResult } from './file-versions.ts';
import type { PreparedWrite, WriteInput } from './file-writes.ts';
import { applyWrite, prepareWrite } from './file-writes.ts';
import { refuseKb } from './refusals.ts';

/**
 * write_files: up to 50 writes to one KB in one call, each with its own result. A failed item
 * does not stop the others; only a batch that names one path twice in a way that cannot be
 * ordered is refused whole (docs/atmina.md, "Batches"). Items of different paths run side by
 * side, at most `concurrency` at a time; items of one path run one after the other, in the
 * order given, each guarded by the SHA-256 the item before it produced (given as its if_match,
 * or carried forward).
 */

export const BATCH_ITEMS_MAX = 50;
export const BATCH_CONCURRENCY_MAX = 5;

export type BatchItemResult =
  | { readonly index: number; readonly path: string; readonly ok: true; readonly result: WriteResult }
  | { readonly index: number; readonly path: string; readonly ok: false; readonly error: KgwError };

export interface WriteFilesInput {
  readonly kbId: string;
  readonly items: readonly WriteInput[];
  /** Items applied at once, 1 to 5 (default 5). */
  readonly concurrency?: number | undefined;
}

type Prepared = { readonly index: number; readonly write: PreparedWrite } | { readonly index: number; readonly path: string; readonly error: KgwError };

/**
 * A path may appear more than once only as ordered edits of one file: its first item may be
 * any mode, and every later one must be an append or a patch, or an overwrite carrying if_match.
 * Each later item is guarded by the hash the item before produced: carried forward when it has
 * no if_match, and compared with its if_match when it has one (the spec: "apply multiple edits
 * to one path sequentially, carrying each new hash forward"). An overwrite without if_match
 * would discard the item before unread, and a create cannot follow a write of its path: either
 * is a duplicate path, and the batch is refused whole, nothing written. Items whose own input is
 * wrong take no part.
 */
function orderedGroups(prepared: readonly Prepared[]): Map<string, { index: number; write: PreparedWrite }[]> {
  const groups = new Map<string, { index: number; write: PreparedWrite }[]>();
  for (const item of prepared) {
    if (!('write' in item)) continue;
    const group = groups.get(item.write.path) ?? [];
    group.push({ index: item.index, write: item.write });
    groups.set(item.write.path, group);
  }
  for (const [path, group] of groups) {
    const later = group.slice(1);
    if (later.some(({ write }) => write.mode === 'create' || (write.mode === 'overwrite' && write.ifMatch === undefined)))
      throw refuseKb.batchDuplicatePath(
        path,
        group.map((g) => g.index),
      );
  }
  return groups;
}

/** What write_files did: the KB's id and one result per item, in the order of the items. */
export interface BatchResult {
  readonly kbId: string;
  readonly results: readonly BatchItemResult[];
}

export async function writeFiles(stores: KbStores, caller: Caller, input: WriteFilesInput, audit: AuditTrail): Promise<BatchResult> {
  if (input.items.length === 0 || input.items.length > BATCH_ITEMS_MAX) throw refuseKb.batchBounds('items', BATCH_ITEMS_MAX);
  const concurrency = input.concurrency ?? BATCH_CONCURRENCY_MAX;
  if (!Number.isSafeInteger(concurrency) || concurrency < 1 || concurrency > BATCH_CONCURRENCY_MAX)
    throw refuseKb.batchBounds('concurrency', BATCH_CONCURRENCY_MAX);
  const prepared: Prepared[] = input.items.map((item, index) => {
    try {
      return { index, write: prepareWrite(item) };
    } catch (error) {
      if (!isKgwError(error)) throw error;
      return { index, path: item.path, error };
    }
  });
  const groups = [...orderedGroups(prepared).values()];
  // The whole call needs Editor; checked once before any bytes are stored, and again by each write.
  const { kb } = await kbFor(stores.db, caller, input.kbId, 'editor', 'writing files');

  const results: BatchItemResult[] = prepared.flatMap((item) =>
    'error' in item ? [{ index: item.index, path: item.path, ok: false, error: item.error }] : [],
  );
  const runGroup = async (group: readonly { index: number; write: PreparedWrite }[]): Promise<void> => {
    // The SHA-256 the item before left at the path, and that item's index.
    let carried: { readonly sha256: string; readonly index: number } | undefined;
    let failed: number | undefined;
    for (const { index, write } of group) {
      if (failed !== undefined) {
        results.push({ index, path: write.path, ok: false, error: refuseKb.batchItemSkipped(failed) });
        continue;
      }
      // A chained if_match names the result of the item before; another hash is the caller's stale
      // chain, refused before anything is written (and the later items of the path with it).
      if (carried !== undefined && write.ifMatch !== undefined && write.ifMatch !== carried.sha256) {
        failed = index;
        results.push({ index, path: write.path, ok: false, error: refuseKb.batchChainMismatch(carried.index, carried.sha256) });
        continue;
      }
      try {
        const result = await applyWrite(stores, caller, kb.id, carried === undefined ? write : { ...write, ifMatch: carried.sha256 }, audit);
        carried = { sha256: result.file.sha256, index };
        results.push({ index, path: write.path, ok: true, result });
      } catch (error) {
        if (!isKgwError(error)) throw error;
        failed = index;
        results.push({ index, path: write.path, ok: false, error });
      }
    }
  };
  // After an unexpected failure (not a refusal, which stays with its group) no further group
  // starts: the call fails, and writing more of it then would only add writes its caller was
  // told failed.
  await mapInParallel(groups, concurrency, runGroup);
  return { kbId: kb.id, results: results.sort((a, b) => a.index - b.index) };
}
