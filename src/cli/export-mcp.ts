import { isSha256Hex } from '../../connectors/blob/contract.ts';
import type { OpResult } from '../admin/ops.ts';
import { loadConfig } from '../config.ts';
import { mapInParallel } from '../kernel/concurrency.ts';
import { isKgwError } from '../kernel/errors.ts';
import { allPages, sha256Of } from './export-files.ts';
import { everyPage, readAttachment } from './mcp-peer-reads.ts';
import type { SentReport } from './kb-import.ts';
import { ItemRefused, isRecord, kbChoices } from './kb-import.ts';
import type { McpSource } from './mcp-source.ts';
import { PEER_OPTIONS, SourceError, connectSource, onlyKinds, peerOf, politeFetch } from './mcp-source.ts';
import type { OpRunner } from './session.ts';
import { withOps } from './session.ts';
import { jsonText, print, progressReporter, visible } from './terminal.ts';
import { UsageError, parseCommand, requireOptions } from './usage.ts';

/**
 * kgw export mcp: a tenant's content pushed to another MCP endpoint through that endpoint's own
 * write tools, as an agent would write it; the mirror of kgw import mcp. The local side is read
 * with the admin operations (kb.*, files.get, context.*); the target is only ever asked through
 * the tools its dialect's specification names, and what it already holds is compared first, so
 * that a second run sends nothing. Each item the target refuses is reported with its reason and
 * the rest go on; a target that fails as a whole (unreachable, broken answers) stops the KB or
 * the kind it was working on.
 */

export const exportMcpHelp = `Usage:
  kgw export mcp --to URL --dialect atmina|alignbase --tenant SLUG
                 [--token TOKEN | --sign-in [--scope SCOPES]] [--kb LOCAL[=REMOTE]]...
                 [--only KINDS] [--dry-run] [--json]

Pushes a tenant's content from this gateway to another MCP endpoint that speaks a dialect this
gateway speaks, through that endpoint's own write tools, as an agent would write it. The token
comes from --token or, kept out of the shell's history, from KGW_EXPORT_TOKEN, or --sign-in
signs in at the target in the browser as kgw import mcp --sign-in does; what it may do at the
target is what arrives.

--dialect atmina: every live local Knowledge Base, or those --kb names (LOCAL=REMOTE writes into
a KB of another slug), each into the target's KB of the same slug (list_kbs), made with
create_kb (name, team, description, visibility) when the target has none. The target's files
(list_files, every page) are compared by SHA-256 and only the missing or different ones are
sent: text with write_files (50 a call, each new path created, each existing one overwritten
with the SHA-256 read as if_match), other files and Assets with upload_file or update_file (up
to 1 MiB) or request_uploads, a PUT of the bytes and confirm_uploads (larger). Files only the
target has are left alone, and listed. A file's history, an image's description and the KB's
shares are not carried.

--dialect alignbase: Knowledge (matched by title), Skills, Memories and Artifacts (by name),
or the kinds --only names (knowledge,skills,memories,artifacts). What the target lacks is
created (write_knowledge, create_skill, create_memory, write_artifact); what differs from the
local latest version (text, authority, files, a Skill's dates) is written with the target's
latest version as expected_version. The latest text goes, not the history; a Knowledge or Skill
whose latest version is published here is published there. Archived resources, grants, routes,
a Knowledge's files and an older published version are listed as not carried: MCP tools do
not manage them.

Refused one by one, with the reason, the rest sent: anything the target's tools refuse (a bound,
a role the token lacks, a KB it may not create), a name the target holds more than once.

--dry-run  says what each item would do; writes nothing at the target (it still reads it).
--json     prints the report as one JSON object, without progress lines.

Exits 1 when something was refused.`;

const DIALECTS = ['atmina', 'alignbase'] as const;

/** What one dialect's push gives back: its report, its summary lines, and whether anything was refused. */
interface Outcome {
  readonly report: Record<string, unknown>;
  readonly lines: readonly string[];
  readonly refused: boolean;
}

interface ExportContext {
  readonly run: OpRunner;
  readonly target: McpSource;
  readonly tenant: string;
  readonly dryRun: boolean;
  /** A progress line (quiet with --json). */
  readonly progress: (line: string) => void;
}

/** An item refused, with the reason. */
interface Refusal {
  readonly name: string;
  readonly reason: string;
}

/** Refusals of one item: the target's tool error, a local operation's refusal. Anything else is a fault of this program or a broken target, and is not swallowed. */
const isItemRefusal = (error: unknown): error is Error => error instanceof ItemRefused || isKgwError(error);

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const num = (value: unknown): number | undefined => (typeof value === 'number' && Number.isSafeInteger(value) ? value : undefined);
const records = (value: unknown): Record<string, unknown>[] => (Array.isArray(value) ? value.filter(isRecord) : []);

/** A field the target must have answered with; its absence refuses the item. */
function required<T>(value: T | undefined, tool: string, field: string): T {
  if (value === undefined) throw new ItemRefused(`${tool} at the target answered without ${field}`);
  return value;
}

// ---------------------------------------------------------------------------------------------
// Atmina: Knowledge Bases and their files

/** Pages of the target's list_files, and files listed from one KB at most: a target whose paging does not end stops there. */
const LIST_PAGE = 100;
const TARGET_FILES_MAX = 100_000;
/** write_files takes at most 50 items (the spec); a call also stays well below an MCP request's 16 MiB. */
const WRITE_FILES_ITEMS = 50;
const WRITE_FILES_BYTES = 4 * 1024 * 1024;
/** upload_file and update_file take base64 content of at most 1 MiB decoded (the spec); larger files go through request_uploads. */
const INLINE_MAX_BYTES = 1024 * 1024;
/** request_uploads declares at most 50 files; a batch's URLs expire (15 minutes), so its bytes are bounded too. */
const UPLOAD_ITEMS = 50;
const UPLOAD_BATCH_BYTES = 256 * 1024 * 1024;
/** Local files read at once while a write_files call is filled. */
const READ_CONCURRENCY = 4;

type LocalKb = OpResult<'kb.show'>;
type LocalFile = OpResult<'kb.files'>['files'][number];

interface TargetFile {
  readonly fileId: string;
  readonly path: string;
  readonly sha256: string;
  readonly kind: 'text' | 'asset';
}

interface KbReport extends SentReport {
  local: string;
  remote: string;
  /** The KB was made at the target by this run (or would be, in a dry run). */
  kb_created: boolean;
  /** Paths only the target holds (left alone). */
  only_target: string[];
}

/** The target's live files of a KB by NFC path (list_files, every page, bounded). */
async function targetFiles(target: McpSource, kbId: string): Promise<Map<string, TargetFile>> {
  const files = new Map<string, TargetFile>();
  const listed = await everyPage(target, 'list_files', { kb_id: kbId, limit: LIST_PAGE }, 'files', { max: TARGET_FILES_MAX, noun: 'files' });
  for (const item of listed.filter(isRecord)) {
    const fileId = str(item['file_id']);
    const path = str(item['path']);
    const sha256 = item['sha256'];
    // An entry the target cannot describe is not one of ours to compare: its path gets the file anew.
    if (fileId === undefined || path === undefined || !isSha256Hex(sha256)) continue;
    files.set(path.normalize('NFC'), { fileId, path, sha256: sha256.toLowerCase(), kind: item['kind'] === 'asset' ? 'asset' : 'text' });
  }
  return files;
}

/** The local KB's live files (kb.files, every page). */
async function localFiles(run: OpRunner, tenant: string, kb: string): Promise<LocalFile[]> {
  return allPages(async (after) => {
    const page = await run('kb.files', { tenant, kb, limit: 1000, ...(after === undefined ? {} : { after }) });
    return { items: page.files, next: page.next };
  });
}

/** A local file's bytes, as listed: a write since the listing refuses it (the next run sends it). */
async function localBytes(context: ExportContext, kbId: string, file: LocalFile): Promise<Buffer> {
  const got = await context.run('files.get', { tenant: context.tenant, kb: kbId, path: file.path });
  const bytes = Buffer.from(got.data_base64, 'base64');
  if (got.sha256 !== file.sha256 || sha256Of(bytes) !== file.sha256) throw new ItemRefused('it changed here while it was exported; run the export again');
  return bytes;
}

/** One local file on its way, and the target's head at its path (undefined: a new file there). */
interface Send {
  readonly file: LocalFile;
  readonly head: TargetFile | undefined;
}

/** Counts a file the target saved, checking that it saved these bytes. */
function saved(report: KbReport, send: Send, sha256: unknown): void {
  if (sha256 !== send.file.sha256) {
    report.failed.push({ path: send.file.path, reason: `the target saved other bytes (SHA-256 ${String(sha256)})` });
    return;
  }
  report[send.head === undefined ? 'created' : 'updated'] += 1;
  report.bytes += send.file.size_bytes;
}

/** Text files through write_files: create for a new path, overwrite guarded by the head's SHA-256 for an existing one. */
async function sendText(context: ExportContext, kbId: string, localKb: string, batch: readonly Send[], report: KbReport): Promise<void> {
  const read = await mapInParallel(batch, READ_CONCURRENCY, async (send) => {
    try {
      const bytes = await localBytes(context, localKb, send.file);
      const content = bytes.toString('utf8');
      if (!Buffer.from(content, 'utf8').equals(bytes)) throw new ItemRefused('it is not UTF-8 text, as a text file must be');
      return { send, content, bytes };
    } catch (error) {
      if (!isItemRefusal(error)) throw error;
      report.failed.push({ path: send.file.path, reason: error.message });
      return undefined;
    }
  });
  const ready = read.filter((entry) => entry !== undefined);
  if (ready.length === 0) return;
  const items = ready.map(({ send, content, bytes }) => ({
    path: send.file.path,
    mode: send.head === undefined ? 'create' : 'overwrite',
    content,
    // The target checks the bytes it takes against these; a mismatch is content_integrity, nothing written.
    expected_bytes: bytes.length,
    content_sha256: send.file.sha256,
    ...(send.head === undefined ? {} : { if_match: send.head.sha256 }),
  }));
  let results: Record<string, unknown>[];
  try {
    results = records((await context.target.call('write_files', { kb_id: kbId, items }))['results']);
  } catch (error) {
    if (!(error instanceof ItemRefused)) throw error;
    for (const { send } of ready) report.failed.push({ path: send.file.path, reason: error.message });
    return;
  }
  ready.forEach(({ send }, i) => {
    const result = results.find((r) => r['index'] === i) ?? results[i];
    if (result === undefined) report.failed.push({ path: send.file.path, reason: 'write_files at the target gave no result for it' });
    else if (result['ok'] !== true)
      report.failed.push({ path: send.file.path, reason: str(result['error']) ?? str(result['code']) ?? 'refused by the target' });
    else saved(report, send, result['sha256']);
  });
}

/** A file of at most 1 MiB as base64: upload_file for a new path, update_file guarded by the head's SHA-256 for an existing one. */
async function sendInline(context: ExportContext, kbId: string, localKb: string, send: Send, report: KbReport): Promise<void> {
  const bytes = await localBytes(context, localKb, send.file);
  const content = { mime_type: send.file.media_type, content_base64: bytes.toString('base64') };
  const result =
    send.head === undefined
      ? await context.target.call('upload_file', { kb_id: kbId, filename: send.file.path, ...content })
      : await context.target.call('update_file', { kb_id: kbId, file_id: send.head.fileId, if_match: send.head.sha256, ...content });
  saved(report, send, result['sha256']);
}

/**
 * Larger files through a presigned batch: request_uploads declares them (path, type, size,
 * SHA-256), each file's bytes are PUT to its URL with exactly the headers the target gave (never
 * the token: the URL may be a storage service's), and confirm_uploads catalogues what arrived, a
 * new file or the next version of the file at its path.
 */
async function sendPresigned(context: ExportContext, kbId: string, localKb: string, batch: readonly Send[], report: KbReport): Promise<void> {
  const refuse = (send: Send, reason: string) => report.failed.push({ path: send.file.path, reason });
  let requested: Record<string, unknown>;
  try {
    requested = await context.target.call('request_uploads', {
      kb_id: kbId,
      items: batch.map(({ file }) => ({ path: file.path, mime_type: file.media_type, size_bytes: file.size_bytes, sha256: file.sha256 })),
    });
  } catch (error) {
    if (!(error instanceof ItemRefused)) throw error;
    for (const send of batch) refuse(send, error.message);
    return;
  }
  const settled = new Set<number>();
  for (const failure of records(requested['failures'])) {
    const index = num(failure['index']);
    const send = index === undefined ? undefined : batch[index];
    if (send === undefined || index === undefined) continue;
    settled.add(index);
    refuse(send, str(failure['error']) ?? 'refused by the target');
  }
  const put: number[] = [];
  for (const upload of records(requested['uploads'])) {
    const index = num(upload['index']);
    const send = index === undefined ? undefined : batch[index];
    if (send === undefined || index === undefined || settled.has(index)) continue;
    settled.add(index);
    try {
      await putUpload(context, localKb, send, upload);
      put.push(index);
    } catch (error) {
      if (!isItemRefusal(error)) throw error;
      refuse(send, error.message);
    }
  }
  batch.forEach((send, index) => {
    if (!settled.has(index)) refuse(send, 'request_uploads at the target gave no upload for it');
  });
  const token = str(requested['batch_token']);
  if (put.length === 0) return;
  if (token === undefined) {
    for (const index of put) refuse(batch[index] as Send, 'request_uploads at the target answered without a batch_token');
    return;
  }
  let results: Record<string, unknown>[];
  try {
    results = records((await context.target.call('confirm_uploads', { kb_id: kbId, batch_token: token }))['results']);
  } catch (error) {
    if (!(error instanceof ItemRefused)) throw error;
    for (const index of put) refuse(batch[index] as Send, error.message);
    return;
  }
  for (const index of put) {
    const send = batch[index] as Send;
    const result = results.find((r) => str(r['path'])?.normalize('NFC') === send.file.path);
    if (result === undefined) refuse(send, 'confirm_uploads at the target gave no result for it');
    else if (result['ok'] !== true) refuse(send, str(result['error']) ?? str(result['code']) ?? 'refused by the target');
    else saved(report, send, result['sha256']);
  }
}

/** PUTs one file's bytes to the URL request_uploads gave, with its headers. */
async function putUpload(context: ExportContext, localKb: string, send: Send, upload: Record<string, unknown>): Promise<void> {
  let url: URL;
  try {
    url = new URL(str(upload['url']) ?? '');
  } catch {
    throw new ItemRefused('request_uploads at the target gave an upload URL that is not a URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new ItemRefused('request_uploads at the target gave an upload URL that is not http or https');
  const given = isRecord(upload['headers']) ? upload['headers'] : {};
  // fetch sets Content-Length from the body itself; every other header goes as given.
  const headers = Object.fromEntries(
    Object.entries(given).filter((entry): entry is [string, string] => typeof entry[1] === 'string' && entry[0].toLowerCase() !== 'content-length'),
  );
  const bytes = await localBytes(context, localKb, send.file);
  // A large file takes longer than one request's usual minute: the bound allows 256 KiB a second besides.
  const signal = AbortSignal.timeout(60_000 + Math.ceil(bytes.length / (256 * 1024)) * 1000);
  const response = await politeFetch(url, { method: 'PUT', headers, body: bytes, signal });
  await response.body?.cancel();
  if (!response.ok) throw new ItemRefused(`the upload URL at the target answered ${response.status}`);
}

/** The target's KB of `remote` (its kb_id), made with create_kb from the local KB's settings when it has none. */
async function targetKb(
  context: ExportContext,
  kb: LocalKb,
  remote: string,
  listed: ReadonlyMap<string, string>,
): Promise<{ id: string | undefined; created: boolean }> {
  const id = listed.get(remote);
  if (id !== undefined) return { id, created: false };
  if (context.dryRun) return { id: undefined, created: true };
  const made = await context.target.call('create_kb', {
    name: kb.name,
    slug: remote,
    team: kb.team,
    visibility: kb.visibility,
    ...(kb.description === '' ? {} : { description: kb.description }),
  });
  return { id: required(str(made['kb_id']), 'create_kb', 'kb_id'), created: true };
}

async function exportKb(context: ExportContext, kb: LocalKb, remote: string, listed: ReadonlyMap<string, string>): Promise<KbReport> {
  const { id, created } = await targetKb(context, kb, remote, listed);
  const report: KbReport = {
    local: kb.slug,
    remote,
    kb_created: created,
    files: 0,
    bytes: 0,
    created: 0,
    updated: 0,
    unchanged: 0,
    failed: [],
    only_target: [],
  };
  const there = id === undefined ? new Map<string, TargetFile>() : await targetFiles(context.target, id);
  const local = await localFiles(context.run, context.tenant, kb.slug);
  const text: Send[] = [];
  const inline: Send[] = [];
  const presigned: Send[] = [];
  for (const file of local) {
    report.files += 1;
    const head = there.get(file.path);
    if (head?.sha256 === file.sha256) report.unchanged += 1;
    // write_files writes text over text only: a text file where the target holds an Asset is uploaded, as any other bytes.
    else if (file.kind === 'text' && head?.kind !== 'asset' && file.size_bytes <= INLINE_MAX_BYTES) text.push({ file, head });
    else if (file.size_bytes <= INLINE_MAX_BYTES) inline.push({ file, head });
    else presigned.push({ file, head });
  }
  const localPaths = new Set(local.map((file) => file.path));
  report.only_target = [...there.values()].filter((file) => !localPaths.has(file.path.normalize('NFC'))).map((file) => file.path);
  const sends = [...text, ...inline, ...presigned];
  if (context.dryRun || id === undefined) {
    for (const send of sends) report[send.head === undefined ? 'created' : 'updated'] += 1;
    return report;
  }
  const total = sends.reduce((sum, send) => sum + send.file.size_bytes, 0);
  let done = 0;
  const step = (count: number) => {
    done += count;
    context.progress(
      `${kb.slug}: ${done}/${sends.length} files sent, ${(report.bytes / (1024 * 1024)).toFixed(1)} of ${(total / (1024 * 1024)).toFixed(1)} MiB`,
    );
  };
  for (const batch of batches(text, WRITE_FILES_ITEMS, WRITE_FILES_BYTES)) {
    await sendText(context, id, kb.kb_id, batch, report);
    step(batch.length);
  }
  for (const send of inline) {
    try {
      await sendInline(context, id, kb.kb_id, send, report);
    } catch (error) {
      if (!isItemRefusal(error)) throw error;
      report.failed.push({ path: send.file.path, reason: error.message });
    }
    step(1);
  }
  for (const batch of batches(presigned, UPLOAD_ITEMS, UPLOAD_BATCH_BYTES)) {
    await sendPresigned(context, id, kb.kb_id, batch, report);
    step(batch.length);
  }
  return report;
}

/** Consecutive batches of at most `items` sends and `bytes` bytes (a larger send alone). */
function batches(sends: readonly Send[], items: number, bytes: number): Send[][] {
  const out: Send[][] = [];
  let batch: Send[] = [];
  let size = 0;
  for (const send of sends) {
    if (batch.length >= items || (batch.length > 0 && size + send.file.size_bytes > bytes)) {
      out.push(batch);
      batch = [];
      size = 0;
    }
    batch.push(send);
    size += send.file.size_bytes;
  }
  if (batch.length > 0) out.push(batch);
  return out;
}

async function exportAtmina(context: ExportContext, chosen: ReadonlyMap<string, string>): Promise<Outcome> {
  const kbs: KbReport[] = [];
  const failed: { kb: string; reason: string }[] = [];
  const listed = await context.target.call('list_kbs', {});
  const remote = new Map<string, string>();
  for (const kb of records(listed['kbs'])) {
    const slug = str(kb['slug']);
    const id = str(kb['kb_id']);
    if (slug !== undefined && id !== undefined) remote.set(slug, id);
  }
  const local: LocalKb[] = [];
  if (chosen.size === 0) local.push(...(await context.run('kb.list', { tenant: context.tenant, archived: false })));
  for (const slug of chosen.keys()) {
    try {
      const kb = await context.run('kb.show', { tenant: context.tenant, kb: slug });
      if (kb.archived_at !== null) failed.push({ kb: slug, reason: 'it is archived here' });
      else local.push(kb);
    } catch (error) {
      if (!isKgwError(error)) throw error;
      failed.push({ kb: slug, reason: error.message });
    }
  }
  for (const kb of local) {
    try {
      kbs.push(await exportKb(context, kb, chosen.get(kb.slug) ?? kb.slug, remote));
    } catch (error) {
      if (!isItemRefusal(error) && !(error instanceof SourceError)) throw error;
      failed.push({ kb: kb.slug, reason: error.message });
    }
  }
  const would = context.dryRun ? 'would be ' : '';
  const lines: string[] = [];
  for (const kb of kbs) {
    lines.push(
      `${kb.local} -> ${kb.remote}${kb.kb_created ? ` (${would}created at the target)` : ''}: ${kb.files} files, ${kb.created} ${would}created, ` +
        `${kb.updated} ${would}updated, ${kb.unchanged} unchanged, ${kb.failed.length} refused, ${kb.only_target.length} only at the target`,
    );
    for (const item of kb.failed) lines.push(`  refused ${visible(item.path, { inline: true })}: ${visible(item.reason, { inline: true })}`);
    for (const path of kb.only_target) lines.push(`  only at the target ${visible(path, { inline: true })}`);
  }
  for (const item of failed) lines.push(`refused ${visible(item.kb, { inline: true })}: ${visible(item.reason, { inline: true })}`);
  return { report: { kbs, failed }, lines, refused: failed.length > 0 || kbs.some((kb) => kb.failed.length > 0) };
}

// ---------------------------------------------------------------------------------------------
// Alignbase: Knowledge, Skills, Memories and Artifacts

type Resource = OpResult<'context.resources'>['resources'][number];
type Kind = 'knowledge' | 'skills' | 'memories' | 'artifacts';
type Sent = 'created' | 'updated' | 'unchanged';

const KINDS: readonly Kind[] = ['knowledge', 'skills', 'memories', 'artifacts'];

/** How each kind is listed at the target, and what names it there. */
const LISTING: Readonly<Record<Kind, { type: Resource['type']; tool: string; field: string; id: string; name: string; what: string }>> = {
  knowledge: { type: 'knowledge', tool: 'list_knowledge', field: 'knowledge', id: 'knowledge_id', name: 'title', what: 'Knowledge' },
  skills: { type: 'skill', tool: 'list_skills', field: 'skills', id: 'id', name: 'name', what: 'Skills' },
  memories: { type: 'memory', tool: 'list_memories', field: 'memories', id: 'memory_id', name: 'name', what: 'Memories' },
  artifacts: { type: 'artifact', tool: 'list_artifacts', field: 'artifacts', id: 'artifact_id', name: 'name', what: 'Artifacts' },
};

interface KindReport {
  kind: Kind;
  resources: number;
  created: number;
  updated: number;
  unchanged: number;
  failed: Refusal[];
  not_carried: Refusal[];
}

/** A resource as the target lists it. */
interface Listed {
  readonly id: string;
  readonly name: string;
  readonly reviewBy: string | null;
  readonly expiresAt: string | null;
}

type LocalAttachment = Resource['versions'][number]['files'][number];

const latestOf = (resource: Resource) => resource.versions.find((v) => v.version === resource.latest_version);
const filesOf = (resource: Resource): readonly LocalAttachment[] => latestOf(resource)?.files ?? [];
const publishedHere = (resource: Resource): boolean => resource.published_version !== null && resource.published_version === resource.latest_version;
const dates = (resource: Resource) => ({
  ...(resource.review_by === null ? {} : { review_by: resource.review_by }),
  ...(resource.expires_at === null ? {} : { expires_at: resource.expires_at }),
});

/** A resource's attachments of its latest version, read here (context.file) and checked against their SHA-256, as the write tools take them. */
async function localAttachments(context: ExportContext, resource: Resource): Promise<{ path: string; data_base64: string }[]> {
  const out: { path: string; data_base64: string }[] = [];
  for (const file of filesOf(resource)) {
    const got = await context.run('context.file', { tenant: context.tenant, resource_id: resource.id, version: resource.latest_version, path: file.path });
    const bytes = Buffer.from(got.data_base64, 'base64');
    if (sha256Of(bytes) !== file.sha256) throw new ItemRefused(`its file ${file.path} read here does not match its SHA-256`);
    out.push({ path: file.path, data_base64: got.data_base64 });
  }
  return out;
}

/** Whether the target's package (its manifest, read with its version) holds exactly the local latest version's files, by SHA-256. */
async function samePackage(context: ExportContext, type: string, id: string, read: Record<string, unknown>, resource: Resource): Promise<boolean> {
  const local = filesOf(resource);
  const manifest = records(read['attachments']);
  if (manifest.length !== local.length) return false;
  const version = required(num(read['version']), `read_${type}`, 'version');
  for (const file of local) {
    const entry = manifest.find((m) => m['path'] === file.path);
    if (entry === undefined || num(entry['size']) !== file.size_bytes) return false;
  }
  for (const file of local) {
    const bytes = await readAttachment(context.target, { type, id, version, path: file.path, size: file.size_bytes });
    if (sha256Of(bytes) !== file.sha256) return false;
  }
  return true;
}

async function sendKnowledge(context: ExportContext, resource: Resource, match: Listed | undefined): Promise<Sent> {
  const { target, dryRun } = context;
  const authority = latestOf(resource)?.authority ?? 'informational';
  const publish = publishedHere(resource);
  if (match === undefined) {
    if (!dryRun)
      await target.call('write_knowledge', { expected_version: 0, title: resource.name, content: resource.content, authority, publish, ...dates(resource) });
    return 'created';
  }
  const read = await target.call('read_knowledge', { knowledge_id: match.id, version: 'latest' });
  const version = required(num(read['version']), 'read_knowledge', 'version');
  // The spec's read_knowledge does not promise authority: a target that leaves it out is taken to hold the same.
  const same = read['content'] === resource.content && (read['authority'] === undefined || read['authority'] === authority);
  if (same) {
    if (!publish || read['is_published_version'] === true || num(read['published_version']) === version) return 'unchanged';
    if (!dryRun) await target.call('publish_knowledge', { knowledge_id: match.id, version });
    return 'updated';
  }
  if (dryRun) return 'updated';
  const written = await target.call('write_knowledge', { knowledge_id: match.id, expected_version: version, content: resource.content, authority, publish });
  return written['updated'] === true || written['published'] === true ? 'updated' : 'unchanged';
}

async function sendMemory(context: ExportContext, resource: Resource, match: Listed | undefined): Promise<Sent> {
  const { target, dryRun } = context;
  if (match === undefined) {
    if (!dryRun) await target.call('create_memory', { name: resource.name, content: resource.content });
    return 'created';
  }
  const read = await target.call('read_memory', { memory_id: match.id });
  if (read['content'] === resource.content) return 'unchanged';
  if (dryRun) return 'updated';
  const version = required(num(read['version']), 'read_memory', 'version');
  const written = await target.call('write_memory', { memory_id: match.id, expected_version: version, content: resource.content });
  return written['updated'] === false ? 'unchanged' : 'updated';
}

async function sendSkill(context: ExportContext, resource: Resource, match: Listed | undefined): Promise<Sent> {
  const { target, dryRun } = context;
  const publish = publishedHere(resource);
  if (match === undefined) {
    if (dryRun) return 'created';
    const attachments = await localAttachments(context, resource);
    const created = await target.call('create_skill', { skill_md: resource.content, ...(attachments.length > 0 ? { attachments } : {}), ...dates(resource) });
    // New Skills are saved unpublished (the spec); one published here is published there.
    if (publish)
      await target.call('publish_skill', { skill_id: required(str(created['skill_id']), 'create_skill', 'skill_id'), version: created['version'] ?? 'latest' });
    return 'created';
  }
  const read = await target.call('read_skill', { skill_id: match.id, version: 'latest' });
  const version = required(num(read['version']), 'read_skill', 'version');
  // Dates are carried when set here; write_skill keeps the target's when omitted, so one set only there stays.
  const sameDates =
    (resource.review_by === null || resource.review_by === read['review_by']) && (resource.expires_at === null || resource.expires_at === read['expires_at']);
  const same = read['skill_md'] === resource.content && sameDates && (await samePackage(context, 'skill', match.id, read, resource));
  const published = read['is_published_version'] === true || num(read['published_version']) === version;
  if (same && (!publish || published)) return 'unchanged';
  if (dryRun) return 'updated';
  let latest = version;
  if (!same) {
    const attachments = await localAttachments(context, resource);
    const written = await target.call('write_skill', {
      skill_id: match.id,
      expected_version: version,
      skill_md: resource.content,
      attachments,
      ...dates(resource),
    });
    latest = num(written['version']) ?? version;
    if (written['updated'] === false && (!publish || published)) return 'unchanged';
  }
  if (publish) await target.call('publish_skill', { skill_id: match.id, version: latest });
  return 'updated';
}

async function sendArtifact(context: ExportContext, resource: Resource, match: Listed | undefined): Promise<Sent> {
  const { target, dryRun } = context;
  const sourceTask = latestOf(resource)?.source_task ?? null;
  if (match === undefined) {
    if (dryRun) return 'created';
    const attachments = await localAttachments(context, resource);
    await target.call('write_artifact', {
      expected_version: 0,
      name: resource.name,
      markdown: resource.content,
      ...(attachments.length > 0 ? { attachments } : {}),
      ...(sourceTask === null ? {} : { source_task: sourceTask }),
    });
    return 'created';
  }
  const read = await target.call('read_artifact', { artifact_id: match.id, version: 'latest' });
  const version = required(num(read['version']), 'read_artifact', 'version');
  const same =
    read['markdown'] === resource.content &&
    (str(read['source_task']) ?? null) === sourceTask &&
    (await samePackage(context, 'artifact', match.id, read, resource));
  if (same) return 'unchanged';
  if (dryRun) return 'updated';
  const attachments = await localAttachments(context, resource);
  const written = await target.call('write_artifact', {
    artifact_id: match.id,
    expected_version: version,
    name: resource.name,
    markdown: resource.content,
    attachments,
    // An explicit empty string clears a source_task the target holds and this version has not.
    source_task: sourceTask ?? '',
  });
  return written['updated'] === false ? 'unchanged' : 'updated';
}

const SENDERS: Readonly<Record<Kind, (context: ExportContext, resource: Resource, match: Listed | undefined) => Promise<Sent>>> = {
  knowledge: sendKnowledge,
  skills: sendSkill,
  memories: sendMemory,
  artifacts: sendArtifact,
};

/** What of a resource no MCP write tool carries, each with the reason. */
function notCarried(resource: Resource, match: Listed | undefined): string[] {
  const reasons: string[] = [];
  if (resource.grants.length > 0)
    reasons.push(`its grants (${resource.grants.map((g) => `${g.to}: ${g.role}`).join(', ')}): MCP tools do not manage permissions`);
  if (resource.routes.length > 0) reasons.push(`its routes (to ${resource.routes.join(', ')}): MCP tools do not manage routes`);
  if (resource.type === 'knowledge' && filesOf(resource).length > 0) reasons.push('its files: write_knowledge carries none');
  if (resource.published_version !== null && resource.published_version !== resource.latest_version)
    reasons.push(`its published version ${resource.published_version}: only the latest version (${resource.latest_version}) is carried, unpublished`);
  if (resource.type === 'knowledge' && match !== undefined && (resource.review_by !== match.reviewBy || resource.expires_at !== match.expiresAt))
    reasons.push('its review_by and expires_at: write_knowledge sets them only when it creates a Knowledge');
  return reasons;
}

/** The target's resources of a kind (its list tool), by name. */
async function listedAt(target: McpSource, kind: Kind): Promise<Map<string, Listed[]>> {
  const listing = LISTING[kind];
  const answer = await target.call(listing.tool, {});
  const byName = new Map<string, Listed[]>();
  for (const item of records(answer[listing.field])) {
    const id = str(item[listing.id]);
    const name = str(item[listing.name]);
    if (id === undefined || name === undefined) continue;
    const entry = { id, name, reviewBy: str(item['review_by']) ?? null, expiresAt: str(item['expires_at']) ?? null };
    byName.set(name, [...(byName.get(name) ?? []), entry]);
  }
  return byName;
}

async function exportKind(context: ExportContext, kind: Kind, resources: readonly Resource[], report: KindReport): Promise<void> {
  const listing = LISTING[kind];
  const there = await listedAt(context.target, kind);
  const names = new Set<string>();
  for (const resource of resources) {
    report.resources += 1;
    const name = resource.name;
    if (resource.status === 'archived') {
      report.not_carried.push({ name, reason: 'it is archived here: MCP tools neither archive nor write archived resources' });
      continue;
    }
    if (resource.latest_version < 1) {
      report.not_carried.push({ name, reason: 'it has no saved version' });
      continue;
    }
    // Matched by name at the target, so one name stands for one resource on each side.
    if (names.has(name)) {
      report.failed.push({ name, reason: `another of the ${listing.what} here has this ${listing.name}; the target's is matched by ${listing.name}` });
      continue;
    }
    names.add(name);
    const matches = there.get(name) ?? [];
    if (matches.length > 1) {
      report.failed.push({ name, reason: `${matches.length} of the ${listing.what} at the target have this ${listing.name}` });
      continue;
    }
    const [match] = matches;
    try {
      report[await SENDERS[kind](context, resource, match)] += 1;
      for (const reason of notCarried(resource, match)) report.not_carried.push({ name, reason });
    } catch (error) {
      if (!isItemRefusal(error)) throw error;
      report.failed.push({ name, reason: error.message });
    }
    const done = report.created + report.updated + report.unchanged + report.failed.length;
    if (done % 10 === 0) context.progress(`${kind}: ${done}/${resources.length}`);
  }
}

async function exportAlignbase(context: ExportContext, kinds: readonly Kind[]): Promise<Outcome> {
  const local = new Map<Resource['type'], Resource[]>();
  let after: string | undefined;
  do {
    const page = await context.run('context.resources', { tenant: context.tenant, ...(after === undefined ? {} : { after }) });
    for (const resource of page.resources) local.set(resource.type, [...(local.get(resource.type) ?? []), resource]);
    after = page.next ?? undefined;
  } while (after !== undefined);
  const reports: KindReport[] = [];
  const failed: { kind: Kind; reason: string }[] = [];
  for (const kind of kinds) {
    const report: KindReport = { kind, resources: 0, created: 0, updated: 0, unchanged: 0, failed: [], not_carried: [] };
    reports.push(report);
    try {
      await exportKind(context, kind, local.get(LISTING[kind].type) ?? [], report);
    } catch (error) {
      if (!isItemRefusal(error) && !(error instanceof SourceError)) throw error;
      failed.push({ kind, reason: error.message });
    }
  }
  const would = context.dryRun ? 'would be ' : '';
  const lines: string[] = [];
  for (const kind of reports) {
    lines.push(
      `${kind.kind}: ${kind.resources} resources, ${kind.created} ${would}created, ${kind.updated} ${would}updated, ${kind.unchanged} unchanged, ` +
        `${kind.failed.length} refused, ${kind.not_carried.length} not carried`,
    );
    for (const item of kind.failed) lines.push(`  refused ${visible(JSON.stringify(item.name), { inline: true })}: ${visible(item.reason, { inline: true })}`);
    for (const item of kind.not_carried)
      lines.push(`  not carried for ${visible(JSON.stringify(item.name), { inline: true })}: ${visible(item.reason, { inline: true })}`);
  }
  for (const item of failed) lines.push(`refused ${item.kind}: ${visible(item.reason, { inline: true })}`);
  return { report: { kinds: reports, failed }, lines, refused: failed.length > 0 || reports.some((kind) => kind.failed.length > 0) };
}

// ---------------------------------------------------------------------------------------------
// The command

export async function exportMcpCommand(argv: readonly string[]): Promise<void> {
  const { values, help } = parseCommand(
    argv,
    {
      to: { type: 'string' },
      dialect: { type: 'string' },
      tenant: { type: 'string' },
      ...PEER_OPTIONS,
      kb: { type: 'string', multiple: true },
      only: { type: 'string' },
      'dry-run': { type: 'boolean' },
      json: { type: 'boolean' },
    },
    { min: 0, max: 0 },
  );
  if (help) return void print(exportMcpHelp);
  const { tenant, to, dialect } = requireOptions(values, 'tenant', 'to', 'dialect');
  if (dialect !== 'atmina' && dialect !== 'alignbase') throw new UsageError(`--dialect must be one of ${DIALECTS.join(', ')}, not "${dialect}"`);
  if (dialect !== 'atmina' && values.kb !== undefined) throw new UsageError('--kb chooses Atmina Knowledge Bases; leave it out for this dialect');
  if (dialect !== 'alignbase' && values.only !== undefined) throw new UsageError('--only chooses Alignbase kinds; leave it out for this dialect');
  const chosen = kbChoices(values.kb ?? [], 'LOCAL or LOCAL=REMOTE');
  const only = onlyKinds(values.only, KINDS);
  const kinds = only === undefined ? KINDS : KINDS.filter((kind) => only.has(kind));
  const { url, credentials } = peerOf(values, { option: '--to', url: to, env: 'KGW_EXPORT_TOKEN', side: 'target' });
  const dryRun = values['dry-run'] === true;
  const json = values.json === true;
  const progress = progressReporter(json);
  let target: McpSource;
  try {
    target = await connectSource(url, credentials, 'target');
  } catch (error) {
    throw error instanceof SourceError ? new SourceError(error.message) : error;
  }
  let outcome: Outcome;
  try {
    outcome = await withOps(loadConfig(), (run) => {
      const context: ExportContext = { run, target, tenant, dryRun, progress };
      return dialect === 'atmina' ? exportAtmina(context, chosen) : exportAlignbase(context, kinds);
    });
  } catch (error) {
    // The target failed before any item (its list_kbs): said in the target's words.
    if (error instanceof ItemRefused || error instanceof SourceError) throw new Error(error.message, { cause: error });
    throw error;
  } finally {
    await target.close();
  }
  if (outcome.refused) process.exitCode = 1;
  if (json) return void print(jsonText({ to: url.href, dialect, protocol: target.protocol ?? null, tenant, dry_run: dryRun, ...outcome.report }));
  for (const line of outcome.lines) print(line);
}
