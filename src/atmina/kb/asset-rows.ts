import type { Queryable } from '../../store/db.ts';
import type { AssetFormat } from './assets/detect.ts';
import type { FailureReason } from './assets/failure.ts';

/**
 * The rows of kb_file_assets: what is known of an image or PDF Asset at one version of its
 * file (format, size, pages, whether its content could be read) and its Companion text.
 */

export interface AssetRecord {
  readonly format: AssetFormat;
  readonly width: number | undefined;
  readonly height: number | undefined;
  readonly pages: number | undefined;
  readonly state: 'ready' | 'failed';
  readonly reason: FailureReason | undefined;
  readonly companion: string;
  readonly truncated: boolean;
}

interface AssetRow {
  format: AssetFormat;
  width: number | null;
  height: number | null;
  pages: number | null;
  state: 'ready' | 'failed';
  reason: FailureReason | null;
  companion: string;
  truncated: boolean;
}

const ASSET_COLUMNS = 'a.format, a.width, a.height, a.pages, a.state, a.reason, a.companion, a.truncated';

function toAsset(row: AssetRow): AssetRecord {
  return {
    format: row.format,
    width: row.width ?? undefined,
    height: row.height ?? undefined,
    pages: row.pages ?? undefined,
    state: row.state,
    reason: row.reason ?? undefined,
    companion: row.companion,
    truncated: row.truncated,
  };
}

export async function insertAsset(tx: Queryable, tenantId: string, fileId: string, version: number, asset: AssetRecord): Promise<void> {
  await tx.query(
    `INSERT INTO kb_file_assets (tenant_id, file_id, version, format, width, height, pages, state, reason, companion, truncated)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
    [
      tenantId,
      fileId,
      version,
      asset.format,
      asset.width ?? null,
      asset.height ?? null,
      asset.pages ?? null,
      asset.state,
      asset.reason ?? null,
      asset.companion,
      asset.truncated,
    ],
  );
}

/**
 * Gives a version that keeps bytes an earlier version of the file had (a move, a restore, a
 * delete) what was known of those bytes then: the Companion is derived from the bytes alone.
 */
export async function copyAsset(tx: Queryable, tenantId: string, fileId: string, sha256: string, version: number): Promise<void> {
  await tx.query(
    `INSERT INTO kb_file_assets (tenant_id, file_id, version, format, width, height, pages, state, reason, companion, truncated)
     SELECT a.tenant_id, a.file_id, $4::int, ${ASSET_COLUMNS}
       FROM kb_file_assets a
       JOIN kb_file_versions v ON v.tenant_id = a.tenant_id AND v.file_id = a.file_id AND v.version = a.version
      WHERE a.tenant_id = $1 AND a.file_id = $2 AND v.sha256 = $3 AND a.version < $4
      ORDER BY a.version DESC
      LIMIT 1`,
    [tenantId, fileId, sha256, version],
  );
}

export async function readAsset(q: Queryable, tenantId: string, fileId: string, version: number): Promise<AssetRecord | undefined> {
  const [row] = await q.query<AssetRow>(`SELECT ${ASSET_COLUMNS} FROM kb_file_assets a WHERE a.tenant_id = $1 AND a.file_id = $2 AND a.version = $3`, [
    tenantId,
    fileId,
    version,
  ]);
  return row === undefined ? undefined : toAsset(row);
}
