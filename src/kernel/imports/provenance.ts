import { conflict, validation } from '../errors.ts';
import { unsafeName, unstorableText } from '../text.ts';
import type { Queryable } from '../../store/db.ts';

/**
 * Where an imported version came from (`kgw import mcp`, migration 0028): the source endpoint,
 * the item's id and version there, and its author and instant there as the source gave them.
 * A product saves it on the version it writes and, in the same transaction, records the item in
 * imported_items (source, kind, source id → local id, last version carried, content hash), so a
 * second run updates the same local item instead of making another, and an interrupted run
 * resumes after the last version it saved. The source is not trusted: every field is bounded
 * and checked, and what the source said is shown as what it said, never as a local person.
 */
export interface Provenance {
  /** The source endpoint's URL. */
  readonly source: string;
  /** The item's id at the source. */
  readonly sourceId: string;
  /** Its version there (a positive whole number). */
  readonly sourceVersion: number;
  /** Who wrote that version there, as the source named them. */
  readonly author?: string | undefined;
  /** When that version was written there (an ISO 8601 instant). */
  readonly at?: string | undefined;
}

/** Bounds on what a source may say about an item. */
export const PROVENANCE_SOURCE_MAX_BYTES = 2048;
export const PROVENANCE_ID_MAX_BYTES = 512;
export const PROVENANCE_AUTHOR_MAX_CHARS = 200;

/** What the tools show of it (`imported_from`). */
export interface ImportedFromWire {
  readonly source: string;
  readonly source_id: string;
  readonly source_version: number;
  readonly author: string | null;
  readonly at: string | null;
}

/** A provenance checked against the bounds, with a validation error naming the field otherwise. */
export function checkProvenance(value: Provenance): Provenance {
  const text = (field: string, given: string, maxBytes: number): void => {
    const problem = unstorableText(given) ?? unsafeName(given);
    if (problem !== undefined) throw validation(`provenance ${field} ${problem}`);
    if (given === '' || Buffer.byteLength(given, 'utf8') > maxBytes) throw validation(`provenance ${field} must be 1 to ${maxBytes} bytes`);
  };
  text('source', value.source, PROVENANCE_SOURCE_MAX_BYTES);
  text('source_id', value.sourceId, PROVENANCE_ID_MAX_BYTES);
  if (!Number.isSafeInteger(value.sourceVersion) || value.sourceVersion < 1 || value.sourceVersion > 2_147_483_647)
    throw validation('provenance source_version must be a positive whole number');
  let author: string | undefined;
  if (value.author !== undefined) {
    text('author', value.author, PROVENANCE_AUTHOR_MAX_CHARS * 4);
    author = [...value.author].slice(0, PROVENANCE_AUTHOR_MAX_CHARS).join('');
  }
  let at: string | undefined;
  if (value.at !== undefined) {
    const instant = new Date(value.at);
    if (!/^\d{4}-\d{2}-\d{2}T/.test(value.at) || Number.isNaN(instant.getTime())) throw validation('provenance at must be an ISO 8601 instant');
    at = instant.toISOString();
  }
  return { source: value.source, sourceId: value.sourceId, sourceVersion: value.sourceVersion, author, at };
}

/** The JSON a version's provenance column holds. */
export const provenanceJson = (value: Provenance): string => JSON.stringify(provenanceWire(value));

export const provenanceWire = (value: Provenance): ImportedFromWire => ({
  source: value.source,
  source_id: value.sourceId,
  source_version: value.sourceVersion,
  author: value.author ?? null,
  at: value.at ?? null,
});

/** The column as the tools show it, or undefined for a version no import saved. */
export function importedFrom(column: unknown): ImportedFromWire | undefined {
  const value: unknown = typeof column === 'string' ? JSON.parse(column) : column;
  if (typeof value !== 'object' || value === null) return undefined;
  const { source, source_id: sourceId, source_version: sourceVersion, author, at } = value as Record<string, unknown>;
  if (typeof source !== 'string' || typeof sourceId !== 'string' || typeof sourceVersion !== 'number') return undefined;
  return {
    source,
    source_id: sourceId,
    source_version: sourceVersion,
    author: typeof author === 'string' ? author : null,
    at: typeof at === 'string' ? at : null,
  };
}

export interface ImportedItem {
  readonly localId: string;
  readonly sourceVersion: number;
  readonly contentSha256: string;
}

/** The local item a source item was imported as, if any. */
export async function findImported(q: Queryable, tenantId: string, kind: string, source: string, sourceId: string): Promise<ImportedItem | undefined> {
  const [row] = await q.query<{ local_id: string; source_version: number; content_sha256: string }>(
    'SELECT local_id, source_version, content_sha256 FROM imported_items WHERE tenant_id = $1 AND source = $2 AND kind = $3 AND source_id = $4',
    [tenantId, source, kind, sourceId],
  );
  return row === undefined ? undefined : { localId: row.local_id, sourceVersion: Number(row.source_version), contentSha256: row.content_sha256 };
}

/** Said when another run imported the same source item as another local one first (a race of two imports). */
export const IMPORTED_ELSEWHERE = 'another import brought this item in at the same time';

/**
 * Records, in the transaction that saved the version, which local item a source item is and
 * what of it was carried last. With `claim` (the version that creates the local item), a source
 * item another transaction mapped to another local item first (two imports of it at once, each
 * creating) is a conflict: this transaction rolls back, and the importer tries again, finding
 * the other's item, so no item is imported twice.
 */
export async function recordImported(
  q: Queryable,
  tenantId: string,
  kind: string,
  localId: string,
  provenance: Provenance,
  contentSha256: string,
  options: { readonly claim?: boolean } = {},
): Promise<void> {
  const rows = await q.query<{ local_id: string }>(
    `INSERT INTO imported_items AS i (tenant_id, source, kind, source_id, local_id, source_version, content_sha256) VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (tenant_id, source, kind, source_id) DO UPDATE
       SET local_id = EXCLUDED.local_id, source_version = EXCLUDED.source_version, content_sha256 = EXCLUDED.content_sha256, imported_at = clock_timestamp()
       WHERE NOT $8 OR i.local_id = EXCLUDED.local_id
     RETURNING local_id`,
    [tenantId, provenance.source, kind, provenance.sourceId, localId, provenance.sourceVersion, contentSha256, options.claim === true],
  );
  if (rows.length === 0) throw conflict(IMPORTED_ELSEWHERE);
}

/** Forgets a source item whose local item is gone, so that importing it again creates one. */
export async function forgetImported(q: Queryable, tenantId: string, kind: string, source: string, sourceId: string): Promise<void> {
  await q.query('DELETE FROM imported_items WHERE tenant_id = $1 AND source = $2 AND kind = $3 AND source_id = $4', [tenantId, source, kind, sourceId]);
}

/** Source ids asked about at once (kgw import mcp asks per listing page). */
export const CARRIED_IDS_MAX = 1000;

/** For each of `sourceIds` an import brought here before: the local item and the last source version carried. */
export async function carriedVersions(
  q: Queryable,
  tenantId: string,
  kind: string,
  source: string,
  sourceIds: readonly string[],
): Promise<Map<string, { readonly localId: string; readonly sourceVersion: number }>> {
  if (sourceIds.length > CARRIED_IDS_MAX) throw validation(`at most ${CARRIED_IDS_MAX} ids at once, got ${sourceIds.length}`);
  const rows = await q.query<{ source_id: string; local_id: string; source_version: number }>(
    'SELECT source_id, local_id, source_version FROM imported_items WHERE tenant_id = $1 AND source = $2 AND kind = $3 AND source_id = ANY($4::text[])',
    [tenantId, source, kind, sourceIds.filter((id) => unstorableText(id) === undefined)],
  );
  return new Map(rows.map((row) => [row.source_id, { localId: row.local_id, sourceVersion: Number(row.source_version) }]));
}
