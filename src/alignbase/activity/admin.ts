import type { Db } from '../../store/db.ts';
import type { AuditTrail } from '../../kernel/audit/trail.ts';
import { requireAgent, requireTenant } from '../../kernel/directory/directory.ts';
import { validation } from '../../kernel/errors.ts';
import { iso } from '../../kernel/instants.ts';
import type { EventSummary, InstallationSummary } from './queries.ts';
import { selectInstallations, selectRecentEvents, upsertEnabled } from './queries.ts';
import { activityEnabled } from './settings.ts';
import type { Capability, SubjectType, Transport } from './vocabulary.ts';

/*
 * Administration (kgw activity): the installations and recent events of a tenant, as the admin
 * operation's JSON (instants as ISO 8601 strings), and the tenant's Activity switch.
 */

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
  local_installation_id: string;
  agent: string;
  integration: string;
  source: 'client' | 'hook';
  type: string;
  session_id: string | null;
  tool_name: string | null;
  status: 'ok' | 'error';
  error_code: string | null;
  subject: { type: SubjectType; id: string; version: number | null } | null;
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

/** What an event is about, in one line (its session, tool and subject), or undefined when it names none: `kgw activity` and the console show it. */
export function eventDetail(event: EventListing): string | undefined {
  const parts: string[] = [];
  if (event.session_id !== null) parts.push(`session ${event.session_id}`);
  if (event.tool_name !== null) parts.push(`tool ${event.tool_name}`);
  if (event.subject !== null) parts.push(`${event.subject.type} ${event.subject.id}${event.subject.version === null ? '' : ` v${event.subject.version}`}`);
  return parts.length === 0 ? undefined : parts.join(', ');
}

export const DEFAULT_LIST_LIMIT = 20;
export const MAX_LIST_LIMIT = 1000;

const installationListing = (i: InstallationSummary): InstallationListing => ({
  local_installation_id: i.id,
  agent: i.agent,
  integration: i.integration,
  transport: i.transport,
  capabilities: i.capabilities,
  client_version: i.clientVersion,
  coverage: i.coverage,
  sessions: i.sessions,
  events: i.events,
  created_at: iso(i.createdAt),
  updated_at: iso(i.updatedAt),
  last_seen_at: iso(i.lastSeenAt),
});

const eventListing = (e: EventSummary): EventListing => ({
  event_id: e.id,
  local_installation_id: e.installationId,
  agent: e.agent,
  integration: e.integration,
  source: e.source,
  type: e.type,
  session_id: e.sessionId,
  tool_name: e.toolName,
  status: e.status,
  error_code: e.errorCode,
  subject: e.subject === null ? null : { type: e.subject.type, id: e.subject.id, version: e.subject.version },
  occurred_at: iso(e.occurredAt),
  recorded_at: iso(e.recordedAt),
});

/** The installations and the most recent events of a tenant, optionally of one agent. */
export async function listActivity(db: Db, input: { tenant: string; agent?: string | undefined; limit?: number | undefined }): Promise<ActivityListing> {
  const limit = input.limit ?? DEFAULT_LIST_LIMIT;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) throw validation(`limit must be a whole number from 1 to ${MAX_LIST_LIMIT}`);
  const tenant = await requireTenant(db, input.tenant);
  const agentId = input.agent === undefined ? null : (await requireAgent(db, tenant, input.agent)).id;
  const installations = await selectInstallations(db, tenant.id, agentId);
  const events = await selectRecentEvents(db, tenant.id, agentId, limit);
  return {
    tenant: tenant.slug,
    activity_enabled: await activityEnabled(db, tenant.id),
    agent: input.agent ?? null,
    installations: installations.map(installationListing),
    events: events.map(eventListing),
    limit,
  };
}

/** Switches Activity on or off for a tenant (kgw activity --enable / --disable); audited through `audit` (the CLI's trail). */
export async function setActivityEnabled(
  db: Db,
  audit: AuditTrail,
  input: { tenant: string; enabled: boolean },
): Promise<{ tenant: string; activity_enabled: boolean; changed: boolean }> {
  return db.tx(async (tx) => {
    const tenant = await requireTenant(tx, input.tenant);
    const before = await activityEnabled(tx, tenant.id);
    await upsertEnabled(tx, tenant.id, input.enabled);
    const changed = before !== input.enabled;
    await audit.about({ tenantId: tenant.id }).recordIn(tx, input.enabled ? 'activity.enable' : 'activity.disable', [], { changed });
    return { tenant: tenant.slug, activity_enabled: input.enabled, changed };
  });
}
