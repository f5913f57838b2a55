import type { Queryable } from '../../store/db.ts';
import type { AuditEvent } from './audit-log.ts';
import { instantOf } from '../instants.ts';

/**
 * The audit log as a tenant's administrators read it (the console's Admin pages): a tenant's
 * events, newest first, narrowed by who, what, which resource and when. Only ever one tenant's:
 * every query names it.
 */

/** What narrows the list; each left out narrows nothing. */
export interface AuditFilter {
  /** A person's email (any case) or an agent's name. */
  readonly actor?: string | undefined;
  /** A tool's name or an event's action (`token.create`, `context.request` …). */
  readonly action?: string | undefined;
  /** A resource's id, as the event names it. */
  readonly resource?: string | undefined;
  /** From this instant (inclusive) … */
  readonly from?: Date | undefined;
  /** … to this one (exclusive). */
  readonly to?: Date | undefined;
}

export interface AuditRecord {
  readonly id: string;
  readonly at: Date;
  readonly surface: AuditEvent['surface'];
  /** Who acted, as the directory names them now; undefined for an anonymous call, or one removed since. */
  readonly actor: { readonly id: string; readonly kind: 'person' | 'agent' | undefined; readonly name: string | undefined } | undefined;
  readonly tokenId: string | null;
  readonly requestId: string | null;
  readonly dialect: string | null;
  readonly tool: string | null;
  readonly action: string;
  readonly result: 'ok' | 'error';
  readonly errorCode: string | null;
  readonly resources: unknown;
  readonly details: unknown;
}

interface Row {
  id: string;
  at: Date | string;
  surface: AuditEvent['surface'];
  principal_id: string | null;
  actor_kind: 'person' | 'agent' | null;
  actor_name: string | null;
  token_id: string | null;
  request_id: string | null;
  dialect: string | null;
  tool: string | null;
  action: string;
  result: 'ok' | 'error';
  error_code: string | null;
  resources: unknown;
  details: unknown;
}

const COLUMNS = `e.id, e.at, e.surface, e.principal_id, p.kind AS actor_kind, coalesce(p.email, p.name) AS actor_name, e.token_id, e.request_id,
  e.dialect, e.tool, e.action, e.result, e.error_code, e.resources, e.details`;
const FROM = 'audit_events e LEFT JOIN principals p ON p.tenant_id = e.tenant_id AND p.id = e.principal_id';

// Drivers give jsonb as a value or as its text.
const json = (value: unknown): unknown => (typeof value === 'string' ? (JSON.parse(value) as unknown) : value);

const toRecord = (row: Row): AuditRecord => ({
  id: row.id,
  at: instantOf(row.at),
  surface: row.surface,
  actor: row.principal_id === null ? undefined : { id: row.principal_id, kind: row.actor_kind ?? undefined, name: row.actor_name ?? undefined },
  tokenId: row.token_id,
  requestId: row.request_id,
  dialect: row.dialect,
  tool: row.tool,
  action: row.action,
  result: row.result,
  errorCode: row.error_code,
  resources: json(row.resources),
  details: json(row.details),
});

/** One page of a tenant's events under `filter`, newest first; `more` says whether another page follows. */
export async function listAuditEvents(
  q: Queryable,
  tenantId: string,
  filter: AuditFilter,
  page: { readonly offset: number; readonly limit: number },
): Promise<{ events: AuditRecord[]; more: boolean }> {
  const params: unknown[] = [tenantId];
  const where = ['e.tenant_id = $1'];
  const param = (value: unknown): string => `$${params.push(value)}`;
  if (filter.actor !== undefined)
    where.push(
      `e.principal_id IN (SELECT id FROM principals WHERE tenant_id = $1 AND (lower(email) = lower(${param(filter.actor)}) OR name = ${param(filter.actor)}))`,
    );
  if (filter.action !== undefined) {
    const action = param(filter.action);
    where.push(`(e.action = ${action} OR e.tool = ${action})`);
  }
  if (filter.resource !== undefined) {
    // Named alone ({"id": …}) or in a group of its type ({"ids": [… ]}, AuditResourceGroup).
    const resource = param(filter.resource);
    where.push(
      `(e.resources @> jsonb_build_array(jsonb_build_object('id', ${resource}::text))
        OR e.resources @> jsonb_build_array(jsonb_build_object('ids', jsonb_build_array(${resource}::text))))`,
    );
  }
  if (filter.from !== undefined) where.push(`e.at >= ${param(filter.from)}`);
  if (filter.to !== undefined) where.push(`e.at < ${param(filter.to)}`);
  const rows = await q.query<Row>(
    `SELECT ${COLUMNS} FROM ${FROM} WHERE ${where.join(' AND ')} ORDER BY e.at DESC, e.id DESC LIMIT ${param(page.limit + 1)} OFFSET ${param(page.offset)}`,
    params,
  );
  return { events: rows.slice(0, page.limit).map(toRecord), more: rows.length > page.limit };
}

/** One event of the tenant; undefined for an unknown id and for another tenant's. */
export async function findAuditEvent(q: Queryable, tenantId: string, id: string): Promise<AuditRecord | undefined> {
  const [row] = await q.query<Row>(`SELECT ${COLUMNS} FROM ${FROM} WHERE e.tenant_id = $1 AND e.id = $2`, [tenantId, id]);
  return row === undefined ? undefined : toRecord(row);
}
