import { lstat, readFile } from 'node:fs/promises';
import path from 'node:path';
import { KB_TEXT_MAX_BYTES, relativeWikiTarget } from '../atmina/index.ts';
import { loadConfig } from '../config.ts';
import type { Outgoing, SentReport } from './kb-import.ts';
import { KB_IMPORT_OPTIONS, isRecord, mappedPath, noneSent, sendToKb } from './kb-import.ts';
import { withOps } from './session.ts';
import { jsonText, print, progressReporter, visible } from './terminal.ts';
import { UsageError, parseCommand, requireOptions } from './usage.ts';

export const importMemoryHelp = `Usage:
  kgw import memory FILE --tenant SLUG --kb SLUG --as EMAIL [--folder PATH] [--dry-run] [--json]

Brings the knowledge graph of the MCP memory server (@modelcontextprotocol/server-memory, its
JSONL file of entities and relations) into an Atmina Knowledge Base, as the person --as names
(an Editor of the KB). Each entity becomes one Markdown file, FOLDER/<entityType>/<name>.md
(FOLDER is "memory" unless --folder says otherwise; "" is the KB's root): its name as the title,
its type as a tag, its observations as a list, and its relations as wiki links to the files of
the entities they name, so search finds the facts and related shows the graph both ways.
Running it again changes only the entities that changed; entities left out of a later file
stay in the KB.

Refused, and listed: lines that are not JSON objects of an entity or a relation, an entity
without a name, and a file the KB refuses (a name too long for a path, a file over 1 MiB).
A relation naming an entity the file does not hold stays as text, and is counted.

--folder PATH  where the entity files go (default memory).
--dry-run      says what each file would do; writes nothing.
--json         prints the report as one JSON object, without progress lines.

Exits 1 when a line or an entity was refused.`;

/** The JSONL file is read whole: at most this many bytes, and lines of at most MEMORY_LINE_MAX_BYTES. */
export const MEMORY_FILE_MAX_BYTES = 256 * 1024 * 1024;
const MEMORY_LINE_MAX_BYTES = 1024 * 1024;

export interface MemoryEntity {
  readonly name: string;
  readonly entityType: string;
  readonly observations: string[];
}

export interface MemoryRelation {
  readonly from: string;
  readonly to: string;
  readonly relationType: string;
}

export interface MemoryGraph {
  readonly entities: Map<string, MemoryEntity>;
  readonly relations: MemoryRelation[];
  /** Lines that are no entity or relation, by 1-based line number. */
  readonly refused: { line: number; reason: string }[];
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value.isWellFormed() ? value : undefined);

/**
 * The graph of a memory server's JSONL file: one JSON object per line, `{"type":"entity",
 * "name","entityType","observations":[…]}` or `{"type":"relation","from","to","relationType"}`
 * (other fields ignored; blank lines skipped). An entity named twice is one entity with the
 * observations of both, in order, each once; a relation given twice is one.
 */
export function parseMemoryGraph(jsonl: string): MemoryGraph {
  const entities = new Map<string, MemoryEntity>();
  const relations = new Map<string, MemoryRelation>();
  const refused: { line: number; reason: string }[] = [];
  jsonl.split('\n').forEach((raw, at) => {
    const line = at + 1;
    if (raw.trim() === '') return;
    if (Buffer.byteLength(raw, 'utf8') > MEMORY_LINE_MAX_BYTES) return void refused.push({ line, reason: `longer than ${MEMORY_LINE_MAX_BYTES} bytes` });
    let item: unknown;
    try {
      item = JSON.parse(raw);
    } catch {
      return void refused.push({ line, reason: 'not JSON' });
    }
    if (!isRecord(item)) return void refused.push({ line, reason: 'not a JSON object' });
    if (item['type'] === 'entity') {
      const name = text(item['name'])?.trim();
      const observations = Array.isArray(item['observations']) ? item['observations'] : [];
      if (name === undefined || name === '') return void refused.push({ line, reason: 'an entity without a name' });
      const kept = observations.map(text).filter((o): o is string => o !== undefined && o.trim() !== '');
      const before = entities.get(name);
      if (before === undefined) entities.set(name, { name, entityType: text(item['entityType'])?.trim() || 'entity', observations: [...new Set(kept)] });
      else for (const observation of kept) if (!before.observations.includes(observation)) before.observations.push(observation);
    } else if (item['type'] === 'relation') {
      const from = text(item['from'])?.trim();
      const to = text(item['to'])?.trim();
      const relationType = text(item['relationType'])?.trim();
      if (!from || !to || !relationType) return void refused.push({ line, reason: 'a relation without from, to and relationType' });
      relations.set(JSON.stringify([from, relationType, to]), { from, to, relationType });
    } else refused.push({ line, reason: 'neither an entity nor a relation ("type")' });
  });
  return { entities, relations: [...relations.values()], refused };
}

// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f]/g;
/** Text of the file's body: no control characters, on one line (a wiki link's label cannot span lines). */
const inline = (value: string): string => value.replace(CONTROLS, '').replace(/\s*\n\s*/g, ' ');

/** An entity's KB path: FOLDER/<entityType>/<name>.md, each segment mapped as kgw import folder maps names, "/" made "-"; undefined when nothing of the name or type is left. */
export function entityPath(folder: string, entity: MemoryEntity): string | undefined {
  const mapped = mappedPath([...folder.split('/').filter(Boolean), entity.entityType.replaceAll('/', '-'), entity.name.replaceAll('/', '-')]);
  return mapped === undefined ? undefined : `${mapped}.md`;
}

/** The Markdown file of one entity at `at`, its relations linking to the files in `paths` (by entity name). */
export function entityMarkdown(
  entity: MemoryEntity,
  at: string,
  outgoing: readonly MemoryRelation[],
  paths: ReadonlyMap<string, string>,
): { text: string; dangling: number } {
  const lines = ['---', `title: ${JSON.stringify(inline(entity.name))}`, `entity_type: ${JSON.stringify(inline(entity.entityType))}`];
  lines.push(`tags: [${JSON.stringify(inline(entity.entityType))}]`, '---', `# ${inline(entity.name)}`, '');
  for (const observation of entity.observations) lines.push(`- ${inline(observation)}`);
  let dangling = 0;
  if (outgoing.length > 0) {
    lines.push('', '## Relations', '');
    for (const relation of outgoing) {
      const target = paths.get(relation.to);
      if (target === undefined) dangling += 1;
      const label = inline(relation.to).replace(/[[\]|]/g, ' ');
      const link = target === undefined ? `${inline(relation.to)} (not in the memory file)` : `[[${relativeWikiTarget(target, at, () => false)}|${label}]]`;
      lines.push(`- ${inline(relation.relationType)} ${link}`);
    }
  }
  return { text: `${lines.join('\n')}\n`, dangling };
}

interface Report extends SentReport {
  tenant: string;
  kb: string;
  dry_run: boolean;
  entities: number;
  relations: number;
  dangling_relations: number;
  skipped: { path: string; reason: string }[];
}

export async function importMemoryCommand(argv: readonly string[]): Promise<void> {
  const { values, positionals, help } = parseCommand(argv, { ...KB_IMPORT_OPTIONS, folder: { type: 'string' } }, { min: 1, max: 1 });
  if (help) return void print(importMemoryHelp);
  const { tenant, kb, as } = requireOptions(values, 'tenant', 'kb', 'as');
  const file = path.resolve(positionals[0] ?? '');
  const stats = await lstat(file).catch(() => undefined);
  if (stats?.isFile() !== true) throw new UsageError(`${file} is not a file`);
  if (stats.size > MEMORY_FILE_MAX_BYTES) throw new UsageError(`${file} is larger than ${MEMORY_FILE_MAX_BYTES / (1024 * 1024)} MiB`);
  const folder = values.folder ?? 'memory';
  if (folder !== '' && mappedPath(folder.split('/').filter(Boolean)) !== folder.replace(/^\/+|\/+$/g, ''))
    throw new UsageError(`--folder must be a KB folder such as memory or notes/graph, not ${JSON.stringify(folder)}`);
  const graph = parseMemoryGraph(await readFile(file, 'utf8'));
  const dryRun = values['dry-run'] === true;
  const json = values.json === true;
  const report: Report = {
    tenant,
    kb,
    dry_run: dryRun,
    entities: graph.entities.size,
    relations: graph.relations.length,
    dangling_relations: 0,
    ...noneSent(),
    skipped: [],
    failed: graph.refused.map((item) => ({ path: `line ${item.line}`, reason: item.reason })),
  };
  // Paths first, so that every relation can link to the file of the entity it names.
  const paths = new Map<string, string>();
  const taken = new Map<string, string>();
  for (const entity of [...graph.entities.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const at = entityPath(folder, entity);
    if (at === undefined) report.skipped.push({ path: entity.name, reason: 'no Knowledge Base path is left of its name' });
    else if (taken.has(at)) report.skipped.push({ path: entity.name, reason: `the same Knowledge Base path as the entity ${taken.get(at) ?? ''}` });
    else {
      taken.set(at, entity.name);
      paths.set(entity.name, at);
    }
  }
  const outgoing = new Map<string, MemoryRelation[]>();
  for (const relation of graph.relations) {
    const list = outgoing.get(relation.from);
    if (list === undefined) outgoing.set(relation.from, [relation]);
    else list.push(relation);
  }
  const items: Outgoing[] = [];
  for (const [name, at] of paths) {
    const entity = graph.entities.get(name);
    if (entity === undefined) continue;
    const relations = (outgoing.get(name) ?? []).sort((a, b) => (a.relationType + a.to < b.relationType + b.to ? -1 : 1));
    const { text: markdown, dangling } = entityMarkdown(entity, at, relations, paths);
    report.dangling_relations += dangling;
    const bytes = Buffer.from(markdown, 'utf8');
    if (bytes.length > KB_TEXT_MAX_BYTES) report.failed.push({ path: at, reason: `its file would be larger than 1 MiB (${bytes.length} bytes)` });
    else items.push({ source: at, path: at, size: bytes.length, bytes: () => Promise.resolve(bytes) });
  }
  await withOps(loadConfig(), (run) => sendToKb(run, { tenant, kb, as, dryRun }, items, report, progressReporter(json)));
  if (report.failed.length > 0) process.exitCode = 1;
  if (json) return void print(jsonText(report));
  const would = dryRun ? 'would be ' : '';
  print(
    `${report.entities} entities and ${report.relations} relations into ${kb}: ${report.created} files ${would}created, ${report.updated} ${would}updated, ` +
      `${report.unchanged} unchanged, ${report.skipped.length} left out, ${report.failed.length} refused; ${report.dangling_relations} relations name no entity of the file`,
  );
  for (const item of report.skipped) print(`  left out ${visible(item.path, { inline: true })}: ${item.reason}`);
  for (const item of report.failed) print(`  refused ${visible(item.path, { inline: true })}: ${item.reason}`);
}
