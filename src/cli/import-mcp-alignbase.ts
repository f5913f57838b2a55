import { isKgwError } from '../kernel/errors.ts';
import type { DialectOutcome, DialectReader, McpImportContext, Refusal } from './import-mcp-dialect.ts';
import { ItemRefused, isRecord } from './kb-import.ts';
import { readAttachment } from './mcp-peer-reads.ts';
import { SourceError } from './mcp-source.ts';
import { visible } from './terminal.ts';

/**
 * kgw import mcp --dialect alignbase: the Knowledge, Skills, Memories and Artifacts a token may
 * read, through list_knowledge/read_knowledge, list_skills/read_skill, list_memories/read_memory,
 * list_artifacts/read_artifact and read_context_attachment. Knowledge, Skills and Artifacts come
 * with every version the exact-version selector reaches, oldest first; a Memory with its latest
 * (read_memory reads no other). Each resource is written by the `context.import` operation, which
 * saves the versions through the tools' own code with their provenance and remembers what it
 * carried, so a second run reads only newer versions and an interrupted one resumes. The open
 * drafts of Knowledge and Skills the token may read (list_*_drafts, read_*_draft) are proposed
 * here again on the local version that holds their base (`context.import-draft`).
 */

type Kind = 'knowledge' | 'skills' | 'memories' | 'artifacts';
type ContextType = 'knowledge' | 'skill' | 'memory' | 'artifact';

/** Versions and bytes of one call of `context.import` (a request to a running gateway is at most 16 MiB of JSON). */
const CALL_VERSIONS = 100;
const CALL_BYTES = 8 * 1024 * 1024;
/** One Skill or Artifact version's files, as the tools bound a package (3 MiB). */
const PACKAGE_MAX_BYTES = 3 * 1024 * 1024;
/** Resources of one kind read from a source at most; a listing longer than this is cut there and said. */
const RESOURCES_MAX = 100_000;

interface KindReport {
  read: number;
  created: number;
  updated: number;
  unchanged: number;
  versions_saved: number;
  failed: Refusal[];
  /** Knowledge and Skills: their open drafts at the source. */
  drafts?: DraftsReport;
}

interface DraftsReport {
  read: number;
  created: number;
  unchanged: number;
  /** Listed, but the source let this token read only its own drafts (or, as a Publisher, all). */
  not_readable: number;
  /** Resources whose drafts the source would not list (a source without the draft tools), and why, once. */
  not_listed: number;
  not_listed_reason?: string;
}

/** Open drafts read of one resource at most. */
const DRAFTS_MAX = 1000;
const DRAFT_TOOLS = {
  knowledge: { list: 'list_knowledge_drafts', read: 'read_knowledge_draft', id: 'knowledge_id', content: 'content' },
  skills: { list: 'list_skill_drafts', read: 'read_skill_draft', id: 'skill_id', content: 'skill_md' },
} as const;

interface Listed {
  readonly id: string;
  readonly name: string;
  readonly latest: number;
  readonly published: number | undefined;
  readonly reviewBy: string | undefined;
  readonly expiresAt: string | undefined;
}

/** One version as `context.import` takes it. */
export interface VersionSent {
  version: number;
  content: string;
  authority?: 'informational' | 'must_follow';
  source_task?: string;
  attachments?: { path: string; data_base64: string }[];
  author?: string;
  at?: string;
}

const KINDS: readonly Kind[] = ['knowledge', 'skills', 'memories', 'artifacts'];
const TYPE: Readonly<Record<Kind, ContextType>> = { knowledge: 'knowledge', skills: 'skill', memories: 'memory', artifacts: 'artifact' };
const LISTING: Readonly<Record<Kind, { tool: string; field: string; id: string; name: string; latest: string }>> = {
  knowledge: { tool: 'list_knowledge', field: 'knowledge', id: 'knowledge_id', name: 'title', latest: 'latest_version' },
  skills: { tool: 'list_skills', field: 'skills', id: 'id', name: 'name', latest: 'latest_version' },
  memories: { tool: 'list_memories', field: 'memories', id: 'memory_id', name: 'name', latest: 'version' },
  artifacts: { tool: 'list_artifacts', field: 'artifacts', id: 'artifact_id', name: 'name', latest: 'current_version' },
};

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const positive = (value: unknown): number | undefined => (Number.isSafeInteger(value) && (value as number) >= 1 ? (value as number) : undefined);

/** A resource as the source listed it, or why it cannot be read. */
function listedResource(kind: Kind, item: unknown): Listed | string {
  const shape = LISTING[kind];
  if (!isRecord(item)) return `${shape.tool} listed something that is not a resource`;
  const id = text(item[shape.id]);
  const name = text(item[shape.name]);
  const latest = positive(item[shape.latest]);
  if (id === undefined || name === undefined || latest === undefined)
    return `${shape.tool} listed a resource without ${shape.id}, ${shape.name} and ${shape.latest}`;
  return { id, name, latest, published: positive(item['published_version']), reviewBy: text(item['review_by']), expiresAt: text(item['expires_at']) };
}

/** A Skill's or Artifact's files at one version, each read whole with read_context_attachment (256 KiB a call). */
async function readFiles(
  context: McpImportContext,
  type: 'skill' | 'artifact',
  id: string,
  version: number,
  manifest: unknown,
): Promise<VersionSent['attachments']> {
  const files: { path: string; data_base64: string }[] = [];
  const entries = Array.isArray(manifest) ? manifest : [];
  let total = 0;
  for (const entry of entries) {
    const path = isRecord(entry) ? text(entry['path']) : undefined;
    const size = isRecord(entry) ? entry['size'] : undefined;
    if (path === undefined || !Number.isSafeInteger(size) || (size as number) < 0)
      throw new ItemRefused(`version ${version} lists a file without path and size`);
    total += size as number;
    if (total > PACKAGE_MAX_BYTES) throw new ItemRefused(`version ${version}'s files are larger than ${PACKAGE_MAX_BYTES / (1024 * 1024)} MiB`);
    const bytes = await readAttachment(context.source, { type, id, version, path, size: size as number });
    if (bytes.length !== size) throw new ItemRefused(`the source sent ${bytes.length} bytes for ${path}, its manifest says ${String(size)}`);
    files.push({ path, data_base64: bytes.toString('base64') });
  }
  return files;
}

/** One version of a resource, read from the source. */
async function readVersion(context: McpImportContext, kind: Kind, resource: Listed, version: number): Promise<VersionSent> {
  const { source } = context;
  switch (kind) {
    case 'knowledge': {
      const read = await source.call('read_knowledge', { knowledge_id: resource.id, version });
      const content = text(read['content']);
      if (content === undefined || read['version'] !== version) throw new ItemRefused(`read_knowledge did not give version ${version}`);
      const authority = read['authority'] === 'must_follow' ? 'must_follow' : 'informational';
      return { version, content, authority, ...timeOf(read['version_created_at']) };
    }
    case 'skills': {
      const read = await source.call('read_skill', { skill_id: resource.id, version });
      const content = text(read['skill_md']);
      if (content === undefined || read['version'] !== version) throw new ItemRefused(`read_skill did not give version ${version}`);
      return {
        version,
        content,
        attachments: await readFiles(context, 'skill', resource.id, version, read['attachments']),
        ...timeOf(read['version_created_at']),
      };
    }
    case 'memories': {
      const read = await source.call('read_memory', { memory_id: resource.id });
      const content = text(read['content']);
      const latest = positive(read['version']);
      if (content === undefined || latest === undefined) throw new ItemRefused('read_memory gave no content and version');
      return { version: latest, content };
    }
    case 'artifacts': {
      const read = await source.call('read_artifact', { artifact_id: resource.id, version });
      const content = text(read['markdown']);
      if (content === undefined || read['version'] !== version) throw new ItemRefused(`read_artifact did not give version ${version}`);
      const provenance = isRecord(read['provenance']) ? read['provenance'] : {};
      const author = authorOf(provenance);
      const task = text(read['source_task']);
      return {
        version,
        content,
        ...(task === undefined ? {} : { source_task: task }),
        attachments: await readFiles(context, 'artifact', resource.id, version, read['attachments']),
        ...(author === undefined ? {} : { author }),
        ...timeOf(read['version_created_at']),
      };
    }
  }
}

/** Who the source says wrote it: their email, else their name, else the agent's. */
const authorOf = (said: Record<string, unknown>): string | undefined => text(said['author_email']) ?? text(said['author_name']) ?? text(said['agent_name']);

/** What every call of the import operations names: where to, as whom, from where. */
const importing = (context: McpImportContext) => ({ tenant: context.tenant, as: context.as, dry_run: context.dryRun, source: context.source.url.href });

const timeOf = (value: unknown): { at?: string } => (typeof value === 'string' && !Number.isNaN(Date.parse(value)) ? { at: value } : {});

const sizeOf = (version: VersionSent): number =>
  version.content.length * 3 + (version.attachments ?? []).reduce((sum, file) => sum + file.data_base64.length, 0);

/** Reads the versions not carried yet and sends them in calls of at most CALL_VERSIONS versions and CALL_BYTES bytes. */
async function importResource(context: McpImportContext, kind: Kind, resource: Listed, carried: number, report: KindReport): Promise<void> {
  const type = TYPE[kind];
  // A Memory has only its latest version to read; the others every version after the carried one.
  const numbers = kind === 'memories' ? (resource.latest > carried ? [resource.latest] : []) : range(carried + 1, resource.latest);
  if (numbers.length === 0 && carried > 0) {
    report.unchanged += 1;
    return;
  }
  const outcomes: string[] = [];
  let batch: VersionSent[] = [];
  let bytes = 0;
  const send = async (): Promise<void> => {
    if (batch.length === 0) return;
    const result = await context.run('context.import', {
      ...importing(context),
      type,
      source_id: resource.id,
      name: resource.name,
      versions: batch,
      ...(resource.published === undefined ? {} : { published_version: resource.published }),
      ...(resource.reviewBy === undefined ? {} : { review_by: resource.reviewBy }),
      ...(resource.expiresAt === undefined ? {} : { expires_at: resource.expiresAt }),
    });
    outcomes.push(result.outcome);
    report.versions_saved += result.saved;
    batch = [];
    bytes = 0;
  };
  for (const number of numbers) {
    const version = await readVersion(context, kind, resource, number);
    if (batch.length >= CALL_VERSIONS || (batch.length > 0 && bytes + sizeOf(version) > CALL_BYTES)) await send();
    batch.push(version);
    bytes += sizeOf(version);
    // A dry run reads one version: enough to say whether the resource would be created or updated.
    if (context.dryRun) break;
  }
  await send();
  const outcome = outcomes.includes('created') ? 'created' : outcomes.includes('updated') ? 'updated' : 'unchanged';
  report[outcome] += 1;
}

/**
 * The open drafts of one imported Knowledge or Skill that this token may read (its own, or all as
 * a Publisher there), each proposed here again by `context.import-draft` on the local version of
 * its base; one carried before is not read again.
 */
async function importDrafts(context: McpImportContext, kind: 'knowledge' | 'skills', resource: Listed, report: KindReport): Promise<void> {
  const tools = DRAFT_TOOLS[kind];
  const type = kind === 'knowledge' ? 'knowledge' : 'skill';
  const drafts = (report.drafts ??= { read: 0, created: 0, unchanged: 0, not_readable: 0, not_listed: 0 });
  let listed: Record<string, unknown>;
  try {
    listed = await context.source.call(tools.list, { [tools.id]: resource.id });
  } catch (error) {
    // Drafts are not the resource: one the source will not list leaves the resource imported.
    if (!(error instanceof SourceError) && !(error instanceof ItemRefused)) throw error;
    drafts.not_listed += 1;
    drafts.not_listed_reason ??= error.message;
    return;
  }
  const items = (Array.isArray(listed['drafts']) ? (listed['drafts'] as unknown[]) : []).slice(0, DRAFTS_MAX);
  const ids = [...new Set(items.flatMap((item) => (isRecord(item) && typeof item['draft_id'] === 'string' ? [item['draft_id']] : [])))];
  if (ids.length === 0) return;
  const carried = await context.run('imports.carried', { tenant: context.tenant, source: context.source.url.href, kind: `${type}_draft`, source_ids: ids });
  for (const id of ids) {
    drafts.read += 1;
    if (carried[id] !== undefined) {
      drafts.unchanged += 1;
      continue;
    }
    const name = `${resource.name} (draft ${id})`;
    let read: Record<string, unknown>;
    try {
      read = await context.source.call(tools.read, { draft_id: id });
    } catch (error) {
      // A tool error: the source's rule that only the author or a Publisher reads a draft.
      if (!(error instanceof ItemRefused)) throw error;
      drafts.not_readable += 1;
      continue;
    }
    try {
      const content = text(read[tools.content]);
      const base = positive(read['base_version']);
      if (content === undefined || base === undefined || read['draft_id'] !== id)
        throw new ItemRefused(`${tools.read} did not give the draft's content and base_version`);
      const rationale = text(read['rationale']);
      const author = authorOf(read);
      const result = await context.run('context.import-draft', {
        ...importing(context),
        type,
        source_id: resource.id,
        draft_id: id,
        base_version: base,
        content,
        ...(rationale === undefined ? {} : { rationale }),
        ...(author === undefined ? {} : { author }),
        ...timeOf(read['created_at']),
      });
      drafts[result.outcome] += 1;
    } catch (error) {
      if (!(error instanceof ItemRefused) && !isKgwError(error)) throw error;
      report.failed.push({ name, reason: error.message });
    }
  }
}

const range = (from: number, to: number): number[] => Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);

async function importKind(context: McpImportContext, kind: Kind): Promise<KindReport> {
  const report: KindReport = { read: 0, created: 0, updated: 0, unchanged: 0, versions_saved: 0, failed: [] };
  const shape = LISTING[kind];
  const listed = await context.source.call(shape.tool, {});
  const items = Array.isArray(listed[shape.field]) ? (listed[shape.field] as unknown[]) : [];
  const resources: Listed[] = [];
  const seen = new Set<string>();
  for (const item of items.slice(0, RESOURCES_MAX)) {
    const resource = listedResource(kind, item);
    if (typeof resource === 'string') report.failed.push({ name: '?', reason: resource });
    else if (seen.has(resource.id)) report.failed.push({ name: resource.name, reason: `${shape.tool} listed this id twice` });
    else {
      seen.add(resource.id);
      resources.push(resource);
    }
  }
  if (items.length > RESOURCES_MAX) report.failed.push({ name: '…', reason: `${shape.tool} listed more than ${RESOURCES_MAX}; the rest were not read` });
  const carried = new Map<string, number>();
  for (let i = 0; i < resources.length; i += 1000) {
    const ids = resources.slice(i, i + 1000).map((resource) => resource.id);
    const found = await context.run('imports.carried', { tenant: context.tenant, source: context.source.url.href, kind: TYPE[kind], source_ids: ids });
    for (const [id, item] of Object.entries(found)) carried.set(id, item.source_version);
  }
  for (const resource of resources) {
    report.read += 1;
    try {
      await importResource(context, kind, resource, carried.get(resource.id) ?? 0, report);
      if (kind === 'knowledge' || kind === 'skills') await importDrafts(context, kind, resource, report);
    } catch (error) {
      if (!(error instanceof ItemRefused) && !(error instanceof SourceError) && !isKgwError(error)) throw error;
      report.failed.push({ name: resource.name, reason: error.message });
    }
    context.progress(`${kind}: ${report.read}/${resources.length}, ${report.versions_saved} versions saved`);
  }
  return report;
}

export const alignbaseReader: DialectReader = {
  kinds: KINDS,
  async read(context): Promise<DialectOutcome> {
    const parts: Partial<Record<Kind, KindReport>> = {};
    for (const kind of KINDS) if (context.only === undefined || context.only.has(kind)) parts[kind] = await importKind(context, kind);
    const notCarried = [
      { name: 'routes and grants', reason: 'the Alignbase tools do not show them: give them in the org file’s routes and grants' },
      { name: 'others’ drafts', reason: 'the source lets a token read only its own drafts, or all of them as a Publisher there' },
      { name: 'proposals of new Knowledge', reason: 'the Alignbase tools do not list them: accept them there first' },
    ];
    const would = context.dryRun ? 'would be ' : '';
    const lines: string[] = [];
    for (const [kind, part] of Object.entries(parts)) {
      lines.push(
        `${kind}: ${part.read} read, ${part.created} ${would}created, ${part.updated} ${would}updated, ${part.unchanged} unchanged, ` +
          `${part.versions_saved} versions saved, ${part.failed.length} refused`,
      );
      if (part.drafts !== undefined)
        lines.push(
          `  drafts: ${part.drafts.read} read, ${part.drafts.created} ${would}proposed here, ${part.drafts.unchanged} unchanged, ${part.drafts.not_readable} not readable by this token` +
            (part.drafts.not_listed_reason === undefined ? '' : `, not listed for ${part.drafts.not_listed}: ${part.drafts.not_listed_reason}`),
        );
      for (const item of part.failed) lines.push(`  refused ${visible(item.name, { inline: true })}: ${item.reason}`);
    }
    for (const item of notCarried) lines.push(`not carried: ${item.name}: ${item.reason}`);
    return { report: { ...parts, not_carried: notCarried }, lines, refused: Object.values(parts).some((part) => part.failed.length > 0) };
  },
};
