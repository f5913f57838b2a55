import { lstat, mkdir, readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { loadConfig } from '../config.ts';
import type { OpResult } from '../admin/ops.ts';
import type { ManifestResource } from './export-alignbase.ts';
import { earlierResources, exportAlignbase } from './export-alignbase.ts';
import type { ManifestBrain } from './export-brain.ts';
import { earlierBrain, exportBrain } from './export-brain.ts';
import { destination, diskSha, reasonOf, removeGone, sha256Of, writeWhole } from './export-files.ts';
import type { ManifestOrg } from './export-org.ts';
import { earlierOrg, exportOrg, tooMuchReferenced } from './export-org.ts';
import { exportMcpCommand } from './export-mcp.ts';
import type { OpRunner } from './session.ts';
import { withOps } from './session.ts';
import { jsonText, print, printNotice, progressReporter, visible } from './terminal.ts';
import { UsageError, parseCommand, requireOptions } from './usage.ts';
import { REFERENCED_FILES_MAX_BYTES } from '../kernel/org/referenced-files.ts';
import { BRAIN_FILE_MAX_BYTES } from '../brain/index.ts';

export const exportHelp = `Usage:
  kgw export folder PATH --tenant SLUG [--kinds kbs,alignbase,brain,org | --kb SLUG] [--json]
  kgw export mcp --to URL --dialect atmina|alignbase --tenant SLUG [...]   (see kgw export mcp --help)

Writes a tenant's content to the folder PATH, for people to read and tools to import: its
Atmina Knowledge Bases (every live one, or the one --kb names), its Alignbase Knowledge,
Skills, Memories and Artifacts, its Company Brain and the org file of its structure (--kinds
chooses; all four unless --kb is given, which exports that KB alone; org needs alignbase):

  PATH/kbs/SLUG/…                   each KB's live files, their current bytes exactly
  PATH/alignbase/knowledge/T.md     each Knowledge's latest text below front matter (id,
                                    version, published version, authority, dates, routes)
  PATH/alignbase/memories/N.md      each Memory's, likewise
  PATH/alignbase/skills/N/…         each Skill's latest package: SKILL.md and its files, exactly
  PATH/alignbase/artifacts/N/…      each Artifact's: ARTIFACT.md (front matter, Markdown) and files
  PATH/brain/brain.yaml             every Company Brain node of every tier and every relation,
                                    for kgw brain import (none when the tenant has no brain)
  PATH/org.yaml                     the org file of the tenant: its people and agents (never a
                                    password), groups, teams, KBs, Knowledge, Skills, Memories,
                                    grants and routes, for kgw apply on a new gateway
  PATH/org/knowledge/T.md           the exact text of each Knowledge org.yaml names (file:)
  PATH/org/memories/N.md            the exact text of each Memory, likewise
  PATH/manifest.json                the tenant, each KB and file, each resource with every
                                    version (number, SHA-256, size, author, time, files),
                                    its grants and routes, and the brain and org files

To recreate the tenant on a new gateway, follow the steps at the top of org.yaml: kgw apply
org.yaml, kgw import export (the KB files), kgw brain import brain/brain.yaml. Applying org.yaml
is what carries grants and routes; kgw import export does not. What org.yaml and the brain file
cannot carry to a new gateway is listed in their opening comments and in the report.

PATH is made (0700) when missing; an existing one must be empty or an earlier export of kgw
(it has that manifest). Running it again brings the folder up to date: files whose bytes on
disk already match are not fetched again (so an interrupted export resumes), files that left
the KB since the last export are removed unless they were changed on disk, and the manifest is
written last. Files are written 0600. Exits 1 when a file could not be written, naming it.`;

const MANIFEST = 'manifest.json';
const FORMAT = 'kgw-export';
const FORMAT_VERSION = 1;
const KINDS = ['kbs', 'alignbase', 'brain', 'org'] as const;

type KbFilesPage = OpResult<'kb.files'>;
type ManifestFile = KbFilesPage['files'][number];

interface ManifestKb {
  readonly slug: string;
  readonly kb_id: string;
  readonly name: string;
  readonly description: string;
  readonly visibility: string;
  readonly team: string;
  readonly files: readonly ManifestFile[];
}

interface Manifest {
  readonly format: typeof FORMAT;
  readonly format_version: number;
  readonly tenant: string;
  readonly exported_at: string;
  readonly kbs: readonly ManifestKb[];
  readonly alignbase: readonly ManifestResource[];
  /** Added in format 1 with the brain and org kinds: null when none was written, missing in an earlier export's manifest. */
  readonly brain?: ManifestBrain | null | undefined;
  readonly org?: ManifestOrg | null | undefined;
}

interface KbReport {
  slug: string;
  files: number;
  bytes: number;
  written: number;
  unchanged: number;
  removed: number;
  kept: { path: string; reason: string }[];
  failed: { path: string; reason: string }[];
}

/** The manifest of an earlier export in `root`, undefined when the folder is new or empty; refuses any other folder. */
async function earlierExport(root: string): Promise<Manifest | undefined> {
  let entries: string[];
  try {
    const stats = await lstat(root);
    if (!stats.isDirectory()) throw new UsageError(`${root} exists and is not a folder`);
    entries = await readdir(root);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  if (entries.length === 0) return undefined;
  let manifest: unknown;
  try {
    manifest = JSON.parse(await readFile(path.join(root, MANIFEST), 'utf8'));
  } catch {
    manifest = undefined;
  }
  const candidate = manifest as Partial<Manifest> | undefined;
  if (candidate?.format !== FORMAT || !Array.isArray(candidate.kbs))
    throw new UsageError(`${root} is not empty and holds no export of kgw (${MANIFEST}); export into a new or empty folder`);
  if (candidate.format_version !== FORMAT_VERSION)
    throw new UsageError(`${root} holds an export of another format version (${String(candidate.format_version)})`);
  return candidate as Manifest;
}

/** Exports one KB's live files into `kbRoot`; returns its manifest entry and what was done. */
async function exportKb(run: OpRunner, tenant: string, slug: string, kbRoot: string, before: ManifestKb | undefined, progress: (line: string) => void) {
  const report: KbReport = { slug, files: 0, bytes: 0, written: 0, unchanged: 0, removed: 0, kept: [], failed: [] };
  const files: ManifestFile[] = [];
  let meta: Omit<ManifestKb, 'files'> | undefined;
  let after: string | undefined;
  do {
    const page = await run('kb.files', { tenant, kb: slug, ...(after === undefined ? {} : { after }) });
    meta ??= { slug: page.slug, kb_id: page.kb_id, name: page.name, description: page.description, visibility: page.visibility, team: page.team };
    for (const file of page.files) {
      report.files += 1;
      try {
        const target = destination(kbRoot, file.path);
        if ((await diskSha(target)) === file.sha256) {
          report.unchanged += 1;
          report.bytes += file.size_bytes;
          files.push(file);
          continue;
        }
        const got = await run('files.get', { tenant, kb: page.kb_id, path: file.path });
        const bytes = Buffer.from(got.data_base64, 'base64');
        if (sha256Of(bytes) !== got.sha256) throw new Error('the bytes read do not match their SHA-256');
        await writeWhole(target, bytes);
        report.written += 1;
        report.bytes += bytes.length;
        // A write between the listing and the read: the manifest names the version written.
        files.push(got.version === file.version ? file : { ...file, sha256: got.sha256, size_bytes: got.size_bytes, version: got.version });
      } catch (error) {
        report.failed.push({ path: file.path, reason: reasonOf(error) });
      }
      if (report.files % 100 === 0) progress(`kbs/${slug}: ${report.files} files, ${(report.bytes / (1024 * 1024)).toFixed(1)} MiB`);
    }
    after = page.next ?? undefined;
  } while (after !== undefined);
  // What the last export wrote and the KB no longer holds goes, unless someone changed it on disk.
  const live = new Set([...files.map((file) => file.path), ...report.failed.map((failed) => failed.path)]);
  await removeGone(kbRoot, before?.files ?? [], live, report);
  if (meta === undefined) throw new Error(`no Knowledge Base "${slug}"`);
  return { entry: { ...meta, files }, report };
}

export async function exportCommand(argv: readonly string[]): Promise<void> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === '--help' || sub === '-h') return void print(exportHelp);
  if (sub === 'mcp') return exportMcpCommand(rest);
  if (sub !== 'folder') throw new UsageError(`unknown export target "${sub}"; use folder or mcp`);
  const { values, positionals, help } = parseCommand(
    rest,
    { tenant: { type: 'string' }, kb: { type: 'string' }, kinds: { type: 'string' }, json: { type: 'boolean' } },
    { min: 1, max: 1 },
  );
  if (help) return void print(exportHelp);
  const { tenant } = requireOptions(values, 'tenant');
  const kinds = new Set((values.kinds ?? (values.kb === undefined ? KINDS.join(',') : 'kbs')).split(',').map((kind) => kind.trim()));
  for (const kind of kinds)
    if (!(KINDS as readonly string[]).includes(kind)) throw new UsageError(`--kinds takes kbs, alignbase, brain and org, not "${kind}"`);
  const other = KINDS.find((kind) => kind !== 'kbs' && kinds.has(kind));
  if (values.kb !== undefined && other !== undefined) throw new UsageError(`--kb exports one Knowledge Base; leave out --kinds ${other} with it`);
  // org.yaml names the Knowledge, Skills and Memories by the files this export writes under alignbase/.
  if (kinds.has('org') && !kinds.has('alignbase')) throw new UsageError('--kinds org needs alignbase too: org.yaml names the files under alignbase/');
  const root = path.resolve(positionals[0] ?? '');
  const before = await earlierExport(root);
  if (before !== undefined && before.tenant !== tenant) throw new UsageError(`${root} holds an export of tenant "${before.tenant}", not "${tenant}"`);
  const json = values.json === true;
  const progress = progressReporter(json);
  const result = await withOps(loadConfig(), async (run) => {
    const slugs = !kinds.has('kbs')
      ? []
      : values.kb === undefined
        ? (await run('kb.list', { tenant, archived: false })).map((kb) => kb.slug)
        : [(await run('kb.show', { tenant, kb: values.kb })).slug];
    await mkdir(root, { recursive: true, mode: 0o700 });
    const kbs: ManifestKb[] = [];
    const reports: KbReport[] = [];
    for (const slug of slugs) {
      const { entry, report } = await exportKb(
        run,
        tenant,
        slug,
        path.join(root, 'kbs', slug),
        before?.kbs.find((kb) => kb.slug === slug),
        progress,
      );
      kbs.push(entry);
      reports.push(report);
    }
    // KBs of an earlier export not exported now: with --kb they stay as they were; without, they
    // are gone from the tenant (deleted or archived), and so are their files.
    let untouched = (before?.kbs ?? []).filter((kb) => !slugs.includes(kb.slug));
    if (values.kb === undefined && kinds.has('kbs')) {
      for (const gone of untouched) {
        const report: KbReport = { slug: gone.slug, files: 0, bytes: 0, written: 0, unchanged: 0, removed: 0, kept: [], failed: [] };
        await removeGone(path.join(root, 'kbs', gone.slug), gone.files, new Set(), report);
        reports.push(report);
      }
      untouched = [];
    }
    const earlier = earlierResources(before);
    const alignbase = kinds.has('alignbase') ? await exportAlignbase(run, tenant, root, earlier, progress) : undefined;
    const org = kinds.has('org') && alignbase !== undefined ? await exportOrg(run, tenant, root, alignbase.entries, earlierOrg(before), progress) : undefined;
    const brain = kinds.has('brain') ? await exportBrain(run, tenant, root, earlierBrain(before), progress) : undefined;
    const manifest: Manifest = {
      format: FORMAT,
      format_version: FORMAT_VERSION,
      tenant,
      exported_at: new Date().toISOString(),
      kbs: [...kbs, ...untouched],
      alignbase: alignbase?.entries ?? earlier,
      // A kind not exported now keeps what the earlier export wrote of it.
      brain: brain === undefined ? (earlierBrain(before) ?? null) : brain.entry,
      org: org === undefined ? (earlierOrg(before) ?? null) : org.entry,
    };
    await writeWhole(path.join(root, MANIFEST), Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`));
    return { kbs: reports, alignbase: alignbase?.report, org: org?.report, brain: brain?.report };
  });
  const failed =
    result.kbs.reduce((sum, kb) => sum + kb.failed.length, 0) +
    (result.alignbase?.failed.length ?? 0) +
    (result.org?.failed.length ?? 0) +
    (result.brain?.failed.length ?? 0);
  if (failed > 0) process.exitCode = 1;
  if (json) return void print(jsonText({ path: root, tenant, ...result }));
  for (const kb of result.kbs) {
    print(
      `kbs/${kb.slug}: ${kb.files} files (${kb.bytes} bytes): ${kb.written} written, ${kb.unchanged} unchanged, ${kb.removed} removed${kb.failed.length > 0 ? `, ${kb.failed.length} failed` : ''}`,
    );
    for (const item of kb.kept) print(`  kept ${visible(item.path, { inline: true })}: ${item.reason}`);
    for (const item of kb.failed) print(`  failed ${visible(item.path, { inline: true })}: ${item.reason}`);
  }
  const ab = result.alignbase;
  if (ab !== undefined) {
    print(
      `alignbase: ${ab.resources} resources, ${ab.files} files: ${ab.written} written, ${ab.unchanged} unchanged, ${ab.removed} removed${ab.failed.length > 0 ? `, ${ab.failed.length} failed` : ''}`,
    );
    for (const item of ab.kept) print(`  kept ${visible(item.path, { inline: true })}: ${item.reason}`);
    for (const item of ab.failed) print(`  failed ${visible(item.path, { inline: true })}: ${item.reason}`);
  }
  const org = result.org;
  if (org !== undefined) {
    print(
      `org.yaml: ${org.people} people, ${org.agents} agents, ${org.groups} groups, ${org.teams} teams, ${org.kbs} KBs, ${org.knowledge} Knowledge, ${org.skills} Skills, ${org.memories} Memories, ${org.grants} grants, ${org.routes} routes; ${org.files} files: ${org.written} written, ${org.unchanged} unchanged, ${org.removed} removed${org.failed.length > 0 ? `, ${org.failed.length} failed` : ''}`,
    );
    for (const item of org.left_out) print(`  left out ${visible(item.name, { inline: true })}: ${visible(item.reason, { inline: true })}`);
    if (tooMuchReferenced(org))
      print(
        `  the files org.yaml names are ${org.referenced_bytes} bytes together; kgw apply sends at most ${REFERENCED_FILES_MAX_BYTES} and refuses the rest`,
      );
    for (const item of org.kept) print(`  kept ${visible(item.path, { inline: true })}: ${item.reason}`);
    for (const item of org.failed) print(`  failed ${visible(item.path, { inline: true })}: ${item.reason}`);
  }
  const brain = result.brain;
  if (brain !== undefined) {
    print(
      brain.path === null
        ? `brain: no nodes or relations, no brain file${brain.removed > 0 ? ' (the earlier one removed)' : ''}`
        : `${brain.path}: ${brain.nodes} nodes, ${brain.relations} relations: ${brain.written > 0 ? 'written' : brain.unchanged > 0 ? 'unchanged' : 'not written'}`,
    );
    for (const item of brain.left_out) print(`  left out ${visible(item.relation, { inline: true })}: ${visible(item.reason, { inline: true })}`);
    if (brain.too_large) print(`  larger than the ${BRAIN_FILE_MAX_BYTES} bytes kgw brain import reads: split its nodes and relations to import it`);
    for (const item of brain.kept) print(`  kept ${visible(item.path, { inline: true })}: ${item.reason}`);
    for (const item of brain.failed) print(`  failed ${visible(item.path, { inline: true })}: ${item.reason}`);
  }
  const count = result.kbs.length;
  const parts = [
    `${count} Knowledge Base${count === 1 ? '' : 's'}`,
    ...(ab === undefined ? [] : [`${ab.resources} Alignbase resource${ab.resources === 1 ? '' : 's'}`]),
    ...(brain?.path ? ['the brain'] : []),
    ...(org?.path ? ['the org file'] : []),
  ];
  printNotice(`exported ${parts.length === 1 ? parts[0] : `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}`} of ${tenant} to ${root}`);
}
