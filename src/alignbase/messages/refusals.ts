import { refusal } from '../../kernel/errors.ts';
import type { RecipientType } from './model.ts';

/** The reasons of messages, merged into the kernel's ReasonFacts below. */
export interface MessageReasonFacts {
  recipients_count: { max: number };
  recipient_type: Record<string, never>;
  invalid_recipient_id: Record<string, never>;
  recipient_twice: Record<string, never>;
  send_to_self: Record<string, never>;
  empty_message: Record<string, never>;
  message_too_long: { max: number };
  artifacts_count: { max: number };
  artifact_twice: Record<string, never>;
  invalid_access: Record<string, never>;
  invalid_idempotency_key: Record<string, never>;
  idempotency_key_reused: Record<string, never>;
  invalid_inbox_offset: Record<string, never>;
  offset_without_include_read: Record<string, never>;
  recipient_not_found: { recipientType: 'agent' | 'group'; id: string };
  group_without_agents: { name: string };
}

// The kernel's ReasonFacts gains these reasons, so a KgwError carries them as one `Reason`.
declare module '../../kernel/errors.ts' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface ReasonFacts extends MessageReasonFacts {}
}

export const MAX_RECIPIENTS = 20;
export const MAX_ARTIFACTS = 20;
/** Unicode characters (code points), as PostgreSQL's char_length counts them. */
export const MESSAGE_MAX_CHARS = 10_000;

/** The refusals of messages, each with its machine reason; the messages are plain English. */
export const refuse = {
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
