import type { SafeHtml } from '../../http/pages/html.ts';
import { html } from '../../http/pages/html.ts';
import { notFound } from '../../kernel/errors.ts';
import type { ConsolePerson, SectionAnswer, SectionRequest } from '../contract.ts';
import { CONSOLE_PATH } from '../page.ts';
import type { Lang, Text } from '../text.ts';
import { count, fill } from '../text.ts';
import { pager, readable } from '../views.ts';
import { O } from './org-texts.ts';

/**
 * The Admin section's read-only view of the organisation as its org file has it (docs/org-file.md):
 * people, agents, groups, teams, Knowledge Bases, grants and routes, and the file itself to
 * download. The reading comes from the composition root (src/app.ts), which reads it through the
 * same operations `kgw export folder` writes org.yaml from (src/admin/org-file.ts), so the pages,
 * the download and the export cannot disagree. The console names no product: these are the org
 * file's words.
 */

/** A person or an agent as the org file has them. */
export interface OrgPrincipal {
  readonly email: string | null;
  readonly name: string;
  readonly owner: string | null;
  readonly tier: string;
  readonly departments: readonly string[];
  readonly projects: readonly string[];
  readonly brain_role: string;
  readonly admin: boolean;
  readonly policy_max_team_role: string | null;
}

/** The organisation as its org file has it, and the file. */
export interface OrgReading {
  readonly people: readonly OrgPrincipal[];
  readonly agents: readonly OrgPrincipal[];
  readonly groups: readonly { readonly name: string; readonly members: readonly string[] }[];
  readonly teams: readonly {
    readonly slug: string;
    readonly name: string;
    readonly members: readonly { readonly member: string; readonly role: string }[];
    readonly shares: readonly { readonly with: string; readonly role: string }[];
  }[];
  readonly kbs: readonly { readonly slug: string; readonly name: string; readonly team: string; readonly visibility: string }[];
  readonly grants: readonly { readonly to: string; readonly on: string; readonly role: string }[];
  readonly routes: readonly { readonly deliver: string; readonly to: string }[];
  /** What the file cannot name, with why. */
  readonly leftOut: readonly { readonly name: string; readonly reason: string }[];
  /** org.yaml. */
  readonly text: string;
}

/** Reads a tenant's organisation (by its slug). */
export type OrgReader = (tenant: string) => Promise<OrgReading>;

/** Rows of one page of an org list, and members named in one cell at most (README, Hardening). */
export const ORG_PAGE_SIZE = 50;
export const ORG_CELL_NAMES_MAX = 20;

interface Column<T> {
  readonly head: Text;
  readonly cell: (row: T, lang: Lang) => string | SafeHtml;
}

/** A list of names in one cell, the rest counted. */
function names(lang: Lang, all: readonly string[]): string {
  if (all.length === 0) return '—';
  const shown = all.slice(0, ORG_CELL_NAMES_MAX).map(readable).join(', ');
  return all.length > ORG_CELL_NAMES_MAX ? `${shown} ${fill(O.more[lang], { n: count(lang, all.length - ORG_CELL_NAMES_MAX) })}` : shown;
}

const access = (lang: Lang, p: OrgPrincipal): string =>
  [
    `${O.tier[lang]}: ${readable(p.tier)}`,
    ...(p.departments.length > 0 ? [`${O.departments[lang]}: ${names(lang, p.departments)}`] : []),
    ...(p.projects.length > 0 ? [`${O.projects[lang]}: ${names(lang, p.projects)}`] : []),
  ].join(' · ');

/** Each list of the organisation: its title, its rows and columns. */
const PARTS = {
  people: {
    title: O.people,
    rows: (org: OrgReading) => org.people,
    columns: [
      { head: O.email, cell: (p) => readable(p.email ?? '') },
      { head: O.name, cell: (p) => readable(p.name) },
      { head: O.access, cell: (p, lang) => access(lang, p) },
      { head: O.brainRole, cell: (p) => readable(p.brain_role) },
      { head: O.admin, cell: (p) => (p.admin ? '✓' : '') },
    ] satisfies Column<OrgPrincipal>[],
  },
  agents: {
    title: O.agents,
    rows: (org: OrgReading) => org.agents,
    columns: [
      { head: O.name, cell: (p) => readable(p.name) },
      { head: O.owner, cell: (p) => readable(p.owner ?? '') },
      { head: O.access, cell: (p, lang) => access(lang, p) },
      { head: O.brainRole, cell: (p) => readable(p.brain_role) },
      { head: O.policy, cell: (p) => (p.policy_max_team_role === null ? '—' : readable(p.policy_max_team_role)) },
    ] satisfies Column<OrgPrincipal>[],
  },
  groups: {
    title: O.groups,
    rows: (org: OrgReading) => org.groups,
    columns: [
      { head: O.name, cell: (g) => readable(g.name) },
      { head: O.members, cell: (g, lang) => names(lang, g.members) },
    ] satisfies Column<OrgReading['groups'][number]>[],
  },
  teams: {
    title: O.teams,
    rows: (org: OrgReading) => org.teams,
    columns: [
      { head: O.slug, cell: (t) => readable(t.slug) },
      { head: O.name, cell: (t) => readable(t.name) },
      {
        head: O.members,
        cell: (t, lang) =>
          names(
            lang,
            t.members.map((m) => `${m.member} (${m.role})`),
          ),
      },
      {
        head: O.shares,
        cell: (t, lang) =>
          names(
            lang,
            t.shares.map((s) => `${s.with} (${s.role})`),
          ),
      },
    ] satisfies Column<OrgReading['teams'][number]>[],
  },
  kbs: {
    title: O.kbs,
    rows: (org: OrgReading) => org.kbs,
    columns: [
      { head: O.slug, cell: (k) => readable(k.slug) },
      { head: O.name, cell: (k) => readable(k.name) },
      { head: O.team, cell: (k) => readable(k.team) },
      { head: O.visibility, cell: (k) => readable(k.visibility) },
    ] satisfies Column<OrgReading['kbs'][number]>[],
  },
  grants: {
    title: O.grants,
    rows: (org: OrgReading) => org.grants,
    columns: [
      { head: O.to, cell: (g) => readable(g.to) },
      { head: O.on, cell: (g) => readable(g.on) },
      { head: O.role, cell: (g) => readable(g.role) },
    ] satisfies Column<OrgReading['grants'][number]>[],
  },
  routes: {
    title: O.routes,
    rows: (org: OrgReading) => org.routes,
    columns: [
      { head: O.deliver, cell: (r) => readable(r.deliver) },
      { head: O.to, cell: (r) => readable(r.to) },
    ] satisfies Column<OrgReading['routes'][number]>[],
  },
} as const;

type PartName = keyof typeof PARTS;
const isPart = (name: string): name is PartName => Object.hasOwn(PARTS, name);

const orgUrl = (who: ConsolePerson, path = ''): string => `${who.services.config.publicUrl}${CONSOLE_PATH}/admin/org${path}`;

/** The organisation's overview: how many of each, the download, and what the file leaves out. */
export async function orgOverview(who: ConsolePerson, read: OrgReader): Promise<SectionAnswer> {
  const { lang } = who;
  const org = await read(who.tenant.slug);
  const entries = (Object.keys(PARTS) as PartName[]).map(
    (name) => html`<li><a href="${orgUrl(who, `/${name}`)}">${PARTS[name].title[lang]}</a> (${count(lang, PARTS[name].rows(org).length)})</li>`,
  );
  const leftOut =
    org.leftOut.length === 0
      ? ''
      : html`<h2>${O.leftOut[lang]}</h2>
<ul>${org.leftOut.slice(0, ORG_PAGE_SIZE).map((item) => html`<li>${readable(item.name)}: ${readable(item.reason)}</li>`)}</ul>
${org.leftOut.length > ORG_PAGE_SIZE ? html`<p class="note">${fill(O.more[lang], { n: count(lang, org.leftOut.length - ORG_PAGE_SIZE) })}</p>` : ''}`;
  return {
    page: {
      title: O.org[lang],
      body: html`<h1>${O.org[lang]}</h1>
<p class="lead">${O.orgLead[lang]}</p>
<ul>${entries}</ul>
<p><a class="button" href="${orgUrl(who, '.yaml')}" download="org.yaml">${O.download[lang]}</a></p>
${leftOut}`,
    },
  };
}

/** One list of the organisation, a page of it. */
export async function orgPart(who: ConsolePerson, read: OrgReader, request: SectionRequest, page: number): Promise<SectionAnswer> {
  const { lang } = who;
  const name = request.params['part'] ?? '';
  // Only the lists above: any other name is an unknown page.
  if (!isPart(name)) throw notFound(`no list "${name}"`);
  const part = PARTS[name];
  const rows: readonly unknown[] = part.rows(await read(who.tenant.slug));
  const columns = part.columns as readonly Column<unknown>[];
  const shown = rows.slice((page - 1) * ORG_PAGE_SIZE, page * ORG_PAGE_SIZE);
  const pages = Math.max(1, Math.ceil(rows.length / ORG_PAGE_SIZE));
  if (page > pages) throw notFound(`no page ${page}`);
  const title = part.title[lang];
  return {
    page: {
      title,
      body: html`<h1>${title}</h1>
<p><a href="${orgUrl(who)}">${O.org[lang]}</a></p>
${
  rows.length === 0
    ? html`<p class="empty">${O.none[lang]}</p>`
    : html`<p class="count" role="status">${fill(O.shown[lang], { shown: count(lang, shown.length), total: count(lang, rows.length) })}</p>
<div class="scroll"><table class="list">
<thead><tr>${columns.map((column) => html`<th scope="col">${column.head[lang]}</th>`)}</tr></thead>
<tbody>${shown.map((row) => html`<tr>${columns.map((column) => html`<td>${column.cell(row, lang)}</td>`)}</tr>`)}</tbody>
</table></div>
${pager(lang, { page, more: page < pages, pages }, (p) => orgUrl(who, `/${name}?page=${String(p)}`))}`
}`,
    },
  };
}

/** org.yaml as a file to save. */
export async function orgFileDownload(who: ConsolePerson, read: OrgReader): Promise<SectionAnswer> {
  const org = await read(who.tenant.slug);
  return { download: { name: 'org.yaml', type: 'application/yaml; charset=utf-8', body: org.text } };
}
