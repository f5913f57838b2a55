import type { Db } from '../../store/db.ts';
import type { Caller } from '../../kernel/access/caller.ts';
import type { AuditTrail } from '../../kernel/audit/trail.ts';
import { installationResource, touchOwnInstallation } from './installations.ts';
import { insertEvent, refreshCoverage, touchSession } from './queries.ts';
import { requireEnabled } from './settings.ts';
import type { ActivityEventInput, HookEventInput } from './validate.ts';
import { checkStatus, checkSubject, checkToolName, ensureAgent, occurredAt, requireCapability } from './validate.ts';
import { EVENT_RULES, HOOK_EVENT_CAPABILITY } from './vocabulary.ts';

/** record_activity_event: one allowed event of the caller's own installation, when Activity is enabled. */
export async function recordActivityEvent(db: Db, caller: Caller, input: ActivityEventInput, audit: AuditTrail) {
  ensureAgent(caller);
  const { event } = input;
  checkSubject(event);
  const status = checkStatus(event);
  const at = occurredAt(event.occurred_at, Date.now());
  return db.tx(async (tx) => {
    await requireEnabled(tx, caller.tenant.id);
    const installation = await touchOwnInstallation(tx, caller, input.local_installation_id);
    requireCapability(installation, EVENT_RULES[event.type].capability, { event: event.type });
    const eventId = await insertEvent(tx, caller.tenant.id, caller.principal.id, {
      installationId: installation.id,
      source: 'client',
      type: event.type,
      subject: event.subject,
      status,
      errorCode: event.error_code,
      occurredAt: at,
    });
    await audit.recordIn(tx, 'activity.event', [installationResource(installation.id), { type: 'activity_event', id: eventId }], {
      event_type: event.type,
      status,
    });
    return { eventId };
  });
}

/** record_hook_activity_event: one native event of an installed hook; refreshes its coverage. */
export async function recordHookEvent(db: Db, caller: Caller, input: HookEventInput, audit: AuditTrail) {
  ensureAgent(caller);
  const { event } = input;
  checkToolName(event);
  const status = checkStatus(event);
  const now = Date.now();
  const at = occurredAt(event.occurred_at, now);
  const capability = HOOK_EVENT_CAPABILITY[event.type];
  return db.tx(async (tx) => {
    await requireEnabled(tx, caller.tenant.id);
    const installation = await touchOwnInstallation(tx, caller, input.local_installation_id);
    requireCapability(installation, capability, { hookEvent: event.type });
    await refreshCoverage(tx, caller.tenant.id, installation.id, capability, new Date(now));
    await touchSession(tx, caller.tenant.id, installation.id, input.session_id);
    const eventId = await insertEvent(tx, caller.tenant.id, caller.principal.id, {
      installationId: installation.id,
      source: 'hook',
      type: event.type,
      sessionId: input.session_id,
      toolName: event.tool_name,
      status,
      errorCode: event.error_code,
      occurredAt: at,
    });
    await audit.recordIn(tx, 'activity.hook_event', [installationResource(installation.id), { type: 'activity_event', id: eventId }], {
      event_type: event.type,
      status,
    });
    return { eventId };
  });
}
