import { randomUUID } from 'node:crypto';
import type { Caller } from '../access/caller.ts';
import type { AuditLog, AuditResource } from '../audit/audit-log.ts';
import type { AuditTrail } from '../audit/trail.ts';
import type { BundleLayout } from '../context/bundle.ts';
import { currentContext } from '../context/current-context.ts';
import { ensure } from '../context/common.ts';
import { requireAgent, requireTenant } from '../directory/directory.ts';
import type { ReasonFacts } from '../errors.ts';
import { refusal, validation } from '../errors.ts';
import type { Db, Queryable, Transaction } from '../../store/db.ts';

/**
 * Activity: limited, client-reported lifecycle evidence (docs/alignbase.md, "Activity").
 * Installations report their integration, transport and capability names; events name what
 * happened from fixed lists, each tied to a capability the installation reported. Nothing free
 * form is stored: no transcripts, reasoning, tool payloads or environment values, only names
 * and codes that match conservative patterns. Events are the client's claim, not proof that a
 * model read anything.
 */

// ---------------------------------------------------------------------------------------------
// The vocabulary

export const TRANSPORTS = ['stdio', 'streamable-http', 'sse'] as const;
export type Transport = (typeof TRANSPORTS)[number];

/** Every capability an installation may report; anything else is refused. */
export const CAPABILITIES = [
  'connection_test',
  'context_load',
  'skills_install',
  'skills_update',
  'session_lifecycle',
  'session_start_hook',
  'prompt_submit_hook',
  'tool_use_hook',
  'stop_hook',
  'session_end_hook',
] as const;
export type Capability = (typeof CAPABILITIES)[number];
export const MAX_CAPABILITIES = 50;

export const SUBJECT_TYPES = ['knowledge', 'skill', 'memory', 'artifact'] as const;
export type SubjectType = (typeof SUBJECT_TYPES)[number];

/** record_activity_event: each type, the capability it needs and the subject it takes. */
export const EVENT_RULES = {
  connection_tested: { capability: 'connection_test', subject: 'none' },
  context_loaded: { capability: 'context_load', subject: 'none' },
  skill_installed: { capability: 'skills_install', subject: 'skill' },
  skill_removed: { capability: 'skills_install', subject: 'skill' },
  skill_updated: { capability: 'skills_update', subject: 'skill' },
  session_started: { capability: 'session_lifecycle', subject: 'none' },
  session_ended: { capability: 'session_lifecycle', subject: 'none' },
} as const satisfies Record<string, { capability: Capability; subject: 'none' | SubjectType }>;
export type EventType = keyof typeof EVENT_RULES;
export const EVENT_TYPES = Object.keys(EVENT_RULES) as [EventType, ...EventType[]];

/** start_hook_session: the hook and the capability that installs it. */
export const HOOK_CAPABILITY = { session_start: 'session_start_hook', prompt_submit: 'prompt_submit_hook' } as const satisfies Record<string, Capability>;
export type Hook = keyof typeof HOOK_CAPABILITY;
export const HOOKS = Object.keys(HOOK_CAPABILITY) as [Hook, ...Hook[]];

/** record_hook_activity_event: each native event and the hook capability it comes from. */
export const HOOK_EVENT_CAPABILITY = {
  prompt_submitted: 'prompt_submit_hook',
  tool_used: 'tool_use_hook',
  session_stopped: 'stop_hook',
  session_ended: 'session_end_hook',
} as const satisfies Record<string, Capability>;
export type HookEventType = keyof typeof HOOK_EVENT_CAPABILITY;
export const HOOK_EVENT_TYPES = Object.keys(HOOK_EVENT_CAPABILITY) as [HookEventType, ...HookEventType[]];

/** The bounded shapes of every free-standing name (the migration checks the same patterns). */
export const PATTERNS = {
  integration: /^[a-z0-9][a-z0-9._-]{0,99}$/,
  clientVersion: /^[A-Za-z0-9][A-Za-z0-9._+-]{0,49}$/,
  sessionId: /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/,
  toolName: /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}$/,
  errorCode: /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/,
} as const;

/** An event may be this much ahead of the gateway's clock, or this old. */
export const FUTURE_SLACK_MS = 5 * 60_000;
export const MAX_AGE_MS = 7 * 86_400_000;
/** Installations per agent; a client that never keeps its id cannot grow the table without end. */
export const MAX_INSTALLATIONS_PER_AGENT = 100;

/** The refusals of Activity, each with its machine reason; the messages are plain English. */
const refuse = {
  installationNotFound: () =>
    refusal('not_found', 'installation_not_found', {}, 'installation not found: register the installation first and use the id it returns'),
  disabled: () => refusal('permission_denied', 'activity_disabled', {}, 'Activity is disabled for this tenant; nothing was recorded'),
  capability: (what: ReasonFacts['capability_not_reported']['what'], capability: Capability) =>
    refusal('permission_denied', 'capability_not_reported', { what, capability }, `the installation did not report the "${capability}" capability this needs`),
  occurredAt: () => refusal('validation', 'invalid_occurred_at', {}, 'occurred_at must be within the last 7 days and at most 5 minutes in the future'),
  subjectRequired: (eventType: string, subject: SubjectType) =>
    refusal('validation', 'subject_required', { eventType, subject }, `event type "${eventType}" needs a subject of type ${subject}`),
  subjectNotAllowed: (eventType: string) => refusal('validation', 'subject_not_allowed', { eventType }, `event type "${eventType}" takes no subject`),
  errorCode: () => refusal('validation', 'error_code_without_error', {}, 'error_code is only allowed with status "error"'),
  toolName: () => refusal('validation', 'tool_name_not_allowed', {}, 'tool_name is only allowed for tool_used'),
  tooManyInstallations: () =>
    refusal(
      'conflict',
      'installation_limit',
      { max: MAX_INSTALLATIONS_PER_AGENT },
      `an agent may have at most ${MAX_INSTALLATIONS_PER_AGENT} installations; reuse an installation id`,
    ),
};

// ---------------------------------------------------------------------------------------------
// Inputs (already shaped by the tool schemas)

export interface InstallationReport {
  integration: string;
  transport: Transport;
  capabilities: readonly Capability[];
  client_version?: string | undefined;
  local_installation_id?: string | undefined;
}

export interface ActivityEventInput {
  local_installation_id: string;
  event: {
    type: EventType;
    occurred_at?: string | undefined;
    subject?: { type: SubjectType; id: string; version?: number | undefined } | undefined;
    status?: 'ok' | 'error' | undefined;
    error_code?: string | undefined;
  };
}

export interface HookSessionInput {
  local_installation_id: string;
  hook: Hook;
  session_id: string;
}

export interface HookEventInput {
  local_installation_id: string;
  session_id: string;
  event: {
    type: HookEventType;
    occurred_at?: string | undefined;
    tool_name?: string | undefined;
    status?: 'ok' | 'error' | undefined;
    error_code?: string | undefined;
  };
}

// ---------------------------------------------------------------------------------------------
// Shared checks

const ADVISORY_CLASS = 727_011;

/** Only agents report activity; a person's connection is refused like any missing role. */
const ensureAgent = (caller: Caller): void => ensure(caller.principal.kind === 'agent');

/** Whether Activity is on for the tenant: on unless an admin switched it off (kgw activity --disable). */
export async function activityEnabled(q: Queryable, tenantId: string): Promise<boolean> {
  const [row] = await q.query<{ enabled: boolean }>('SELECT enabled FROM activity_settings WHERE tenant_id = $1', [tenantId]);
  return row?.enabled ?? true;
}

async function requireEnabled(q: Queryable, tenantId: string): Promise<void> {
  if (!(await activityEnabled(q, tenantId))) throw refuse.disabled();
}

/** When the event happened: the client's instant inside the allowed window, else now. */
function occurredAt(value: string | undefined, now: number): Date {
  if (value === undefined) return new Date(now);
  const at = Date.parse(value);
  if (!Number.isFinite(at) || at > now + FUTURE_SLACK_MS || at < now - MAX_AGE_MS) throw refuse.occurredAt();
  return new Date(at);
}

function checkStatus(event: { status?: 'ok' | 'error' | undefined; error_code?: string | undefined }): 'ok' | 'error' {
  const status = event.status ?? 'ok';
  if (event.error_code !== undefined && status !== 'error') throw refuse.errorCode();
  return status;
}

interface InstallationRow {
  id: string;
  capabilities: Capability[];
}

/**
 * The calling agent's installation, or not found (another agent's or tenant's installation is
 * indistinguishable from none). `touch` refreshes last_seen_at, which also takes the row lock.
 */
async function ownInstallation(q: Queryable, caller: Caller, id: string, touch: boolean): Promise<InstallationRow> {
  const params = [caller.tenant.id, id.toLowerCase(), caller.principal.id];
  const [row] = touch
    ? await q.query<InstallationRow>(
        'UPDATE activity_installations SET last_seen_at = now() WHERE tenant_id = $1 AND id = $2 AND agent_id = $3 RETURNING id, capabilities',
        params,
      )
    : await q.query<InstallationRow>('SELECT id, capabilities FROM activity_installations WHERE tenant_id = $1 AND id = $2 AND agent_id = $3', params);
  if (row === undefined) throw refuse.installationNotFound();
  return row;
}

function requireCapability(installation: InstallationRow, capability: Capability, what: ReasonFacts['capability_not_reported']['what']): void {
  if (!installation.capabilities.includes(capability)) throw refuse.capability(what, capability);
}

/** Notes that a native hook of `capability` reached the gateway at `at` (the adapter's declared coverage). */
async function refreshCoverage(tx: Transaction, caller: Caller, installationId: string, capability: Capability, at: string): Promise<void> {
  await tx.query('UPDATE activity_installations SET coverage = coverage || jsonb_build_object($3::text, $4::text) WHERE tenant_id = $1 AND id = $2', [
    caller.tenant.id,
    installationId,
    capability,
    at,
  ]);
}

async function touchSession(tx: Transaction, caller: Caller, installationId: string, sessionId: string): Promise<void> {
  await tx.query('UPDATE activity_sessions SET last_seen_at = now() WHERE tenant_id = $1 AND installation_id = $2 AND session_id = $3', [
    caller.tenant.id,
    installationId,
    sessionId,
  ]);
}

interface EventRow {
  installationId: string;
  source: 'client' | 'hook';
  type: string;
  sessionId?: string | undefined;
  toolName?: string | undefined;
  subject?: { type: SubjectType; id: string; version?: number | undefined } | undefined;
  status: 'ok' | 'error';
  errorCode?: string | undefined;
  occurredAt: Date;
}

async function insertEvent(tx: Transaction, caller: Caller, event: EventRow): Promise<string> {
  const id = randomUUID();
  await tx.query(
    `INSERT INTO activity_events (tenant_id, id, installation_id, agent_id, source, type, session_id, tool_name, subject_type, subject_id, subject_version, status, error_code, occurred_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
    [
      caller.tenant.id,
      id,
      event.installationId,
      caller.principal.id,
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

const installationResource = (id: string): AuditResource => ({ type: 'activity_installation', id });

// ---------------------------------------------------------------------------------------------
// The tools

/**
 * report_installation_capabilities: registers a new installation of the calling agent, or
 * replaces what an existing one (local_installation_id) reported. Works whether or not
 * Activity is enabled: the registry is configuration, not evidence.
 */
export async function reportInstallation(db: Db, caller: Caller, input: InstallationReport, audit?: AuditTrail) {
  ensureAgent(caller);
  const capabilities = CAPABILITIES.filter((c) => input.capabilities.includes(c));
  return db.tx(async (tx) => {
    let id: string;
    let registered: boolean;
    if (input.local_installation_id !== undefined) {
      const [row] = await tx.query<{ id: string }>(
        `UPDATE activity_installations SET integration = $4, transport = $5, capabilities = $6, client_version = $7, updated_at = now(), last_seen_at = now()
          WHERE tenant_id = $1 AND id = $2 AND agent_id = $3 RETURNING id`,
        [
          caller.tenant.id,
          input.local_installation_id.toLowerCase(),
          caller.principal.id,
          input.integration,
          input.transport,
          capabilities,
          input.client_version ?? null,
        ],
      );
      if (row === undefined) throw refuse.installationNotFound();
      id = row.id;
      registered = false;
    } else {
      // One agent's registrations take turns, so the limit holds under concurrent reports.
      await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [ADVISORY_CLASS, `${caller.tenant.id}/${caller.principal.id}`]);
      const [count] = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM activity_installations WHERE tenant_id = $1 AND agent_id = $2', [
        caller.tenant.id,
        caller.principal.id,
      ]);
      if ((count?.n ?? 0) >= MAX_INSTALLATIONS_PER_AGENT) throw refuse.tooManyInstallations();
      id = randomUUID();
      await tx.query(
        `INSERT INTO activity_installations (tenant_id, id, agent_id, integration, transport, capabilities, client_version)
         VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [caller.tenant.id, id, caller.principal.id, input.integration, input.transport, capabilities, input.client_version ?? null],
      );
      registered = true;
    }
    await audit?.recordIn(tx, registered ? 'activity.installation_register' : 'activity.installation_update', [installationResource(id)], {
      integration: input.integration,
      transport: input.transport,
      capabilities,
    });
    return { installationId: id, registered, capabilities };
  });
}

/** record_activity_event: one allowed event of the caller's own installation, when Activity is enabled. */
export async function recordActivityEvent(db: Db, caller: Caller, input: ActivityEventInput, audit?: AuditTrail) {
  ensureAgent(caller);
  const { event } = input;
  const rule = EVENT_RULES[event.type];
  if (rule.subject === 'none' && event.subject !== undefined) throw refuse.subjectNotAllowed(event.type);
  if (rule.subject !== 'none' && event.subject?.type !== rule.subject) throw refuse.subjectRequired(event.type, rule.subject);
  const status = checkStatus(event);
  const at = occurredAt(event.occurred_at, Date.now());
  return db.tx(async (tx) => {
    await requireEnabled(tx, caller.tenant.id);
    const installation = await ownInstallation(tx, caller, input.local_installation_id, true);
    requireCapability(installation, rule.capability, { event: event.type });
    const eventId = await insertEvent(tx, caller, {
      installationId: installation.id,
      source: 'client',
      type: event.type,
      subject: event.subject,
      status,
      errorCode: event.error_code,
      occurredAt: at,
    });
    await audit?.recordIn(tx, 'activity.event', [installationResource(installation.id), { type: 'activity_event', id: eventId }], {
      event_type: event.type,
      status,
    });
    return { eventId };
  });
}

/**
 * start_hook_session: for an installation that reported the hook's capability. Records the
 * session start once per (installation, session_id), whoever races, refreshes the hook's
 * coverage, and returns the current context. With Activity disabled the context is still
 * returned and nothing is recorded.
 */
/** The MCP call a hook session starts in: its request, the dialect and tool that took it, and how that dialect lays out the context. */
export interface HookCall {
  readonly requestId: string;
  readonly dialect: string;
  readonly tool: string;
  readonly layout: BundleLayout;
}

export async function startHookSession(db: Db, auditLog: AuditLog, caller: Caller, input: HookSessionInput, call: HookCall, audit?: AuditTrail) {
  ensureAgent(caller);
  const capability = HOOK_CAPABILITY[input.hook];
  const installation = await ownInstallation(db, caller, input.local_installation_id, false);
  requireCapability(installation, capability, { hook: input.hook });
  // The context first: when it cannot be built, nothing is recorded and the hook may retry.
  const context = await currentContext(db, caller, call.layout, audit);
  const outcome = await db.tx(async (tx) => {
    if (!(await activityEnabled(tx, caller.tenant.id))) return { started: false, enabled: false };
    // The installation's row lock (taken by touching it) makes concurrent starts take turns.
    const locked = await ownInstallation(tx, caller, installation.id, true);
    requireCapability(locked, capability, { hook: input.hook });
    const now = new Date();
    await refreshCoverage(tx, caller, locked.id, capability, now.toISOString());
    const sessionRowId = randomUUID();
    const [inserted] = await tx.query<{ id: string }>(
      `INSERT INTO activity_sessions (tenant_id, id, installation_id, session_id, hook) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT ON CONSTRAINT activity_sessions_once DO NOTHING RETURNING id`,
      [caller.tenant.id, sessionRowId, locked.id, input.session_id, input.hook],
    );
    if (inserted === undefined) {
      await touchSession(tx, caller, locked.id, input.session_id);
      return { started: false, enabled: true };
    }
    const eventId = await insertEvent(tx, caller, {
      installationId: locked.id,
      source: 'hook',
      type: 'session_started',
      sessionId: input.session_id,
      status: 'ok',
      occurredAt: now,
    });
    // Its own audit event, beside the call's context request that the tool's trail records.
    await auditLog.appendIn(tx, {
      tenantId: caller.tenant.id,
      surface: 'mcp',
      principalId: caller.principal.id,
      tokenId: caller.tokenId,
      requestId: call.requestId,
      dialect: call.dialect,
      tool: call.tool,
      action: 'activity.session_start',
      result: 'ok',
      resources: [installationResource(locked.id), { type: 'activity_session', id: sessionRowId }, { type: 'activity_event', id: eventId }],
      details: { hook: input.hook },
    });
    return { started: true, enabled: true };
  });
  return { sessionId: input.session_id, hook: input.hook, started: outcome.started, activityEnabled: outcome.enabled, context };
}

/** record_hook_activity_event: one native event of an installed hook; refreshes its coverage. */
export async function recordHookEvent(db: Db, caller: Caller, input: HookEventInput, audit?: AuditTrail) {
  ensureAgent(caller);
  const { event } = input;
  if (event.tool_name !== undefined && event.type !== 'tool_used') throw refuse.toolName();
  const status = checkStatus(event);
  const now = Date.now();
  const at = occurredAt(event.occurred_at, now);
  const capability = HOOK_EVENT_CAPABILITY[event.type];
  return db.tx(async (tx) => {
    await requireEnabled(tx, caller.tenant.id);
    const installation = await ownInstallation(tx, caller, input.local_installation_id, true);
    requireCapability(installation, capability, { hookEvent: event.type });
    await refreshCoverage(tx, caller, installation.id, capability, new Date(now).toISOString());
    await touchSession(tx, caller, installation.id, input.session_id);
    const eventId = await insertEvent(tx, caller, {
      installationId: installation.id,
      source: 'hook',
      type: event.type,
      sessionId: input.session_id,
      toolName: event.tool_name,
      status,
      errorCode: event.error_code,
      occurredAt: at,
    });
    await audit?.recordIn(tx, 'activity.hook_event', [installationResource(installation.id), { type: 'activity_event', id: eventId }], {
      event_type: event.type,
      status,
    });
    return { eventId };
  });
}

// ---------------------------------------------------------------------------------------------
// Administration (kgw activity)

const iso = (value: Date | string): string => new Date(value).toISOString();

export interface InstallationListing {
  local_installation_id: string;
  agent: string;
  integration: string;
  transport: Transport;
  capabilities: Capability[];
  client_version: string | null;
  /** Hook capability -> when a native hook of it last reached the gateway. */
  coverage: Record<string, string>;
  sessions: number;
  events: number;
  created_at: string;
  updated_at: string;
  last_seen_at: string;
}

export interface EventListing {
  event_id: string;
  agent: string;
  local_installation_id: string;
  integration: string;
  source: 'client' | 'hook';
  type: string;
  session_id: string | null;
  tool_name: string | null;
  subject: { type: SubjectType; id: string; version: number | null } | null;
  status: 'ok' | 'error';
  error_code: string | null;
  occurred_at: string;
  recorded_at: string;
}

export interface ActivityListing {
  tenant: string;
  activity_enabled: boolean;
  agent: string | null;
  installations: InstallationListing[];
  /** The most recent events, newest first, at most `limit`. */
  events: EventListing[];
  limit: number;
}

export const DEFAULT_LIST_LIMIT = 20;
export const MAX_LIST_LIMIT = 1000;

interface InstallationListRow extends Omit<InstallationListing, 'local_installation_id' | 'created_at' | 'updated_at' | 'last_seen_at'> {
  id: string;
  created_at: Date;
  updated_at: Date;
  last_seen_at: Date;
}

interface EventListRow extends Omit<EventListing, 'event_id' | 'local_installation_id' | 'subject' | 'occurred_at' | 'recorded_at'> {
  id: string;
  installation_id: string;
  subject_type: SubjectType | null;
  subject_id: string | null;
  subject_version: number | null;
  occurred_at: Date;
  recorded_at: Date;
}

/** The installations and the most recent events of a tenant, optionally of one agent. */
export async function listActivity(db: Db, input: { tenant: string; agent?: string | undefined; limit?: number | undefined }): Promise<ActivityListing> {
  const limit = input.limit ?? DEFAULT_LIST_LIMIT;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) throw validation(`limit must be a whole number from 1 to ${MAX_LIST_LIMIT}`);
  const tenant = await requireTenant(db, input.tenant);
  const agentId = input.agent === undefined ? undefined : (await requireAgent(db, tenant, input.agent)).id;
  const installations = await db.query<InstallationListRow>(
    `SELECT i.id, p.name AS agent, i.integration, i.transport, i.capabilities, i.client_version, i.coverage, i.created_at, i.updated_at, i.last_seen_at,
            (SELECT count(*)::int FROM activity_sessions s WHERE s.tenant_id = i.tenant_id AND s.installation_id = i.id) AS sessions,
            (SELECT count(*)::int FROM activity_events e WHERE e.tenant_id = i.tenant_id AND e.installation_id = i.id) AS events
       FROM activity_installations i JOIN principals p ON p.tenant_id = i.tenant_id AND p.id = i.agent_id
      WHERE i.tenant_id = $1 AND ($2::uuid IS NULL OR i.agent_id = $2)
      ORDER BY p.name, i.created_at, i.id`,
    [tenant.id, agentId ?? null],
  );
  const events = await db.query<EventListRow>(
    `SELECT e.id, p.name AS agent, e.installation_id, i.integration, e.source, e.type, e.session_id, e.tool_name, e.subject_type, e.subject_id, e.subject_version,
            e.status, e.error_code, e.occurred_at, e.recorded_at
       FROM activity_events e
       JOIN principals p ON p.tenant_id = e.tenant_id AND p.id = e.agent_id
       JOIN activity_installations i ON i.tenant_id = e.tenant_id AND i.id = e.installation_id
      WHERE e.tenant_id = $1 AND ($2::uuid IS NULL OR e.agent_id = $2)
      ORDER BY e.recorded_at DESC, e.occurred_at DESC, e.id
      LIMIT $3`,
    [tenant.id, agentId ?? null, limit],
  );
  return {
    tenant: tenant.slug,
    activity_enabled: await activityEnabled(db, tenant.id),
    agent: input.agent ?? null,
    installations: installations.map(({ id, created_at, updated_at, last_seen_at, ...rest }) => ({
      local_installation_id: id,
      ...rest,
      created_at: iso(created_at),
      updated_at: iso(updated_at),
      last_seen_at: iso(last_seen_at),
    })),
    events: events.map(({ id, installation_id, subject_type, subject_id, subject_version, occurred_at, recorded_at, ...rest }) => ({
      event_id: id,
      local_installation_id: installation_id,
      ...rest,
      subject: subject_type === null || subject_id === null ? null : { type: subject_type, id: subject_id, version: subject_version },
      occurred_at: iso(occurred_at),
      recorded_at: iso(recorded_at),
    })),
    limit,
  };
}

/** Switches Activity on or off for a tenant (kgw activity --enable / --disable); audited. */
export async function setActivityEnabled(
  db: Db,
  auditLog: AuditLog,
  input: { tenant: string; enabled: boolean },
): Promise<{ tenant: string; activity_enabled: boolean; changed: boolean }> {
  return db.tx(async (tx) => {
    const tenant = await requireTenant(tx, input.tenant);
    const before = await activityEnabled(tx, tenant.id);
    await tx.query(
      `INSERT INTO activity_settings (tenant_id, enabled) VALUES ($1, $2)
       ON CONFLICT (tenant_id) DO UPDATE SET enabled = EXCLUDED.enabled, updated_at = now()`,
      [tenant.id, input.enabled],
    );
    const changed = before !== input.enabled;
    await auditLog.appendIn(tx, {
      tenantId: tenant.id,
      surface: 'cli',
      action: input.enabled ? 'activity.enable' : 'activity.disable',
      result: 'ok',
      details: { changed },
    });
    return { tenant: tenant.slug, activity_enabled: input.enabled, changed };
  });
}
