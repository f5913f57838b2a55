import type { Caller } from '../../kernel/access/caller.ts';
import type { AuditTrail } from '../../kernel/audit/trail.ts';
import type { Queryable } from '../../store/db.ts';
import type { KbWithAccess } from './access.ts';
import { kbFor } from './access.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import type { FileRef } from './files.ts';
import { findFile, parseRef } from './files.ts';
import { parseKbPathPrefix } from './paths.ts';
import type { FileKind, FileRow, FileVersionRow, KbFile, KbFileVersion } from './queries.ts';
import { FILE_COLUMNS, FILE_KINDS, VERSION_COLUMNS, VERSION_FROM, toFile, toFileVersion } from './queries.ts';
import { refuseKb } from './refusals.ts';
import { TAG_MAX_CHARS } from './text/front-matter.ts';

/**
 * Reading a KB's catalog and a file's history, a page at a time: list_files (every live file,
 * by path prefix and kind, in the order asked) and file_history (a file's versions, newest
 * first). Pages are bounded and continue with an opaque cursor, stable while files change:
 * each page starts after the last entry of the one before.
 */

export const LIST_LIMIT_DEFAULT = 100;
export const LIST_LIMIT_MAX = 500;
export const HISTORY_LIMIT_DEFAULT = 20;
export const HISTORY_LIMIT_MAX = 100;

export const FILE_SORTS = ['path', 'updated_at', 'size'] as const;
export type FileSort = (typeof FILE_SORTS)[number];
export type SortOrder = 'asc' | 'desc';

function checkLimit(limit: number | undefined, fallback: number, max: number): number {
  if (limit === undefined) return fallback;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > max) throw refuseKb.invalidField('limit', `must be a whole number from 1 to ${max}`);
  return limit;
}

export interface ListFilesInput {
  readonly kbId: string;
  readonly pathPrefix?: string | undefined;
  readonly kind?: FileKind | undefined;
  /** Only files carrying this front-matter tag, compared case-insensitively (tags are deduplicated so). */
  readonly tag?: string | undefined;
  readonly sort?: FileSort | undefined;
  readonly order?: SortOrder | undefined;
  readonly limit?: number | undefined;
  readonly cursor?: string | undefined;
}

/**
 * Where an Asset's Companion text comes from, when the catalog knows: `writer`, the description
 * its writer gave an image (upload_file, update_file); `extracted`, the text read out of a PDF;
 * `none`, an image nobody described or a PDF with no text to read (a scan, or one that could not
 * be opened). A text file, and an Asset without a Companion (other binary files), have none.
 */
export const DESCRIPTION_SOURCES = ['writer', 'extracted', 'none'] as const;
export type DescriptionSource = (typeof DESCRIPTION_SOURCES)[number];

export interface ListedFile extends KbFile {
  readonly descriptionSource: DescriptionSource | undefined;
}

// Read from the head version's Asset row; octet_length does not fetch a PDF's text to look at it.
const DESCRIPTION_SOURCE_SQL = `CASE WHEN a.format IS NULL THEN NULL WHEN octet_length(a.companion) = 0 THEN 'none'
                                     WHEN a.format = 'pdf' THEN 'extracted' ELSE 'writer' END`;

export interface FilePage {
  readonly kb: KbWithAccess;
  readonly files: readonly ListedFile[];
  /** Continues after the last file of this page; undefined on the last page. */
  readonly nextCursor: string | undefined;
}

// The sort key of each order as SQL, and as the text a cursor keeps of it (timestamps to the
// microsecond, which a JavaScript Date would cut to milliseconds).
const SORT_SQL: Readonly<Record<Exclude<FileSort, 'path'>, { column: string; cursor: string; cast: string }>> = {
  updated_at: { column: 'f.updated_at', cursor: 'f.updated_at::text', cast: 'timestamptz' },
  size: { column: 'f.size_bytes', cursor: 'f.size_bytes::text', cast: 'bigint' },
};

/** list_files (Viewer): the KB's live files under a path prefix, sorted, a page at a time. */
export async function listFiles(db: Queryable, caller: Caller, input: ListFilesInput, audit: AuditTrail): Promise<FilePage> {
  const prefix = parseKbPathPrefix(input.pathPrefix ?? '');
  const sort = input.sort ?? 'path';
  const order = input.order ?? 'asc';
  if (!(FILE_SORTS as readonly string[]).includes(sort)) throw refuseKb.invalidField('sort', `must be one of ${FILE_SORTS.join(', ')}`);
  if (order !== 'asc' && order !== 'desc') throw refuseKb.invalidField('order', 'must be asc or desc');
  if (input.kind !== undefined && !(FILE_KINDS as readonly string[]).includes(input.kind)) throw refuseKb.invalidField('kind', 'must be text or asset');
  const limit = checkLimit(input.limit, LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX);
  const tag = input.tag === undefined ? null : parseTag(input.tag);
  const query = JSON.stringify([prefix, input.kind ?? null, sort, order, tag]);
  const after = input.cursor === undefined ? undefined : decodeCursor(input.cursor, query, sort === 'path' ? ['string'] : ['string', 'string']);
  const kb = await kbFor(db, caller, input.kbId, 'viewer', 'listing files');

  const params: unknown[] = [caller.tenant.id, kb.kb.id, prefix, input.kind ?? null, tag];
  const direction = order === 'asc' ? 'ASC' : 'DESC';
  const beyond = order === 'asc' ? '>' : '<';
  const keyed = sort === 'path' ? undefined : SORT_SQL[sort];
  let position = '';
  if (after !== undefined) {
    params.push(...after);
    position = keyed === undefined ? `AND f.path ${beyond} $6` : `AND (${keyed.column}, f.path) ${beyond} ($6::${keyed.cast}, $7::text COLLATE "C")`;
  }
  params.push(limit + 1);
  const rows = await db.query<FileRow & { sort_key: string; description_source: DescriptionSource | null }>(
    `SELECT ${FILE_COLUMNS}, ${keyed === undefined ? 'f.path' : keyed.cursor} AS sort_key, ${DESCRIPTION_SOURCE_SQL} AS description_source
       FROM kb_files f
       LEFT JOIN kb_file_assets a ON a.tenant_id = f.tenant_id AND a.file_id = f.id AND a.version = f.latest_version
      WHERE f.tenant_id = $1 AND f.kb_id = $2 AND f.deleted_at IS NULL
        AND starts_with(f.path, $3) AND ($4::text IS NULL OR f.kind = $4)
        AND ($5::text IS NULL OR EXISTS (SELECT 1 FROM unnest(f.tags) AS t (tag) WHERE lower(t.tag) = lower($5)))
        ${position}
      ORDER BY ${keyed === undefined ? '' : `${keyed.column} ${direction}, `}f.path ${direction}
      LIMIT $${params.length}`,
    params,
  );
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  audit.touch({ type: 'kb', id: kb.kb.id });
  return {
    kb,
    files: page.map((row) => ({ ...toFile(row), descriptionSource: row.description_source ?? undefined })),
    nextCursor: rows.length > limit && last !== undefined ? encodeCursor(query, keyed === undefined ? [last.path] : [last.sort_key, last.path]) : undefined,
  };
}

/**
 * A tag filter as normaliseTags would have kept it (NFC, trimmed, inner whitespace one space);
 * `validation` when nothing is left or it is longer than any tag can be. The match folds case in
 * the store (lower() on both sides), so the two sides are folded alike.
 */
function parseTag(raw: string): string {
  const tag = raw.normalize('NFC').trim().replace(/\s+/gu, ' ');
  if (tag === '') throw refuseKb.invalidField('tag', 'must not be empty');
  if (tag.length > TAG_MAX_CHARS) throw refuseKb.invalidField('tag', `must be at most ${TAG_MAX_CHARS} characters, as tags are`);
  return tag;
}

export interface FileHistoryInput extends FileRef {
  readonly kbId: string;
  readonly limit?: number | undefined;
  readonly cursor?: string | undefined;
}

export interface HistoryPage {
  readonly kb: KbWithAccess;
  readonly file: KbFile;
  readonly versions: readonly KbFileVersion[];
  readonly nextCursor: string | undefined;
}

/**
 * file_history (Viewer): the file's retained versions, newest first. Every version is
 * retained. A deleted file's history is for Admins only, by file_id (its path may be another
 * file's now); to everyone else it does not exist.
 */
export async function fileHistory(db: Queryable, caller: Caller, input: FileHistoryInput, audit: AuditTrail): Promise<HistoryPage> {
  const ref = parseRef(input);
  const limit = checkLimit(input.limit, HISTORY_LIMIT_DEFAULT, HISTORY_LIMIT_MAX);
  const kb = await kbFor(db, caller, input.kbId, 'viewer', 'reading file history');
  const file = await findFile(db, caller.tenant.id, kb.kb.id, ref, { deleted: true });
  // Only an id finds a deleted file.
  if (file.deletedAt !== undefined && kb.access !== 'admin') throw refuseKb.fileNotFound('given' in ref ? ref.given : file.path);
  const query = file.id;
  const [before] = input.cursor === undefined ? [file.version + 1] : decodeCursor(input.cursor, query, ['number']);
  const rows = await db.query<FileVersionRow>(
    `SELECT ${VERSION_COLUMNS} FROM ${VERSION_FROM}
      WHERE v.tenant_id = $1 AND v.file_id = $2 AND v.version < $3
      ORDER BY v.version DESC LIMIT $4`,
    [caller.tenant.id, file.id, before, limit + 1],
  );
  const versions = rows.slice(0, limit).map(toFileVersion);
  const last = versions.at(-1);
  audit.touch({ type: 'kb_file', id: file.id, version: file.version });
  return { kb, file, versions, nextCursor: rows.length > limit && last !== undefined ? encodeCursor(query, [last.version]) : undefined };
}
