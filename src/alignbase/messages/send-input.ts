import { isUuid, parseId, parsePublishSelector } from '../versions/selectors.ts';
import type { RecipientType, ShareAccess } from './model.ts';
import { MAX_ARTIFACTS, MAX_RECIPIENTS, MESSAGE_MAX_CHARS, refuse } from './refusals.ts';

/** send_context's input as the tools receive it (shaped by their schemas, not yet checked). */
export interface SendInput {
  readonly recipients: readonly { readonly type: string; readonly id: string }[];
  readonly message?: string | undefined;
  readonly artifacts?: readonly { readonly artifact_id: string; readonly version?: string | number | undefined; readonly access: string }[] | undefined;
  readonly idempotency_key: string;
}

/** A send whose shape was checked: ids in lower case, a blank note dropped, versions parsed. */
export interface SendRequest {
  readonly key: string;
  readonly message: string | null;
  readonly recipients: readonly { readonly type: RecipientType; readonly id: string }[];
  readonly artifacts: readonly { readonly id: string; readonly selector: 'latest' | { exact: number }; readonly access: ShareAccess }[];
}

const isRecipientType = (value: string): value is RecipientType => value === 'agent' || value === 'group';
const isShareAccess = (value: string): value is ShareAccess => value === 'viewer' || value === 'editor';

/** Checks the shape of a send before anything is looked up; ids are compared in lower case. */
export function parseSend(input: SendInput): SendRequest {
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
