import type { Dirent } from 'node:fs';
import { lstat, readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { loadConfig } from '../config.ts';
import { KB_TEXT_MAX_BYTES, VaultIndex, aliasesOf, relinkNote } from '../atmina/index.ts';
import { importExportCommand } from './import-export.ts';
import { importMcpCommand } from './import-mcp.ts';
import { importMemoryCommand } from './import-memory.ts';
import { importSkillsCommand } from './import-skills.ts';
import type { SentReport } from './kb-import.ts';
import { IMPORT_FILE_MAX_BYTES, KB_IMPORT_OPTIONS, mappedPath, noneSent, sendToKb } from './kb-import.ts';
import { withOps } from './session.ts';
import { jsonText, print, progressReporter, visible } from './terminal.ts';
import { UsageError, parseCommand, requireOptions } from './usage.ts';

export const importHelp = `Usage:
  kgw import folder PATH --tenant SLUG --kb SLUG --as EMAIL [--keep-links] [--dry-run] [--json]
  kgw import skills PATH --tenant SLUG [--publish] [--dry-run] [--json]
  kgw import memory FILE --tenant SLUG --kb SLUG --as EMAIL [--folder PATH] [--dry-run] [--json]
  kgw import mcp --from URL --dialect atmina|alignbase|brain --tenant SLUG --as EMAIL [--token TOKEN] ...
  kgw import export PATH --tenant SLUG --as EMAIL [--dry-run] [--json]

kgw import folder:

Brings a folder of files (a Markdown tree, an Obsidian vault, an export's kbs/SLUG folder) into
an Atmina Knowledge Base that exists, as the person --as names (an Editor of the KB; the
author of every version). Each file becomes the KB file at the same path: text (UTF-8, at most
1 MiB) for the text tools, images and PDFs as Assets with their descriptions and text, other
files as Assets kept as they are. Front matter stays as written (the KB reads title and tags
itself). A [[wiki link]] or ![[embed]] the KB would resolve to another file than the vault does
(an alias from a note's front matter, a name in another case, a name several files share, a
file whose name was mapped) is rewritten as a path relative to the note, its text kept. A file the KB already holds with
the same bytes is left alone, one with other bytes gets a new version, so running it again
changes only what changed and an interrupted import resumes.

Left out, and listed: names starting with "." (.obsidian/, .git/, .trash/, .DS_Store),
symbolic links (never followed) and other special files, and files over 100 MiB (one over 8 MiB is staged in pieces). A name the KB
cannot hold is mapped: control and invisible characters removed, "\\" made "-", spaces at a
name's ends trimmed; each mapped path is listed, and one that still cannot be a KB path (or
that two files would share) is skipped with the reason.

--keep-links  leaves every link as written.
--dry-run     says what each file would do; writes nothing.
--json        prints the report as one JSON object, without progress lines.

Exits 1 when a file was refused by the KB (each is listed with the reason).

kgw import skills: Skill packages (SKILL.md and files) into Alignbase Skills; see
kgw import skills --help.

kgw import memory: the MCP memory server's JSONL knowledge graph into a Knowledge Base, one
file per entity; see kgw import memory --help.

kgw import mcp: what a token may read at another MCP endpoint, through its own tools; see
kgw import mcp --help.

kgw import export: an export of kgw (kgw export folder) into a tenant; see
kgw import export --help.`;

interface Found {
  readonly source: string;
  readonly path: string;
  readonly absolute: string;
  readonly size: number;
}

interface Report extends SentReport {
  tenant: string;
  kb: string;
  dry_run: boolean;
  renamed: { from: string; to: string }[];
  relinked: { path: string; links: number }[];
  skipped: { path: string; reason: string }[];
}

/** Every file under `root` that may be imported, sorted by path; what is left out goes to `report.skipped`. */
async function walk(root: string, report: Report): Promise<Found[]> {
  const found: Found[] = [];
  const claimed = new Map<string, string>();
  const visit = async (dir: string, segments: readonly string[]): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (error) {
      report.skipped.push({ path: segments.join('/') || '.', reason: `cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})` });
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const here = [...segments, entry.name];
      const source = here.join('/');
      if (entry.name.startsWith('.')) report.skipped.push({ path: source, reason: 'hidden (a tool’s folder or file)' });
      else if (entry.isSymbolicLink()) report.skipped.push({ path: source, reason: 'a symbolic link (not followed)' });
      else if (entry.isDirectory()) await visit(path.join(dir, entry.name), here);
      else if (!entry.isFile()) report.skipped.push({ path: source, reason: 'not a regular file' });
      else {
        const absolute = path.join(dir, entry.name);
        const { size } = await lstat(absolute);
        const mapped = mappedPath(here);
        if (size > IMPORT_FILE_MAX_BYTES) report.skipped.push({ path: source, reason: `larger than ${IMPORT_FILE_MAX_BYTES / (1024 * 1024)} MiB` });
        else if (mapped === undefined) report.skipped.push({ path: source, reason: 'no Knowledge Base path is left of its name' });
        else if (claimed.has(mapped)) report.skipped.push({ path: source, reason: `the same Knowledge Base path as ${claimed.get(mapped) ?? ''}` });
        else {
          claimed.set(mapped, source);
          if (mapped !== source) report.renamed.push({ from: source, to: mapped });
          found.push({ source, path: mapped, absolute, size });
        }
      }
    }
  };
  await visit(root, []);
  return found;
}

/** A note: Markdown of at most a KB text file's size, read for its aliases and links. */
const isNote = (file: Found): boolean => /\.md$/i.test(file.path) && file.size <= KB_TEXT_MAX_BYTES;
/** UTF-8 only (a byte order mark kept): other bytes are sent as they are. */
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function decoded(bytes: Buffer): string | undefined {
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** The vault's files and its notes' aliases (each note read once here, and again when it is sent). */
async function vaultIndex(found: readonly Found[]): Promise<VaultIndex> {
  const index = new VaultIndex(found);
  for (const file of found.filter(isNote)) {
    const text = decoded(await readFile(file.absolute));
    if (text !== undefined) index.addAliases(file.source, aliasesOf(text));
  }
  return index;
}

/** The bytes sent for `file`: a note's with its links made to resolve in the KB (recorded in the report), anything else as it is. */
async function bytesToSend(file: Found, index: VaultIndex | undefined, report: Report): Promise<Buffer> {
  const bytes = await readFile(file.absolute);
  if (index === undefined || !isNote(file)) return bytes;
  const text = decoded(bytes);
  if (text === undefined) return bytes;
  const relinked = relinkNote(text, file.source, file.path, index);
  if (relinked.links === 0) return bytes;
  report.relinked.push({ path: file.path, links: relinked.links });
  return Buffer.from(relinked.text, 'utf8');
}

export async function importCommand(argv: readonly string[]): Promise<void> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === '--help' || sub === '-h') return void print(importHelp);
  if (sub === 'skills') return importSkillsCommand(rest);
  if (sub === 'memory') return importMemoryCommand(rest);
  if (sub === 'mcp') return importMcpCommand(rest);
  if (sub === 'export') return importExportCommand(rest);
  if (sub !== 'folder') throw new UsageError(`unknown import source "${sub}"; use folder, skills, memory, mcp or export`);
  const { values, positionals, help } = parseCommand(rest, { ...KB_IMPORT_OPTIONS, 'keep-links': { type: 'boolean' } }, { min: 1, max: 1 });
  if (help) return void print(importHelp);
  const { tenant, kb, as } = requireOptions(values, 'tenant', 'kb', 'as');
  const root = path.resolve(positionals[0] ?? '');
  const stats = await lstat(root).catch(() => undefined);
  if (stats?.isDirectory() !== true) throw new UsageError(`${root} is not a folder`);
  const dryRun = values['dry-run'] === true;
  const json = values.json === true;
  const report: Report = {
    tenant,
    kb,
    dry_run: dryRun,
    ...noneSent(),
    renamed: [],
    relinked: [],
    skipped: [],
  };
  const found = await walk(root, report);
  const index = values['keep-links'] === true ? undefined : await vaultIndex(found);
  await withOps(loadConfig(), (run) =>
    sendToKb(
      run,
      { tenant, kb, as, dryRun },
      found.map((file) => ({ ...file, bytes: () => bytesToSend(file, index, report) })),
      report,
      progressReporter(json),
    ),
  );
  report.relinked.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  if (report.failed.length > 0) process.exitCode = 1;
  if (json) return void print(jsonText(report));
  const would = dryRun ? 'would be ' : '';
  print(
    `${report.files} files (${report.bytes} bytes) into ${kb}: ${report.created} ${would}created, ${report.updated} ${would}updated, ${report.unchanged} unchanged, ` +
      `${report.skipped.length} left out, ${report.failed.length} refused`,
  );
  for (const item of report.renamed) print(`  renamed ${visible(item.from, { inline: true })} -> ${visible(item.to, { inline: true })}`);
  if (report.relinked.length > 0)
    print(`  links rewritten to resolve in the KB: ${report.relinked.reduce((sum, item) => sum + item.links, 0)} in ${report.relinked.length} notes`);
  for (const item of report.skipped) print(`  left out ${visible(item.path, { inline: true })}: ${item.reason}`);
  for (const item of report.failed) print(`  refused ${visible(item.path, { inline: true })}: ${item.reason}`);
}
