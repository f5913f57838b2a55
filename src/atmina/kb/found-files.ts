import type { Queryable } from '../../store/db.ts';
import type { FileRow, KbFile } from './queries.ts';
import { FILE_COLUMNS, toFile } from './queries.ts';

/*
 * The KB files a search or a walk of references found, read back by id as the store holds them
 * now: what `search` and `related` show of each (its live path and version, its asset).
 */

/** The live files of one KB among `ids`, by id; a file deleted or moved out of the KB since is absent. */
export async function liveFilesById(q: Queryable, tenantId: string, kbId: string, ids: readonly string[]): Promise<Map<string, KbFile>> {
  if (ids.length === 0) return new Map();
  const rows = await q.query<FileRow>(
    `SELECT ${FILE_COLUMNS} FROM kb_files f WHERE f.tenant_id = $1 AND f.kb_id = $2 AND f.id = ANY($3::uuid[]) AND f.deleted_at IS NULL`,
    [tenantId, kbId, [...new Set(ids)]],
  );
  return new Map(rows.map((row) => [row.id, toFile(row)]));
}

/** The files among `ids` (of any KB of the tenant) that are assets: pictures and PDFs. */
export async function assetFilesById(q: Queryable, tenantId: string, ids: readonly string[]): Promise<KbFile[]> {
  if (ids.length === 0) return [];
  const rows = await q.query<FileRow>(`SELECT ${FILE_COLUMNS} FROM kb_files f WHERE f.tenant_id = $1 AND f.id = ANY($2::uuid[]) AND f.kind = 'asset'`, [
    tenantId,
    ids,
  ]);
  return rows.map(toFile);
}
