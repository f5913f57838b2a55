import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { pngOf } from '../test/atmina/assets/fixtures.ts';
import type { Timed } from './kgw-process.ts';
import { ROOT, kgw, serve, stop } from './kgw-process.ts';
import { machineInfo } from './machine.ts';

/**
 * `npm run bench:migration`: `kgw import folder` and `kgw export folder` through the real CLI on
 * a generated vault (default 10,000 notes of about 1.5 KiB in 100 folders, with front matter,
 * aliases and wiki links, one in 50 notes linking by an alias, plus 100 PNG attachments), on
 * the embedded store (a fresh data folder) or on PostgreSQL (`--database-url`, a database this
 * run may fill; its tenant `bench` is created). Measured: the import, the same import again
 * (every file unchanged), the export, and the export again (every file already on disk).
 * Figures to bench/results/migration-<store>.json.
 */

const { values } = parseArgs({
  options: {
    notes: { type: 'string', default: '10000' },
    'database-url': { type: 'string' },
    'target-database-url': { type: 'string' },
    out: { type: 'string' },
  },
});
const NOTES = Number(values.notes);
const FOLDERS = 100;
const IMAGES = 100;

const ORG = `tenant: bench
name: Bench
people:
  - email: writer@bench.test
    name: Writer
teams:
  - slug: docs
    name: Docs
    members: { writer@bench.test: admin }
kbs:
  - slug: vault
    name: Vault
    team: docs
`;

const PARAGRAPH =
  'Retrieval quality depends on how the notes are cut into passages, how their links are kept, and which words ' +
  'the people who wrote them chose. This paragraph pads a note to a realistic size for a personal vault.\n\n';

async function makeVault(root: string): Promise<{ files: number; bytes: number }> {
  let bytes = 0;
  const put = async (file: string, data: string | Buffer): Promise<void> => {
    await writeFile(path.join(root, file), data);
    bytes += Buffer.byteLength(data);
  };
  await mkdir(path.join(root, '.obsidian'), { recursive: true });
  await writeFile(path.join(root, '.obsidian', 'app.json'), '{}');
  await mkdir(path.join(root, 'attachments'));
  for (let f = 0; f < FOLDERS; f += 1) await mkdir(path.join(root, `Area ${f}`));
  for (let n = 0; n < NOTES; n += 1) {
    const other = (n * 7919 + 13) % NOTES;
    const links = n % 50 === 0 ? `[[Alias ${other}]]` : `[[Note ${other}]] and [[Note ${(n + 1) % NOTES}#Heading|next]]`;
    const image = n % (NOTES / IMAGES) === 0 ? `\n![[image-${n / (NOTES / IMAGES)}.png]]\n` : '';
    const text = `---\ntitle: Note ${n}\ntags: [area-${n % FOLDERS}, bench]\naliases: [Alias ${n}]\n---\n# Note ${n}\n\nSee ${links}.\n${image}\n${PARAGRAPH.repeat(5)}`;
    await put(`Area ${n % FOLDERS}/Note ${n}.md`, text);
  }
  for (let i = 0; i < IMAGES; i += 1) await put(`attachments/image-${i}.png`, pngOf(4 + i, 3));
  return { files: NOTES + IMAGES, bytes };
}

const work = await mkdtemp(path.join(os.tmpdir(), 'kgw-bench-migration-'));
try {
  const vault = path.join(work, 'vault');
  const { files, bytes } = await makeVault(vault);
  const store = values['database-url'] === undefined ? 'pglite' : 'postgres';
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    KGW_LOG_LEVEL: 'warn',
    KGW_PORT: '1',
    KGW_DATA_DIR: path.join(work, 'data'),
    NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE,
    ...(values['database-url'] === undefined ? {} : { DATABASE_URL: values['database-url'] }),
  };
  await writeFile(path.join(work, 'org.yaml'), ORG);
  await kgw(['apply', path.join(work, 'org.yaml')], env);
  const importArgs = ['import', 'folder', vault, '--tenant', 'bench', '--kb', 'vault', '--as', 'writer@bench.test', '--json'];
  const first = await kgw(importArgs, env);
  const firstReport = JSON.parse(first.stdout) as { created: number; relinked: unknown[]; failed: unknown[] };
  const second = await kgw(importArgs, env);
  const secondReport = JSON.parse(second.stdout) as { unchanged: number };
  const out = path.join(work, 'export');
  const exported = await kgw(['export', 'folder', out, '--tenant', 'bench', '--json'], env);
  const again = await kgw(['export', 'folder', out, '--tenant', 'bench', '--json'], env);
  // Gateway to gateway: the store just filled served by kgw serve, read by kgw import mcp into a new store.
  const source = await serve(env);
  let mcp: Timed;
  let mcpAgain: Timed;
  try {
    const token = (await kgw(['token', 'create', '--tenant', 'bench', '--principal', 'writer@bench.test', '--scopes', 'context.read'], env)).stdout.trim();
    const targetEnv: NodeJS.ProcessEnv = {
      ...env,
      KGW_DATA_DIR: path.join(work, 'target'),
      DATABASE_URL: values['target-database-url'],
      KGW_IMPORT_TOKEN: token,
    };
    if (targetEnv.DATABASE_URL === undefined) delete targetEnv.DATABASE_URL;
    await kgw(['apply', path.join(work, 'org.yaml')], targetEnv);
    const mcpArgs = ['import', 'mcp', '--from', `${source.url}/atmina/mcp`, '--dialect', 'atmina', '--tenant', 'bench', '--as', 'writer@bench.test', '--json'];
    mcp = await kgw(mcpArgs, targetEnv);
    mcpAgain = await kgw(mcpArgs, targetEnv);
  } finally {
    await stop(source.child);
  }
  const mcpReport = JSON.parse(mcp.stdout) as { kbs: { created: number; failed: unknown[] }[] };
  const mib = bytes / (1024 * 1024);
  const rate = (run: Timed) => ({
    seconds: Number(run.seconds.toFixed(1)),
    files_per_s: Math.round(files / run.seconds),
    mib_per_s: Number((mib / run.seconds).toFixed(2)),
  });
  const result = {
    suite: 'migration',
    store,
    date: new Date().toISOString(),
    machine: machineInfo(),
    vault: { files, notes: NOTES, images: IMAGES, mib: Number(mib.toFixed(1)), relinked_notes: firstReport.relinked.length },
    import: { ...rate(first), created: firstReport.created, failed: firstReport.failed.length },
    import_again: { ...rate(second), unchanged: secondReport.unchanged },
    export: rate(exported),
    export_again: rate(again),
    import_mcp: { ...rate(mcp), created: mcpReport.kbs[0]?.created, failed: mcpReport.kbs[0]?.failed.length },
    import_mcp_again: rate(mcpAgain),
  };
  const target = values.out ?? path.join(ROOT, 'bench', 'results', `migration-${store}.json`);
  await writeFile(target, `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
} finally {
  await rm(work, { recursive: true, force: true });
}
