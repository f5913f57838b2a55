import { randomUUID } from 'node:crypto';
import type { Queryable, Transaction } from '../../store/db.ts';
import { isUniqueViolation } from '../../store/db.ts';
import { conflict, validation } from '../../kernel/errors.ts';
import { enqueue } from '../../kernel/outbox/outbox.ts';
import { contextSearchEntries } from '../search-source.ts';
import type { ContextType } from './context-roles.ts';

/**
 * The identity of an Alignbase resource (a Knowledge, Skill, Memory or Artifact): what grants
 * and routes point at. Versions and content belong to each type's own tables; their code
 * creates the identity here first, in the same transaction.
 */
export interface ContextResource {
  readonly id: string;
  readonly type: ContextType;
  /** The title of a Knowledge, the name of a Skill, Memory or Artifact; unique per type. */
  readonly name: string;
  readonly status: 'active' | 'archived';
  readonly createdBy: string | undefined;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

interface ResourceRow {
  id: string;
  type: ContextType;
  name: string;
  status: 'active' | 'archived';
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'id, type, name, status, created_by, created_at, updated_at';

const toResource = (row: ResourceRow): ContextResource => ({
  id: row.id,
  type: row.type,
  name: row.name,
  status: row.status,
  createdBy: row.created_by ?? undefined,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/** Names are 1 to 200 characters and not blank, as the schema's CHECK and Alignbase's title rule. */
export function isResourceName(name: string): boolean {
  return name.trim() !== '' && [...name].length <= 200;
}

/**
 * Creates a resource identity. A Skill name already used in the tenant is a conflict (it is the
 * package's directory name); Knowledge titles and Memory and Artifact names may repeat. Grants
 * and routes on the type (All Knowledge …) apply to it at once.
 */
export async function createContextResource(
  tx: Transaction,
  input: { tenantId: string; type: ContextType; name: string; createdBy?: string | undefined; id?: string | undefined },
): Promise<ContextResource> {
  if (!isResourceName(input.name)) throw validation(`a ${input.type} name must be 1 to 200 characters and not blank`);
  try {
    const [row] = await tx.query<ResourceRow>(
      `INSERT INTO context_resources (tenant_id, id, type, name, created_by) VALUES ($1, $2, $3, $4, $5) RETURNING ${COLUMNS}`,
      [input.tenantId, input.id ?? randomUUID(), input.type, input.name, input.createdBy ?? null],
    );
    if (!row) throw new Error('INSERT … RETURNING returned no row');
    return toResource(row);
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict(`a ${input.type} named "${input.name}" already exists`);
    throw error;
  }
}

export async function getContextResource(q: Queryable, tenantId: string, id: string): Promise<ContextResource | undefined> {
  const [row] = await q.query<ResourceRow>(`SELECT ${COLUMNS} FROM context_resources WHERE tenant_id = $1 AND id = $2`, [tenantId, id]);
  return row && toResource(row);
}

export async function findContextResource(q: Queryable, tenantId: string, type: ContextType, name: string): Promise<ContextResource | undefined> {
  const [row] = await q.query<ResourceRow>(`SELECT ${COLUMNS} FROM context_resources WHERE tenant_id = $1 AND type = $2 AND name = $3`, [tenantId, type, name]);
  return row && toResource(row);
}

/** Archives or reactivates a resource; archived resources keep their grants but are not routed. */
export async function setContextResourceStatus(tx: Transaction, tenantId: string, id: string, status: 'active' | 'archived'): Promise<boolean> {
  const rows = await tx.query<{ type: ContextType }>(
    'UPDATE context_resources SET status = $3, updated_at = now() WHERE tenant_id = $1 AND id = $2 AND status <> $3 RETURNING type',
    [tenantId, id, status],
  );
  // Search drops an archived resource and shows a restored one again (same transaction).
  for (const row of rows) await enqueue(tx, contextSearchEntries(tenantId, row.type, id));
  return rows.length > 0;
}
