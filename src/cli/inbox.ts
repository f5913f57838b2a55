import { loadConfig } from '../config.ts';
import type { InboxListing, InboxMessageWire } from '../alignbase/index.ts';
import { withOps } from './session.ts';
import { jsonText, print } from './terminal.ts';
import { parseCommand, requireOptions, table, when } from './usage.ts';

export const inboxHelp = `Usage: kgw inbox --tenant SLUG --agent NAME [--all] [--json]

Lists the messages other agents sent to an agent (send_context), without marking any of them
read: what the agent has not received yet stays new for get_current_context and read_inbox.

By default the unread messages, oldest first (the order the agent receives them); --all lists
every message, newest first, with when it was read. ARTIFACTS names each pinned version and
the access the message granted; "unavailable" means the agent cannot read it now.
--json prints { tenant, agent, unread, messages } with the full texts.`;

function clip(text: string, max = 60): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const chars = [...flat];
  return chars.length <= max ? flat : `${chars.slice(0, max - 1).join('')}…`;
}

function artifacts(message: InboxMessageWire): string {
  if (message.artifacts.length === 0) return '-';
  return message.artifacts.map((a) => `${clip(a.name, 30)} v${a.version} (${a.access}${a.available ? '' : ', unavailable'})`).join('; ');
}

function render(inbox: InboxListing, all: boolean): string {
  const summary = `${inbox.agent.name} in ${inbox.tenant}: ${inbox.unread} unread`;
  if (inbox.messages.length === 0) return `${summary}; ${all ? 'no messages' : 'no unread messages'}`;
  const header = ['MESSAGE', 'SENT', 'FROM', 'VIA', ...(all ? ['READ'] : []), 'ARTIFACTS', 'TEXT'];
  const rows = inbox.messages.map((m) => [
    m.message_id,
    when(m.sent_at),
    m.from.name,
    m.via_group?.name ?? '-',
    ...(all ? [m.read_at === null ? 'unread' : when(m.read_at)] : []),
    artifacts(m),
    m.message === null ? '-' : clip(m.message),
  ]);
  return `${summary}\n\n${table(header, rows)}`;
}

export async function inboxCommand(argv: readonly string[]): Promise<void> {
  const { values, help } = parseCommand(
    argv,
    { tenant: { type: 'string' }, agent: { type: 'string' }, all: { type: 'boolean' }, json: { type: 'boolean' } },
    { min: 0, max: 0 },
  );
  if (help) return void print(inboxHelp);
  const { tenant, agent } = requireOptions(values, 'tenant', 'agent');
  const all = values.all === true;
  const inbox = await withOps(loadConfig(), (run) => run('inbox.list', { tenant, agent, all }));
  print(values.json === true ? jsonText(inbox) : render(inbox, all));
}
