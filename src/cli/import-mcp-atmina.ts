import { isSha256Hex } from '../../connectors/blob/contract.ts';
import { AUDIT_QUERY_TEXT, CONTRIBUTION_NOTE_DAYS, KB_VISIBILITIES, pathProblem } from '../atmina/index.ts';
import { isKgwError } from '../kernel/errors.ts';
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
 * with read_file, an Asset's original through its download link. Then the settings of the teams
 * those KBs belong to, where the token may read them (get_team_settings), onto the local teams of
 * the same slugs.
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

/** The team settings an import carries, in the words of get_team_settings and update_team_settings. */
type SettingValues = {
  audit_query_text?: (typeof AUDIT_QUERY_TEXT)[number];
  contribution_note_days?: number;
  default_kb_visibility?: (typeof KB_VISIBILITIES)[number];
};
type SettingName = keyof SettingValues;

interface TeamSettingsReport {
  /** Teams whose settings changed here (with --dry-run: would change), with the settings that did. */
  updated: { team: string; changed: string[] }[];
  unchanged: string[];
  /** A team refused here (the tool's words), or one setting of it the source gave a value this gateway does not admit (not sent). */
  refused: { team: string | null; setting?: SettingName; reason: string }[];
  /** Teams whose settings the token may not read at the source (Admin there only); null: the source's current team, which it did not name. */
  not_visible: { team: string | null; reason: string }[];
}

/** What the source gave, shown in a reason: as JSON (so a hostile string is escaped), cut short. */
const given = (value: unknown): string => (JSON.stringify(value) ?? String(value)).slice(0, 80);

/**
 * What the source says of one setting: its value, when this gateway admits it (the tool's
 * enumerations and bounds), or why it is refused. A value the store would refuse is not sent,
 * so one bad setting does not take the team's others with it.
 */
function sourceSetting(name: SettingName, value: unknown): SettingValues | string {
  if (value === undefined) return 'the source gave no value for it';
  const notOneOf = (allowed: readonly string[]) => `the source gave ${given(value)}, not one of ${allowed.join(', ')}`;
  switch (name) {
    case 'audit_query_text': {
      const found = AUDIT_QUERY_TEXT.find((choice) => choice === value);
      return found === undefined ? notOneOf(AUDIT_QUERY_TEXT) : { audit_query_text: found };
    }
    case 'default_kb_visibility': {
      const found = KB_VISIBILITIES.find((choice) => choice === value);
      return found === undefined ? notOneOf(KB_VISIBILITIES) : { default_kb_visibility: found };
    }
    case 'contribution_note_days': {
      const { min, max } = CONTRIBUTION_NOTE_DAYS;
      return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max
        ? { contribution_note_days: value }
        : `the source gave ${given(value)}, not a whole number of days from ${min} to ${max}`;
    }
  }
}

const SETTING_NAMES: readonly SettingName[] = ['audit_query_text', 'contribution_note_days', 'default_kb_visibility'];

/** The slug of the token's current team at the source (whoami), undefined when it says none or cannot say. */
async function sourceCurrentTeam(source: McpSource): Promise<string | undefined> {
  try {
    const me = await source.call('whoami', {});
    const current = me['current_team'];
    return isRecord(current) && typeof current['slug'] === 'string' ? current['slug'] : undefined;
  } catch (error) {
    if (error instanceof ItemRefused || error instanceof SourceError) return undefined;
    throw error;
  }
}

/**
 * The settings of the source teams `teams` (by slug; undefined: a KB whose team list_kbs did not
 * say, taken as the token's current team there) onto the local teams of the same slugs, as
 * `--as` (team.settings), whose Admin role in each decides. get_team_settings needs the Admin
 * role at the source: a team whose settings the source does not show this token is listed as
 * not visible, and the import goes on.
 */
async function carryTeamSettings(context: McpImportContext, teams: ReadonlySet<string | undefined>): Promise<TeamSettingsReport> {
  const report: TeamSettingsReport = { updated: [], unchanged: [], refused: [], not_visible: [] };
  if (teams.size === 0) return report;
  const current = await sourceCurrentTeam(context.source);
  const done = new Set<string>();
  for (const team of new Set([...teams].map((slug) => slug ?? current))) {
    let answer: Record<string, unknown>;
    try {
      // The current team is asked for as the specification has it, with no input; another one
      // by its slug, which this gateway's tool takes (a source whose tool does not is reported).
      answer = await context.source.call('get_team_settings', team === undefined || team === current ? {} : { team });
    } catch (error) {
      if (!(error instanceof ItemRefused) && !(error instanceof SourceError)) throw error;
      report.not_visible.push({ team: team ?? null, reason: error.message });
      continue;
    }
    const said = isRecord(answer['team']) && typeof answer['team']['slug'] === 'string' ? answer['team']['slug'] : undefined;
    if (said === undefined || (team !== undefined && said !== team)) {
      const reason =
        said === undefined ? 'the source answered without the team the settings are of' : `the source answered with another team's settings (${given(said)})`;
      report.refused.push({ team: team ?? null, reason });
      continue;
    }
    if (done.has(said)) continue;
    done.add(said);
    let values: SettingValues = {};
    for (const name of SETTING_NAMES) {
      const value = sourceSetting(name, answer[name]);
      if (typeof value === 'string') report.refused.push({ team: said, setting: name, reason: value });
      else values = { ...values, ...value };
    }
    if (Object.keys(values).length === 0) continue;
    try {
      const applied = await context.run('team.settings', { tenant: context.tenant, as: context.as, team: said, dry_run: context.dryRun, ...values });
      if (applied.changed.length > 0) report.updated.push({ team: said, changed: [...applied.changed] });
      else report.unchanged.push(said);
    } catch (error) {
      // Refused here (--as not an Admin of the team, no team of that slug, text the store cannot hold): in the operation's words.
      if (!isKgwError(error)) throw error;
      report.refused.push({ team: said, reason: error.message });
    }
  }
  return report;
}

/** The report's lines of the team settings. */
function teamSettingsLines(report: TeamSettingsReport, would: string): string[] {
  const name = (team: string | null) => (team === null ? 'the current team' : visible(team, { inline: true }));
  const lines = [
    `team settings: ${report.updated.length} ${would}updated, ${report.unchanged.length} unchanged, ${report.refused.length} refused, ` +
      `${report.not_visible.length} not visible at the source`,
  ];
  for (const item of report.updated) lines.push(`  ${would}updated ${name(item.team)}: ${item.changed.join(', ')}`);
  for (const item of report.refused)
    lines.push(`  refused ${name(item.team)}${item.setting === undefined ? '' : ` ${item.setting}`}: ${visible(item.reason, { inline: true })}`);
  for (const item of report.not_visible) lines.push(`  not visible ${name(item.team)}: ${visible(item.reason, { inline: true })}`);
  return lines;
}

/**
 * The Atmina reader, for the KBs `--kb` chose (source slug → local slug; empty: every KB the
 * token sees). Its kinds: `kbs`, the files; `settings`, the settings of the KBs' teams.
 */
export function atminaReader(chosen: ReadonlyMap<string, string>): DialectReader {
  return {
    kinds: ['kbs', 'settings'],
    async read(context): Promise<DialectOutcome> {
      const wants = (kind: string) => context.only === undefined || context.only.has(kind);
      const kbs: KbReport[] = [];
      const failed: { kb: string; reason: string }[] = [];
      const listed = await context.source.call('list_kbs', {});
      const visibleKbs = (Array.isArray(listed['kbs']) ? listed['kbs'] : []).flatMap((kb) => {
        if (!isRecord(kb) || typeof kb['kb_id'] !== 'string' || typeof kb['slug'] !== 'string') return [];
        const team = isRecord(kb['team']) && typeof kb['team']['slug'] === 'string' ? kb['team']['slug'] : undefined;
        return [{ id: kb['kb_id'], slug: kb['slug'], team }];
      });
      for (const wanted of chosen.keys())
        if (!visibleKbs.some((kb) => kb.slug === wanted)) failed.push({ kb: wanted, reason: 'the source shows no Knowledge Base of that slug to this token' });
      const imported = visibleKbs.filter((kb) => chosen.size === 0 || chosen.has(kb.slug));
      for (const kb of wants('kbs') ? imported : []) {
        try {
          kbs.push(await importKb(context, { id: kb.id, slug: kb.slug, local: chosen.get(kb.slug) ?? kb.slug }));
        } catch (error) {
          if (!(error instanceof ItemRefused) && !(error instanceof SourceError) && !(error instanceof Error && 'code' in error)) throw error;
          failed.push({ kb: kb.slug, reason: error.message });
        }
      }
      const settings = wants('settings') ? await carryTeamSettings(context, new Set(imported.map((kb) => kb.team))) : undefined;
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
      if (settings !== undefined) lines.push(...teamSettingsLines(settings, would));
      // Settings the source does not show this token are no refusal: they are not the token's to read.
      const refused = failed.length > 0 || kbs.some((kb) => kb.failed.length > 0) || (settings?.refused.length ?? 0) > 0;
      return { report: { kbs, failed, ...(settings === undefined ? {} : { team_settings: settings }) }, lines, refused };
    },
  };
}
