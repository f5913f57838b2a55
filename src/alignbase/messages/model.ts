/**
 * What the core knows of messages, in the domain's terms; each dialect maps these to its wire
 * (the Alignbase one in src/alignbase/dialect/messages.ts).
 */

export type RecipientType = 'agent' | 'group';
export type ShareAccess = 'viewer' | 'editor';

/** An agent or Group a message may be sent to (list_context_recipients). */
export type Recipient =
  | { readonly type: 'agent'; readonly id: string; readonly name: string }
  /** memberCount: the Group's agents (people are not counted; the caller is, when a member). */
  | { readonly type: 'group'; readonly id: string; readonly name: string; readonly memberCount: number };

/** A recipient a message was addressed to, as listed by the sender. */
export interface AddressedRecipient {
  readonly type: RecipientType;
  readonly id: string;
  readonly name: string;
}

/** An exact Artifact version pinned to a message, with the access the message grants. */
export interface SentArtifact {
  readonly id: string;
  readonly name: string;
  readonly version: number;
  readonly versionId: string;
  readonly access: ShareAccess;
}

export interface SendResult {
  readonly messageId: string;
  readonly recipients: readonly AddressedRecipient[];
  /** Inbox rows written: the agents the message reached. */
  readonly deliveredTo: number;
  readonly artifacts: readonly SentArtifact[];
  readonly createdAt: Date;
  /** True when the idempotency key was used before with this input: nothing was written now. */
  readonly replayed: boolean;
}

export interface InboxArtifact extends SentArtifact {
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

/** An inbox message before its Artifacts are looked up. */
export type InboxHeader = Omit<InboxEntry, 'artifacts'>;

export interface InboxPage {
  readonly messages: readonly InboxEntry[];
  /** Where the next page of the whole inbox starts; null: no more (or unread messages were issued). */
  readonly nextOffset: number | null;
  /** Unread messages after the call. */
  readonly unreadRemaining: number;
}
