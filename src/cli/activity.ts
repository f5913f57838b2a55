import { loadConfig } from '../config.ts';
import type { ActivityListing } from '../alignbase/index.ts';
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT, eventDetail } from '../alignbase/index.ts';
import { withOps } from './session.ts';
import { jsonText, print } from './terminal.ts';
import { UsageError, parseCommand, requireOptions, table, when } from './usage.ts';

export const activityHelp = `Usage:
  kgw activity --tenant SLUG [--agent NAME] [--limit N] [--json]
  kgw activity --tenant SLUG --enable | --disable

Shows what agents' clients reported through the Alignbase Activity tools: each installation
(integration, transport, capabilities, the native hooks seen and when) and the most recent
events, newest first. Events are the clients' own claims, not proof of what a model read.

--agent NAME  only this agent's installations and events
--limit N     how many recent events to show (default ${DEFAULT_LIST_LIMIT}, at most ${MAX_LIST_LIMIT})
--json        the listing as JSON
--enable      switch Activity on for the tenant (the default)
--disable     switch Activity off: record_activity_event and record_hook_activity_event are
              refused, start_hook_session still returns the context but records nothing`;

function listingText(listing: ActivityListing): string {
  const scope = listing.agent === null ? listing.tenant : `${listing.tenant}, agent ${listing.agent}`;
  const out = [`Activity in ${scope}: ${listing.activity_enabled ? 'enabled' : 'disabled'}`, ''];
  if (listing.installations.length === 0) out.push('no installations');
  else {
    out.push(`Installations (${listing.installations.length}):`);
    out.push(
      table(
        ['ID', 'AGENT', 'INTEGRATION', 'TRANSPORT', 'VERSION', 'SESSIONS', 'EVENTS', 'LAST SEEN', 'CAPABILITIES', 'HOOKS SEEN'],
        listing.installations.map((i) => [
          i.local_installation_id,
          i.agent,
          i.integration,
          i.transport,
          i.client_version ?? '-',
          String(i.sessions),
          String(i.events),
          when(i.last_seen_at),
          i.capabilities.length === 0 ? '-' : i.capabilities.join(','),
          Object.keys(i.coverage).length === 0 ? '-' : Object.keys(i.coverage).sort().join(','),
        ]),
      ),
    );
  }
  out.push('');
  if (listing.events.length === 0) out.push('no events');
  else {
    out.push(`Recent events (newest first, at most ${listing.limit}):`);
    out.push(
      table(
        ['RECORDED', 'OCCURRED', 'AGENT', 'INSTALLATION', 'SOURCE', 'TYPE', 'STATUS', 'DETAIL'],
        listing.events.map((e) => [
          when(e.recorded_at),
          when(e.occurred_at),
          e.agent,
          e.local_installation_id,
          e.source,
          e.type,
          e.error_code === null ? e.status : `${e.status} (${e.error_code})`,
          eventDetail(e) ?? '-',
        ]),
      ),
    );
  }
  return out.join('\n');
}

function parseLimit(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d{1,7}$/.test(raw) || Number(raw) < 1 || Number(raw) > MAX_LIST_LIMIT)
    throw new UsageError(`--limit must be a whole number from 1 to ${MAX_LIST_LIMIT}`);
  return Number(raw);
}

export async function activityCommand(argv: readonly string[]): Promise<void> {
  const { values, help } = parseCommand(
    argv,
    {
      tenant: { type: 'string' },
      agent: { type: 'string' },
      limit: { type: 'string' },
      json: { type: 'boolean' },
      enable: { type: 'boolean' },
      disable: { type: 'boolean' },
    },
    { min: 0, max: 0 },
  );
  if (help) return void print(activityHelp);
  const { tenant } = requireOptions(values, 'tenant');
  const enable = values.enable === true;
  const disable = values.disable === true;
  if (enable || disable) {
    if (enable && disable) throw new UsageError('--enable and --disable exclude each other');
    if (values.agent !== undefined || values.limit !== undefined) throw new UsageError('--enable and --disable take no --agent or --limit');
    const result = await withOps(loadConfig(), (run) => run('activity.switch', { tenant, enabled: enable }));
    if (values.json === true) return void print(jsonText(result));
    const state = result.activity_enabled ? 'enabled' : 'disabled';
    return void print(result.changed ? `Activity ${state} for ${result.tenant}` : `Activity was already ${state} for ${result.tenant}`);
  }
  const limit = parseLimit(values.limit);
  const listing = await withOps(loadConfig(), (run) => run('activity.list', { tenant, agent: values.agent, limit }));
  print(values.json === true ? jsonText(listing) : listingText(listing));
}
