import { createHash } from 'node:crypto';
import type { AuditTrail } from '../kernel/audit/trail.ts';
import type { Services } from '../kernel/services.ts';
import { registerOnce } from './inbox.ts';

/**
 * Email drafts an agent proposes (propose_draft_email): registered in the inbox for a manager,
 * never sent. On approval the draft is put in the approver's own mailbox (review.ts,
 * ../mail/mailbox.ts). docs/company-brain.md, "Email drafts".
 */

export const DRAFT_EMAIL_BOUNDS = {
  recipients: { min: 1, max: 10 },
  /** An address as SMTP bounds it (RFC 5321: 254 characters in a path). */
  addressChars: 254,
  subjectChars: { min: 1, max: 300 },
  bodyChars: { min: 1, max: 20_000 },
} as const;

export interface DraftEmailInput {
  readonly to: readonly string[];
  readonly subject: string;
  readonly bodyText: string;
}

export interface DraftEmailReceipt {
  /** The approval id, derived from the tenant and the content. */
  readonly id: string;
  readonly kind: 'email_draft';
  readonly status: 'pending' | 'accepted' | 'rejected';
  /** Whether the proposal existed already (a replay): nothing was registered. */
  readonly replayed: boolean;
}

/**
 * The approval id of a proposal: a UUID (version 8, RFC 9562's form for ids of one's own
 * making) from the SHA-256 of the tenant and the content. The recipients count as a set (order
 * and letter case aside), the subject and body exactly; so a replay, or the same email proposed
 * again by anyone in the tenant, names the proposal that exists.
 */
export function approvalId(tenantId: string, input: DraftEmailInput): string {
  const recipients = [...new Set(input.to.map((address) => address.toLowerCase()))].sort();
  const hex = createHash('sha256')
    .update(JSON.stringify(['email_draft', tenantId, recipients, input.subject, input.bodyText]))
    .digest('hex');
  const variant = ((Number.parseInt(hex.charAt(16), 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** Registers the proposal, or finds the one its content names already (also under concurrent replays). */
export async function proposeDraftEmail(
  services: Services,
  tenantId: string,
  authorId: string,
  input: DraftEmailInput,
  audit: AuditTrail,
): Promise<DraftEmailReceipt> {
  const id = approvalId(tenantId, input);
  const existing = await registerOnce(
    services,
    tenantId,
    id,
    { kind: 'email_draft', title: input.subject, body: input.bodyText, related: [], authorId, action: null, details: null, recipients: input.to },
    (tx) => audit.recordIn(tx, 'outreach.propose', [{ type: 'brain_inbox', id }], { recipients: input.to.length }),
  );
  return { id, kind: 'email_draft', status: existing ?? 'pending', replayed: existing !== undefined };
}

// An address as RFC 5322's dot-atom allows it (letters of any script too, RFC 6531), at a
// domain of two or more labels: nothing a header could read as a second address, a display
// name, a comment or a line break. Quoted local parts and address literals are not taken.
const LOCAL = /^[\p{L}\p{N}\p{M}!#$%&'*+/=?^_`{|}~-]+(?:\.[\p{L}\p{N}\p{M}!#$%&'*+/=?^_`{|}~-]+)*$/u;
const LABEL = /^[\p{L}\p{N}\p{M}](?:[\p{L}\p{N}\p{M}-]{0,61}[\p{L}\p{N}\p{M}])?$/u;

/** Whether `value` is one plain email address (no display name), within SMTP's bounds. */
export function isEmailAddress(value: string): boolean {
  if (value.length > DRAFT_EMAIL_BOUNDS.addressChars) return false;
  const at = value.lastIndexOf('@');
  if (at <= 0) return false;
  const local = value.slice(0, at);
  const labels = value.slice(at + 1).split('.');
  const tld = labels.at(-1) ?? '';
  return local.length <= 64 && LOCAL.test(local) && labels.length >= 2 && labels.every((label) => LABEL.test(label)) && !/^\d+$/.test(tld);
}
