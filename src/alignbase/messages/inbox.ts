import type { Db, Queryable } from '../../store/db.ts';
import type { Caller } from '../../kernel/access/caller.ts';
import { canRead } from '../access/context-decisions.ts';
import { contextRoleTable } from '../access/grants.ts';
import type { AuditTrail } from '../../kernel/audit/trail.ts';
import { ensure } from '../versions/access.ts';
import type { InboxArtifact, InboxEntry, InboxHeader, InboxPage } from './model.ts';
import { countUnread, markOldestUnread, markRead, selectInboxMessages, selectInboxPage, selectPinnedArtifacts, selectUnread } from './queries.ts';
import { refuse } from './refusals.ts';

/*
 * Inboxes: each delivered agent's messages, which read_inbox and get_current_context issue and
 * mark read (docs/alignbase.md, "Messages").
 */

/** read_inbox's page. */
export const INBOX_PAGE = 20;
/** The new messages get_current_context issues at most. */
export const CONTEXT_MESSAGES = 10;

/** The messages with their pinned Artifacts, and whether the agent may read each now. */
export async function withArtifacts(q: Queryable, tenantId: string, agentId: string, headers: readonly InboxHeader[]): Promise<InboxEntry[]> {
  if (headers.length === 0) return [];
  // One query after another: `q` may be a transaction.
  const pinned = await selectPinnedArtifacts(
    q,
    tenantId,
    headers.map((h) => h.id),
  );
  const roles = await contextRoleTable(q, tenantId, agentId, 'artifact');
  const byMessage = new Map<string, InboxArtifact[]>();
  for (const a of pinned) {
    const list = byMessage.get(a.messageId) ?? [];
    list.push({ id: a.id, name: a.name, version: a.version, versionId: a.versionId, access: a.access, available: a.active && canRead(roles.roleOn(a.id)) });
    byMessage.set(a.messageId, list);
  }
  return headers.map((header) => ({ ...header, artifacts: byMessage.get(header.id) ?? [] }));
}

/** A page of the whole inbox, newest first, marking nothing. */
async function inboxPage(
  q: Queryable,
  tenantId: string,
  agentId: string,
  offset: number,
  limit: number,
): Promise<{ messages: InboxEntry[]; nextOffset: number | null }> {
  // One more than the page tells whether another page follows.
  const headers = await selectInboxPage(q, tenantId, agentId, offset, limit + 1);
  const page = headers.slice(0, limit);
  return { messages: await withArtifacts(q, tenantId, agentId, page), nextOffset: headers.length > limit ? offset + limit : null };
}

/**
 * read_inbox for the connected agent. Default: the oldest 20 unread messages, every one of them
 * marked read as it is issued (read_at is the time of this call). include_read: the whole inbox
 * newest first from `offset`, 20 at a time, marking nothing. unread_remaining counts the unread
 * messages after the call.
 */
export async function readInbox(
  db: Db,
  caller: Caller,
  input: { include_read?: boolean | undefined; offset?: number | undefined },
  audit: AuditTrail,
): Promise<InboxPage> {
  ensure(caller.principal.kind === 'agent');
  const offset = input.offset ?? 0;
  if (!Number.isSafeInteger(offset) || offset < 0) throw refuse.offset();
  const tenantId = caller.tenant.id;
  const agentId = caller.principal.id;
  audit.readAs('inbox.read');
  if (input.include_read === true) {
    const [page, unread] = await Promise.all([inboxPage(db, tenantId, agentId, offset, INBOX_PAGE), countUnread(db, tenantId, agentId)]);
    audit.touch(...page.messages.map((m) => ({ type: 'message', id: m.id })));
    return { ...page, unreadRemaining: unread };
  }
  if (offset !== 0) throw refuse.offsetUnread();
  const result = await db.tx(async (tx) => {
    const marked = await markOldestUnread(tx, tenantId, agentId, INBOX_PAGE);
    const issued = marked.length === 0 ? [] : await selectInboxMessages(tx, tenantId, agentId, marked);
    return { messages: await withArtifacts(tx, tenantId, agentId, issued), unreadRemaining: await countUnread(tx, tenantId, agentId) };
  });
  audit.touch(...result.messages.map((m) => ({ type: 'message', id: m.id })));
  return { messages: result.messages, nextOffset: null, unreadRemaining: result.unreadRemaining };
}

/**
 * The new messages get_current_context issues: the oldest `limit` unread ones (not yet marked)
 * and how many are unread in all. The caller renders them, then marks them with markIssued.
 */
export async function newMessages(q: Queryable, caller: Caller, limit = CONTEXT_MESSAGES): Promise<{ messages: InboxEntry[]; unread: number }> {
  if (caller.principal.kind !== 'agent') return { messages: [], unread: 0 };
  const tenantId = caller.tenant.id;
  const agentId = caller.principal.id;
  const { headers, unread } = await selectUnread(q, tenantId, agentId, limit);
  return { messages: await withArtifacts(q, tenantId, agentId, headers), unread };
}

/** Marks issued messages read (those still unread); one small write transaction. */
export async function markIssued(db: Db, caller: Caller, messageIds: readonly string[]): Promise<void> {
  if (messageIds.length === 0) return;
  await db.tx((tx) => markRead(tx, caller.tenant.id, caller.principal.id, messageIds));
}
