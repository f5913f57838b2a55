import type { Provenance } from '../../kernel/imports/provenance.ts';
import { provenanceJson, recordImported } from '../../kernel/imports/provenance.ts';
import { randomUUID } from 'node:crypto';
import type { Caller } from '../../kernel/access/caller.ts';
import type { AuditTrail } from '../../kernel/audit/trail.ts';
import { enqueue } from '../../kernel/outbox/outbox.ts';
import type { Transaction } from '../../store/db.ts';
import { recordContribution } from './contributions.ts';
import { kbFileEntries } from './projection.ts';
import type { FileKind, FileOperation, FileRow, KbFile } from './queries.ts';
import { FILE_COLUMNS, toFile } from './queries.ts';
import type { AssetRecord } from './asset-rows.ts';
import { copyAsset, insertAsset } from './asset-rows.ts';
import { refuseKb } from './refusals.ts';

/**
 * The one write path of a Knowledge Base's files: every change (a text write, an upload, a move,
 * a restore, a delete, the org file seeding a KB) saves a version (kb_file_versions) and moves
 * the head (kb_files) here, in the caller's transaction, which also enqueues the file for search
 * and graph, records the writer's contribution and the audit event. The bytes are in the blob
 * store before, under their SHA-256; a row never points at bytes that are not stored.
 */

/** What a change of a file answers (write_file, write_files, restore_version). */
export interface WriteResult {
  readonly file: KbFile;
  /** Whether a version was saved; false when the file already held exactly the result. */
  readonly changed: boolean;
  /** The operation of the saved version (or the one asked, when nothing changed). */
  readonly operation: FileOperation;
}

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
  /** Where an import brought it from (kgw import mcp): saved on the version and recorded in imported_items. */
  readonly provenance?: Provenance | undefined;
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
    `INSERT INTO kb_file_versions (tenant_id, file_id, version, id, path, sha256, size_bytes, media_type, operation, restored_from, author_id, provenance)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::jsonb)`,
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
      next.provenance === undefined ? null : provenanceJson(next.provenance),
    ],
  );
  if (next.provenance !== undefined) await recordImported(tx, tenantId, 'kb_file', saved.id, next.provenance, saved.sha256);
  // An Asset's metadata follows its bytes: a version that keeps them (move, restore, delete)
  // keeps what was known of them, copied from the version it was made from.
  if (next.asset !== undefined) await insertAsset(tx, tenantId, saved.id, saved.version, next.asset);
  else if (head !== undefined && saved.kind === 'asset') await copyAsset(tx, tenantId, saved.id, saved.sha256, saved.version);
  await enqueue(tx, kbFileEntries(tenantId, saved, next.operation === 'delete' ? 'delete' : 'upsert'));
  return saved;
}
