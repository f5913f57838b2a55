import { randomUUID } from 'node:crypto';
import type { Db, Queryable, Transaction } from '../../store/db.ts';
import type { Caller } from '../../kernel/access/caller.ts';
import type { AuditResource } from '../../kernel/audit/audit-log.ts';
import type { AuditTrail } from '../../kernel/audit/trail.ts';
import type { Installation } from './queries.ts';
import { countInstallations, findInstallation, insertInstallation, lockRegistrations, touchInstallation, updateInstallation } from './queries.ts';
import { refuse } from './refusals.ts';
import type { InstallationReport } from './validate.ts';
import { ensureAgent } from './validate.ts';
import { CAPABILITIES, MAX_INSTALLATIONS_PER_AGENT } from './vocabulary.ts';

export const installationResource = (id: string): AuditResource => ({ type: 'activity_installation', id });

/**
 * The calling agent's installation, or not found (another agent's or tenant's installation is
 * indistinguishable from none).
 */
export async function ownInstallation(q: Queryable, caller: Caller, id: string): Promise<Installation> {
  const found = await findInstallation(q, caller.tenant.id, id.toLowerCase(), caller.principal.id);
  if (found === undefined) throw refuse.installationNotFound();
  return found;
}

/** As ownInstallation, refreshing its last_seen_at, which also takes the row lock. */
export async function touchOwnInstallation(tx: Transaction, caller: Caller, id: string): Promise<Installation> {
  const found = await touchInstallation(tx, caller.tenant.id, id.toLowerCase(), caller.principal.id);
  if (found === undefined) throw refuse.installationNotFound();
  return found;
}

/**
 * report_installation_capabilities: registers a new installation of the calling agent, or
 * replaces what an existing one (local_installation_id) reported. Works whether or not
 * Activity is enabled: the registry is configuration, not evidence.
 */
export async function reportInstallation(db: Db, caller: Caller, input: InstallationReport, audit: AuditTrail) {
  ensureAgent(caller);
  const capabilities = CAPABILITIES.filter((c) => input.capabilities.includes(c));
  const tenantId = caller.tenant.id;
  const agentId = caller.principal.id;
  const fields = { integration: input.integration, transport: input.transport, capabilities, clientVersion: input.client_version ?? null };
  return db.tx(async (tx) => {
    let id: string;
    let registered: boolean;
    if (input.local_installation_id !== undefined) {
      id = input.local_installation_id.toLowerCase();
      if (!(await updateInstallation(tx, tenantId, id, agentId, fields))) throw refuse.installationNotFound();
      registered = false;
    } else {
      // One agent's registrations take turns, so the limit holds under concurrent reports.
      await lockRegistrations(tx, tenantId, agentId);
      if ((await countInstallations(tx, tenantId, agentId)) >= MAX_INSTALLATIONS_PER_AGENT) throw refuse.tooManyInstallations();
      id = randomUUID();
      await insertInstallation(tx, tenantId, id, agentId, fields);
      registered = true;
    }
    await audit.recordIn(tx, registered ? 'activity.installation_register' : 'activity.installation_update', [installationResource(id)], {
      integration: input.integration,
      transport: input.transport,
      capabilities,
    });
    return { installationId: id, registered, capabilities };
  });
}
