import { readFile } from 'node:fs/promises';
import { byText, orgFileText, readOrgDirectory, yamlText } from '../admin/org-file.ts';
import { REFERENCED_FILES_MAX_BYTES } from '../kernel/org/referenced-files.ts';
import type { ManifestResource as Resource } from './export-alignbase.ts';
import { fileNameOf } from './export-alignbase.ts';
import { destination, diskSha, reasonOf, removeGone, sha256Of, writeWhole } from './export-files.ts';
import { exportedText } from './import-export.ts';
import type { OpRunner } from './session.ts';

/**
 * The org part of `kgw export folder`: `org.yaml`, the org file (docs/org-file.md) that recreates
 * the tenant's structure on a new gateway: its keys, people and agents with their access keys,
 * groups, teams with their members, roles and shares, Knowledge Bases, the active Knowledge,
 * Skills and Memories, and the complete lists of grants and routes. Applying it is how grants
 * and routes travel (kgw import export does not carry them); kgw import export then finds the
 * Alignbase content the file declared unchanged and brings the KB files (docs/migration.md).
 *
 * Knowledge and Memories are named with `file:`, but not the export's own files under
 * `alignbase/`: those start with the export's front matter, which `file:` would store as part
 * of the text (and a later `kgw import export` would then replace). Their exact texts go to
 * `org/knowledge/` and `org/memories/` beside org.yaml. A Skill's folder under
 * `alignbase/skills/` is its package exactly, so `dir:` names it there.
 *
 * Every list is sorted by what the file writes (an email, a name, a slug), never by an id of
 * this gateway, so that the same tenant exported from another gateway gives the same bytes.
 */

/** Where the org file goes, from the export's root, and the exact texts it names. */
export const ORG_FILE = 'org.yaml';
const TEXT_FOLDERS = { knowledge: 'org/knowledge', memory: 'org/memories' } as const;

/** The org file in the manifest: its SHA-256 and the texts written for it (paths from the export's root). */
export interface ManifestOrg {
  readonly path: string;
  readonly sha256: string;
  readonly files: readonly { readonly path: string; readonly sha256: string }[];
}

export interface OrgReport {
  /** The file written, or null when it could not be. */
  path: string | null;
  people: number;
  agents: number;
  groups: number;
  teams: number;
  kbs: number;
  knowledge: number;
  skills: number;
  memories: number;
  grants: number;
  routes: number;
  /** What the file cannot declare for a new gateway, each named as the file would name it; also comments in the file. */
  left_out: { name: string; reason: string }[];
  /** The bytes of the files the org file names, which `kgw apply` sends along: at most REFERENCED_FILES_MAX_BYTES. */
  referenced_bytes: number;
  files: number;
  written: number;
  unchanged: number;
  removed: number;
  kept: { path: string; reason: string }[];
  failed: { path: string; reason: string }[];
}

/** A resource the file declares, and what its entry says. */
interface Declared {
  readonly resource: Resource;
  /** `file:` (Knowledge, Memory) or `dir:` (Skill), from the export's root. */
  readonly reference: string;
  readonly publish: boolean;
  readonly authority: string;
}

/** The staleness dates of a Knowledge or Skill; a Memory has none in the org file. */
function dateLines(r: Resource): string[] {
  return [
    ...(r.review_by === null ? [] : [`    review_by: ${yamlText(r.review_by)}`]),
    ...(r.expires_at === null ? [] : [`    expires_at: ${yamlText(r.expires_at)}`]),
  ];
}

function resourceLines(d: Declared): string[] {
  const r = d.resource;
  if (r.type === 'skill') return [`  - dir: ${yamlText(d.reference)}`, ...(d.publish ? ['    publish: true'] : []), ...dateLines(r)];
  if (r.type === 'memory') return [`  - name: ${yamlText(r.name)}`, `    file: ${yamlText(d.reference)}`];
  return [
    `  - title: ${yamlText(r.name)}`,
    `    file: ${yamlText(d.reference)}`,
    ...(d.authority === 'must_follow' ? ['    authority: "must_follow"'] : []),
    ...(d.publish ? ['    publish: true'] : []),
    ...dateLines(r),
  ];
}

const TYPE_WORDS = { knowledge: 'Knowledge', skill: 'Skills', memory: 'Memories', artifact: 'Artifacts' } as const;

/**
 * Writes `root`/ORG_FILE and the texts it names for the tenant, from the directory, the teams,
 * the KBs and the whole-type grants read now and the Alignbase `resources` this export has just
 * written under `alignbase/`; files of an earlier export's org part (`before`) that it no longer
 * names are removed unless they were changed on disk since. Returns the manifest's entry (null
 * when org.yaml could not be written) and what was done.
 */
export async function exportOrg(
  run: OpRunner,
  tenant: string,
  root: string,
  resources: readonly Resource[],
  before: ManifestOrg | null | undefined,
  progress: (line: string) => void,
): Promise<{ entry: ManifestOrg | null; report: OrgReport }> {
  const report: OrgReport = {
    path: null,
    ...{ people: 0, agents: 0, groups: 0, teams: 0, kbs: 0, knowledge: 0, skills: 0, memories: 0, grants: 0, routes: 0 },
    left_out: [],
    referenced_bytes: 0,
    ...{ files: 0, written: 0, unchanged: 0, removed: 0 },
    kept: [],
    failed: [],
  };
  const leaveOut = (name: string, reason: string): void => void report.left_out.push({ name, reason });
  const directory = await readOrgDirectory(run, tenant);
  const typeGrants = (await run('context.type-grants', { tenant })).grants;
  const { people, agents, groups, teams, kbs: liveKbs } = directory;
  progress(`org.yaml: ${people.length + agents.length} people and agents, ${groups.length} groups, ${teams.length} teams`);
  // The file refuses an archived KB, and the export holds no files of one.
  for (const kb of directory.archivedKbs) leaveOut(`kb:${kb.slug}`, 'archived (restore it with kgw kb restore to carry it)');

  // The active Knowledge, Skills and Memories, as the file names them (`knowledge:TITLE`): one
  // entry each, unless several share the name, which the file cannot tell apart.
  const keyOf = (r: Resource): string => `${r.type}:${r.name}`;
  const active = resources.filter((r) => r.status === 'active' && r.type !== 'artifact').sort((a, b) => byText(keyOf(a), keyOf(b)));
  const sharing = Map.groupBy(active, keyOf);
  const declared = new Map<string, Declared>();
  const texts: { path: string; bytes: Buffer }[] = [];
  const taken = new Set<string>();
  for (const [key, same] of sharing) {
    const [resource] = same;
    if (resource === undefined) continue;
    const leave = (reason: string): void => leaveOut(key, reason);
    if (same.length > 1) {
      leave(`${same.length} active ${TYPE_WORDS[resource.type]} have this name; the org file cannot tell them apart (rename all but one)`);
      continue;
    }
    const latest = resource.versions.find((v) => v.version === resource.latest_version);
    if (latest === undefined) {
      leave('it has no version yet');
      continue;
    }
    const publish = resource.published_version !== null && resource.published_version === resource.latest_version;
    const authority = latest.authority ?? 'informational';
    if (resource.type === 'skill') {
      // Its folder must hold the whole package: SKILL.md and each file of the latest version.
      if (resource.files.length !== latest.files.length + 1) {
        leave('its files could not all be written under alignbase/');
        continue;
      }
      const dir = resource.path.slice(0, resource.path.lastIndexOf('/'));
      declared.set(key, { resource, reference: dir, publish, authority });
      report.referenced_bytes += latest.size_bytes + latest.files.reduce((sum, file) => sum + file.size_bytes, 0);
      continue;
    }
    let text: string | undefined;
    try {
      text = exportedText(await readFile(destination(root, resource.path), 'utf8'));
    } catch {
      text = undefined;
    }
    // The text as the store holds it, checked against the version's SHA-256 (the export wrote it just now).
    if (text === undefined || text === '' || sha256Of(Buffer.from(text, 'utf8')) !== latest.sha256) {
      leave(`its text could not be read back from ${resource.path}`);
      continue;
    }
    // Named like the export's own file, numbered in name order when two names make one file name.
    const type = resource.type === 'knowledge' ? 'knowledge' : 'memory';
    let name = fileNameOf(resource.name);
    for (let n = 2; taken.has(`${type}/${name.toLowerCase()}`); n += 1) name = `${fileNameOf(resource.name)} (${n})`;
    taken.add(`${type}/${name.toLowerCase()}`);
    const reference = `${TEXT_FOLDERS[type]}/${name}.md`;
    texts.push({ path: reference, bytes: Buffer.from(text, 'utf8') });
    declared.set(key, { resource, reference, publish, authority });
  }

  // The texts, each written unless the disk holds it already; one that cannot be written is left out.
  const files: { path: string; sha256: string }[] = [];
  for (const text of texts) {
    report.files += 1;
    const sha256 = sha256Of(text.bytes);
    try {
      const target = destination(root, text.path);
      if ((await diskSha(target)) === sha256) report.unchanged += 1;
      else {
        await writeWhole(target, text.bytes);
        report.written += 1;
      }
      files.push({ path: text.path, sha256 });
      report.referenced_bytes += text.bytes.length;
    } catch (error) {
      report.failed.push({ path: text.path, reason: reasonOf(error) });
      const key = [...declared].find(([, d]) => d.reference === text.path)?.[0];
      if (key !== undefined) {
        declared.delete(key);
        leaveOut(key, `its text could not be written to ${text.path}`);
      }
    }
  }
  const live = new Set([...files.map((file) => file.path), ...report.failed.map((failed) => failed.path)]);
  await removeGone(root, before?.files ?? [], live, report);

  // Grants and routes of one resource name it as the file declares it; those on a resource the
  // file cannot declare would make the whole file fail on a new gateway, so they are left out.
  const missing = (r: Resource): string =>
    r.type === 'artifact'
      ? 'on an Artifact, which the org file cannot declare and kgw import export does not carry'
      : r.status !== 'active'
        ? 'on an archived resource, which kgw import export does not carry'
        : `on ${keyOf(r)}, left out above`;
  const grants: { to: string; on: string; role: string }[] = typeGrants.map((g) => ({ ...g }));
  const routes: { deliver: string; to: string }[] = [];
  for (const r of resources) {
    const key = keyOf(r);
    const own = declared.get(key)?.resource === r;
    for (const g of r.grants) {
      if (own) grants.push({ to: g.to, on: key, role: g.role });
      else leaveOut(`grant to ${g.to} on ${key} (${g.role})`, missing(r));
    }
    for (const to of r.routes) {
      if (own) routes.push({ deliver: key, to });
      else leaveOut(`route of ${key} to ${to}`, missing(r));
    }
  }
  grants.sort((a, b) => byText(a.to, b.to) || byText(a.on, b.on));
  routes.sort((a, b) => byText(a.deliver, b.deliver) || byText(a.to, b.to));
  report.left_out.sort((a, b) => byText(a.name, b.name) || byText(a.reason, b.reason));

  const ofType = (type: Resource['type']): Declared[] => [...declared.values()].filter((d) => d.resource.type === type);
  const knowledge = ofType('knowledge');
  const skills = ofType('skill');
  const memories = ofType('memory');
  Object.assign(report, {
    people: people.length,
    agents: agents.length,
    groups: groups.length,
    teams: teams.length,
    kbs: liveKbs.length,
    knowledge: knowledge.length,
    skills: skills.length,
    memories: memories.length,
    grants: grants.length,
    routes: routes.length,
  });

  const header = [
    `# The org file of tenant ${yamlText(tenant)}, written by kgw export folder. On a new gateway, from the`,
    '# export folder (EMAIL: a person of this file, an Editor of its KBs):',
    '#   kgw apply org.yaml',
    `#   kgw import export . --tenant ${tenant} --as EMAIL`,
    `#   kgw brain import brain/brain.yaml --tenant ${tenant}   (when the export has a brain)`,
    '# No passwords: password_env is left out of every person, so applying sets or changes none. Add',
    '# it for the people who sign in with a password, or send them login links.',
    '# The Company Brain is not in this file: an org file cannot name a brain file, and a brain:',
    '# section would make this file keep its nodes (and remove those it stops listing). It is in',
    '# brain/brain.yaml, for kgw brain import.',
    '# grants and routes are the complete lists: applied to a tenant that has others, this file',
    '# removes them.',
  ];
  const text = orgFileText({
    header,
    leftOut: report.left_out,
    directory,
    resources: { knowledge: knowledge.map(resourceLines), skills: skills.map(resourceLines), memories: memories.map(resourceLines) },
    grants,
    routes,
  });
  const bytes = Buffer.from(text, 'utf8');
  const sha256 = sha256Of(bytes);
  report.files += 1;
  try {
    const target = destination(root, ORG_FILE);
    if ((await diskSha(target)) === sha256) report.unchanged += 1;
    else {
      await writeWhole(target, bytes);
      report.written += 1;
    }
  } catch (error) {
    report.failed.push({ path: ORG_FILE, reason: reasonOf(error) });
    return { entry: null, report };
  }
  report.path = ORG_FILE;
  return { entry: { path: ORG_FILE, sha256, files }, report };
}

/** Whether the files org.yaml names are more than `kgw apply` sends along (REFERENCED_FILES_MAX_BYTES). */
export const tooMuchReferenced = (report: OrgReport): boolean => report.referenced_bytes > REFERENCED_FILES_MAX_BYTES;

/** The org entry of an earlier export's manifest (undefined when it has none, as before org files were exported). */
export function earlierOrg(manifest: unknown): ManifestOrg | null | undefined {
  const org = typeof manifest === 'object' && manifest !== null ? (manifest as { org?: unknown }).org : undefined;
  if (org === null) return null;
  if (typeof org !== 'object' || org === undefined) return undefined;
  const { path: file, sha256, files } = org as Partial<ManifestOrg>;
  return typeof file === 'string' && typeof sha256 === 'string' && Array.isArray(files) ? (org as ManifestOrg) : undefined;
}
