import type { OpResult, OpRunner } from './ops.ts';
import { allPages } from './ops.ts';

/**
 * The org file's writer (docs/org-file.md): a tenant's structure read through the operations
 * and written as `org.yaml` that recreates it. `kgw export folder` writes it beside the texts it
 * exports (src/cli/export-org.ts); the console's Admin pages show the same reading and offer
 * the file for download, naming each Knowledge, Skill and Memory as it exists in the tenant.
 * Every list is sorted by what the file writes (an email, a name, a slug), never by an id of
 * this gateway, so that the same tenant exported from another gateway gives the same bytes.
 */

/** Sorted by UTF-16 code units, the same on every machine (localeCompare is not). */
export const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

// What a YAML double-quoted scalar should not hold as it is: JSON.stringify escapes the C0
// controls but writes DEL, the C1 controls (U+0085 is a line break to YAML 1.1 readers), format
// characters, U+2028/U+2029 and the non-characters U+FFFE/U+FFFF raw.
const YAML_UNSAFE = /[\p{Cc}\p{Cf}\u2028\u2029\ufffe\uffff]/gu;

/**
 * Text as a YAML double-quoted scalar that reads back exactly: JSON's string (valid YAML) with
 * what YAML should not hold raw escaped, `\uXXXX` or, above U+FFFF, `\UXXXXXXXX`. A value written
 * so is always text, whatever it looks like (`"2024"`, `"true"`, `"- a: #b"`), and on one line.
 */
export function yamlText(value: string): string {
  return JSON.stringify(value).replace(YAML_UNSAFE, (char) => {
    const code = char.codePointAt(0) ?? 0;
    return code <= 0xffff ? `\\u${code.toString(16).padStart(4, '0')}` : `\\U${code.toString(16).padStart(8, '0')}`;
  });
}

const flowList = (items: readonly string[]): string => `[${items.map(yamlText).join(', ')}]`;

export type Principal = OpResult<'directory.principals'>['principals'][number];
export type Group = OpResult<'directory.groups'>['groups'][number];
export type Team = OpResult<'team.list'>['teams'][number];
export type Kb = OpResult<'kb.list'>[number];

/** The access keys a person or agent has beyond the defaults, as the file writes them. */
function accessLines(p: Principal): string[] {
  const lines: string[] = [];
  if (p.tier !== 'public') lines.push(`    tier: ${yamlText(p.tier)}`);
  if (p.departments.length > 0) lines.push(`    departments: ${flowList(p.departments)}`);
  if (p.projects.length > 0) lines.push(`    projects: ${flowList(p.projects)}`);
  if (p.brain_role !== 'viewer') lines.push(`    brain_role: ${yamlText(p.brain_role)}`);
  return lines;
}

export function personLines(p: Principal): string[] {
  const lines = [`  - email: ${yamlText(p.email ?? '')}`, `    name: ${yamlText(p.name)}`, ...accessLines(p)];
  if (p.admin) lines.push('    admin: true');
  if (p.mailbox !== null) {
    // The name of the variable that holds the IMAP password, read when a draft is approved; never a password.
    lines.push('    mailbox:', `      password_env: ${yamlText(p.mailbox.password_env)}`);
    for (const key of ['user', 'url', 'folder'] as const) {
      const value = p.mailbox[key];
      if (value !== undefined) lines.push(`      ${key}: ${yamlText(value)}`);
    }
  }
  return lines;
}

export function agentLines(p: Principal): string[] {
  const lines = [`  - name: ${yamlText(p.name)}`, `    owner: ${yamlText(p.owner ?? '')}`, ...accessLines(p)];
  if (p.policy_max_team_role !== null) lines.push(`    policy: { max_team_role: ${yamlText(p.policy_max_team_role)} }`);
  return lines;
}

export function groupLines(g: Group): string[] {
  const lines = [`  - name: ${yamlText(g.name)}`];
  if (g.members.length === 0) lines.push('    members: []');
  else lines.push('    members:', ...g.members.map((m) => `      - ${yamlText(m)}`));
  return lines;
}

export function teamLines(t: Team): string[] {
  const lines = [`  - slug: ${yamlText(t.slug)}`, `    name: ${yamlText(t.name)}`];
  if (t.members.length === 0) lines.push('    members: {}');
  else lines.push('    members:', ...t.members.map((m) => `      ${yamlText(m.member)}: ${yamlText(m.role)}`));
  // Written only when there are some: a team without `shares` keeps what it has, and a new one has none.
  if (t.shares.length > 0) lines.push('    shares:', ...t.shares.map((s) => `      - { with: ${yamlText(s.with)}, role: ${yamlText(s.role)} }`));
  return lines;
}

export function kbLines(kb: Kb): string[] {
  const lines = [
    `  - slug: ${yamlText(kb.slug)}`,
    `    name: ${yamlText(kb.name)}`,
    `    team: ${yamlText(kb.team)}`,
    `    visibility: ${yamlText(kb.visibility)}`,
  ];
  if (kb.description !== '') lines.push(`    description: ${yamlText(kb.description)}`);
  return lines;
}

/** A list section, `key: []` when empty (grants and routes: the tenant's complete lists), or nothing at all. */
export function section(key: string, entries: readonly string[][], whenEmpty: 'omit' | 'empty'): string[] {
  if (entries.length === 0) return whenEmpty === 'omit' ? [] : ['', `${key}: []`];
  return ['', `${key}:`, ...entries.flat()];
}

/** The tenant's people, agents, groups, teams and KBs as the org file lists them, each sorted by what it writes. */
export interface OrgDirectory {
  readonly keys: OpResult<'tenant.show'>;
  readonly people: readonly Principal[];
  readonly agents: readonly Principal[];
  readonly groups: readonly Group[];
  readonly teams: readonly Team[];
  /** The KBs that are not archived (the file refuses an archived one). */
  readonly kbs: readonly Kb[];
  readonly archivedKbs: readonly Kb[];
}

/** The tenant's directory as the org file has it, read through the operations. */
export async function readOrgDirectory(run: OpRunner, tenant: string): Promise<OrgDirectory> {
  const after = (cursor: string | undefined) => (cursor === undefined ? {} : { after: cursor });
  const [keys, principals, groups, teams, kbs] = await Promise.all([
    run('tenant.show', { tenant }),
    allPages(async (cursor) => {
      const page = await run('directory.principals', { tenant, ...after(cursor) });
      return { items: page.principals, next: page.next };
    }),
    allPages(async (cursor) => {
      const page = await run('directory.groups', { tenant, ...after(cursor) });
      return { items: page.groups, next: page.next };
    }),
    allPages(async (cursor) => {
      const page = await run('team.list', { tenant, ...after(cursor) });
      return { items: page.teams, next: page.next };
    }),
    run('kb.list', { tenant, archived: true }),
  ]);
  return {
    keys,
    people: principals.filter((p) => p.kind === 'person').sort((a, b) => byText(a.email ?? '', b.email ?? '')),
    agents: principals.filter((p) => p.kind === 'agent').sort((a, b) => byText(a.name, b.name)),
    groups: groups.sort((a, b) => byText(a.name, b.name)),
    teams: teams.sort((a, b) => byText(a.slug, b.slug)),
    kbs: kbs.filter((kb) => kb.archived_at === null).sort((a, b) => byText(a.slug, b.slug)),
    archivedKbs: kbs.filter((kb) => kb.archived_at !== null).sort((a, b) => byText(a.slug, b.slug)),
  };
}

export interface OrgGrant {
  readonly to: string;
  readonly on: string;
  readonly role: string;
}
export interface OrgRoute {
  readonly deliver: string;
  readonly to: string;
}
export interface OrgLeftOut {
  readonly name: string;
  readonly reason: string;
}

/** What an org file holds: the header's comments, the directory, the resources' entries (already written as lines), grants and routes. */
export interface OrgFileParts {
  readonly header: readonly string[];
  readonly leftOut: readonly OrgLeftOut[];
  readonly directory: OrgDirectory;
  readonly resources?: { readonly knowledge: string[][]; readonly skills: string[][]; readonly memories: string[][] };
  readonly grants: readonly OrgGrant[];
  readonly routes: readonly OrgRoute[];
}

/** The org file's text. */
export function orgFileText(parts: OrgFileParts): string {
  const { directory: d } = parts;
  const lines = [...parts.header];
  if (parts.leftOut.length > 0) {
    lines.push('# Left out, as this file could not recreate them on a new gateway:');
    for (const item of parts.leftOut) lines.push(`#   ${yamlText(item.name)}: ${yamlText(item.reason)}`);
  }
  lines.push(`tenant: ${yamlText(d.keys.tenant)}`, `name: ${yamlText(d.keys.name)}`, `language: ${yamlText(d.keys.language)}`);
  lines.push(
    ...section('people', d.people.map(personLines), 'omit'),
    ...section('agents', d.agents.map(agentLines), 'omit'),
    ...section('groups', d.groups.map(groupLines), 'omit'),
    ...section('teams', d.teams.map(teamLines), 'omit'),
    ...section('kbs', d.kbs.map(kbLines), 'omit'),
    ...section('knowledge', parts.resources?.knowledge ?? [], 'omit'),
    ...section('skills', parts.resources?.skills ?? [], 'omit'),
    ...section('memories', parts.resources?.memories ?? [], 'omit'),
    ...section(
      'grants',
      parts.grants.map((g) => [`  - { to: ${yamlText(g.to)}, on: ${yamlText(g.on)}, role: ${yamlText(g.role)} }`]),
      'empty',
    ),
    ...section(
      'routes',
      parts.routes.map((r) => [`  - { deliver: ${yamlText(r.deliver)}, to: ${yamlText(r.to)} }`]),
      'empty',
    ),
  );
  return `${lines.join('\n')}\n`;
}

/** The org file of a tenant as it is now, for the console: its structure, grants and routes, naming resources as they exist. */
export interface TenantOrgFile {
  readonly directory: OrgDirectory;
  readonly grants: readonly OrgGrant[];
  readonly routes: readonly OrgRoute[];
  readonly leftOut: readonly OrgLeftOut[];
  readonly text: string;
}

/**
 * The tenant's org file without its texts: applied here, it changes nothing; applied to a new
 * gateway, it needs the Knowledge, Skills and Memories it names to exist there first (kgw import
 * export), as its header says. Archived KBs are left out, as `kgw export folder` leaves them out.
 */
export async function tenantOrgFile(run: OpRunner, tenant: string): Promise<TenantOrgFile> {
  const [directory, access] = await Promise.all([readOrgDirectory(run, tenant), run('context.access', { tenant })]);
  const leftOut = [
    ...directory.archivedKbs.map((kb) => ({ name: `kb:${kb.slug}`, reason: 'archived (restore it with kgw kb restore to carry it)' })),
    ...access.left_out,
  ].sort((a, b) => byText(a.name, b.name) || byText(a.reason, b.reason));
  const header = [
    `# The org file of tenant ${yamlText(directory.keys.tenant)}, downloaded from the console. It names each`,
    '# Knowledge, Skill and Memory its grants and routes reach as it exists in the tenant, and declares',
    '# none: on a new gateway, bring them first (kgw export folder here, kgw import export there),',
    '# then: kgw apply org.yaml',
    '# No passwords: password_env is left out of every person, so applying sets or changes none.',
    '# grants and routes are the complete lists: applied to a tenant that has others, this file',
    '# removes them.',
  ];
  const text = orgFileText({ header, leftOut, directory, grants: access.grants, routes: access.routes });
  return { directory, grants: access.grants, routes: access.routes, leftOut, text };
}
