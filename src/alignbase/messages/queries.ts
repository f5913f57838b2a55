import { randomUUID } from 'node:crypto';
import type { Queryable, Transaction } from '../../store/db.ts';
import { valuesList } from '../../store/db.ts';
import type { AddressedRecipient, InboxHeader, Recipient, RecipientType, SentArtifact, ShareAccess } from './model.ts';

/*
 * Every statement of messages, each with the row type the store returns and the mapper that
 * turns it into the domain's values (numbers, Dates), so the logic never converts a column.
 */

// ---------------------------------------------------------------------------------------------
// Rows and their mappers

interface CountRow {
  count: number | string;
}
const toCount = (row: CountRow | undefined): number => Number(row?.count ?? 0);

interface RecipientRow {
  type: RecipientType;
  id: string;
  name: string;
  member_count: number | string | null;
}
const toRecipient = (row: RecipientRow): Recipient =>
  row.type === 'agent' ? { type: 'agent', id: row.id, name: row.name } : { type: 'group', id: row.id, name: row.name, memberCount: Number(row.member_count) };

/** A message as its idempotency key finds it. */
export interface StoredMessage {
  readonly id: string;
  readonly requestHash: string;
  readonly createdAt: Date;
}
interface StoredMessageRow {
  id: string;
  request_hash: string;
  created_at: Date | string;
}
const toStoredMessage = (row: StoredMessageRow): StoredMessage => ({ id: row.id, requestHash: row.request_hash, createdAt: new Date(row.created_at) });

interface AddressedRow {
  type: RecipientType;
  id: string;
  name: string;
}
const toAddressed = (row: AddressedRow): AddressedRecipient => ({ type: row.type, id: row.id, name: row.name });

/** A Group and its agents now but the sender, by name. */
export interface GroupAgents {
  readonly id: string;
  readonly name: string;
  readonly agents: readonly string[];
}

/** A pinned Artifact version with its message and whether the Artifact is still active. */
export interface PinnedArtifact extends SentArtifact {
  readonly messageId: string;
  readonly active: boolean;
}
interface PinnedArtifactRow {
  message_id: string;
  artifact_id: string;
  name: string;
  version: number | string;
  version_id: string;
  access: ShareAccess;
  active: boolean;
}
const toPinned = (row: PinnedArtifactRow): PinnedArtifact => ({
  messageId: row.message_id,
  id: row.artifact_id,
  name: row.name,
  version: Number(row.version),
  versionId: row.version_id,
  access: row.access,
  active: row.active,
});

interface InboxRow {
  message_id: string;
  read_at: Date | string | null;
  via_group_id: string | null;
  via_group_name: string | null;
  sender_id: string;
  sender_name: string;
  message: string | null;
  created_at: Date | string;
}
const toHeader = (row: InboxRow): InboxHeader => ({
  id: row.message_id,
  from: { id: row.sender_id, name: row.sender_name },
  sentAt: new Date(row.created_at),
  message: row.message,
  viaGroup: row.via_group_id === null ? null : { id: row.via_group_id, name: row.via_group_name ?? '' },
  readAt: row.read_at === null ? null : new Date(row.read_at),
});

// ---------------------------------------------------------------------------------------------
// Recipients

/** Every agent of the tenant but `callerId`, and every Group with an agent besides it, unordered. */
export async function selectRecipients(q: Queryable, tenantId: string, callerId: string): Promise<Recipient[]> {
  const rows = await q.query<RecipientRow>(
    `SELECT 'agent' AS type, p.id, p.name, NULL::integer AS member_count
       FROM principals p
      WHERE p.tenant_id = $1 AND p.kind = 'agent' AND p.id <> $2
     UNION ALL
     SELECT 'group' AS type, g.id, g.name, count(*)::integer AS member_count
       FROM groups g
       JOIN group_members m ON m.tenant_id = g.tenant_id AND m.group_id = g.id
       JOIN principals p ON p.tenant_id = m.tenant_id AND p.id = m.principal_id AND p.kind = 'agent'
      WHERE g.tenant_id = $1
      GROUP BY g.id, g.name
     HAVING count(*) FILTER (WHERE p.id <> $2) > 0`,
    [tenantId, callerId],
  );
  return rows.map(toRecipient);
}

/** The Groups among `ids` with their agents now except `senderId`, by name. */
export async function selectGroupAgents(q: Queryable, tenantId: string, ids: readonly string[], senderId: string): Promise<GroupAgents[]> {
  if (ids.length === 0) return [];
  return q.query<GroupAgents>(
    `SELECT g.id, g.name,
            coalesce(array_agg(p.id::text ORDER BY p.name) FILTER (WHERE p.id IS NOT NULL AND p.id <> $3), '{}'::text[]) AS agents
       FROM groups g
       LEFT JOIN group_members m ON m.tenant_id = g.tenant_id AND m.group_id = g.id
       LEFT JOIN principals p ON p.tenant_id = m.tenant_id AND p.id = m.principal_id AND p.kind = 'agent'
      WHERE g.tenant_id = $1 AND g.id = ANY($2::uuid[])
      GROUP BY g.id, g.name`,
    [tenantId, [...ids], senderId],
  );
}

/** The recipients a stored message was addressed to, in the order listed. */
export async function selectAddressed(q: Queryable, tenantId: string, messageId: string): Promise<AddressedRecipient[]> {
  const rows = await q.query<AddressedRow>(
    `SELECT CASE WHEN r.agent_id IS NULL THEN 'group' ELSE 'agent' END AS type, coalesce(r.agent_id, r.group_id) AS id, coalesce(p.name, g.name) AS name
       FROM context_message_recipients r
       LEFT JOIN principals p ON p.tenant_id = r.tenant_id AND p.id = r.agent_id
       LEFT JOIN groups g ON g.tenant_id = r.tenant_id AND g.id = r.group_id
      WHERE r.tenant_id = $1 AND r.message_id = $2
      ORDER BY r.position`,
    [tenantId, messageId],
  );
  return rows.map(toAddressed);
}

// ---------------------------------------------------------------------------------------------
// Messages

export async function findMessageByKey(q: Queryable, tenantId: string, senderId: string, key: string): Promise<StoredMessage | undefined> {
  const [row] = await q.query<StoredMessageRow>(
    'SELECT id, request_hash, created_at FROM context_messages WHERE tenant_id = $1 AND sender_id = $2 AND idempotency_key = $3',
    [tenantId, senderId, key],
  );
  return row === undefined ? undefined : toStoredMessage(row);
}

/** Inserts a message unless its idempotency key is taken (then undefined): its inbox order and time. */
export async function claimMessage(
  tx: Transaction,
  message: { tenantId: string; id: string; senderId: string; key: string; requestHash: string; message: string | null },
): Promise<{ seq: number; createdAt: Date } | undefined> {
  const [row] = await tx.query<{ seq: number | string; created_at: Date | string }>(
    `INSERT INTO context_messages (tenant_id, id, sender_id, idempotency_key, request_hash, message)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT ON CONSTRAINT context_messages_idempotency DO NOTHING
     RETURNING seq, created_at`,
    [message.tenantId, message.id, message.senderId, message.key, message.requestHash, message.message],
  );
  return row === undefined ? undefined : { seq: Number(row.seq), createdAt: new Date(row.created_at) };
}

export async function insertAddressed(tx: Transaction, tenantId: string, messageId: string, recipients: readonly AddressedRecipient[]): Promise<void> {
  await tx.query(
    `INSERT INTO context_message_recipients (tenant_id, message_id, position, agent_id, group_id) VALUES ${valuesList(recipients.length, 5)}`,
    recipients.flatMap((r, position) => [tenantId, messageId, position, r.type === 'agent' ? r.id : null, r.type === 'group' ? r.id : null]),
  );
}

/** The pinned versions, and one share per recipient and Artifact granting the access sent. */
export async function insertPinsAndShares(
  tx: Transaction,
  tenantId: string,
  messageId: string,
  recipients: readonly AddressedRecipient[],
  artifacts: readonly SentArtifact[],
): Promise<void> {
  if (artifacts.length === 0) return;
  await tx.query(
    `INSERT INTO context_message_artifacts (tenant_id, message_id, position, artifact_id, version, access) VALUES ${valuesList(artifacts.length, 6)}`,
    artifacts.flatMap((a, position) => [tenantId, messageId, position, a.id, a.version, a.access]),
  );
  const shares = recipients.flatMap((r) =>
    artifacts.map((a) => [tenantId, randomUUID(), r.type === 'agent' ? r.id : null, r.type === 'group' ? r.id : null, a.id, a.access, messageId]),
  );
  await tx.query(
    `INSERT INTO context_shares (tenant_id, id, principal_id, group_id, resource_id, role, message_id) VALUES ${valuesList(shares.length, 7)}`,
    shares.flat(),
  );
}

/** One inbox row per delivered agent: agent id -> the Group it came through (null: addressed itself). */
export async function insertInboxRows(
  tx: Transaction,
  tenantId: string,
  messageId: string,
  seq: number,
  delivered: ReadonlyMap<string, string | null>,
): Promise<void> {
  const agentIds = [...delivered.keys()];
  await tx.query(
    `INSERT INTO context_inbox (tenant_id, agent_id, message_id, message_seq, via_group_id)
     SELECT $1, d.agent_id, $2, $3, d.via_group_id FROM unnest($4::uuid[], $5::uuid[]) AS d(agent_id, via_group_id)`,
    [tenantId, messageId, seq, agentIds, agentIds.map((id) => delivered.get(id) ?? null)],
  );
}

export async function countDeliveries(q: Queryable, tenantId: string, messageId: string): Promise<number> {
  const [row] = await q.query<CountRow>('SELECT count(*)::integer AS count FROM context_inbox WHERE tenant_id = $1 AND message_id = $2', [tenantId, messageId]);
  return toCount(row);
}

/** The Artifact versions pinned to messages, each message's in the order sent, and whether each Artifact is still active. */
export async function selectPinnedArtifacts(q: Queryable, tenantId: string, messageIds: readonly string[]): Promise<PinnedArtifact[]> {
  const rows = await q.query<PinnedArtifactRow>(
    `SELECT a.message_id, a.artifact_id, r.name, a.version, v.id AS version_id, a.access, r.status = 'active' AS active
       FROM context_message_artifacts a
       JOIN context_resources r ON r.tenant_id = a.tenant_id AND r.id = a.artifact_id
       JOIN context_versions v ON v.tenant_id = a.tenant_id AND v.resource_id = a.artifact_id AND v.version = a.version
      WHERE a.tenant_id = $1 AND a.message_id = ANY($2::uuid[])
      ORDER BY a.message_id, a.position`,
    [tenantId, [...messageIds]],
  );
  return rows.map(toPinned);
}

// ---------------------------------------------------------------------------------------------
// Inboxes

const INBOX_COLUMNS = `i.message_id, i.read_at, i.via_group_id, g.name AS via_group_name,
         m.sender_id, s.name AS sender_name, m.message, m.created_at`;
const INBOX_FROM = `
    FROM context_inbox i
    JOIN context_messages m ON m.tenant_id = i.tenant_id AND m.id = i.message_id
    JOIN principals s ON s.tenant_id = m.tenant_id AND s.id = m.sender_id
    LEFT JOIN groups g ON g.tenant_id = i.tenant_id AND g.id = i.via_group_id
   WHERE i.tenant_id = $1 AND i.agent_id = $2`;
const INBOX_SELECT = `SELECT ${INBOX_COLUMNS}${INBOX_FROM}`;

export async function countUnread(q: Queryable, tenantId: string, agentId: string): Promise<number> {
  const [row] = await q.query<CountRow>('SELECT count(*)::integer AS count FROM context_inbox WHERE tenant_id = $1 AND agent_id = $2 AND read_at IS NULL', [
    tenantId,
    agentId,
  ]);
  return toCount(row);
}

/** `limit` messages of the whole inbox from `offset`, newest first. */
export async function selectInboxPage(q: Queryable, tenantId: string, agentId: string, offset: number, limit: number): Promise<InboxHeader[]> {
  const rows = await q.query<InboxRow>(`${INBOX_SELECT} ORDER BY i.message_seq DESC LIMIT $3 OFFSET $4`, [tenantId, agentId, limit, offset]);
  return rows.map(toHeader);
}

/**
 * The oldest `limit` unread messages, oldest first, and how many are unread in all: one named
 * statement (the count is a window over every unread message, taken before the LIMIT), as
 * get_current_context asks on every call.
 */
export async function selectUnread(q: Queryable, tenantId: string, agentId: string, limit: number): Promise<{ headers: InboxHeader[]; unread: number }> {
  const rows = await q.query<InboxRow & { unread: number | string }>(
    `SELECT ${INBOX_COLUMNS}, count(*) OVER () AS unread${INBOX_FROM} AND i.read_at IS NULL ORDER BY i.message_seq LIMIT $3`,
    [tenantId, agentId, limit],
    { prepare: 'kgw_unread_messages' },
  );
  return { headers: rows.map(toHeader), unread: Number(rows[0]?.unread ?? 0) };
}

/** Every message (newest first), or every unread one (oldest first). */
export async function selectInbox(q: Queryable, tenantId: string, agentId: string, all: boolean): Promise<InboxHeader[]> {
  const rows = await q.query<InboxRow>(`${INBOX_SELECT}${all ? '' : ' AND i.read_at IS NULL'} ORDER BY i.message_seq ${all ? 'DESC' : 'ASC'}`, [
    tenantId,
    agentId,
  ]);
  return rows.map(toHeader);
}

/** The given messages of the inbox, oldest first. */
export async function selectInboxMessages(q: Queryable, tenantId: string, agentId: string, messageIds: readonly string[]): Promise<InboxHeader[]> {
  const rows = await q.query<InboxRow>(`${INBOX_SELECT} AND i.message_id = ANY($3::uuid[]) ORDER BY i.message_seq`, [tenantId, agentId, [...messageIds]]);
  return rows.map(toHeader);
}

/**
 * Marks the oldest `limit` unread messages read and returns their ids. Rows another call is
 * issuing at the same moment are skipped, so two calls never issue the same message.
 */
export async function markOldestUnread(tx: Transaction, tenantId: string, agentId: string, limit: number): Promise<string[]> {
  // The page is picked once (MATERIALIZED): a locking subquery inside the UPDATE could be
  // rescanned per row, skip the rows this statement already changed, and take the next ones.
  const marked = await tx.query<{ message_id: string }>(
    `WITH page AS MATERIALIZED (
       SELECT u.message_id FROM context_inbox u
        WHERE u.tenant_id = $1 AND u.agent_id = $2 AND u.read_at IS NULL
        ORDER BY u.message_seq LIMIT $3 FOR UPDATE SKIP LOCKED)
     UPDATE context_inbox i SET read_at = now()
       FROM page
      WHERE i.tenant_id = $1 AND i.agent_id = $2 AND i.message_id = page.message_id AND i.read_at IS NULL
      RETURNING i.message_id`,
    [tenantId, agentId, limit],
  );
  return marked.map((m) => m.message_id);
}

/** Marks the given messages read, those still unread. */
export async function markRead(tx: Transaction, tenantId: string, agentId: string, messageIds: readonly string[]): Promise<void> {
  await tx.query('UPDATE context_inbox SET read_at = now() WHERE tenant_id = $1 AND agent_id = $2 AND message_id = ANY($3::uuid[]) AND read_at IS NULL', [
    tenantId,
    agentId,
    [...messageIds],
  ]);
}
