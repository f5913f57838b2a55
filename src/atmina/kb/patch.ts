import { refuseKb } from './refusals.ts';

/**
 * Find-and-replace edits of a text file (write_file's `patch` mode), applied in order, each to
 * the text the edits before it left. An edit replaces exactly the text it finds: never a nearest
 * match, never a fuzzy one. When its find text occurs more than once, the edit must say which
 * occurrence (1-based) or `all`.
 */

export interface PatchEdit {
  readonly find: string;
  readonly replace: string;
  /** Which occurrence to replace when there are several: 1-based, or every one. */
  readonly occurrence?: number | 'all' | undefined;
}

export const PATCH_EDITS_MAX = 50;

/** Where each non-overlapping occurrence of `find` starts, left to right. */
function occurrences(text: string, find: string): number[] {
  const starts: number[] = [];
  for (let at = text.indexOf(find); at !== -1; at = text.indexOf(find, at + find.length)) starts.push(at);
  return starts;
}

/** Checks the edits' own shape (before any file is read): `validation` naming the edit. */
export function checkPatch(edits: readonly PatchEdit[]): void {
  if (edits.length === 0 || edits.length > PATCH_EDITS_MAX) throw refuseKb.writeModeInput('patch', `patch must hold 1 to ${PATCH_EDITS_MAX} edits`);
  edits.forEach((edit, index) => {
    if (edit.find === '') throw refuseKb.writeModeInput('patch', `patch[${index}].find must not be empty`);
    const n = edit.occurrence;
    if (n !== undefined && n !== 'all' && (!Number.isSafeInteger(n) || n < 1))
      throw refuseKb.writeModeInput('patch', `patch[${index}].occurrence must be a whole number from 1, or "all"`);
  });
}

/**
 * The text after every edit. `guarded`: the caller named the version it edits (if_match), so a
 * find text that is not there is its own mistake (`validation`); unguarded, the file may have
 * changed since it was read (`conflict`: read it again).
 *
 * `maxBytes` bounds the text after *each* edit, checked before the edit's string is built: an
 * edit list that doubles the text per edit would otherwise build strings past V8's limit (the
 * process aborts) long before a check of the final size. Each edit scans a text of at most
 * `maxBytes`, so a whole list costs at most PATCH_EDITS_MAX scans of that size.
 */
export function applyPatch(text: string, edits: readonly PatchEdit[], guarded: boolean, maxBytes: number): string {
  let result = text;
  let bytes = Buffer.byteLength(text, 'utf8');
  edits.forEach((edit, index) => {
    const starts = occurrences(result, edit.find);
    if (starts.length === 0) throw refuseKb.patchFindMissing(index, guarded);
    const all = edit.occurrence === 'all';
    if (!all && edit.occurrence === undefined && starts.length > 1) throw refuseKb.patchFindAmbiguous(index, starts.length);
    const at = all ? 0 : starts[(edit.occurrence ?? 1) - 1];
    if (at === undefined) throw refuseKb.patchFindAmbiguous(index, starts.length);
    // Exact: the arguments and the stored text hold no lone surrogates, so find matches whole code points.
    const next = bytes + (all ? starts.length : 1) * (Buffer.byteLength(edit.replace, 'utf8') - Buffer.byteLength(edit.find, 'utf8'));
    if (next > maxBytes) throw refuseKb.fileTooLarge(next, maxBytes);
    result = all ? result.split(edit.find).join(edit.replace) : result.slice(0, at) + edit.replace + result.slice(at + edit.find.length);
    bytes = next;
  });
  return result;
}
