import type { Queryable, Transaction } from '../../store/db.ts';
import type { Caller } from '../../kernel/access/caller.ts';
import { findAgents } from '../../kernel/directory/principals.ts';
import type { AddressedRecipient, Recipient } from './model.ts';
import { selectGroupAgents, selectRecipients } from './queries.ts';
import { refuse } from './refusals.ts';
import type { SendRequest } from './send-input.ts';

const byTypeThenName = (a: Recipient, b: Recipient): number =>
  a.type !== b.type ? (a.type < b.type ? -1 : 1) : a.name !== b.name ? (a.name < b.name ? -1 : 1) : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;

/**
 * list_context_recipients: every agent of the tenant but the caller, and every Group with at
 * least one agent besides the caller, agents first, each by name. People receive no messages; a
 * person may message no one.
 */
export async function listRecipients(q: Queryable, caller: Caller): Promise<Recipient[]> {
  if (caller.principal.kind !== 'agent') return [];
  return (await selectRecipients(q, caller.tenant.id, caller.principal.id)).sort(byTypeThenName);
}

export interface ResolvedRecipients {
  readonly list: AddressedRecipient[];
  /** Each delivered agent and the Group it came through (null: addressed itself), in delivery order. */
  readonly delivered: Map<string, string | null>;
}

/** Every recipient exists in the caller's tenant and can be messaged; the agents a send reaches. */
export async function resolveRecipients(tx: Transaction, caller: Caller, recipients: SendRequest['recipients']): Promise<ResolvedRecipients> {
  const tenantId = caller.tenant.id;
  const agentIds = recipients.filter((r) => r.type === 'agent').map((r) => r.id);
  const groupIds = recipients.filter((r) => r.type === 'group').map((r) => r.id);
  if (agentIds.includes(caller.principal.id)) throw refuse.self();
  // One query after another: a transaction's connection runs one at a time.
  const agents = await findAgents(tx, tenantId, agentIds);
  // A Group's agents now, except the sender, by name: a Group send targets its current agents.
  const groups = await selectGroupAgents(tx, tenantId, groupIds, caller.principal.id);
  const agentById = new Map(agents.map((a) => [a.id, a]));
  const groupById = new Map(groups.map((g) => [g.id, g]));
  const list: AddressedRecipient[] = [];
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
