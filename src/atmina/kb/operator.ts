import { readBlobBytes } from '../../../connectors/blob/contract.ts';
import type { AuditTrail } from '../../kernel/audit/trail.ts';
import { notFound, validation } from '../../kernel/errors.ts';
import type { Db, Queryable } from '../../store/db.ts';
import type { KbStores } from './files.ts';
import { findFile } from './files.ts';
import { restoreKb } from './kbs.ts';
import { parseKbPath } from './paths.ts';
import type { Kb, KbFile, KbRow } from './queries.ts';
import { KB_COLUMNS, KB_FROM, toKb } from './queries.ts';
import type { KbTotals } from './status.ts';
import { kbTotals } from './status.ts';

/**
 * Knowledge Bases for the operator (`kgw kb`, `kgw files`): no caller of a tenant, so no role
 * applies; the operator names the tenant, or a KB that only one tenant has. Archived KBs are
 * shown when asked for and can be restored.
 */

export interface OperatorKb {
  readonly tenant: string;
  readonly tenantId: string;
  readonly kb: Kb;
}

export interface OperatorKbListing extends OperatorKb {
  readonly totals: KbTotals;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

async function tenantsNamed(q: Queryable, tenant: string | undefined): Promise<{ id: string; slug: string }[]> {
  const tenants = await q.query<{ id: string; slug: string }>(
    tenant === undefined ? 'SELECT id, slug FROM tenants ORDER BY slug' : 'SELECT id, slug FROM tenants WHERE slug = $1',
    tenant === undefined ? [] : [tenant],
  );
  if (tenant !== undefined && tenants.length === 0) throw notFound(`tenant "${tenant}" not found`);
  return tenants;
}

/** Every KB of the tenant (of every tenant when none is named), live ones only unless `archived`, by tenant and slug. */
export async function operatorKbs(q: Queryable, input: { tenant?: string | undefined; archived: boolean }): Promise<OperatorKbListing[]> {
  const listed: OperatorKbListing[] = [];
  // One tenant at a time, so each query names its tenant.
  for (const tenant of await tenantsNamed(q, input.tenant)) {
    const rows = await q.query<KbRow>(
      `SELECT ${KB_COLUMNS} FROM ${KB_FROM} WHERE k.tenant_id = $1 ${input.archived ? '' : 'AND k.archived_at IS NULL'} ORDER BY k.slug`,
      [tenant.id],
    );
    const kbs = rows.map(toKb);
    const totals = await kbTotals(
      q,
      tenant.id,
      kbs.map((kb) => kb.id),
    );
    for (const kb of kbs) listed.push({ tenant: tenant.slug, tenantId: tenant.id, kb, totals: totals.get(kb.id) ?? { files: 0, bytes: 0 } });
  }
  return listed;
}

/**
 * The KB the operator names, by id or slug, archived or not: in the tenant given, or in the
 * one tenant that has it. A slug several tenants use needs the tenant. Without totals: what a
 * command that goes through a KB's files asks for on every call (`kgw export`).
 */
export async function findOperatorKb(q: Queryable, input: { tenant?: string | undefined; kb: string }): Promise<OperatorKb> {
  const byId = UUID.test(input.kb);
  const found: OperatorKb[] = [];
  for (const tenant of await tenantsNamed(q, input.tenant)) {
    const [row] = await q.query<KbRow>(`SELECT ${KB_COLUMNS} FROM ${KB_FROM} WHERE k.tenant_id = $1 AND ${byId ? 'k.id = $2::uuid' : 'k.slug = $2'}`, [
      tenant.id,
      byId ? input.kb.toLowerCase() : input.kb,
    ]);
    if (row !== undefined) found.push({ tenant: tenant.slug, tenantId: tenant.id, kb: toKb(row) });
  }
  const [only] = found;
  const where = input.tenant === undefined ? '' : ` in tenant "${input.tenant}"`;
  if (only === undefined) throw notFound(`no Knowledge Base "${input.kb}"${where}`);
  if (found.length > 1)
    throw validation(`several tenants have a Knowledge Base "${input.kb}" (${found.map((f) => f.tenant).join(', ')}); name one with --tenant`);
  return only;
}

/** `findOperatorKb` with the KB's totals (files and bytes), as `kgw kb show` prints them. */
export async function operatorKb(q: Queryable, input: { tenant?: string | undefined; kb: string }): Promise<OperatorKbListing> {
  const found = await findOperatorKb(q, input);
  const totals = await kbTotals(q, found.tenantId, [found.kb.id]);
  return { ...found, totals: totals.get(found.kb.id) ?? { files: 0, bytes: 0 } };
}

/** Restores the archived KB the operator names (its files return to search and the graph), audited on the trail given. */
export async function operatorRestoreKb(
  db: Db,
  input: { tenant?: string | undefined; kb: string },
  audit: AuditTrail,
): Promise<{ tenant: string; kb: Kb; restored: boolean }> {
  const target = await findOperatorKb(db, input);
  const result = await restoreKb(db, { tenantId: target.tenantId, kbId: target.kb.id }, audit.about({ tenantId: target.tenantId }));
  if (result === undefined) throw notFound(`no Knowledge Base "${input.kb}"`);
  return { tenant: target.tenant, kb: result.kb, restored: result.restored };
}

/** The current bytes of a live file of the KB the operator names (an archived KB's too). */
export async function operatorFileBytes(
  stores: KbStores,
  input: { tenant?: string | undefined; kb: string; path: string },
): Promise<{ tenant: string; kb: Kb; file: KbFile; bytes: Buffer }> {
  const target = await findOperatorKb(stores.db, input);
  const file = await findFile(stores.db, target.tenantId, target.kb.id, { path: parseKbPath(input.path) });
  return { tenant: target.tenant, kb: target.kb, file, bytes: await readBlobBytes(stores.blob, file.sha256) };
}

/** Files of one page of `operatorKbFiles`, and the bound on it. */
export const OPERATOR_FILES_PAGE_DEFAULT = 200;
export const OPERATOR_FILES_PAGE_MAX = 1000;

/** One saved version of a file, for the operator: who wrote it (a person's email, an agent's name), when, and what. */
export interface OperatorFileVersion {
  readonly version: number;
  readonly path: string;
  readonly sha256: string;
  readonly sizeBytes: number;
  readonly mediaType: string;
  readonly operation: string;
  readonly author: string | null;
  readonly createdAt: Date;
}

/** A live file with every version it has saved, oldest first. */
export interface OperatorFile {
  readonly id: string;
  readonly path: string;
  readonly kind: 'text' | 'asset';
  readonly mediaType: string;
  readonly sha256: string;
  readonly sizeBytes: number;
  readonly version: number;
  readonly versions: readonly OperatorFileVersion[];
}

/**
 * The live files of the KB the operator names (an archived KB's too), by path in byte order,
 * after `after`, at most `limit` of them (1 to OPERATOR_FILES_PAGE_MAX), each with its versions:
 * what `kgw export` writes in its manifest. `next` is the path to continue after, or undefined
 * on the last page.
 */
export async function operatorKbFiles(
  q: Queryable,
  input: { tenant?: string | undefined; kb: string; after?: string | undefined; limit: number },
): Promise<{ tenant: string; kb: Kb; files: OperatorFile[]; next: string | undefined }> {
  if (!Number.isInteger(input.limit) || input.limit < 1 || input.limit > OPERATOR_FILES_PAGE_MAX)
    throw validation(`limit must be a whole number from 1 to ${OPERATOR_FILES_PAGE_MAX}`);
  const target = await findOperatorKb(q, input);
  const rows = await q.query<{
    id: string;
    path: string;
    kind: 'text' | 'asset';
    media_type: string;
    sha256: string;
    size_bytes: number;
    latest_version: number;
  }>(
    `SELECT id, path, kind, media_type, sha256, size_bytes, latest_version FROM kb_files
      WHERE tenant_id = $1 AND kb_id = $2 AND deleted_at IS NULL AND path > $3 ORDER BY path LIMIT $4`,
    [target.tenantId, target.kb.id, input.after ?? '', input.limit + 1],
  );
  const page = rows.slice(0, input.limit);
  const versions = await q.query<{
    file_id: string;
    version: number;
    path: string;
    sha256: string;
    size_bytes: number;
    media_type: string;
    operation: string;
    author: string | null;
    created_at: Date;
  }>(
    `SELECT v.file_id, v.version, v.path, v.sha256, v.size_bytes, v.media_type, v.operation, COALESCE(p.email, p.name) AS author, v.created_at
       FROM kb_file_versions v LEFT JOIN principals p ON p.tenant_id = v.tenant_id AND p.id = v.author_id
      WHERE v.tenant_id = $1 AND v.file_id = ANY($2::uuid[]) ORDER BY v.file_id, v.version`,
    [target.tenantId, page.map((row) => row.id)],
  );
  const byFile = new Map<string, OperatorFileVersion[]>();
  for (const v of versions) {
    const list = byFile.get(v.file_id) ?? [];
    list.push({
      version: v.version,
      path: v.path,
      sha256: v.sha256,
      sizeBytes: v.size_bytes,
      mediaType: v.media_type,
      operation: v.operation,
      author: v.author,
      createdAt: v.created_at,
    });
    byFile.set(v.file_id, list);
  }
  const files = page.map((row) => ({
    id: row.id,
    path: row.path,
    kind: row.kind,
    mediaType: row.media_type,
    sha256: row.sha256,
    sizeBytes: row.size_bytes,
    version: row.latest_version,
    versions: byFile.get(row.id) ?? [],
  }));
  return { tenant: target.tenant, kb: target.kb, files, next: rows.length > input.limit ? page.at(-1)?.path : undefined };
}
