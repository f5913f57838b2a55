import { refuseKb } from './refusals.ts';

/**
 * Page cursors of list_files and file_history: opaque to callers, base64url JSON to us. A cursor
 * carries the query it belongs to, so one taken from a listing with other filters or another
 * order is refused instead of silently skipping or repeating entries.
 */

export function encodeCursor(query: string, position: readonly (string | number)[]): string {
  return Buffer.from(JSON.stringify({ q: query, p: position }), 'utf8').toString('base64url');
}

/** The position a cursor holds for this query; `validation` for anything else. */
export function decodeCursor(cursor: string, query: string, shape: readonly ('string' | 'number')[]): (string | number)[] {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw refuseKb.invalidCursor();
  }
  if (typeof decoded !== 'object' || decoded === null || !('q' in decoded) || !('p' in decoded)) throw refuseKb.invalidCursor();
  const { q, p } = decoded;
  if (q !== query || !Array.isArray(p) || p.length !== shape.length) throw refuseKb.invalidCursor();
  const items: readonly unknown[] = p;
  const position = items.filter((value, at): value is string | number => typeof value === shape[at]);
  if (position.length !== shape.length) throw refuseKb.invalidCursor();
  return position;
}
