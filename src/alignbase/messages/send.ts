import { randomUUID } from 'node:crypto';
import type { Db, Queryable, Transaction } from '../../store/db.ts';
import type { Caller } from '../../kernel/access/caller.ts';
import { atLeast } from '../access/context-roles.ts';
import type { AuditResource } from '../../kernel/audit/audit-log.ts';
import type { AuditTrail } from '../../kernel/audit/trail.ts';
import { artifactVersion } from '../context/artifacts.ts';
import { ensure } from '../versions/access.ts';
import { earlierSend, requestHash } from './idempotency.ts';
import type { SendResult, SentArtifact } from './model.ts';
import type { StoredMessage } from './queries.ts';
import { claimMessage, countDeliveries, insertAddressed, insertInboxRows, insertPinsAndShares, selectAddressed, selectPinnedArtifacts } from './queries.ts';
import { resolveRecipients } from './recipients.ts';
import { refuse } from './refusals.ts';
import type { SendInput, SendRequest } from './send-input.ts';
import { parseSend } from './send-input.ts';

/*
 * send_context: an agent sends a note and exact Artifact versions to other agents of its
 * tenant and to Groups with agents; each delivered agent gets an inbox row. A send grants only
 * the Viewer or Editor access it names, as context_shares that the access core reads next to
 * the org file's grants (a Group share also covers the Group's future members). Everything a
 * send writes, audit included, is one transaction; a retry with the same idempotency_key and
 * input answers the stored result. docs/alignbase.md, "Messages".
 */

const artifactResources = (artifacts: readonly SentArtifact[]): AuditResource[] =>
  artifacts.map((a) => ({ type: 'artifact', id: a.id, version: a.version, version_id: a.versionId }));

/** The stored result of an earlier send with this key, when the input is the same. */
async function replay(q: Queryable, caller: Caller, stored: StoredMessage, hash: string, audit: AuditTrail): Promise<SendResult> {
  if (stored.requestHash !== hash) throw refuse.keyReused(stored.id);
  const tenantId = caller.tenant.id;
  // One query after another: `q` may be a transaction, whose connection runs one at a time.
  const recipients = await selectAddressed(q, tenantId, stored.id);
  const artifacts: SentArtifact[] = (await selectPinnedArtifacts(q, tenantId, [stored.id])).map(({ id, name, version, versionId, access }) => ({
    id,
    name,
    version,
    versionId,
    access,
  }));
  const deliveredTo = await countDeliveries(q, tenantId, stored.id);
  audit.readAs('message.replay');
  audit.touch({ type: 'message', id: stored.id }, ...artifactResources(artifacts));
  return { messageId: stored.id, recipients, deliveredTo, artifacts, createdAt: stored.createdAt, replayed: true };
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
    pinned.push({ id: entry.id, name: head.name, version: version.version, versionId: version.id, access: entry.access });
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
export async function sendContext(db: Db, caller: Caller, input: SendInput, audit: AuditTrail): Promise<SendResult> {
  ensure(caller.principal.kind === 'agent');
  const request = parseSend(input);
  const hash = requestHash(request);
  const earlier = await earlierSend(db, caller, request.key);
  if (earlier !== undefined) return replay(db, caller, earlier, hash, audit);
  const tenantId = caller.tenant.id;
  return db.tx(async (tx) => {
    const messageId = randomUUID();
    const claimed = await claimMessage(tx, {
      tenantId,
      id: messageId,
      senderId: caller.principal.id,
      key: request.key,
      requestHash: hash,
      message: request.message,
    });
    if (claimed === undefined) {
      // Another send with this key committed while this one waited for it.
      const winner = await earlierSend(tx, caller, request.key);
      if (winner === undefined) throw new Error('send_context: the idempotency key is taken but its message is not visible');
      return replay(tx, caller, winner, hash, audit);
    }
    const recipients = await resolveRecipients(tx, caller, request.recipients);
    const artifacts = await resolveArtifacts(tx, caller, request.artifacts);
    await insertAddressed(tx, tenantId, messageId, recipients.list);
    await insertPinsAndShares(tx, tenantId, messageId, recipients.list, artifacts);
    await insertInboxRows(tx, tenantId, messageId, claimed.seq, recipients.delivered);
    const deliveredTo = recipients.delivered.size;
    await audit.recordIn(tx, 'message.send', artifactResources(artifacts), {
      message_id: messageId,
      recipients: recipients.list.map((r) => ({ type: r.type, id: r.id })),
      inbox_count: deliveredTo,
      artifacts: artifacts.map((a) => ({ artifact_id: a.id, access: a.access })),
    });
    return { messageId, recipients: recipients.list, deliveredTo, artifacts, createdAt: claimed.createdAt, replayed: false };
  });
}
