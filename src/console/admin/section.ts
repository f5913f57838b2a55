import type { ScopeCatalogue } from '../../kernel/access/scopes.ts';
import type { AuditFilter, AuditRecord } from '../../kernel/audit/audit-reader.ts';
import { findAuditEvent, listAuditEvents } from '../../kernel/audit/audit-reader.ts';
import { findPrincipal } from '../../kernel/directory/directory.ts';
import { isTenantAdmin } from '../../kernel/directory/tenant-admins.ts';
import { notFound, validation } from '../../kernel/errors.ts';
import { isUuid, unsafeName, unstorableText } from '../../kernel/text.ts';
import { parseDuration } from '../../kernel/tokens/duration.ts';
import type { TenantTokenInfo } from '../../kernel/tokens/tokens.ts';
import { createToken, DEFAULT_TOKEN_TTL_MS, listTenantTokens, revokeTenantToken } from '../../kernel/tokens/tokens.ts';
import type { SafeHtml } from '../../http/pages/html.ts';
import { html } from '../../http/pages/html.ts';
import type { ConsolePerson, ConsoleSection, SectionAnswer, SectionRequest } from '../contract.ts';
import { CONSOLE_PATH } from '../page.ts';
import type { Lang } from '../text.ts';
import { fill, when } from '../text.ts';
import { pageOf, pager, readable, textView, timeView } from '../views.ts';
import { backendsPage } from './backends-page.ts';
import type { OrgReader } from './org-pages.ts';
import { orgFileDownload, orgOverview, orgPart } from './org-pages.ts';
import { B, O } from './org-texts.ts';
import { A } from './texts.ts';

/**
 * The console's Admin section (docs/console.md, "Admin"): for a tenant's administrators (the org
 * file's `admin: true`) only, the tenant's tokens (issued, listed, revoked) and its audit log. It
 * names no product: tokens and the log are the kernel's, and what a token may do is still
 * decided by its person's or agent's roles, as for one `kgw token create` issued. Everything is
 * the signed-in person's own tenant's; another tenant's token or event is not found.
 */

/** Rows on one page of the token list and of the audit log, and the deepest page (README, Hardening). */
export const ADMIN_PAGE_SIZE = 50;
export const ADMIN_PAGES_MAX = 1000;
/** The longest audit filter value and token label (README, Hardening). */
export const ADMIN_TEXT_MAX_CHARS = 200;
/** A token issued in the console lives from an hour to a year: it always expires (README, Hardening). */
export const CONSOLE_TOKEN_MIN_MS = 3_600_000;
export const CONSOLE_TOKEN_MAX_MS = 365 * 86_400_000;

export interface AdminOptions {
  /** Every scope the products declare, with its description: what a token may be given. */
  readonly scopes: ScopeCatalogue;
  /** The organisation as its org file has it (src/admin/org-file.ts, through the composition root). */
  readonly org: OrgReader;
}

const ID = 'admin';
const url = (base: string, path: string): string => `${base}${CONSOLE_PATH}/${ID}${path}`;

const rowsOf = (page: number) => ({ offset: (page - 1) * ADMIN_PAGE_SIZE, limit: ADMIN_PAGE_SIZE });

const at = (lang: Lang, iso: string | null, none: string): SafeHtml | string => (iso === null ? none : timeView(lang, new Date(iso)));

function overview(who: ConsolePerson): SectionAnswer {
  const { lang } = who;
  const base = who.services.config.publicUrl;
  return {
    page: {
      title: A.section[lang],
      body: html`<h1>${A.section[lang]}</h1>
<p class="lead">${fill(A.lead[lang], { tenant: who.tenant.name })}</p>
<ul>
<li><a href="${url(base, '/org')}">${O.org[lang]}</a></li>
<li><a href="${url(base, '/tokens')}">${A.tokens[lang]}</a></li>
<li><a href="${url(base, '/audit')}">${A.audit[lang]}</a></li>
<li><a href="${url(base, '/backends')}">${B.backends[lang]}</a></li>
</ul>`,
    },
  };
}

async function tokensPage(who: ConsolePerson, options: AdminOptions, request: SectionRequest): Promise<SectionAnswer> {
  const { lang } = who;
  const base = who.services.config.publicUrl;
  const page = pageOf(request.query, ADMIN_PAGES_MAX);
  const { tokens, more } = await listTenantTokens(who.services.db, who.tenant.id, rowsOf(page));
  const { csrf } = request;
  const row = (token: TenantTokenInfo): SafeHtml => html`<tr>
<td>${readable(token.principal)}${token.label === null ? '' : html`<br><span class="note">${readable(token.label)}</span>`}</td>
<td>${token.scopes.join(', ')}</td>
<td>${token.source}</td>
<td>${at(lang, token.createdAt, '—')}</td>
<td>${at(lang, token.expiresAt, A.never[lang])}</td>
<td>${at(lang, token.lastUsedAt, A.never[lang])}</td>
<td>${
    token.revokedAt === null
      ? html`<form method="post" action="${url(base, `/tokens/${token.id}/revoke`)}"><input type="hidden" name="csrf" value="${csrf}"><button type="submit" class="danger" aria-label="${A.revoke[lang]} ${token.id}">${A.revoke[lang]}</button></form>`
      : html`<span class="badge">${A.revoked[lang]}</span> ${at(lang, token.revokedAt, '')}`
  }</td>
</tr>`;
  return {
    page: {
      title: A.tokens[lang],
      body: html`<h1>${A.tokens[lang]}</h1>
<p class="lead">${A.tokensLead[lang]}</p>
${
  tokens.length === 0
    ? html`<p class="empty">${A.noTokens[lang]}</p>`
    : html`<div class="scroll"><table class="list">
<thead><tr><th scope="col">${A.principal[lang]}</th><th scope="col">${A.scopes[lang]}</th><th scope="col">${A.source[lang]}</th><th scope="col">${A.created[lang]}</th><th scope="col">${A.expires[lang]}</th><th scope="col">${A.lastUsed[lang]}</th><th scope="col">${A.revoked[lang]}</th></tr></thead>
<tbody>${tokens.map(row)}</tbody>
</table></div>`
}
${pager(lang, { page, more }, (p) => url(base, `/tokens?page=${String(p)}`))}
<h2 id="new-token">${A.newToken[lang]}</h2>
<form method="post" action="${url(base, '/tokens')}" aria-labelledby="new-token">
<input type="hidden" name="csrf" value="${csrf}">
<label>${A.principal[lang]} <input name="principal" required maxlength="254" autocomplete="off" spellcheck="false" placeholder="${A.principalHint[lang]}"></label>
<fieldset><legend>${A.scopes[lang]}</legend>
${options.scopes.all.map(
  (scope) =>
    html`<label class="check"><input type="checkbox" name="scope:${scope}" value="on"> <span><code>${scope}</code> — ${options.scopes.describe(scope)}</span></label>`,
)}
</fieldset>
<label>${A.lifetime[lang]} <input name="lifetime" maxlength="20" autocomplete="off" spellcheck="false" placeholder="90d" aria-describedby="lifetime-hint"></label>
<p class="note" id="lifetime-hint">${A.lifetimeHint[lang]}</p>
<label>${A.label[lang]} <input name="label" maxlength="${ADMIN_TEXT_MAX_CHARS}" autocomplete="off"></label>
<div class="actions"><button type="submit">${A.create[lang]}</button></div>
</form>`,
    },
  };
}

/** The lifetime field: empty is the CLI's default; otherwise a duration within the console's bounds. */
function lifetimeOf(text: string): number {
  if (text === '') return DEFAULT_TOKEN_TTL_MS;
  const ms = parseDuration(text);
  if (ms === undefined || ms < CONSOLE_TOKEN_MIN_MS || ms > CONSOLE_TOKEN_MAX_MS)
    throw validation(`the lifetime "${readable(text)}" is out of bounds: a token from the console lives from 1 hour to 365 days`);
  return ms;
}

async function createTokenAnswer(who: ConsolePerson, options: AdminOptions, form: URLSearchParams): Promise<SectionAnswer> {
  const { lang } = who;
  const base = who.services.config.publicUrl;
  const reference = form.get('principal')?.trim() ?? '';
  if (reference === '') throw validation('name the person (by email) or agent (by name) the token is for');
  // Checked boxes only: each scope is a field of its own, as the shell refuses a field sent twice.
  const asked = [...form.entries()].filter(([key, value]) => key.startsWith('scope:') && value !== '').map(([key]) => key.slice('scope:'.length));
  const scopes = options.scopes.normalize(asked);
  const ttlMs = lifetimeOf(form.get('lifetime')?.trim() ?? '');
  const label = form.get('label')?.trim() ?? '';
  if ([...label].length > ADMIN_TEXT_MAX_CHARS) throw validation(`the label is longer than ${ADMIN_TEXT_MAX_CHARS} characters`);
  const labelProblem = unsafeName(label);
  if (labelProblem !== undefined) throw validation(`the label ${labelProblem}`);
  // Only a person or agent of this tenant: another tenant's is unknown here, and said so.
  if ((await findPrincipal(who.services.db, who.tenant.id, reference)) === undefined)
    throw validation(`there is no person or agent "${readable(reference)}" in this organisation`);
  const { token, info } = await createToken(
    who.services.db,
    { tenant: who.tenant.slug, principal: reference, scopes, ttlMs, label: label === '' ? undefined : label, source: 'console' },
    who.audit,
  );
  // The secret is in this answer's body only: never in a URL or a redirect, never again.
  return {
    page: {
      title: A.newToken[lang],
      status: 201,
      body: html`<h1>${A.newToken[lang]}</h1>
<p class="warning" role="alert">${A.newTokenWarning[lang]}</p>
<pre aria-label="${A.token[lang]}"><code>${token}</code></pre>
<p>${fill(A.tokenFor[lang], { principal: readable(info.principal), scopes: info.scopes.join(', '), expires: info.expiresAt === null ? A.never[lang] : when(lang, new Date(info.expiresAt)) })}</p>
<p><a href="${url(base, '/tokens')}">${A.back[lang]}</a></p>`,
    },
  };
}

/** An instant of a filter: a date (midnight UTC) or a date and time, read as UTC unless it names its zone. */
function instantOf(name: string, text: string): Date {
  const m = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?)(Z|[+-]\d{2}:\d{2})?)?$/.exec(text);
  const date = m === null ? undefined : new Date(`${m[1]}T${m[2] ?? '00:00'}${m[3] ?? 'Z'}`);
  if (date === undefined || Number.isNaN(date.getTime())) throw validation(`${name} must be a date such as 2026-12-01 or a time such as 2026-12-01T09:30`);
  return date;
}

interface AuditQuery {
  readonly filter: AuditFilter;
  /** The filters as typed, to fill the form and the pager's links. */
  readonly typed: Readonly<Record<'actor' | 'action' | 'resource' | 'from' | 'to', string>>;
}

function readAuditQuery(query: URLSearchParams): AuditQuery {
  const text = (name: string): string => {
    const value = query.get(name)?.trim() ?? '';
    if ([...value].length > ADMIN_TEXT_MAX_CHARS) throw validation(`${name} is longer than ${ADMIN_TEXT_MAX_CHARS} characters`);
    // A query string is not a form the shell checked: what the store cannot take (NUL) is refused here.
    const problem = unstorableText(value);
    if (problem !== undefined) throw validation(`${name} ${problem}`);
    return value;
  };
  const typed = { actor: text('actor'), action: text('action'), resource: text('resource'), from: text('from'), to: text('to') };
  const given = (value: string): string | undefined => (value === '' ? undefined : value);
  return {
    typed,
    filter: {
      actor: given(typed.actor),
      action: given(typed.action),
      resource: given(typed.resource),
      from: typed.from === '' ? undefined : instantOf('from', typed.from),
      to: typed.to === '' ? undefined : instantOf('to', typed.to),
    },
  };
}

/** The resources an event names, `type:id`, as a line; a group of a list's items as `type ×count` (its ids are on the event's page). */
function resourcesLine(resources: unknown): string {
  if (!Array.isArray(resources)) return '';
  return resources
    .map((r: unknown) => {
      if (typeof r !== 'object' || r === null) return '';
      const { type, id, ids } = r as { type?: unknown; id?: unknown; ids?: unknown };
      const typeText = typeof type === 'string' ? type : '?';
      if (Array.isArray(ids)) return `${typeText} ×${ids.length}`;
      return `${typeText}:${typeof id === 'string' ? id : '?'}`;
    })
    .filter((text) => text !== '')
    .join(', ');
}

/** Who acted; an event without a person is the operator's (kgw on the store), an anonymous MCP call's, or unknown. */
const actorOf = (lang: Lang, event: AuditRecord): string =>
  event.actor === undefined
    ? event.surface === 'cli'
      ? A.operator[lang]
      : event.surface === 'mcp'
        ? A.anonymous[lang]
        : '—'
    : readable(event.actor.name ?? event.actor.id) + (event.actor.kind === 'agent' ? ` (${A.agent[lang]})` : '');

async function auditPage(who: ConsolePerson, request: SectionRequest): Promise<SectionAnswer> {
  const { lang } = who;
  const base = who.services.config.publicUrl;
  const page = pageOf(request.query, ADMIN_PAGES_MAX);
  const { filter, typed } = readAuditQuery(request.query);
  const { events, more } = await listAuditEvents(who.services.db, who.tenant.id, filter, rowsOf(page));
  const link = (p: number): string => {
    const params = new URLSearchParams(Object.entries(typed).filter(([, value]) => value !== ''));
    params.set('page', String(p));
    return url(base, `/audit?${params.toString()}`);
  };
  const field = (name: keyof AuditQuery['typed'], label: string, hint?: string): SafeHtml =>
    html`<label>${label} <input name="${name}" value="${typed[name]}" maxlength="${ADMIN_TEXT_MAX_CHARS}" autocomplete="off" spellcheck="false"${
      hint === undefined ? '' : html` placeholder="${hint}"`
    }></label>`;
  const row = (event: AuditRecord): SafeHtml => html`<tr>
<td><a href="${url(base, `/audit/${event.id}`)}">${timeView(lang, event.at)}</a></td>
<td>${actorOf(lang, event)}</td>
<td>${event.surface}</td>
<td>${readable(event.tool === null || event.tool === event.action ? event.action : `${event.tool} · ${event.action}`)}</td>
<td>${event.result === 'ok' ? 'ok' : html`<span class="badge warn">${readable(event.errorCode ?? 'error')}</span>`}</td>
<td>${readable(resourcesLine(event.resources))}</td>
</tr>`;
  return {
    page: {
      title: A.audit[lang],
      body: html`<h1>${A.audit[lang]}</h1>
<p class="lead">${A.auditLead[lang]}</p>
<form class="filters" method="get" action="${url(base, '/audit')}">
${field('actor', A.actor[lang], A.actorHint[lang])}
${field('action', A.action[lang], 'token.create')}
${field('resource', A.resource[lang])}
${field('from', A.from[lang], '2026-12-01')}
${field('to', A.to[lang], '2026-12-31T18:00')}
<button type="submit" class="secondary">${A.filter[lang]}</button>
</form>
${
  events.length === 0
    ? html`<p class="empty">${A.noEvents[lang]}</p>`
    : html`<div class="scroll"><table class="list">
<thead><tr><th scope="col">${A.when[lang]}</th><th scope="col">${A.actor[lang]}</th><th scope="col">${A.surface[lang]}</th><th scope="col">${A.action[lang]}</th><th scope="col">${A.result[lang]}</th><th scope="col">${A.resources[lang]}</th></tr></thead>
<tbody>${events.map(row)}</tbody>
</table></div>`
}
${pager(lang, { page, more }, link)}`,
    },
  };
}

async function auditEventPage(who: ConsolePerson, id: string): Promise<SectionAnswer> {
  const { lang } = who;
  const base = who.services.config.publicUrl;
  const event = isUuid(id) ? await findAuditEvent(who.services.db, who.tenant.id, id) : undefined;
  if (event === undefined) throw notFound(`no audit event "${id}"`);
  const fact = (term: string, value: string | null | SafeHtml): SafeHtml => html`<dt>${term}</dt><dd>${value ?? '—'}</dd>`;
  const text = (value: string | null): string | null => (value === null ? null : readable(value));
  return {
    page: {
      title: A.event[lang],
      body: html`<h1>${A.event[lang]}</h1>
<dl class="facts">
${fact(A.when[lang], html`<time datetime="${event.at.toISOString()}">${when(lang, event.at)} (${event.at.toISOString()})</time>`)}
${fact(A.actor[lang], actorOf(lang, event))}
${fact(A.surface[lang], event.surface)}
${fact(A.tool[lang], text(event.tool === null ? null : `${event.tool}${event.dialect === null ? '' : ` (${event.dialect})`}`))}
${fact(A.action[lang], text(event.action))}
${fact(A.result[lang], text(event.errorCode === null ? event.result : `${event.result} (${event.errorCode})`))}
${fact(A.token[lang], event.tokenId)}
${fact(A.request[lang], text(event.requestId))}
</dl>
<h2>${A.resources[lang]}</h2>
${textView(JSON.stringify(event.resources, null, 2), A.resources[lang])}
<h2>${A.details[lang]}</h2>
${textView(JSON.stringify(event.details, null, 2), A.details[lang])}
<p><a href="${url(base, '/audit')}">${A.audit[lang]}</a></p>`,
    },
  };
}

/** The Admin section, given the scope catalogue tokens are issued from (src/app.ts). */
export function adminSection(options: AdminOptions): ConsoleSection {
  const form = (request: SectionRequest): URLSearchParams => {
    // The shell hands a POST its checked form; a POST route without one is a programming error.
    if (request.form === undefined) throw new Error('admin: a POST without its form');
    return request.form;
  };
  return {
    id: ID,
    label: A.section,
    visibleTo: (who) => isTenantAdmin(who.services.db, who.tenant.id, who.person.id),
    administrative: true,
    routes: [
      { method: 'GET', path: '', handle: (who) => Promise.resolve(overview(who)) },
      { method: 'GET', path: '/tokens', handle: (who, request) => tokensPage(who, options, request) },
      { method: 'POST', path: '/tokens', handle: (who, request) => createTokenAnswer(who, options, form(request)) },
      {
        method: 'POST',
        path: '/tokens/:id/revoke',
        handle: async (who, request) => {
          await revokeTenantToken(who.services.db, who.tenant.id, request.params['id'] ?? '', who.audit);
          return { redirect: url(who.services.config.publicUrl, '/tokens') };
        },
      },
      { method: 'GET', path: '/org', handle: (who) => orgOverview(who, options.org) },
      { method: 'GET', path: '/org.yaml', handle: (who) => orgFileDownload(who, options.org) },
      { method: 'GET', path: '/org/:part', handle: (who, request) => orgPart(who, options.org, request, pageOf(request.query, ADMIN_PAGES_MAX)) },
      { method: 'GET', path: '/backends', handle: (who) => backendsPage(who) },
      { method: 'GET', path: '/audit', handle: (who, request) => auditPage(who, request) },
      { method: 'GET', path: '/audit/:id', handle: (who, request) => auditEventPage(who, request.params['id'] ?? '') },
    ],
  };
}
