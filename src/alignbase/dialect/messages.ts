import { z } from 'zod';
import { iso, isoOrNull } from '../../kernel/instants.ts';
import type { AdminInbox } from '../messages/admin.ts';
import { readInbox } from '../messages/inbox.ts';
import type { InboxEntry, Recipient, SendResult, SentArtifact } from '../messages/model.ts';
import { listRecipients } from '../messages/recipients.ts';
import { sendContext } from '../messages/send.ts';
import { defineTool, jsonReply } from '../../mcp/tool.ts';
import { READ, WRITE } from './schemas.ts';

const recipientType = z.enum(['agent', 'group']);
const access = z.enum(['viewer', 'editor']);

export const listContextRecipientsTool = defineTool({
  name: 'list_context_recipients',
  dialect: 'alignbase',
  title: 'List context recipients',
  description:
    'Lists the agents and Groups this agent may message with send_context: every other agent of the organization, and every Group with at least one other agent (member_count counts its agents). Agents first, then Groups, each by name.',
  input: z.object({}).strict(),
  output: z.object({
    recipients: z.array(
      z.object({
        type: recipientType,
        id: z.string(),
        name: z.string(),
        member_count: z.number().int().optional().describe('Groups only: the number of agents in the Group.'),
      }),
    ),
  }),
  annotations: READ,
  scopes: ['context.read'],
  async run({ caller, services }) {
    return jsonReply({ recipients: (await listRecipients(services.db, caller)).map(recipientOnWire) });
  },
});

const sentArtifact = z.object({ artifact_id: z.string(), name: z.string(), version: z.number().int(), version_id: z.string(), access });

export const sendContextTool = defineTool({
  name: 'send_context',
  dialect: 'alignbase',
  title: 'Send context',
  description:
    'Sends a message and/or exact Artifact versions to agents and Groups from list_context_recipients (1 to 20 recipients). Each Artifact names its artifact_id, an optional version (omitted: the latest now, pinned) and access viewer or editor; the recipients get only that access (sharing needs Viewer yourself, sharing editor needs Editor). A Group send reaches its current agents, and its access also covers future members. idempotency_key is a UUID you choose: retry with the same key and the same input to get the same result (replayed: true) without sending twice. Sending does not start the receiving agent.',
  input: z
    .object({
      recipients: z.array(z.object({ type: z.string().describe('agent or group'), id: z.string() }).strict()).describe('1 to 20 agents or Groups, each once.'),
      message: z.string().optional().describe('The note, at most 10,000 characters. Send a message, Artifacts, or both.'),
      artifacts: z
        .array(
          z
            .object({
              artifact_id: z.string(),
              version: z.union([z.number(), z.string()]).optional().describe('A positive version number; omitted or "latest" pins the latest version now.'),
              access: z.string().describe('viewer or editor'),
            })
            .strict(),
        )
        .optional()
        .describe('At most 20 Artifacts, each once.'),
      idempotency_key: z.string().describe('A UUID; reuse it, with the same input, only to retry this send.'),
    })
    .strict(),
  output: z.object({
    message_id: z.string(),
    recipients: z.array(z.object({ type: recipientType, id: z.string(), name: z.string() })),
    delivered_to: z.number().int().describe('The agents whose inbox received the message.'),
    artifacts: z.array(sentArtifact),
    created_at: z.string(),
    replayed: z.boolean().describe('True when this key was used before with the same input: nothing was sent again.'),
  }),
  annotations: WRITE,
  scopes: ['context.write'],
  async run({ caller, services, audit }, args) {
    return jsonReply(sentOnWire(await sendContext(services.db, caller, args, audit)));
  },
});

export const readInboxTool = defineTool({
  name: 'read_inbox',
  dialect: 'alignbase',
  title: 'Read inbox',
  description:
    'Returns up to 20 messages sent to this agent. By default the oldest unread ones, all of which are marked read as they are returned; call again while unread_remaining is above 0. include_read: true rereads the whole inbox newest first, 20 at a time from offset (pass next_offset until it is null), marking nothing. Each Artifact reference names its pinned version; available says whether this agent may read it now (fetch it with read_artifact).',
  input: z
    .object({
      include_read: z.boolean().optional(),
      offset: z.number().int().optional().describe('With include_read: where the page starts (0, or a next_offset).'),
    })
    .strict(),
  output: z.object({
    messages: z.array(
      z.object({
        message_id: z.string(),
        from: z.object({ agent_id: z.string(), name: z.string() }),
        sent_at: z.string(),
        message: z.string().nullable(),
        via_group: z
          .object({ id: z.string(), name: z.string() })
          .nullable()
          .describe('The Group the message reached this agent through; null when sent to the agent itself.'),
        artifacts: z.array(sentArtifact.extend({ available: z.boolean() })),
        read_at: z.string().nullable(),
      }),
    ),
    next_offset: z.number().int().nullable(),
    unread_remaining: z.number().int(),
  }),
  annotations: { ...READ, idempotentHint: false },
  scopes: ['context.read'],
  async run({ caller, services, audit }, args) {
    const page = await readInbox(services.db, caller, args, audit);
    return jsonReply({ messages: page.messages.map(inboxMessage), next_offset: page.nextOffset, unread_remaining: page.unreadRemaining });
  },
});

/** One recipient on the wire (list_context_recipients): a Group with its member_count. */
function recipientOnWire(recipient: Recipient) {
  return recipient.type === 'agent'
    ? { type: recipient.type, id: recipient.id, name: recipient.name }
    : { type: recipient.type, id: recipient.id, name: recipient.name, member_count: recipient.memberCount };
}

/** A pinned Artifact version on the wire. */
const artifactOnWire = (a: SentArtifact) => ({ artifact_id: a.id, name: a.name, version: a.version, version_id: a.versionId, access: a.access });

/** send_context's result on the wire. */
function sentOnWire(result: SendResult) {
  return {
    message_id: result.messageId,
    recipients: result.recipients.map((r) => ({ type: r.type, id: r.id, name: r.name })),
    delivered_to: result.deliveredTo,
    artifacts: result.artifacts.map(artifactOnWire),
    created_at: iso(result.createdAt),
    replayed: result.replayed,
  };
}

/** One inbox message on the wire (read_inbox, and the messages kgw inbox lists). */
export interface InboxMessageWire {
  message_id: string;
  from: { agent_id: string; name: string };
  sent_at: string;
  message: string | null;
  via_group: { id: string; name: string } | null;
  artifacts: (ReturnType<typeof artifactOnWire> & { available: boolean })[];
  read_at: string | null;
}

export function inboxMessage(entry: InboxEntry): InboxMessageWire {
  return {
    message_id: entry.id,
    from: { agent_id: entry.from.id, name: entry.from.name },
    sent_at: iso(entry.sentAt),
    message: entry.message,
    via_group: entry.viaGroup === null ? null : { id: entry.viaGroup.id, name: entry.viaGroup.name },
    artifacts: entry.artifacts.map((a) => ({ ...artifactOnWire(a), available: a.available })),
    read_at: isoOrNull(entry.readAt),
  };
}

/** An agent's inbox as kgw inbox prints it (the admin operation's JSON): its messages as read_inbox gives them. */
export interface InboxListing {
  tenant: string;
  agent: { id: string; name: string };
  unread: number;
  messages: InboxMessageWire[];
}

export function inboxListing(inbox: AdminInbox): InboxListing {
  return { tenant: inbox.tenant.slug, agent: { id: inbox.agent.id, name: inbox.agent.name }, unread: inbox.unread, messages: inbox.messages.map(inboxMessage) };
}
