import type { ConsolePerson, ConsoleSection, SectionAnswer, SectionRequest } from '../../console/contract.ts';
import { CONSOLE_PATH } from '../../console/page.ts';
import type { Text } from '../../console/text.ts';
import { count, fill } from '../../console/text.ts';
import { readable, timeView } from '../../console/views.ts';
import { html } from '../../http/pages/html.ts';
import { isTenantAdmin } from '../../kernel/directory/tenant-admins.ts';
import { isKgwError, validation } from '../../kernel/errors.ts';
import { unstorableText } from '../../kernel/text.ts';
import type { ActivityListing } from '../activity/admin.ts';
import { eventDetail, listActivity, setActivityEnabled } from '../activity/admin.ts';

/**
 * Alignbase's Activity for the organisation's administrators (the org file's `admin: true`), as
 * `kgw activity` shows it, through the same functions (src/alignbase/activity/admin.ts): each
 * installation the agents' clients reported, the most recent events, and the tenant's switch.
 * Events are the clients' own claims, and the page says so. Anyone else finds no such page.
 */

/** Events one page shows, and the longest agent name the filter takes (README, Hardening). */
export const ACTIVITY_EVENTS_SHOWN = 100;
export const ACTIVITY_AGENT_MAX_CHARS = 200;

const ID = 'activity';

const T = {
  section: { en: 'Activity', de: 'Aktivität' },
  lead: {
    en: 'What agents’ clients reported through the Activity tools: each installation and the most recent events, newest first. Events are the clients’ own claims, not proof of what a model read.',
    de: 'Was die Clients der Agenten über die Activity-Werkzeuge gemeldet haben: jede Installation und die neuesten Ereignisse, das Neueste zuerst. Ereignisse sind Angaben der Clients, kein Beweis dafür, was ein Modell gelesen hat.',
  },
  enabled: { en: 'Activity is on: agents’ clients may record events.', de: 'Aktivität ist eingeschaltet: Clients der Agenten dürfen Ereignisse aufzeichnen.' },
  disabled: {
    en: 'Activity is off: events are refused, and hook sessions record nothing.',
    de: 'Aktivität ist ausgeschaltet: Ereignisse werden abgelehnt, Hook-Sitzungen zeichnen nichts auf.',
  },
  enable: { en: 'Switch Activity on', de: 'Aktivität einschalten' },
  disable: { en: 'Switch Activity off', de: 'Aktivität ausschalten' },
  agent: { en: 'Agent', de: 'Agent' },
  allAgents: { en: 'Only this agent (its name; empty for all)', de: 'Nur dieser Agent (sein Name; leer für alle)' },
  show: { en: 'Show', de: 'Anzeigen' },
  installations: { en: 'Installations', de: 'Installationen' },
  events: { en: 'Recent events, newest first (at most {n})', de: 'Neueste Ereignisse, das Neueste zuerst (höchstens {n})' },
  none: { en: 'None yet.', de: 'Noch keine.' },
  integration: { en: 'Integration', de: 'Integration' },
  transport: { en: 'Transport', de: 'Transport' },
  version: { en: 'Client version', de: 'Client-Version' },
  sessions: { en: 'Sessions', de: 'Sitzungen' },
  eventCount: { en: 'Events', de: 'Ereignisse' },
  lastSeen: { en: 'Last seen', de: 'Zuletzt gesehen' },
  capabilities: { en: 'Capabilities', de: 'Fähigkeiten' },
  hooks: { en: 'Hooks seen', de: 'Gesehene Hooks' },
  recorded: { en: 'Recorded', de: 'Aufgezeichnet' },
  source: { en: 'Source', de: 'Quelle' },
  type: { en: 'Type', de: 'Typ' },
  status: { en: 'Status', de: 'Status' },
  detail: { en: 'Detail', de: 'Detail' },
} as const satisfies Record<string, Text>;

const url = (who: ConsolePerson, query = ''): string => `${who.services.config.publicUrl}${CONSOLE_PATH}/${ID}${query}`;

/** The agent filter as typed: a name within bounds, or none. */
function agentOf(query: URLSearchParams): string | undefined {
  const agent = query.get('agent')?.trim() ?? '';
  if (agent === '') return undefined;
  if ([...agent].length > ACTIVITY_AGENT_MAX_CHARS || unstorableText(agent))
    throw validation(`the agent filter must be a name of at most ${ACTIVITY_AGENT_MAX_CHARS} characters`);
  return agent;
}

async function activityPage(who: ConsolePerson, request: SectionRequest): Promise<SectionAnswer> {
  const { lang } = who;
  const agent = agentOf(request.query);
  let listing: ActivityListing;
  try {
    listing = await listActivity(who.services.db, { tenant: who.tenant.slug, agent, limit: ACTIVITY_EVENTS_SHOWN });
  } catch (error) {
    // An agent not of this organisation is a wrong filter, said as such: not a missing page.
    if (isKgwError(error) && error.code === 'not_found') throw validation(`there is no agent "${readable(agent ?? '')}" in this organisation`);
    throw error;
  }
  const installations =
    listing.installations.length === 0
      ? html`<p class="empty">${T.none[lang]}</p>`
      : html`<div class="scroll"><table class="list">
<thead><tr><th scope="col">${T.agent[lang]}</th><th scope="col">${T.integration[lang]}</th><th scope="col">${T.transport[lang]}</th><th scope="col">${T.version[lang]}</th><th scope="col">${T.sessions[lang]}</th><th scope="col">${T.eventCount[lang]}</th><th scope="col">${T.lastSeen[lang]}</th><th scope="col">${T.capabilities[lang]}</th><th scope="col">${T.hooks[lang]}</th></tr></thead>
<tbody>${listing.installations.map(
          (i) =>
            html`<tr><td>${readable(i.agent)}</td><td>${readable(i.integration)}</td><td>${i.transport}</td><td>${readable(i.client_version ?? '—')}</td><td>${count(lang, i.sessions)}</td><td>${count(lang, i.events)}</td><td>${timeView(lang, new Date(i.last_seen_at))}</td><td>${i.capabilities.length === 0 ? '—' : i.capabilities.join(', ')}</td><td>${Object.keys(i.coverage).length === 0 ? '—' : readable(Object.keys(i.coverage).sort().join(', '))}</td></tr>`,
        )}</tbody>
</table></div>`;
  const events =
    listing.events.length === 0
      ? html`<p class="empty">${T.none[lang]}</p>`
      : html`<div class="scroll"><table class="list">
<thead><tr><th scope="col">${T.recorded[lang]}</th><th scope="col">${T.agent[lang]}</th><th scope="col">${T.source[lang]}</th><th scope="col">${T.type[lang]}</th><th scope="col">${T.status[lang]}</th><th scope="col">${T.detail[lang]}</th></tr></thead>
<tbody>${listing.events.map(
          (e) =>
            html`<tr><td>${timeView(lang, new Date(e.recorded_at))}</td><td>${readable(e.agent)}</td><td>${e.source}</td><td>${readable(e.type)}</td><td>${e.error_code === null ? e.status : html`<span class="badge warn">${e.status} (${readable(e.error_code)})</span>`}</td><td>${readable(eventDetail(e) ?? '—')}</td></tr>`,
        )}</tbody>
</table></div>`;
  return {
    page: {
      title: T.section[lang],
      body: html`<h1>${T.section[lang]}</h1>
<p class="lead">${T.lead[lang]}</p>
<form method="post" action="${url(who)}" class="inline">
<input type="hidden" name="csrf" value="${request.csrf}">
<p>${listing.activity_enabled ? T.enabled[lang] : T.disabled[lang]}
<input type="hidden" name="enabled" value="${listing.activity_enabled ? 'off' : 'on'}">
<button type="submit"${listing.activity_enabled ? html` class="danger"` : ''}>${listing.activity_enabled ? T.disable[lang] : T.enable[lang]}</button></p>
</form>
<form method="get" action="${url(who)}" class="filters">
<label for="activity-agent">${T.allAgents[lang]}</label>
<input id="activity-agent" name="agent" maxlength="${String(ACTIVITY_AGENT_MAX_CHARS)}" value="${agent ?? ''}">
<button type="submit">${T.show[lang]}</button>
</form>
<h2>${T.installations[lang]}</h2>
${installations}
<h2>${fill(T.events[lang], { n: count(lang, ACTIVITY_EVENTS_SHOWN) })}</h2>
${events}`,
    },
  };
}

/** The switch, as `kgw activity --enable/--disable`, audited on the console surface as the administrator. */
async function switchActivity(who: ConsolePerson, request: SectionRequest): Promise<SectionAnswer> {
  const choice = request.form?.get('enabled');
  if (choice !== 'on' && choice !== 'off') throw validation('enabled must be on or off');
  await setActivityEnabled(who.services.db, who.audit, { tenant: who.tenant.slug, enabled: choice === 'on' });
  return { redirect: url(who) };
}

export const alignbaseActivity: ConsoleSection = {
  id: ID,
  label: T.section,
  visibleTo: (who) => isTenantAdmin(who.services.db, who.tenant.id, who.person.id),
  administrative: true,
  routes: [
    { method: 'GET', path: '', handle: activityPage },
    { method: 'POST', path: '', handle: switchActivity },
  ],
};
