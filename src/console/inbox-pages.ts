import type { SafeHtml } from '../http/pages/html.ts';
import { html } from '../http/pages/html.ts';
import type { ConsolePerson, InboxDetail, InboxEntry, InboxSource } from './contract.ts';
import type { Frame } from './page.ts';
import { CONSOLE_PATH, consolePage } from './page.ts';
import type { Lang, Text } from './text.ts';
import { SHELL, count, fill, when } from './text.ts';
import { visibleText } from '../kernel/text.ts';
import { pager, readable, timeView } from './views.ts';

/** Items on one page of the inbox, and the longest note a decision takes (README, Hardening). */
export const INBOX_PAGE_SIZE = 50;
export const INBOX_NOTE_MAX_CHARS = 2000;

/** "Older than" choices of the age filter, in days. */
const AGES = [1, 7, 30] as const;

const T = {
  lead: {
    en: 'Everything agents submitted that you may decide, oldest first.',
    de: 'Alles, was Agenten eingereicht haben und worüber Sie entscheiden dürfen, das Älteste zuerst.',
  },
  kind: { en: 'Kind', de: 'Art' },
  anyKind: { en: 'Every kind', de: 'Alle Arten' },
  age: { en: 'Age', de: 'Alter' },
  anyAge: { en: 'Any age', de: 'Jedes Alter' },
  olderThan: { en: 'Older than {n} days', de: 'Älter als {n} Tage' },
  olderThanOne: { en: 'Older than a day', de: 'Älter als ein Tag' },
  filter: { en: 'Filter', de: 'Filtern' },
  empty: { en: 'Nothing waits for your decision.', de: 'Nichts wartet auf Ihre Entscheidung.' },
  shown: { en: '{shown} of {total} open items', de: '{shown} von {total} offenen Einträgen' },
  title: { en: 'Title', de: 'Titel' },
  from: { en: 'From', de: 'Von' },
  submitted: { en: 'Submitted', de: 'Eingereicht' },
  stale: { en: 'stale', de: 'veraltet' },
  staleLong: {
    en: 'Stale: what it was written on has changed since.',
    de: 'Veraltet: Die Grundlage hat sich seitdem geändert.',
  },
  back: { en: 'Back to the inbox', de: 'Zurück zum Eingang' },
  changes: { en: 'What it changes', de: 'Was sich ändert' },
  decide: { en: 'Decide', de: 'Entscheiden' },
  accept: { en: 'Accept', de: 'Annehmen' },
  reject: { en: 'Reject', de: 'Ablehnen' },
  note: { en: 'Note (optional, up to {n} characters)', de: 'Notiz (optional, bis zu {n} Zeichen)' },
  accepted: { en: 'Accepted', de: 'Angenommen' },
  rejected: { en: 'Rejected', de: 'Abgelehnt' },
  decidedBy: { en: '{outcome} by {by} on {at}.', de: '{outcome} von {by} am {at}.' },
  someone: { en: 'an operator', de: 'einer Betreiberin' },
  unknownTime: { en: 'an unknown time', de: 'unbekanntem Zeitpunkt' },
  noteWas: { en: 'Note:', de: 'Notiz:' },
} as const satisfies Record<string, Text>;

export interface InboxQuery {
  /** A kind of one of the sources, or undefined for every kind. */
  readonly kind: string | undefined;
  /** Only items older than this many days. */
  readonly olderThanDays: number | undefined;
  /** 1-based. */
  readonly page: number;
}

const one = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

/** The inbox's filters from the query string; what is not one of the choices is no filter. */
export function readInboxQuery(query: Readonly<Record<string, string | string[] | undefined>>, sources: readonly InboxSource[]): InboxQuery {
  const kind = one(query['kind']);
  const age = Number(one(query['age']));
  const page = Number(one(query['page']));
  return {
    kind: sources.some((source) => source.kinds.some((k) => k.id === kind)) ? kind : undefined,
    olderThanDays: (AGES as readonly number[]).includes(age) ? age : undefined,
    page: Number.isSafeInteger(page) && page >= 1 && page <= 100_000 ? page : 1,
  };
}

const itemUrl = (base: string, source: InboxSource, id: string): string =>
  `${base}${CONSOLE_PATH}/inbox/${encodeURIComponent(source.id)}/${encodeURIComponent(id)}`;

function kindLabel(sources: readonly InboxSource[], kind: string, lang: Lang): string {
  for (const source of sources) for (const k of source.kinds) if (k.id === kind) return k.label[lang];
  return kind;
}

const ageLabel = (lang: Lang, days: number): string => (days === 1 ? T.olderThanOne[lang] : fill(T.olderThan[lang], { n: String(days) }));

/** The list: every open item of every source the person may decide, filtered, oldest first, a page at a time. */
export function inboxListPage(
  who: ConsolePerson,
  frame: Frame,
  sources: readonly InboxSource[],
  lists: readonly { source: InboxSource; entries: readonly InboxEntry[] }[],
  query: InboxQuery,
): string {
  const { lang } = who;
  const base = frame.base;
  const now = Date.now();
  const all = lists.flatMap(({ source, entries }) => entries.map((entry) => ({ source, entry })));
  const kept = all
    .filter(({ entry }) => query.kind === undefined || entry.kind === query.kind)
    .filter(({ entry }) => query.olderThanDays === undefined || now - entry.createdAt.getTime() > query.olderThanDays * 86_400_000)
    .sort((a, b) => a.entry.createdAt.getTime() - b.entry.createdAt.getTime() || a.entry.id.localeCompare(b.entry.id));
  const pages = Math.max(1, Math.ceil(kept.length / INBOX_PAGE_SIZE));
  const page = Math.min(query.page, pages);
  const shown = kept.slice((page - 1) * INBOX_PAGE_SIZE, page * INBOX_PAGE_SIZE);
  const link = (p: number): string => {
    const params = new URLSearchParams();
    if (query.kind !== undefined) params.set('kind', query.kind);
    if (query.olderThanDays !== undefined) params.set('age', String(query.olderThanDays));
    params.set('page', String(p));
    return `${base}${CONSOLE_PATH}/inbox?${params.toString()}`;
  };
  const kinds = sources.flatMap((source) => source.kinds);
  const rows = shown.map(
    ({ source, entry }) => html`<tr>
<td><a href="${itemUrl(base, source, entry.id)}">${readable(entry.title)}</a>${entry.stale ? html` <span class="badge warn" title="${T.staleLong[lang]}">${T.stale[lang]}</span>` : ''}</td>
<td>${kindLabel(sources, entry.kind, lang)}</td>
<td>${entry.from === null ? '—' : readable(entry.from)}</td>
<td>${timeView(lang, entry.createdAt)}</td>
</tr>`,
  );
  const body = html`<h1>${SHELL.inbox[lang]}</h1>
<p class="lead">${T.lead[lang]}</p>
<form class="filters" method="get" action="${base}${CONSOLE_PATH}/inbox" data-autosubmit>
<label>${T.kind[lang]} <select name="kind">
<option value="">${T.anyKind[lang]}</option>
${kinds.map((k) => html`<option value="${k.id}"${k.id === query.kind ? html` selected` : ''}>${k.label[lang]}</option>`)}
</select></label>
<label>${T.age[lang]} <select name="age">
<option value="">${T.anyAge[lang]}</option>
${AGES.map((days) => html`<option value="${String(days)}"${days === query.olderThanDays ? html` selected` : ''}>${ageLabel(lang, days)}</option>`)}
</select></label>
<button type="submit" class="secondary">${T.filter[lang]}</button>
</form>
${
  kept.length === 0
    ? html`<p class="empty">${T.empty[lang]}</p>`
    : html`<p class="count" role="status">${fill(T.shown[lang], { shown: count(lang, shown.length), total: count(lang, kept.length) })}</p>
<div class="scroll"><table class="list">
<thead><tr><th scope="col">${T.title[lang]}</th><th scope="col">${T.kind[lang]}</th><th scope="col">${T.from[lang]}</th><th scope="col">${T.submitted[lang]}</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>
${pager(lang, { page, more: page < pages, pages }, link)}`
}`;
  return consolePage(base, lang, SHELL.inbox[lang], body, frame);
}

/** One item: what it changes, how it was decided, or the forms to decide it. */
export function inboxDetailPage(who: ConsolePerson, frame: Frame, source: InboxSource, detail: InboxDetail, alert?: string): string {
  const { lang } = who;
  const { entry, decided } = detail;
  const base = frame.base;
  const action = itemUrl(base, source, entry.id);
  let decision: SafeHtml;
  if (decided !== undefined) {
    const outcome = decided.outcome === 'accepted' ? T.accepted[lang] : T.rejected[lang];
    decision = html`<section class="decided ${decided.outcome}" aria-labelledby="decided">
<h2 id="decided">${outcome}</h2>
<p>${fill(T.decidedBy[lang], { outcome, by: decided.by === null ? T.someone[lang] : readable(decided.by), at: decided.at === null ? T.unknownTime[lang] : when(lang, decided.at) })}</p>
${decided.note === null ? '' : html`<p>${T.noteWas[lang]} ${visibleText(decided.note)}</p>`}
${decided.result ?? ''}
</section>`;
  } else {
    decision = html`<section class="decide" aria-labelledby="decide">
<h2 id="decide">${T.decide[lang]}</h2>
<div class="decide-forms">
<form method="post" action="${action}">
<input type="hidden" name="csrf" value="${frame.csrf}">
<input type="hidden" name="decision" value="accept">
${detail.acceptFields ?? ''}
<div class="actions"><button type="submit">${T.accept[lang]}</button></div>
</form>
<form method="post" action="${action}">
<input type="hidden" name="csrf" value="${frame.csrf}">
<input type="hidden" name="decision" value="reject">
<label>${fill(T.note[lang], { n: count(lang, INBOX_NOTE_MAX_CHARS) })} <textarea name="note" rows="3" maxlength="${INBOX_NOTE_MAX_CHARS}"></textarea></label>
<div class="actions"><button type="submit" class="danger">${T.reject[lang]}</button></div>
</form>
</div>
</section>`;
  }
  const body = html`<p><a href="${base}${CONSOLE_PATH}/inbox">← ${T.back[lang]}</a></p>
<h1>${readable(entry.title)}</h1>
<dl class="facts">
<dt>${T.kind[lang]}</dt><dd>${kindLabel([source], entry.kind, lang)}</dd>
<dt>${T.from[lang]}</dt><dd>${entry.from === null ? '—' : readable(entry.from)}</dd>
<dt>${T.submitted[lang]}</dt><dd>${timeView(lang, entry.createdAt)}</dd>
</dl>
${entry.stale && decided === undefined ? html`<p class="warning">${T.staleLong[lang]}</p>` : ''}
${alert === undefined ? '' : html`<p class="error" role="alert">${visibleText(alert)}</p>`}
${decision}
<section aria-labelledby="changes">
<h2 id="changes">${T.changes[lang]}</h2>
${detail.changes}
</section>`;
  return consolePage(base, lang, readable(entry.title), body, frame);
}
