import type { Db } from '../../store/db.ts';
import type { TenantRef } from '../../kernel/access/caller.ts';
import { requireAgent, requireTenant } from '../../kernel/directory/directory.ts';
import { withArtifacts } from './inbox.ts';
import type { InboxEntry } from './model.ts';
import { countUnread, selectInbox } from './queries.ts';

/** An agent's inbox as an administrator sees it (kgw inbox). */
export interface AdminInbox {
  readonly tenant: TenantRef;
  readonly agent: { readonly id: string; readonly name: string };
  /** Unread messages now. */
  readonly unread: number;
  /** Default: the unread messages, oldest first (what the agent receives next); all: every message, newest first. */
  readonly messages: readonly InboxEntry[];
}

/** An agent's inbox for an administrator; marks nothing read. */
export async function adminInbox(db: Db, input: { tenant: string; agent: string; all: boolean }): Promise<AdminInbox> {
  const tenant = await requireTenant(db, input.tenant);
  const agent = await requireAgent(db, tenant, input.agent);
  const headers = await selectInbox(db, tenant.id, agent.id, input.all);
  const [messages, unread] = await Promise.all([withArtifacts(db, tenant.id, agent.id, headers), countUnread(db, tenant.id, agent.id)]);
  return { tenant, agent: { id: agent.id, name: agent.name }, unread, messages };
}
