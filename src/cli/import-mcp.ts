import { loadConfig } from '../config.ts';
import { KB_IMPORT_OPTIONS, kbChoices } from './kb-import.ts';
import { alignbaseReader } from './import-mcp-alignbase.ts';
import { atminaReader } from './import-mcp-atmina.ts';
import { brainReader } from './import-mcp-brain.ts';
import type { DialectReader } from './import-mcp-dialect.ts';
import { PEER_OPTIONS, connectSource, onlyKinds, peerOf } from './mcp-source.ts';
import { withOps } from './session.ts';
import { jsonText, print, progressReporter } from './terminal.ts';
import { UsageError, parseCommand, requireOptions } from './usage.ts';

export const importMcpHelp = `Usage:
  kgw import mcp --from URL --dialect atmina|alignbase|brain --tenant SLUG --as EMAIL
                 [--token TOKEN | --sign-in [--scope SCOPES]] [--kb SOURCE[=LOCAL]]...
                 [--only KINDS] [--dry-run] [--json]

Copies what a token may read at another MCP endpoint that speaks a dialect this gateway speaks
into this gateway, through the source's own tools, as an agent would read it. The token comes
from --token or, kept out of the shell's history, from KGW_IMPORT_TOKEN; or --sign-in signs in
at the source as a desktop client does (OAuth with PKCE and dynamic registration; the sign-in
page opens in the browser, KGW_BROWSER or the system's, and its address is printed; the code
comes back to a listener on 127.0.0.1), asking for --scope or the source's default. Each version saved
keeps where it came from (the source, the id, version, author and time there: imported_from in
the reads), and a mapping of source ids to local ones makes a second run read only what is newer
and an interrupted run resume.

--dialect atmina (--only kbs,settings): every Knowledge Base the token sees (list_kbs), or those --kb
names (by slug; SOURCE=LOCAL writes into another local KB), each into the local KB of the same
slug, which must exist (create_kb, or the org file's kbs:). Each live file (list_files, every
page) is read with read_file (an Asset's original through its download link) and saved as the
person --as names, an Editor of the local KB, as kgw import folder saves files. A file the local
KB holds with the source's SHA-256 is not read again. Files only the local KB has are left
alone, and listed. Only a file's current bytes can be read, so its history starts there. The
settings of each imported KB's team (get_team_settings, where the token is an Admin there) are
given to the local team of the same slug, as --as, an Admin of it.

--dialect alignbase (--only knowledge,skills,memories,artifacts): every Knowledge, Skill and
Artifact the token may read with every version, oldest first, and every Memory's latest version,
saved through the tools' own code as --as, whose roles decide; the source's published version is
published here. The open drafts the token may read (its own, or all as a Publisher) are proposed
here again on the same base version. Routes, grants and proposals of new Knowledge are not shown
by the tools and are listed as not carried.

--dialect brain (--only nodes): the Company Brain the token sees (get_skill_pack, a query_index
sweep, read_concept), applied with kgw brain import's planner. Nodes above the token's tier are
counted, not copied; the directory (people, agents, departments, projects) is the org file's.

Refused one by one, with the reason, the rest imported: a path or id this gateway cannot hold,
bytes that do not match the SHA-256 or size the source gave, a file over 100 MiB, a download link
on another origin than the source's, a read that gives another version than asked, whatever the
tools refuse. A source whose listing does not end stops at 100,000 items.

--dry-run  says what each item would do; writes nothing (it still reads what changed).
--json     prints the report as one JSON object, without progress lines.

Exits 1 when something was refused.`;

const DIALECTS = ['alignbase', 'atmina', 'brain'] as const;

export async function importMcpCommand(argv: readonly string[]): Promise<void> {
  const { values, help } = parseCommand(
    argv,
    {
      ...KB_IMPORT_OPTIONS,
      from: { type: 'string' },
      dialect: { type: 'string' },
      ...PEER_OPTIONS,
      kb: { type: 'string', multiple: true },
      only: { type: 'string' },
    },
    { min: 0, max: 0 },
  );
  if (help) return void print(importMcpHelp);
  const { tenant, as, from, dialect } = requireOptions(values, 'tenant', 'as', 'from', 'dialect');
  let reader: DialectReader;
  if (dialect === 'atmina') reader = atminaReader(kbChoices(values.kb ?? []));
  else if (dialect === 'alignbase') reader = alignbaseReader;
  else if (dialect === 'brain') reader = brainReader;
  else throw new UsageError(`--dialect must be one of ${DIALECTS.join(', ')}, not "${dialect}"`);
  if (dialect !== 'atmina' && values.kb !== undefined) throw new UsageError('--kb chooses Atmina Knowledge Bases; leave it out for this dialect');
  const only = onlyKinds(values.only, reader.kinds);
  const { url, credentials } = peerOf(values, { option: '--from', url: from, env: 'KGW_IMPORT_TOKEN', side: 'source' });
  const dryRun = values['dry-run'] === true;
  const json = values.json === true;
  const progress = progressReporter(json);
  const source = await connectSource(url, credentials);
  let outcome;
  try {
    outcome = await withOps(loadConfig(), (run) => reader.read({ run, source, tenant, as, dryRun, only, progress }));
  } finally {
    await source.close();
  }
  if (outcome.refused) process.exitCode = 1;
  if (json) return void print(jsonText({ from: url.href, dialect, protocol: source.protocol ?? null, tenant, dry_run: dryRun, ...outcome.report }));
  for (const line of outcome.lines) print(line);
}
