import { createHash, randomUUID } from 'node:crypto';
import type { Caller, TenantRef } from '../access/caller.ts';
import { canRead } from '../access/context-decisions.ts';
import { atLeast } from '../access/context-roles.ts';
import { contextRoleTable } from '../access/grants.ts';
import type { AuditResource } from '../audit/audit-log.ts';
import type { AuditTrail } from '../audit/trail.ts';
import { requireAgent, requireTenant } from '../directory/directory.ts';
import { refusal } from '../errors.ts';
import type { Db, Queryable, Transaction } from '../../store/db.ts';
import { valuesList } from '../../store/db.ts';
import { artifactVersion } from './artifacts.ts';
import { ensure, isUuid, parseId, parsePublishSelector } from './common.ts';

/**
 * Alignbase messages: an agent sends a note and exact Artifact versions to other agents of its
 * tenant and to Groups with agents (send_context); each delivered agent gets an inbox row that
 * read_inbox and get_current_context issue and mark read. A send grants only the Viewer or
 * Editor access it names, as context_shares that the access core reads next to the org file's
 * grants (a Group share also covers the Group's future members). Everything a send writes,
 * audit included, is one transaction; a retry with the same idempotency_key and input answers
 * the stored result. docs/alignbase.md, "Messages".
 */

export const MAX_RECIPIENTS = 20;
export const MAX_ARTIFACTS = 20;
/** Unicode characters (code points), as PostgreSQL's char_length counts them. */
export const MESSAGE_MAX_CHARS = 10_000;
/** read_inbox's page. */
export const INBOX_PAGE = 20;
/** The new messages get_current_context issues at most. */
export const CONTEXT_MESSAGES = 10;

/** The refusals of messages, each with its machine reason; the messages are plain English. */
const refuse = {
  recipientsCount: () => refusal('validation', 'recipients_count', { max: MAX_RECIPIENTS }, `recipients must list 1 to ${MAX_RECIPIENTS} agents or Groups`),
  recipientType: () => refusal('validation', 'recipient_type', {}, 'recipient type must be agent or group'),
  recipientId: () => refusal('validation', 'invalid_recipient_id', {}, 'invalid recipient id'),
  recipientTwice: () => refusal('validation', 'recipient_twice', {}, 'each recipient may be listed only once'),
  self: () => refusal('validation', 'send_to_self', {}, 'an agent cannot send context to itself'),
  empty: () => refusal('validation', 'empty_message', {}, 'send a message, Artifacts, or both'),
  messageTooLong: () => refusal('validation', 'message_too_long', { max: MESSAGE_MAX_CHARS }, 'message cannot exceed 10,000 characters'),
  artifactsCount: () => refusal('validation', 'artifacts_count', { max: MAX_ARTIFACTS }, `at most ${MAX_ARTIFACTS} Artifacts per message`),
  artifactTwice: () => refusal('validation', 'artifact_twice', {}, 'each Artifact may be listed only once'),
  access: () => refusal('validation', 'invalid_access', {}, 'access must be viewer or editor'),
  key: () => refusal('validation', 'invalid_idempotency_key', {}, 'the idempotency key must be a UUID'),
  keyReused: (messageId: string) =>
    refusal('conflict', 'idempotency_key_reused', {}, 'the idempotency key was already used with different input', { message_id: messageId }),
  offset: () => refusal('validation', 'invalid_inbox_offset', {}, 'offset must be a whole number of 0 or more'),
  offsetUnread: () => refusal('validation', 'offset_without_include_read', {}, 'an offset is only used when read messages are included'),
  /** An addressed agent or Group that is not in the caller's tenant, or cannot be messaged. */
  recipientNotFound: (recipientType: RecipientType, id: string) =>
    refusal('not_found', 'recipient_not_found', { recipientType, id }, `recipient not found: ${recipientType} ${id}`),
  /** A Group whose agents are none but the sender: a send would reach nobody. */
  groupWithoutAgents: (name: string) => refusal('validation', 'group_without_agents', { name }, `Group "${name}" has no other agents to receive the message`),
};

export type RecipientType = 'agent' | 'group';
export type ShareAccess = 'viewer' | 'editor';

// ---------------------------------------------------------------------------------------------
// list_context_recipients

export interface Recipient {
  type: RecipientType;
  id: string;
  name: string;
  /** Groups only: the Group's agents (people are not counted; the caller is, when a member). */
  member_count?: number;
}

const byTypeThenName = (a: Recipient, b: Recipient): number =>
  a.type !== b.type ? (a.type < b.type ? -1 : 1) : a.name !== b.name ? (a.name < b.name ? -1 : 1) : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;

/**
 * Every agent of the tenant but the caller, and every Group with at least one agent besides the
 * caller, agents first, each by name. People receive no messages; a person may message no one.
 */
export async function listRecipients(q: Queryable, caller: Caller): Promise<Recipient[]> {
  if (caller.principal.kind !== 'agent') return [];
  const rows = await q.query<{ type: RecipientType; id: string; name: string; member_count: number | null }>(
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
    [caller.tenant.id, caller.principal.id],
  );
  return rows
    .map((row): Recipient =>
      row.type === 'agent'
        ? { type: 'agent', id: row.id, name: row.name }
        : { type: 'group', id: row.id, name: row.name, member_count: Number(row.member_count) },
    )
    .sort(byTypeThenName);
}

// ---------------------------------------------------------------------------------------------
// send_context

export interface SendInput {
  readonly recipients: readonly { readonly type: string; readonly id: string }[];
  readonly message?: string | undefined;
  readonly artifacts?: readonly { readonly artifact_id: string; readonly version?: string | number | undefined; readonly access: string }[] | undefined;
  readonly idempotency_key: string;
}

interface SendRequest {
  readonly key: string;
  readonly message: string | null;
  readonly recipients: readonly { type: RecipientType; id: string }[];
  readonly artifacts: readonly { id: string; selector: 'latest' | { exact: number }; access: ShareAccess }[];
}

export interface SentArtifact {
  artifact_id: string;
  name: string;
  version: number;
  version_id: string;
  access: ShareAccess;
}

export interface SendResult {
  message_id: string;
  recipients: { type: RecipientType; id: string; name: string }[];
  /** Inbox rows written: the agents the message reached. */
  delivered_to: number;
  artifacts: SentArtifact[];
  created_at: string;
  /** True when the idempotency_key was used before with this input: nothing was written now. */
  replayed: boolean;
}

const isRecipientType = (value: string): value is RecipientType => value === 'agent' || value === 'group';
const isShareAccess = (value: string): value is ShareAccess => value === 'viewer' || value === 'editor';

/** Checks the shape of a send before anything is looked up; ids are compared in lower case. */
function parseSend(input: SendInput): SendRequest {
  if (!isUuid(input.idempotency_key)) throw refuse.key();
  if (input.recipients.length === 0 || input.recipients.length > MAX_RECIPIENTS) throw refuse.recipientsCount();
  const recipients: { type: RecipientType; id: string }[] = [];
  const seenRecipients = new Set<string>();
  for (const recipient of input.recipients) {
    if (!isRecipientType(recipient.type)) throw refuse.recipientType();
    if (!isUuid(recipient.id)) throw refuse.recipientId();
    const id = recipient.id.toLowerCase();
    const key = `${recipient.type}:${id}`;
    if (seenRecipients.has(key)) throw refuse.recipientTwice();
    seenRecipients.add(key);
    recipients.push({ type: recipient.type, id });
  }
  // A blank note says nothing: it is no message.
  const message = input.message === undefined || input.message.trim() === '' ? null : input.message;
  if (message !== null && [...message].length > MESSAGE_MAX_CHARS) throw refuse.messageTooLong();
  const rawArtifacts = input.artifacts ?? [];
  if (rawArtifacts.length > MAX_ARTIFACTS) throw refuse.artifactsCount();
  const artifacts: SendRequest['artifacts'][number][] = [];
  const seenArtifacts = new Set<string>();
  for (const entry of rawArtifacts) {
    const id = parseId('artifact', entry.artifact_id);
    const selector = parsePublishSelector(entry.version);
    if (!isShareAccess(entry.access)) throw refuse.access();
    if (seenArtifacts.has(id)) throw refuse.artifactTwice();
    seenArtifacts.add(id);
    artifacts.push({ id, selector, access: entry.access });
  }
  if (message === null && artifacts.length === 0) throw refuse.empty();
  return { key: input.idempotency_key.toLowerCase(), message, recipients, artifacts };
}

/**
 * sha256 of the canonical input: recipients and Artifacts in a fixed order (the order given
 * does not change what a send does), an omitted version equal to "latest", a numeric string
 * equal to its number.
 */
function requestHash(request: SendRequest): string {
  const canonical = {
    recipients: request.recipients.map((r) => `${r.type}:${r.id}`).sort(),
    message: request.message,
    artifacts: request.artifacts
      .map((a) => ({ artifact_id: a.id, version: a.selector === 'latest' ? null : a.selector.exact, access: a.access }))
      .sort((a, b) => (a.artifact_id < b.artifact_id ? -1 : 1)),
  };
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex');
}

interface StoredMessage {
  id: string;
  request_hash: string;
  created_at: Date;
}

async function findByKey(q: Queryable, caller: Caller, key: string): Promise<StoredMessage | undefined> {
  const [row] = await q.query<StoredMessage>(
    'SELECT id, request_hash, created_at FROM context_messages WHERE tenant_id = $1 AND sender_id = $2 AND idempotency_key = $3',
    [caller.tenant.id, caller.principal.id, key],
  );
  return row;
}

const artifactResources = (artifacts: readonly SentArtifact[]): AuditResource[] =>
  artifacts.map((a) => ({ type: 'artifact', id: a.artifact_id, version: a.version, version_id: a.version_id }));

/** The stored result of an earlier send with this key, when the input is the same. */
async function replay(q: Queryable, caller: Caller, stored: StoredMessage, hash: string, audit: AuditTrail | undefined): Promise<SendResult> {
  if (stored.request_hash !== hash) throw refuse.keyReused(stored.id);
  const tenantId = caller.tenant.id;
  // One query after another: `q` may be a transaction, whose connection runs one at a time.
  const recipients = await q.query<{ type: RecipientType; id: string; name: string }>(
    `SELECT CASE WHEN r.agent_id IS NULL THEN 'group' ELSE 'agent' END AS type, coalesce(r.agent_id, r.group_id) AS id, coalesce(p.name, g.name) AS name
       FROM context_message_recipients r
       LEFT JOIN principals p ON p.tenant_id = r.tenant_id AND p.id = r.agent_id
       LEFT JOIN groups g ON g.tenant_id = r.tenant_id AND g.id = r.group_id
      WHERE r.tenant_id = $1 AND r.message_id = $2
      ORDER BY r.position`,
    [tenantId, stored.id],
  );
  const artifacts: SentArtifact[] = (await pinnedArtifacts(q, tenantId, [stored.id])).map(({ artifact_id, name, version, version_id, access }) => ({
    artifact_id,
    name,
    version,
    version_id,
    access,
  }));
  const [count] = await q.query<{ count: number }>('SELECT count(*)::integer AS count FROM context_inbox WHERE tenant_id = $1 AND message_id = $2', [
    tenantId,
    stored.id,
  ]);
  audit?.readAs('message.replay');
  audit?.touch({ type: 'message', id: stored.id }, ...artifactResources(artifacts));
  return {
    message_id: stored.id,
    recipients,
    delivered_to: Number(count?.count ?? 0),
    artifacts,
    created_at: new Date(stored.created_at).toISOString(),
    replayed: true,
  };
}

interface ResolvedRecipients {
  readonly list: { type: RecipientType; id: string; name: string }[];
  /** Each delivered agent and the Group it came through (null: addressed itself), in delivery order. */
  readonly delivered: Map<string, string | null>;
}

/** Every recipient exists in the caller's tenant and can be messaged; the agents a send reaches. */
async function resolveRecipients(tx: Transaction, caller: Caller, recipients: SendRequest['recipients']): Promise<ResolvedRecipients> {
  const tenantId = caller.tenant.id;
  const agentIds = recipients.filter((r) => r.type === 'agent').map((r) => r.id);
  const groupIds = recipients.filter((r) => r.type === 'group').map((r) => r.id);
  if (agentIds.includes(caller.principal.id)) throw refuse.self();
  const agents =
    agentIds.length === 0
      ? []
      : await tx.query<{ id: string; name: string }>("SELECT id, name FROM principals WHERE tenant_id = $1 AND kind = 'agent' AND id = ANY($2::uuid[])", [
          tenantId,
          agentIds,
        ]);
  // A Group's agents now, except the sender, by name: a Group send targets its current agents.
  const groups =
    groupIds.length === 0
      ? []
      : await tx.query<{ id: string; name: string; agents: string[] }>(
          `SELECT g.id, g.name,
                  coalesce(array_agg(p.id::text ORDER BY p.name) FILTER (WHERE p.id IS NOT NULL AND p.id <> $3), '{}'::text[]) AS agents
             FROM groups g
             LEFT JOIN group_members m ON m.tenant_id = g.tenant_id AND m.group_id = g.id
             LEFT JOIN principals p ON p.tenant_id = m.tenant_id AND p.id = m.principal_id AND p.kind = 'agent'
            WHERE g.tenant_id = $1 AND g.id = ANY($2::uuid[])
            GROUP BY g.id, g.name`,
          [tenantId, groupIds, caller.principal.id],
        );
  const agentById = new Map(agents.map((a) => [a.id, a]));
  const groupById = new Map(groups.map((g) => [g.id, g]));
  const list: ResolvedRecipients['list'] = [];
  for (const recipient of recipients) {
    const found = recipient.type === 'agent' ? agentById.get(recipient.id) : groupById.get(recipient.id);
    if (found === undefined) throw refuse.recipientNotFound(recipient.type, recipient.id);
    if (recipient.type === 'group' && (groupById.get(recipient.id)?.agents.length ?? 0) === 0) throw refuse.groupWithoutAgents(found.name);
    list.push({ type: recipient.type, id: recipient.id, name: found.name });
  }
  // An agent addressed itself and through a Group gets one row, as addressed itself; through
  // several Groups, one row, through the first of them as listed.
  const delivered = new Map<string, string | null>();
  for (const id of agentIds) delivered.set(id, null);
  for (const id of groupIds) {
    for (const agent of groupById.get(id)?.agents ?? []) if (!delivered.has(agent)) delivered.set(agent, id);
  }
  return { list, delivered };
}

/**
 * Each Artifact pinned to its exact version (the latest now when omitted). The sender must read
 * it to share it (else `Artifact not found`), and hold Editor to share Editor (else `forbidden`).
 */
async function resolveArtifacts(tx: Transaction, caller: Caller, artifacts: SendRequest['artifacts']): Promise<SentArtifact[]> {
  const pinned: SentArtifact[] = [];
  for (const entry of artifacts) {
    const { head, role, version } = await artifactVersion(tx, caller, entry.id, entry.selector);
    ensure(entry.access === 'viewer' || atLeast(role, 'editor'));
    pinned.push({ artifact_id: entry.id, name: head.name, version: version.version, version_id: version.id, access: entry.access });
  }
  return pinned;
}

/**
 * send_context. Checks the input, then in one transaction: claims the idempotency key (a
 * concurrent send with the same key waits for the first and then answers its stored result),
 * checks every recipient and Artifact, and writes the message, its recipients and pinned
 * versions, one inbox row per delivered agent, the shares and the audit event. Any refusal
 * writes nothing.
 */
export async function sendContext(db: Db, caller: Caller, input: SendInput, audit?: AuditTrail): Promise<SendResult> {
  ensure(caller.principal.kind === 'agent');
  const request = parseSend(input);
  const hash = requestHash(request);
  const earlier = await findByKey(db, caller, request.key);
  if (earlier !== undefined) return replay(db, caller, earlier, hash, audit);
  const tenantId = caller.tenant.id;
  return db.tx(async (tx) => {
    const messageId = randomUUID();
    const [claimed] = await tx.query<{ seq: number; created_at: Date }>(
      `INSERT INTO context_messages (tenant_id, id, sender_id, idempotency_key, request_hash, message)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT ON CONSTRAINT context_messages_idempotency DO NOTHING
       RETURNING seq, created_at`,
      [tenantId, messageId, caller.principal.id, request.key, hash, request.message],
    );
    if (claimed === undefined) {
      // Another send with this key committed while this one waited for it.
      const winner = await findByKey(tx, caller, request.key);
      if (winner === undefined) throw new Error('send_context: the idempotency key is taken but its message is not visible');
      return replay(tx, caller, winner, hash, audit);
    }
    const recipients = await resolveRecipients(tx, caller, request.recipients);
    const artifacts = await resolveArtifacts(tx, caller, request.artifacts);

    await tx.query(
      `INSERT INTO context_message_recipients (tenant_id, message_id, position, agent_id, group_id) VALUES ${valuesList(recipients.list.length, 5)}`,
      recipients.list.flatMap((r, position) => [tenantId, messageId, position, r.type === 'agent' ? r.id : null, r.type === 'group' ? r.id : null]),
    );
    if (artifacts.length > 0) {
      await tx.query(
        `INSERT INTO context_message_artifacts (tenant_id, message_id, position, artifact_id, version, access) VALUES ${valuesList(artifacts.length, 6)}`,
        artifacts.flatMap((a, position) => [tenantId, messageId, position, a.artifact_id, a.version, a.access]),
      );
      const shares = recipients.list.flatMap((r) =>
        artifacts.map((a) => [tenantId, randomUUID(), r.type === 'agent' ? r.id : null, r.type === 'group' ? r.id : null, a.artifact_id, a.access, messageId]),
      );
      await tx.query(
        `INSERT INTO context_shares (tenant_id, id, principal_id, group_id, resource_id, role, message_id) VALUES ${valuesList(shares.length, 7)}`,
        shares.flat(),
      );
    }
    const deliveredIds = [...recipients.delivered.keys()];
    await tx.query(
      `INSERT INTO context_inbox (tenant_id, agent_id, message_id, message_seq, via_group_id)
       SELECT $1, d.agent_id, $2, $3, d.via_group_id FROM unnest($4::uuid[], $5::uuid[]) AS d(agent_id, via_group_id)`,
      [tenantId, messageId, claimed.seq, deliveredIds, deliveredIds.map((id) => recipients.delivered.get(id) ?? null)],
    );
    await audit?.recordIn(tx, 'message.send', artifactResources(artifacts), {
      message_id: messageId,
      recipients: recipients.list.map((r) => ({ type: r.type, id: r.id })),
      inbox_count: deliveredIds.length,
      artifacts: artifacts.map((a) => ({ artifact_id: a.artifact_id, access: a.access })),
    });
    return {
      message_id: messageId,
      recipients: recipients.list,
      delivered_to: deliveredIds.length,
      artifacts,
      created_at: new Date(claimed.created_at).toISOString(),
      replayed: false,
    };
  });
}

// ---------------------------------------------------------------------------------------------
// Inboxes: read_inbox, get_current_context, kgw inbox

export interface InboxArtifact {
  readonly id: string;
  readonly name: string;
  readonly version: number;
  readonly versionId: string;
  readonly access: ShareAccess;
  /** Whether the inbox's agent may read the Artifact now (a fresh check, not the share alone). */
  readonly available: boolean;
}

/** One message of an agent's inbox, as the core knows it. */
export interface InboxEntry {
  readonly id: string;
  /** The sending agent. */
  readonly from: { readonly id: string; readonly name: string };
  readonly sentAt: Date;
  /** The note; null when only Artifacts were sent. */
  readonly message: string | null;
  /** The Group the message reached the agent through; null when the agent was addressed itself. */
  readonly viaGroup: { readonly id: string; readonly name: string } | null;
  /** Exact Artifact versions pinned at send time, in the order sent. */
  readonly artifacts: readonly InboxArtifact[];
  readonly readAt: Date | null;
}

export interface InboxPage {
  readonly messages: readonly InboxEntry[];
  /** Where the next page of the whole inbox starts; null: no more (or unread messages were issued). */
  readonly nextOffset: number | null;
  /** Unread messages after the call. */
  readonly unreadRemaining: number;
}

/** A message as `kgw inbox` lists it (the admin operation's JSON). */
export interface InboxMessage {
  message_id: string;
  from: { agent_id: string; name: string };
  sent_at: string;
  message: string | null;
  via_group: { id: string; name: string } | null;
  artifacts: { artifact_id: string; name: string; version: number; version_id: string; access: ShareAccess; available: boolean }[];
  read_at: string | null;
}

function inboxListing(entry: InboxEntry): InboxMessage {
  return {
    message_id: entry.id,
    from: { agent_id: entry.from.id, name: entry.from.name },
    sent_at: entry.sentAt.toISOString(),
    message: entry.message,
    via_group: entry.viaGroup === null ? null : { id: entry.viaGroup.id, name: entry.viaGroup.name },
    artifacts: entry.artifacts.map((a) => ({
      artifact_id: a.id,
      name: a.name,
      version: a.version,
      version_id: a.versionId,
      access: a.access,
      available: a.available,
    })),
    read_at: entry.readAt === null ? null : entry.readAt.toISOString(),
  };
}

interface InboxRow {
  message_id: string;
  read_at: Date | null;
  via_group_id: string | null;
  via_group_name: string | null;
  sender_id: string;
  sender_name: string;
  message: string | null;
  created_at: Date;
}

const INBOX_SELECT = `
  SELECT i.message_id, i.read_at, i.via_group_id, g.name AS via_group_name,
         m.sender_id, s.name AS sender_name, m.message, m.created_at
    FROM context_inbox i
    JOIN context_messages m ON m.tenant_id = i.tenant_id AND m.id = i.message_id
    JOIN principals s ON s.tenant_id = m.tenant_id AND s.id = m.sender_id
    LEFT JOIN groups g ON g.tenant_id = i.tenant_id AND g.id = i.via_group_id
   WHERE i.tenant_id = $1 AND i.agent_id = $2`;

/** The Artifact versions pinned to messages, each message's in the order sent, and whether each Artifact is still active. */
async function pinnedArtifacts(
  q: Queryable,
  tenantId: string,
  messageIds: readonly string[],
): Promise<(SentArtifact & { message_id: string; active: boolean })[]> {
  const rows = await q.query<SentArtifact & { message_id: string; active: boolean }>(
    `SELECT a.message_id, a.artifact_id, r.name, a.version, v.id AS version_id, a.access, r.status = 'active' AS active
       FROM context_message_artifacts a
       JOIN context_resources r ON r.tenant_id = a.tenant_id AND r.id = a.artifact_id
       JOIN context_versions v ON v.tenant_id = a.tenant_id AND v.resource_id = a.artifact_id AND v.version = a.version
      WHERE a.tenant_id = $1 AND a.message_id = ANY($2::uuid[])
      ORDER BY a.message_id, a.position`,
    [tenantId, messageIds],
  );
  return rows.map((row) => ({ ...row, version: Number(row.version) }));
}

/** The rows as messages, with their pinned Artifacts and whether the agent may read each now. */
async function toMessages(q: Queryable, tenantId: string, agentId: string, rows: readonly InboxRow[]): Promise<InboxEntry[]> {
  if (rows.length === 0) return [];
  // One query after another: `q` may be a transaction.
  const artifactRows = await pinnedArtifacts(
    q,
    tenantId,
    rows.map((r) => r.message_id),
  );
  const roles = await contextRoleTable(q, tenantId, agentId, 'artifact');
  const byMessage = new Map<string, InboxArtifact[]>();
  for (const a of artifactRows) {
    const list = byMessage.get(a.message_id) ?? [];
    list.push({
      id: a.artifact_id,
      name: a.name,
      version: a.version,
      versionId: a.version_id,
      access: a.access,
      available: a.active && canRead(roles.roleOn(a.artifact_id)),
    });
    byMessage.set(a.message_id, list);
  }
  return rows.map((row) => ({
    id: row.message_id,
    from: { id: row.sender_id, name: row.sender_name },
    sentAt: new Date(row.created_at),
    message: row.message,
    viaGroup: row.via_group_id === null ? null : { id: row.via_group_id, name: row.via_group_name ?? '' },
    artifacts: byMessage.get(row.message_id) ?? [],
    readAt: row.read_at === null ? null : new Date(row.read_at),
  }));
}

async function unreadCount(q: Queryable, tenantId: string, agentId: string): Promise<number> {
  const [row] = await q.query<{ count: number }>(
    'SELECT count(*)::integer AS count FROM context_inbox WHERE tenant_id = $1 AND agent_id = $2 AND read_at IS NULL',
    [tenantId, agentId],
  );
  return Number(row?.count ?? 0);
}

/** A page of the whole inbox, newest first, marking nothing. */
async function inboxPage(
  q: Queryable,
  tenantId: string,
  agentId: string,
  offset: number,
  limit: number,
): Promise<{ messages: InboxEntry[]; nextOffset: number | null }> {
  const rows = await q.query<InboxRow>(`${INBOX_SELECT} ORDER BY i.message_seq DESC LIMIT $3 OFFSET $4`, [tenantId, agentId, limit + 1, offset]);
  const page = rows.slice(0, limit);
  return { messages: await toMessages(q, tenantId, agentId, page), nextOffset: rows.length > limit ? offset + limit : null };
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
  audit?: AuditTrail,
): Promise<InboxPage> {
  ensure(caller.principal.kind === 'agent');
  const offset = input.offset ?? 0;
  if (!Number.isSafeInteger(offset) || offset < 0) throw refuse.offset();
  const tenantId = caller.tenant.id;
  const agentId = caller.principal.id;
  audit?.readAs('inbox.read');
  if (input.include_read === true) {
    const [page, unread] = await Promise.all([inboxPage(db, tenantId, agentId, offset, INBOX_PAGE), unreadCount(db, tenantId, agentId)]);
    audit?.touch(...page.messages.map((m) => ({ type: 'message', id: m.id })));
    return { ...page, unreadRemaining: unread };
  }
  if (offset !== 0) throw refuse.offsetUnread();
  const result = await db.tx(async (tx) => {
    const issued = await takeUnread(tx, tenantId, agentId, INBOX_PAGE);
    return { messages: await toMessages(tx, tenantId, agentId, issued), unreadRemaining: await unreadCount(tx, tenantId, agentId) };
  });
  audit?.touch(...result.messages.map((m) => ({ type: 'message', id: m.id })));
  return { messages: result.messages, nextOffset: null, unreadRemaining: result.unreadRemaining };
}

/**
 * Marks the oldest `limit` unread messages read and returns them, oldest first. Rows another
 * call is issuing at the same moment are skipped, so two calls never issue the same message.
 */
async function takeUnread(tx: Transaction, tenantId: string, agentId: string, limit: number): Promise<InboxRow[]> {
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
  if (marked.length === 0) return [];
  return tx.query<InboxRow>(`${INBOX_SELECT} AND i.message_id = ANY($3::uuid[]) ORDER BY i.message_seq`, [tenantId, agentId, marked.map((m) => m.message_id)]);
}

/**
 * The new messages get_current_context issues: the oldest `limit` unread ones (not yet marked)
 * and how many are unread in all. The caller renders them, then marks them with markIssued.
 */
export async function newMessages(q: Queryable, caller: Caller, limit = CONTEXT_MESSAGES): Promise<{ messages: InboxEntry[]; unread: number }> {
  if (caller.principal.kind !== 'agent') return { messages: [], unread: 0 };
  const tenantId = caller.tenant.id;
  const agentId = caller.principal.id;
  const [rows, unread] = await Promise.all([
    q.query<InboxRow>(`${INBOX_SELECT} AND i.read_at IS NULL ORDER BY i.message_seq LIMIT $3`, [tenantId, agentId, limit]),
    unreadCount(q, tenantId, agentId),
  ]);
  return { messages: await toMessages(q, tenantId, agentId, rows), unread };
}

/** Marks issued messages read (those still unread); one small write transaction. */
export async function markIssued(db: Db, caller: Caller, messageIds: readonly string[]): Promise<void> {
  if (messageIds.length === 0) return;
  await db.tx((tx) =>
    tx.query('UPDATE context_inbox SET read_at = now() WHERE tenant_id = $1 AND agent_id = $2 AND message_id = ANY($3::uuid[]) AND read_at IS NULL', [
      caller.tenant.id,
      caller.principal.id,
      [...messageIds],
    ]),
  );
}

// ---------------------------------------------------------------------------------------------
// kgw inbox

export interface AdminInbox {
  tenant: string;
  agent: { id: string; name: string };
  /** Unread messages now. */
  unread: number;
  /** Default: the unread messages, oldest first (what the agent receives next); all: every message, newest first. */
  messages: InboxMessage[];
}

/** An agent's inbox for an administrator; marks nothing read. */
export async function adminInbox(db: Db, input: { tenant: string; agent: string; all: boolean }): Promise<AdminInbox> {
  const tenant: TenantRef = await requireTenant(db, input.tenant);
  const agent = await requireAgent(db, tenant, input.agent);
  const rows = await db.query<InboxRow>(`${INBOX_SELECT}${input.all ? '' : ' AND i.read_at IS NULL'} ORDER BY i.message_seq ${input.all ? 'DESC' : 'ASC'}`, [
    tenant.id,
    agent.id,
  ]);
  const [messages, unread] = await Promise.all([toMessages(db, tenant.id, agent.id, rows), unreadCount(db, tenant.id, agent.id)]);
  return { tenant: tenant.slug, agent: { id: agent.id, name: agent.name }, unread, messages: messages.map(inboxListing) };
}
