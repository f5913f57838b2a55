import { isSha256Hex } from '../../connectors/blob/contract.ts';
import { pathProblem } from '../atmina/index.ts';
import type { Outgoing, SentProvenance, SentReport } from './kb-import.ts';
import { allPages, sha256Of } from './export-files.ts';
import { everyPage } from './mcp-peer-reads.ts';
import { IMPORT_FILE_MAX_BYTES, ItemRefused, isRecord, noneSent, sendToKb } from './kb-import.ts';
import type { DialectOutcome, DialectReader, McpImportContext } from './import-mcp-dialect.ts';
import type { McpSource } from './mcp-source.ts';
import { SourceError } from './mcp-source.ts';
import type { OpRunner } from './session.ts';
import { visible } from './terminal.ts';

/**
 * kgw import mcp --dialect atmina: every Knowledge Base the token sees (list_kbs), or those --kb
 * names, each into the local KB of the same slug; each live file (list_files, every page) read
 * with read_file, an Asset's original through its download link.
 */

/** Files read from one source KB at most (and pages of PAGE_SIZE): a source whose paging does not end stops there. */
export const SOURCE_FILES_MAX = 100_000;
const PAGE_SIZE = 100;

interface KbReport extends SentReport {
  source: string;
  local: string;
  /** Paths the local KB holds that the source does not (left alone). */
  only_local: string[];
  skipped: { path: string; reason: string }[];
  /** Files an earlier import brought here that the source has moved since: moved here too. */
  moved: { from: string; to: string }[];
}

interface SourceFile {
  readonly fileId: string;
  readonly path: string;
  readonly sha256: string;
  readonly size: number;
  readonly kind: 'text' | 'asset';
  /** Its head version there (1 when the source does not say). */
  readonly version: number;
}

/** A listed file as the source described it, or why it cannot be one. */
function sourceFile(item: unknown): SourceFile | string {
  if (!isRecord(item)) return 'the source listed something that is not a file';
  const { file_id: fileId, path, sha256, size_bytes: size, kind } = item;
  if (typeof fileId !== 'string' || typeof path !== 'string' || typeof sha256 !== 'string' || typeof size !== 'number')
    return 'the source listed a file without file_id, path, sha256 and size_bytes';
  if (!path.isWellFormed()) return 'the source listed a path that is not well-formed Unicode';
  if (!isSha256Hex(sha256)) return 'the source gave a SHA-256 that is not 64 hexadecimal digits';
  if (!Number.isSafeInteger(size) || size < 0) return 'the source gave a size that is not a whole number of bytes';
  const version = Number.isSafeInteger(item['version']) && (item['version'] as number) >= 1 ? (item['version'] as number) : 1;
  return { fileId, path, sha256, size, kind: kind === 'asset' ? 'asset' : 'text', version };
}

/** Every file the source lists for a KB, bounded; `problems` gets what cannot be a file. */
async function listSource(source: McpSource, kbId: string, problems: { path: string; reason: string }[]): Promise<SourceFile[]> {
  const files: SourceFile[] = [];
  const seen = new Set<string>();
  for (const item of await everyPage(source, 'list_files', { kb_id: kbId, limit: PAGE_SIZE }, 'files', { max: SOURCE_FILES_MAX, noun: 'files' })) {
    const file = sourceFile(item);
    if (typeof file === 'string') problems.push({ path: isRecord(item) && typeof item['path'] === 'string' ? item['path'] : '?', reason: file });
    else if (seen.has(file.path)) problems.push({ path: file.path, reason: 'the source listed this path twice' });
    else {
      seen.add(file.path);
      files.push(file);
    }
  }
  return files;
}

/** The local KB's files, path → SHA-256 (kb.files, every page). */
async function localFiles(run: OpRunner, tenant: string, kb: string): Promise<Map<string, { sha256: string; fileId: string }>> {
  const files = await allPages(async (after) => {
    const page = await run('kb.files', { tenant, kb, limit: 1000, ...(after === undefined ? {} : { after }) });
    return { items: page.files, next: page.next };
  });
  return new Map(files.map((file) => [file.path, { sha256: file.sha256, fileId: file.file_id }]));
}

/**
 * Moves here the files the source moved since an earlier import brought them (the mapping of
 * source file ids to local ones), when their new path is free here: so a rename at the source is
 * a rename here, with the file's history, not a second file. `local` follows the moves.
 */
async function followMoves(
  context: McpImportContext,
  kb: string,
  listed: readonly SourceFile[],
  local: Map<string, { sha256: string; fileId: string }>,
  report: KbReport,
): Promise<void> {
  const pathOf = new Map([...local].map(([path, file]) => [file.fileId, path]));
  for (let i = 0; i < listed.length; i += CARRIED_IDS_PAGE) {
    const page = listed.slice(i, i + CARRIED_IDS_PAGE);
    const carried = await context.run('imports.carried', {
      tenant: context.tenant,
      source: context.source.url.href,
      kind: 'kb_file',
      source_ids: page.map((file) => file.fileId),
    });
    for (const file of page) {
      const to = file.path.normalize('NFC');
      const localId = carried[file.fileId]?.local_id;
      const from = localId === undefined ? undefined : pathOf.get(localId);
      if (from === undefined || from === to || local.has(to) || pathProblem(to) !== undefined) continue;
      if (!context.dryRun) await context.run('kb.move', { tenant: context.tenant, kb, as: context.as, file_id: localId!, to_path: to });
      const moved = local.get(from)!;
      local.delete(from);
      local.set(to, moved);
      pathOf.set(moved.fileId, to);
      report.moved.push({ from, to });
    }
  }
}

/** Source ids asked about at once (imports.carried takes 1,000). */
const CARRIED_IDS_PAGE = 1000;

/** The bytes of a source file, read as its dialect allows and checked against what the source said. */
async function readSourceFile(source: McpSource, kbId: string, file: SourceFile): Promise<Buffer> {
  const read = await source.call('read_file', { kb_id: kbId, file_id: file.fileId, include_image: false });
  const claimed = read['sha256'];
  if (!isSha256Hex(claimed)) throw new ItemRefused('the source read it without a SHA-256');
  let bytes: Buffer;
  if (read['kind'] === 'asset') {
    const link = read['download_url'];
    if (typeof link !== 'string') throw new ItemRefused('the source offers no download of this Asset’s original bytes through MCP');
    bytes = await source.download(link, Math.min(IMPORT_FILE_MAX_BYTES, Math.max(file.size, 0)));
  } else {
    const content = read['content'];
    if (typeof content !== 'string') throw new ItemRefused('the source read it without content');
    bytes = Buffer.from(content, 'utf8');
  }
  if (sha256Of(bytes) !== claimed) throw new ItemRefused('the bytes the source sent do not match the SHA-256 it gave');
  return bytes;
}

/**
 * Where a file comes from: the source, its file_id and head version there, and that version's
 * author and time from file_history. Only the head's bytes can be read (read_file reads no
 * other version), so the versions before it are not carried: the history here starts at it.
 */
async function headProvenance(source: McpSource, kbId: string, file: SourceFile): Promise<SentProvenance> {
  const base = { source: source.url.href, source_id: file.fileId, source_version: file.version };
  let history: Record<string, unknown>;
  try {
    history = await source.call('file_history', { kb_id: kbId, file_id: file.fileId, limit: 1 });
  } catch (error) {
    // A source that refuses the history still gives the file: its provenance is then what list_files said.
    if (error instanceof ItemRefused) return base;
    throw error;
  }
  const versions: unknown = history['versions'];
  const head: unknown = Array.isArray(versions) ? (versions as unknown[])[0] : undefined;
  if (!isRecord(head) || head['version'] !== file.version) return base;
  const author = isRecord(head['author']) && typeof head['author']['name'] === 'string' ? head['author']['name'] : undefined;
  const at = typeof head['created_at'] === 'string' ? head['created_at'] : undefined;
  return { ...base, ...(author === undefined ? {} : { author }), ...(at === undefined ? {} : { at }) };
}

async function importKb(context: McpImportContext, kb: { id: string; slug: string; local: string }): Promise<KbReport> {
  const { run, source, progress, tenant } = context;
  const report: KbReport = { source: kb.slug, local: kb.local, ...noneSent(), only_local: [], skipped: [], moved: [] };
  const local = await localFiles(run, tenant, kb.local);
  const listed = await listSource(source, kb.id, report.failed);
  await followMoves(context, kb.local, listed, local, report);
  const items: Outgoing[] = [];
  for (const file of listed) {
    if (local.get(file.path.normalize('NFC'))?.sha256 === file.sha256) {
      report.files += 1;
      report.unchanged += 1;
    } else if (file.size > IMPORT_FILE_MAX_BYTES) report.skipped.push({ path: file.path, reason: `larger than ${IMPORT_FILE_MAX_BYTES / (1024 * 1024)} MiB` });
    else
      items.push({
        source: file.path,
        path: file.path,
        size: file.size,
        bytes: () => readSourceFile(source, kb.id, file),
        provenance: () => headProvenance(source, kb.id, file),
      });
  }
  const atSource = new Set(listed.map((file) => file.path.normalize('NFC')));
  report.only_local = [...local.keys()].filter((path) => !atSource.has(path));
  await sendToKb(run, { tenant, kb: kb.local, as: context.as, dryRun: context.dryRun }, items, report, (line) => progress(`${kb.slug}: ${line}`));
  return report;
}

/** The Atmina reader, for the KBs `--kb` chose (source slug → local slug; empty: every KB the token sees). */
export function atminaReader(chosen: ReadonlyMap<string, string>): DialectReader {
  return {
    kinds: ['kbs'],
    async read(context): Promise<DialectOutcome> {
      const kbs: KbReport[] = [];
      const failed: { kb: string; reason: string }[] = [];
      const listed = await context.source.call('list_kbs', {});
      const visibleKbs = (Array.isArray(listed['kbs']) ? listed['kbs'] : []).flatMap((kb) =>
        isRecord(kb) && typeof kb['kb_id'] === 'string' && typeof kb['slug'] === 'string' ? [{ id: kb['kb_id'], slug: kb['slug'] }] : [],
      );
      for (const wanted of chosen.keys())
        if (!visibleKbs.some((kb) => kb.slug === wanted)) failed.push({ kb: wanted, reason: 'the source shows no Knowledge Base of that slug to this token' });
      for (const kb of visibleKbs) {
        if (chosen.size > 0 && !chosen.has(kb.slug)) continue;
        try {
          kbs.push(await importKb(context, { ...kb, local: chosen.get(kb.slug) ?? kb.slug }));
        } catch (error) {
          if (!(error instanceof ItemRefused) && !(error instanceof SourceError) && !(error instanceof Error && 'code' in error)) throw error;
          failed.push({ kb: kb.slug, reason: error.message });
        }
      }
      const would = context.dryRun ? 'would be ' : '';
      const lines: string[] = [];
      for (const kb of kbs) {
        lines.push(
          `${kb.source} -> ${kb.local}: ${kb.files} files, ${kb.created} ${would}created, ${kb.updated} ${would}updated, ${kb.unchanged} unchanged, ` +
            `${kb.moved.length} ${would}moved, ${kb.skipped.length} left out, ${kb.failed.length} refused, ${kb.only_local.length} only here`,
        );
        for (const item of kb.moved) lines.push(`  ${would}moved ${visible(item.from, { inline: true })} -> ${visible(item.to, { inline: true })}`);
        for (const item of kb.skipped) lines.push(`  left out ${visible(item.path, { inline: true })}: ${item.reason}`);
        for (const item of kb.failed) lines.push(`  refused ${visible(item.path, { inline: true })}: ${item.reason}`);
      }
      for (const item of failed) lines.push(`refused ${visible(item.kb, { inline: true })}: ${item.reason}`);
      return { report: { kbs, failed }, lines, refused: failed.length > 0 || kbs.some((kb) => kb.failed.length > 0) };
    },
  };
}
