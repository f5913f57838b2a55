import { createHash } from 'node:crypto';
import type { Queryable } from '../../store/db.ts';
import type { Caller } from '../../kernel/access/caller.ts';
import type { StoredMessage } from './queries.ts';
import { findMessageByKey } from './queries.ts';
import type { SendRequest } from './send-input.ts';

/**
 * sha256 of the canonical input: recipients and Artifacts in a fixed order (the order given
 * does not change what a send does), an omitted version equal to "latest", a numeric string
 * equal to its number.
 */
export function requestHash(request: SendRequest): string {
  const canonical = {
    recipients: request.recipients.map((r) => `${r.type}:${r.id}`).sort(),
    message: request.message,
    artifacts: request.artifacts
      .map((a) => ({ artifact_id: a.id, version: a.selector === 'latest' ? null : a.selector.exact, access: a.access }))
      .sort((a, b) => (a.artifact_id < b.artifact_id ? -1 : 1)),
  };
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex');
}

/** The caller's earlier send with this idempotency key, if any. */
export const earlierSend = (q: Queryable, caller: Caller, key: string): Promise<StoredMessage | undefined> =>
  findMessageByKey(q, caller.tenant.id, caller.principal.id, key);
