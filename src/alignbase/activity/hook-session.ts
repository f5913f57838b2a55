import { randomUUID } from 'node:crypto';
import type { Db } from '../../store/db.ts';
import type { Caller } from '../../kernel/access/caller.ts';
import type { AuditTrail } from '../../kernel/audit/trail.ts';
import type { BundleLayout } from '../context/bundle.ts';
import { currentContext } from '../context/current-context.ts';
import { installationResource, ownInstallation, touchOwnInstallation } from './installations.ts';
import { insertEvent, insertSession, refreshCoverage, touchSession } from './queries.ts';
import { activityEnabled } from './settings.ts';
import type { HookSessionInput } from './validate.ts';
import { ensureAgent, requireCapability } from './validate.ts';
import { HOOK_CAPABILITY } from './vocabulary.ts';

/**
 * start_hook_session: for an installation that reported the hook's capability. Records the
 * session start once per (installation, session_id), whoever races, refreshes the hook's
 * coverage, and returns the current context. With Activity disabled the context is still
 * returned and nothing is recorded.
 *
 * The call's trail records the context request and, beside it, the session start (the trail
 * names the request, dialect and tool of the call); `layout` is how the calling dialect lays
 * out the context.
 */
export async function startHookSession(db: Db, caller: Caller, input: HookSessionInput, layout: BundleLayout, audit: AuditTrail) {
  ensureAgent(caller);
  const capability = HOOK_CAPABILITY[input.hook];
  const tenantId = caller.tenant.id;
  const installation = await ownInstallation(db, caller, input.local_installation_id);
  requireCapability(installation, capability, { hook: input.hook });
  // The context first: when it cannot be built, nothing is recorded and the hook may retry.
  const context = await currentContext(db, caller, layout, audit);
  const outcome = await db.tx(async (tx) => {
    if (!(await activityEnabled(tx, tenantId))) return { started: false, enabled: false };
    // The installation's row lock (taken by touching it) makes concurrent starts take turns.
    const locked = await touchOwnInstallation(tx, caller, installation.id);
    requireCapability(locked, capability, { hook: input.hook });
    const now = new Date();
    await refreshCoverage(tx, tenantId, locked.id, capability, now);
    const sessionRowId = randomUUID();
    if (!(await insertSession(tx, tenantId, sessionRowId, locked.id, input.session_id, input.hook))) {
      await touchSession(tx, tenantId, locked.id, input.session_id);
      return { started: false, enabled: true };
    }
    const eventId = await insertEvent(tx, tenantId, caller.principal.id, {
      installationId: locked.id,
      source: 'hook',
      type: 'session_started',
      sessionId: input.session_id,
      status: 'ok',
      occurredAt: now,
    });
    // Its own audit event, beside the call's context request that the tool's trail records.
    await audit.recordBesideIn(
      tx,
      'activity.session_start',
      [installationResource(locked.id), { type: 'activity_session', id: sessionRowId }, { type: 'activity_event', id: eventId }],
      { hook: input.hook },
    );
    return { started: true, enabled: true };
  });
  return { sessionId: input.session_id, hook: input.hook, started: outcome.started, activityEnabled: outcome.enabled, context };
}
