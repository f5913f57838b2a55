import { isSha256Hex } from '../../connectors/blob/contract.ts';
import { loadConfig } from '../config.ts';
import type { Outgoing, SentReport } from './kb-import.ts';
import { sha256Of } from './export-files.ts';
import { IMPORT_FILE_MAX_BYTES, ItemRefused, KB_IMPORT_OPTIONS, isRecord, noneSent, sendToKb } from './kb-import.ts';
import type { McpSource } from './mcp-source.ts';
import { SourceError, connectSource } from './mcp-source.ts';
import type { OpRunner } from './session.ts';
import { withOps } from './session.ts';
import { jsonText, print, progressReporter, visible } from './terminal.ts';
import { UsageError, parseCommand, requireOptions } from './usage.ts';

export const importMcpHelp = `Usage:
  kgw import mcp --from URL --dialect atmina --tenant SLUG --as EMAIL [--token TOKEN]
                 [--kb SOURCE[=LOCAL]]... [--dry-run] [--json]

Copies what a token may read at another MCP endpoint that speaks a dialect this gateway speaks
into this gateway, through the source's own tools, as an agent would read it. The token comes
from --token or, kept out of the shell's history, from KGW_IMPORT_TOKEN.

--dialect atmina: every Knowledge Base the token sees (list_kbs), or those --kb names (by slug;
SOURCE=LOCAL writes into another local KB), each into the local KB of the same slug, which must
exist (create_kb, or the org file's kbs:). Each live file (list_files, every page) is read with
read_file (an Asset's original through its download link) and saved as the person --as names,
an Editor of the local KB, as kgw import folder saves files. A file the local KB holds with the
source's SHA-256 is not read again, so a second run reads and changes nothing and an
interrupted run resumes. Files only the local KB has are left alone, and listed.

Refused one by one, with the reason, the rest imported: a path the KB cannot hold, bytes that do
not match the SHA-256 or size the source gave, a file over 10 MiB, a download link on another
origin than the source's. A source whose paging does not end stops at 100,000 files per KB.

--dry-run  says what each file would do; writes nothing (it still reads what changed).
--json     prints the report as one JSON object, without progress lines.

Exits 1 when something was refused.`;

/** Files read from one source KB at most (and pages of PAGE_SIZE): a source whose paging does not end stops there. */
export const SOURCE_FILES_MAX = 100_000;
const PAGE_SIZE = 100;

interface KbReport extends SentReport {
  source: string;
  local: string;
  /** Paths the local KB holds that the source does not (left alone). */
  only_local: string[];
  skipped: { path: string; reason: string }[];
}

interface Report {
  from: string;
  dialect: 'atmina';
  tenant: string;
  dry_run: boolean;
  kbs: KbReport[];
  failed: { kb: string; reason: string }[];
}

interface SourceFile {
  readonly fileId: string;
  readonly path: string;
  readonly sha256: string;
  readonly size: number;
  readonly kind: 'text' | 'asset';
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
  return { fileId, path, sha256, size, kind: kind === 'asset' ? 'asset' : 'text' };
}

/** Every file the source lists for a KB, bounded; `problems` gets what cannot be a file. */
async function listSource(source: McpSource, kbId: string, problems: { path: string; reason: string }[]): Promise<SourceFile[]> {
  const files: SourceFile[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let listed = 0; ;) {
    const page = await source.call('list_files', { kb_id: kbId, limit: PAGE_SIZE, ...(cursor === undefined ? {} : { cursor }) });
    const items = Array.isArray(page['files']) ? page['files'] : [];
    for (const item of items) {
      const file = sourceFile(item);
      if (typeof file === 'string') problems.push({ path: isRecord(item) && typeof item['path'] === 'string' ? item['path'] : '?', reason: file });
      else if (seen.has(file.path)) problems.push({ path: file.path, reason: 'the source listed this path twice' });
      else {
        seen.add(file.path);
        files.push(file);
      }
    }
    listed += Math.max(items.length, 1);
    const next = page['next_cursor'];
    if (typeof next !== 'string' || next === '') return files;
    if (listed >= SOURCE_FILES_MAX || next === cursor) throw new ItemRefused(`the source's paging did not end within ${SOURCE_FILES_MAX} files`);
    cursor = next;
  }
}

/** The local KB's files, path → SHA-256 (kb.files, every page). */
async function localFiles(run: OpRunner, tenant: string, kb: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  let after: string | undefined;
  do {
    const page = await run('kb.files', { tenant, kb, limit: 1000, ...(after === undefined ? {} : { after }) });
    for (const file of page.files) files.set(file.path, file.sha256);
    after = page.next ?? undefined;
  } while (after !== undefined);
  return files;
}

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

async function importKb(
  run: OpRunner,
  source: McpSource,
  target: { tenant: string; as: string; dryRun: boolean },
  kb: { id: string; slug: string; local: string },
  progress: (line: string) => void,
): Promise<KbReport> {
  const report: KbReport = { source: kb.slug, local: kb.local, ...noneSent(), only_local: [], skipped: [] };
  const local = await localFiles(run, target.tenant, kb.local);
  const listed = await listSource(source, kb.id, report.failed);
  const items: Outgoing[] = [];
  for (const file of listed) {
    if (local.get(file.path.normalize('NFC')) === file.sha256) {
      report.files += 1;
      report.unchanged += 1;
    } else if (file.size > IMPORT_FILE_MAX_BYTES) report.skipped.push({ path: file.path, reason: `larger than ${IMPORT_FILE_MAX_BYTES / (1024 * 1024)} MiB` });
    else items.push({ source: file.path, path: file.path, size: file.size, bytes: () => readSourceFile(source, kb.id, file) });
  }
  const atSource = new Set(listed.map((file) => file.path.normalize('NFC')));
  report.only_local = [...local.keys()].filter((path) => !atSource.has(path));
  await sendToKb(run, { tenant: target.tenant, kb: kb.local, as: target.as, dryRun: target.dryRun }, items, report, (line) => progress(`${kb.slug}: ${line}`));
  return report;
}

/** `--kb SOURCE[=LOCAL]` options as source slug → local slug; empty: every KB. */
function kbChoices(values: readonly string[]): Map<string, string> {
  const chosen = new Map<string, string>();
  for (const value of values) {
    const [from = '', to = from] = value.split('=', 2);
    if (from === '' || to === '') throw new UsageError(`--kb takes SOURCE or SOURCE=LOCAL (Knowledge Base slugs), not "${value}"`);
    chosen.set(from, to);
  }
  return chosen;
}

export async function importMcpCommand(argv: readonly string[]): Promise<void> {
  const { values, help } = parseCommand(
    argv,
    { ...KB_IMPORT_OPTIONS, from: { type: 'string' }, dialect: { type: 'string' }, token: { type: 'string' }, kb: { type: 'string', multiple: true } },
    { min: 0, max: 0 },
  );
  if (help) return void print(importMcpHelp);
  const { tenant, as, from, dialect } = requireOptions(values, 'tenant', 'as', 'from', 'dialect');
  if (dialect !== 'atmina') throw new UsageError(`--dialect must be atmina (Alignbase and Company Brain sources are not read yet), not "${dialect}"`);
  let url: URL;
  try {
    url = new URL(from);
  } catch {
    throw new UsageError(`--from must be the URL of an MCP endpoint, not "${from}"`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new UsageError('--from must be an http or https URL');
  const token = values.token ?? process.env['KGW_IMPORT_TOKEN'];
  if (token === undefined || token === '') throw new UsageError('give the source’s token with --token or KGW_IMPORT_TOKEN');
  const chosen = kbChoices(values.kb ?? []);
  const dryRun = values['dry-run'] === true;
  const json = values.json === true;
  const report: Report = { from: url.href, dialect, tenant, dry_run: dryRun, kbs: [], failed: [] };
  const progress = progressReporter(json);
  const source = await connectSource(url, token);
  try {
    const listed = await source.call('list_kbs', {});
    const kbs = (Array.isArray(listed['kbs']) ? listed['kbs'] : []).flatMap((kb) =>
      isRecord(kb) && typeof kb['kb_id'] === 'string' && typeof kb['slug'] === 'string' ? [{ id: kb['kb_id'], slug: kb['slug'] }] : [],
    );
    for (const wanted of chosen.keys())
      if (!kbs.some((kb) => kb.slug === wanted)) report.failed.push({ kb: wanted, reason: 'the source shows no Knowledge Base of that slug to this token' });
    await withOps(loadConfig(), async (run) => {
      for (const kb of kbs) {
        if (chosen.size > 0 && !chosen.has(kb.slug)) continue;
        const local = chosen.get(kb.slug) ?? kb.slug;
        try {
          report.kbs.push(await importKb(run, source, { tenant, as, dryRun }, { ...kb, local }, progress));
        } catch (error) {
          if (!(error instanceof ItemRefused) && !(error instanceof SourceError) && !(error instanceof Error && 'code' in error)) throw error;
          report.failed.push({ kb: kb.slug, reason: error.message });
        }
      }
    });
  } finally {
    await source.close();
  }
  if (report.failed.length > 0 || report.kbs.some((kb) => kb.failed.length > 0)) process.exitCode = 1;
  if (json) return void print(jsonText(report));
  const would = dryRun ? 'would be ' : '';
  for (const kb of report.kbs) {
    print(
      `${kb.source} -> ${kb.local}: ${kb.files} files, ${kb.created} ${would}created, ${kb.updated} ${would}updated, ${kb.unchanged} unchanged, ` +
        `${kb.skipped.length} left out, ${kb.failed.length} refused, ${kb.only_local.length} only here`,
    );
    for (const item of kb.skipped) print(`  left out ${visible(item.path, { inline: true })}: ${item.reason}`);
    for (const item of kb.failed) print(`  refused ${visible(item.path, { inline: true })}: ${item.reason}`);
  }
  for (const item of report.failed) print(`refused ${visible(item.kb, { inline: true })}: ${item.reason}`);
}
