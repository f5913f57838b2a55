import { writeFile } from 'node:fs/promises';
import { loadConfig } from '../config.ts';
import type { OpResult } from '../admin/ops.ts';
import { withOps } from './session.ts';
import { jsonText, print, printNotice, visible, writeBytes } from './terminal.ts';
import { UsageError, parseCommand, table, when } from './usage.ts';

export const kbHelp = `Usage:
  kgw kb list [--tenant SLUG] [--archived] [--json]
  kgw kb show KB [--tenant SLUG] [--json]
  kgw kb restore KB [--tenant SLUG] [--json]

Atmina Knowledge Bases, for the operator. KB is a KB's id or slug; a slug several tenants use
needs --tenant.

list     every KB (of every tenant without --tenant) with its team, visibility, live files
         and bytes; --archived includes the archived ones (delete_kb archives).
show     one KB, archived or not.
restore  brings an archived KB back, with its files (they return to search and the graph);
         audited. A KB that is not archived stays as it is.`;

export const filesHelp = `Usage:
  kgw files get KB PATH [--tenant SLUG] [--out FILE]

Writes the current bytes of a live file of a Knowledge Base (by id or slug; an archived KB's
files too) to standard output, exactly, or to FILE (created 0600, replaced if it exists). On a
terminal, standard output shows the bytes with control characters made visible instead;
redirect or use --out for the exact bytes.`;

type KbJson = OpResult<'kb.show'>;

const describeKb = (kb: KbJson): string =>
  [
    `${kb.slug} (${kb.kb_id}) in ${kb.tenant}${kb.archived_at === null ? '' : `, archived ${when(kb.archived_at)}`}`,
    `  name         ${visible(kb.name, { inline: true })}`,
    `  team         ${kb.team}`,
    `  visibility   ${kb.visibility}, locations ${kb.location_policy}`,
    `  files        ${kb.files} (${kb.bytes} bytes)`,
    `  created      ${when(kb.created_at)}`,
    `  updated      ${when(kb.updated_at)}`,
    ...(kb.description === '' ? [] : [`  description  ${visible(kb.description, { inline: true })}`]),
  ].join('\n');

export async function kbCommand(argv: readonly string[]): Promise<void> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === '--help' || sub === '-h') return void print(kbHelp);
  switch (sub) {
    case 'list': {
      const { values, help } = parseCommand(rest, { tenant: { type: 'string' }, archived: { type: 'boolean' }, json: { type: 'boolean' } }, { min: 0, max: 0 });
      if (help) return void print(kbHelp);
      const kbs = await withOps(loadConfig(), (run) => run('kb.list', { tenant: values.tenant, archived: values.archived === true }));
      if (values.json === true) return void print(jsonText(kbs));
      if (kbs.length === 0) return void print('no Knowledge Bases');
      print(
        table(
          ['TENANT', 'SLUG', 'ID', 'TEAM', 'VISIBILITY', 'FILES', 'BYTES', 'STATE', 'NAME'],
          kbs.map((kb) => [
            kb.tenant,
            kb.slug,
            kb.kb_id,
            kb.team,
            kb.visibility,
            String(kb.files),
            String(kb.bytes),
            kb.archived_at === null ? 'live' : 'archived',
            kb.name,
          ]),
        ),
      );
      return;
    }
    case 'show':
    case 'restore': {
      const { values, positionals, help } = parseCommand(rest, { tenant: { type: 'string' }, json: { type: 'boolean' } }, { min: 1, max: 1 });
      if (help) return void print(kbHelp);
      const kb = positionals[0] ?? '';
      if (sub === 'show') {
        const shown = await withOps(loadConfig(), (run) => run('kb.show', { tenant: values.tenant, kb }));
        return void print(values.json === true ? jsonText(shown) : describeKb(shown));
      }
      const result = await withOps(loadConfig(), (run) => run('kb.restore', { tenant: values.tenant, kb }));
      if (values.json === true) return void print(jsonText(result));
      return void print(
        result.restored
          ? `restored ${result.slug} (${result.kb_id}) in ${result.tenant}`
          : `${result.slug} in ${result.tenant} is not archived; nothing changed`,
      );
    }
    default:
      throw new UsageError(`unknown subcommand "${sub}"; use list, show or restore`);
  }
}

export async function filesCommand(argv: readonly string[]): Promise<void> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === '--help' || sub === '-h') return void print(filesHelp);
  if (sub !== 'get') throw new UsageError(`unknown subcommand "${sub}"; use get`);
  const { values, positionals, help } = parseCommand(rest, { tenant: { type: 'string' }, out: { type: 'string' } }, { min: 2, max: 2 });
  if (help) return void print(filesHelp);
  const [kb = '', path = ''] = positionals;
  const file = await withOps(loadConfig(), (run) => run('files.get', { tenant: values.tenant, kb, path }));
  const bytes = Buffer.from(file.data_base64, 'base64');
  if (values.out !== undefined) {
    await writeFile(values.out, bytes, { mode: 0o600 });
    return printNotice(`wrote ${file.path} v${file.version} (${file.size_bytes} bytes, sha256 ${file.sha256}) to ${values.out}`);
  }
  await writeBytes(bytes);
}
