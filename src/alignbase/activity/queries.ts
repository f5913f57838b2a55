import { randomUUID } from 'node:crypto';
import type { Queryable, Transaction } from '../../store/db.ts';
import { iso } from '../../kernel/instants.ts';
import type { Capability, Hook, SubjectType, Transport } from './vocabulary.ts';

/*
 * Every statement of Activity, each with the row type the store returns and the mapper that
 * turns it into the domain's values (numbers, Dates), so the logic never converts a column.
 */

// ---------------------------------------------------------------------------------------------
// Settings

export async function selectEnabled(q: Queryable, tenantId: string): Promise<boolean | undefined> {
  const [row] = await q.query<{ enabled: boolean }>('SELECT enabled FROM activity_settings WHERE tenant_id = $1', [tenantId]);
  return row?.enabled;
}

export async function upsertEnabled(tx: Transaction, tenantId: string, enabled: boolean): Promise<void> {
  await tx.query(
    `INSERT INTO activity_settings (tenant_id, enabled) VALUES ($1, $2)
     ON CONFLICT (tenant_id) DO UPDATE SET enabled = EXCLUDED.enabled, updated_at = now()`,
    [tenantId, enabled],
  );
}

// ---------------------------------------------------------------------------------------------
// Installations

/** An installation as the checks need it: its id and what it reported. */
export interface Installation {
  readonly id: string;
  readonly capabilities: readonly Capability[];
}

interface InstallationRow {
  id: string;
  capabilities: Capability[];
}
const toInstallation = (row: InstallationRow): Installation => ({ id: row.id, capabilities: row.capabilities });

/** The agent's installation `id`, if it is the agent's. */
export async function findInstallation(q: Queryable, tenantId: string, id: string, agentId: string): Promise<Installation | undefined> {
  const [row] = await q.query<InstallationRow>('SELECT id, capabilities FROM activity_installations WHERE tenant_id = $1 AND id = $2 AND agent_id = $3', [
    tenantId,
    id,
    agentId,
  ]);
  return row === undefined ? undefined : toInstallation(row);
}

/** As findInstallation, refreshing last_seen_at, which also takes the row lock. */
export async function touchInstallation(tx: Transaction, tenantId: string, id: string, agentId: string): Promise<Installation | undefined> {
  const [row] = await tx.query<InstallationRow>(
    'UPDATE activity_installations SET last_seen_at = now() WHERE tenant_id = $1 AND id = $2 AND agent_id = $3 RETURNING id, capabilities',
    [tenantId, id, agentId],
  );
  return row === undefined ? undefined : toInstallation(row);
}

export interface InstallationFields {
  readonly integration: string;
  readonly transport: Transport;
  readonly capabilities: readonly Capability[];
  readonly clientVersion: string | null;
}

/** Replaces what the agent's installation `id` reported; false when it has no such installation. */
export async function updateInstallation(tx: Transaction, tenantId: string, id: string, agentId: string, fields: InstallationFields): Promise<boolean> {
  const rows = await tx.query<{ id: string }>(
    `UPDATE activity_installations SET integration = $4, transport = $5, capabilities = $6, client_version = $7, updated_at = now(), last_seen_at = now()
      WHERE tenant_id = $1 AND id = $2 AND agent_id = $3 RETURNING id`,
    [tenantId, id, agentId, fields.integration, fields.transport, [...fields.capabilities], fields.clientVersion],
  );
  return rows.length > 0;
}

const ADVISORY_CLASS = 727_011;

/** One agent's registrations take turns until the transaction ends. */
export async function lockRegistrations(tx: Transaction, tenantId: string, agentId: string): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [ADVISORY_CLASS, `${tenantId}/${agentId}`]);
}

export async function countInstallations(tx: Transaction, tenantId: string, agentId: string): Promise<number> {
  const [row] = await tx.query<{ n: number | string }>('SELECT count(*)::int AS n FROM activity_installations WHERE tenant_id = $1 AND agent_id = $2', [
    tenantId,
    agentId,
  ]);
  return Number(row?.n ?? 0);
}

export async function insertInstallation(tx: Transaction, tenantId: string, id: string, agentId: string, fields: InstallationFields): Promise<void> {
  await tx.query(
    `INSERT INTO activity_installations (tenant_id, id, agent_id, integration, transport, capabilities, client_version)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [tenantId, id, agentId, fields.integration, fields.transport, [...fields.capabilities], fields.clientVersion],
  );
}

/** Notes that a native hook of `capability` reached the gateway at `at` (the adapter's declared coverage). */
export async function refreshCoverage(tx: Transaction, tenantId: string, installationId: string, capability: Capability, at: Date): Promise<void> {
  await tx.query('UPDATE activity_installations SET coverage = coverage || jsonb_build_object($3::text, $4::text) WHERE tenant_id = $1 AND id = $2', [
    tenantId,
    installationId,
    capability,
    iso(at),
  ]);
}

// ---------------------------------------------------------------------------------------------
// Sessions and events

/** Records a hook session start unless the (installation, session_id) already started: then false. */
export async function insertSession(tx: Transaction, tenantId: string, id: string, installationId: string, sessionId: string, hook: Hook): Promise<boolean> {
  const rows = await tx.query<{ id: string }>(
    `INSERT INTO activity_sessions (tenant_id, id, installation_id, session_id, hook) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT ON CONSTRAINT activity_sessions_once DO NOTHING RETURNING id`,
    [tenantId, id, installationId, sessionId, hook],
  );
  return rows.length > 0;
}

export async function touchSession(tx: Transaction, tenantId: string, installationId: string, sessionId: string): Promise<void> {
  await tx.query('UPDATE activity_sessions SET last_seen_at = now() WHERE tenant_id = $1 AND installation_id = $2 AND session_id = $3', [
    tenantId,
    installationId,
    sessionId,
  ]);
}

export interface NewEvent {
  readonly installationId: string;
  readonly source: 'client' | 'hook';
  readonly type: string;
  readonly sessionId?: string | undefined;
  readonly toolName?: string | undefined;
  readonly subject?: { readonly type: SubjectType; readonly id: string; readonly version?: number | undefined } | undefined;
  readonly status: 'ok' | 'error';
  readonly errorCode?: string | undefined;
  readonly occurredAt: Date;
}

/** Inserts one event of the agent; its new id. */
export async function insertEvent(tx: Transaction, tenantId: string, agentId: string, event: NewEvent): Promise<string> {
  const id = randomUUID();
  await tx.query(
    `INSERT INTO activity_events (tenant_id, id, installation_id, agent_id, source, type, session_id, tool_name, subject_type, subject_id, subject_version, status, error_code, occurred_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
    [
      tenantId,
      id,
      event.installationId,
      agentId,
      event.source,
      event.type,
      event.sessionId ?? null,
      event.toolName ?? null,
      event.subject?.type ?? null,
      event.subject?.id.toLowerCase() ?? null,
      event.subject?.version ?? null,
      event.status,
      event.errorCode ?? null,
      event.occurredAt,
    ],
  );
  return id;
}

// ---------------------------------------------------------------------------------------------
// Listings (kgw activity)

export interface InstallationSummary {
  readonly id: string;
  /** The agent's name. */
  readonly agent: string;
  readonly integration: string;
  readonly transport: Transport;
  readonly capabilities: Capability[];
  readonly clientVersion: string | null;
  /** Hook capability -> when a native hook of it last reached the gateway (ISO 8601). */
  readonly coverage: Record<string, string>;
  readonly sessions: number;
  readonly events: number;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly lastSeenAt: Date;
}

interface InstallationSummaryRow {
  id: string;
  agent: string;
  integration: string;
  transport: Transport;
  capabilities: Capability[];
  client_version: string | null;
  coverage: Record<string, string>;
  created_at: Date | string;
  updated_at: Date | string;
  last_seen_at: Date | string;
  sessions: number | string;
  events: number | string;
}
const toInstallationSummary = (row: InstallationSummaryRow): InstallationSummary => ({
  id: row.id,
  agent: row.agent,
  integration: row.integration,
  transport: row.transport,
  capabilities: row.capabilities,
  clientVersion: row.client_version,
  coverage: row.coverage,
  sessions: Number(row.sessions),
  events: Number(row.events),
  createdAt: new Date(row.created_at),
  updatedAt: new Date(row.updated_at),
  lastSeenAt: new Date(row.last_seen_at),
});

/** The tenant's installations (of one agent, when given), by agent name and age. */
export async function selectInstallations(q: Queryable, tenantId: string, agentId: string | null): Promise<InstallationSummary[]> {
  const rows = await q.query<InstallationSummaryRow>(
    `SELECT i.id, p.name AS agent, i.integration, i.transport, i.capabilities, i.client_version, i.coverage, i.created_at, i.updated_at, i.last_seen_at,
            (SELECT count(*)::int FROM activity_sessions s WHERE s.tenant_id = i.tenant_id AND s.installation_id = i.id) AS sessions,
            (SELECT count(*)::int FROM activity_events e WHERE e.tenant_id = i.tenant_id AND e.installation_id = i.id) AS events
       FROM activity_installations i JOIN principals p ON p.tenant_id = i.tenant_id AND p.id = i.agent_id
      WHERE i.tenant_id = $1 AND ($2::uuid IS NULL OR i.agent_id = $2)
      ORDER BY p.name, i.created_at, i.id`,
    [tenantId, agentId],
  );
  return rows.map(toInstallationSummary);
}

export interface EventSummary {
  readonly id: string;
  /** The agent's name. */
  readonly agent: string;
  readonly installationId: string;
  readonly integration: string;
  readonly source: 'client' | 'hook';
  readonly type: string;
  readonly sessionId: string | null;
  readonly toolName: string | null;
  readonly subject: { readonly type: SubjectType; readonly id: string; readonly version: number | null } | null;
  readonly status: 'ok' | 'error';
  readonly errorCode: string | null;
  readonly occurredAt: Date;
  readonly recordedAt: Date;
}

interface EventSummaryRow {
  id: string;
  agent: string;
  installation_id: string;
  integration: string;
  source: 'client' | 'hook';
  type: string;
  session_id: string | null;
  tool_name: string | null;
  subject_type: SubjectType | null;
  subject_id: string | null;
  subject_version: number | string | null;
  status: 'ok' | 'error';
  error_code: string | null;
  occurred_at: Date | string;
  recorded_at: Date | string;
}
const toEventSummary = (row: EventSummaryRow): EventSummary => ({
  id: row.id,
  agent: row.agent,
  installationId: row.installation_id,
  integration: row.integration,
  source: row.source,
  type: row.type,
  sessionId: row.session_id,
  toolName: row.tool_name,
  subject:
    row.subject_type === null || row.subject_id === null
      ? null
      : { type: row.subject_type, id: row.subject_id, version: row.subject_version === null ? null : Number(row.subject_version) },
  status: row.status,
  errorCode: row.error_code,
  occurredAt: new Date(row.occurred_at),
  recordedAt: new Date(row.recorded_at),
});

/** The tenant's most recent events (of one agent, when given), newest first, at most `limit`. */
export async function selectRecentEvents(q: Queryable, tenantId: string, agentId: string | null, limit: number): Promise<EventSummary[]> {
  const rows = await q.query<EventSummaryRow>(
    `SELECT e.id, p.name AS agent, e.installation_id, i.integration, e.source, e.type, e.session_id, e.tool_name, e.subject_type, e.subject_id, e.subject_version,
            e.status, e.error_code, e.occurred_at, e.recorded_at
       FROM activity_events e
       JOIN principals p ON p.tenant_id = e.tenant_id AND p.id = e.agent_id
       JOIN activity_installations i ON i.tenant_id = e.tenant_id AND i.id = e.installation_id
      WHERE e.tenant_id = $1 AND ($2::uuid IS NULL OR e.agent_id = $2)
      ORDER BY e.recorded_at DESC, e.occurred_at DESC, e.id
      LIMIT $3`,
    [tenantId, agentId, limit],
  );
  return rows.map(toEventSummary);
}
