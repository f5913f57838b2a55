import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { OpRunner } from '../src/cli/session.ts';
import { withOps } from '../src/cli/session.ts';
import { loadConfig } from '../src/config.ts';
import { mapInParallel } from '../src/kernel/concurrency.ts';
import type { VersionSent } from '../src/cli/import-mcp-alignbase.ts';
import { pngOf } from '../test/atmina/assets/fixtures.ts';
import { prng } from './corpus.ts';
import type { Timed } from './kgw-process.ts';
import { ROOT, kgw, serve, stop } from './kgw-process.ts';
import { adminQuery, machineInfo, serverSettings } from './machine.ts';

/**
 * `npm run bench:migration-mcp`: `kgw import mcp --dialect alignbase`, `kgw import mcp --dialect
 * brain`, `kgw export mcp --dialect atmina` and `kgw export mcp --dialect alignbase`, gateway to
 * gateway, through the real CLI against `kgw serve` (bench/migration.ts measures `import mcp
 * --dialect atmina`). Three stores, each a fresh data folder on PGlite, or a new database on the
 * PostgreSQL server `--database-url` names (dropped at the end; its user must be allowed to
 * CREATE DATABASE), each with its own KGW_DATA_DIR for blobs:
 *
 * - **source**, served by `kgw serve` while the imports read it. Seeded in this process through
 *   the admin operations (`apply`, `context.import`, `brain.import`, `token.create`), not through
 *   thousands of CLI processes: 1,000 Knowledge of 5 versions each (about 2 KiB a version; every
 *   fifth must_follow, every fourth with version 3 published), 200 Skills of 2 versions with 3
 *   files each (SKILL.md of about 1 KiB, a 2 KiB reference, a script and a 3 KiB PNG; every
 *   second with version 1 published), 500 Memories of 2 versions (about 1 KiB; the import reads
 *   the latest only, as read_memory reads no other), 200 Artifacts of 2 versions with 2 files (2
 *   KiB of Markdown, a 4 KiB CSV, a 9 KiB PNG); and a Company Brain of 5,000 nodes in five types
 *   (about 400 characters of summary, tags, metadata, some with freshness or a mark) and about
 *   10,000 relations, spread over the tiers: half `public`, a quarter `manager`, a tenth each
 *   `executive` and `hr`, a twentieth `restricted`. The token reads as a person of tier
 *   `executive`, so `hr` and `restricted` nodes (15 %) are above its tier: counted, not copied.
 *   Each node hangs off an earlier `public` node and has one more relation to any earlier node,
 *   and one in 100 is used by the writer's department (`department:Operations`, a directory end
 *   the import carries by name), so every node the token sees is reached through relations from
 *   those the skill pack cites (the writer through the pack's departments), and the query_index
 *   sweep has nothing left to find: its questions are `sweep_queries` in the result, 0 when so.
 *   (Without the department, the sweep looks for the writer's person node by prefixes and
 *   finds it after anything from 20 to 400 questions, depending on its random directory id.)
 *   Before the imports the bench waits until the source's projections (search, graph) have
 *   drained, and records how long.
 * - **local**, the store the CLI runs on (never served): the imports write into it, and the
 *   exports read it. Before that it gets a Knowledge Base `vault` of 2,000 Markdown notes of about
 *   2 KiB in 20 folders, 100 PNGs of about 57 KiB (sent with upload_file) and 4 files of 1.5 MiB
 *   (sent with request_uploads, a PUT and confirm_uploads), through `kb.import` as `kgw import
 *   folder` saves files.
 * - **target**, empty but for the org file and a token, served by `kgw serve` while the exports
 *   write into it; its KB is made by the export with create_kb.
 *
 * Measured, each a `kgw` process timed from start to exit: import alignbase (every resource
 * created), the same again (nothing new: every resource unchanged, no version read); import
 * brain, and again (it reads the whole brain again, and applies nothing); export atmina (the
 * KB's files to the empty target) and again (every file there with the same SHA-256: nothing
 * sent); export alignbase (what the import brought, the latest version of each resource) and
 * again (every resource read at the target and found the same). Rates: resources (or nodes,
 * or files) and versions a second, and MiB a second of the bytes the versions or files hold.
 * The target's default write limits are kept (600 KB writes a minute: write_files counts once
 * for its 50 files). Figures to bench/results/migration-mcp-<store>.json (or `--out`).
 *
 * `--scale F` (above 0, at most 4) multiplies every count but the versions per resource and the
 * KB's folders, at least 1 of each, for a quick check: `--scale 0.05` took under two minutes on
 * two busy cores, most of it starting processes and migrating the three stores. A command that
 * exits 1 (something refused) still counts: its refusals are counted in the result and the
 * first ones printed; any other exit stops the bench.
 */

const { values } = parseArgs({
  options: {
    scale: { type: 'string', default: '1' },
    'database-url': { type: 'string' },
    out: { type: 'string' },
  },
});
const SCALE = Number(values.scale);
if (!Number.isFinite(SCALE) || SCALE <= 0 || SCALE > 4) throw new Error(`--scale must be a number above 0 and at most 4, not "${values.scale}"`);
const scaled = (count: number): number => Math.max(1, Math.round(count * SCALE));

const SIZES = {
  knowledge: scaled(1000),
  knowledgeVersions: 5,
  skills: scaled(200),
  skillVersions: 2,
  memories: scaled(500),
  memoryVersions: 2,
  artifacts: scaled(200),
  artifactVersions: 2,
  brainNodes: scaled(5000),
  notes: scaled(2000),
  noteFolders: 20,
  images: scaled(100),
  largeFiles: scaled(4),
} as const;

const TENANT = 'bench';
const WRITER = 'writer@bench.test';
const SOURCE_AUTHORS = ['ada@source.test', 'grace@source.test', 'linus@source.test', 'barbara@source.test'];

/** The org file every store gets: the writer (tier executive, Admin of the team, owner of every kind of context). */
const ORG = `tenant: ${TENANT}
name: Bench
people:
  - { email: ${WRITER}, name: Writer, tier: executive, departments: [Operations] }
teams:
  - slug: docs
    name: Docs
    members: { ${WRITER}: admin }
grants:
  - { to: ${WRITER}, on: all_knowledge, role: owner }
  - { to: ${WRITER}, on: all_skills, role: owner }
  - { to: ${WRITER}, on: all_memories, role: owner }
  - { to: ${WRITER}, on: all_artifacts, role: owner }
`;
/** The local store's: the KB the export sends. */
const LOCAL_ORG = `${ORG}kbs:
  - { slug: vault, name: Vault, team: docs, description: Notes of the bench. }
`;

// ---------------------------------------------------------------------------------------------
// Generated content: deterministic, so two runs measure the same bytes

const random = prng(20261207);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

const WORDS = (
  'the a of to and in for on with by from that this each every when after before which team customer process report ' +
  'review release policy data system service account invoice order payment contract support request approval budget ' +
  'quarter plan strategy risk audit security access owner manager deadline schedule meeting decision change incident ' +
  'response ticket metric target revenue cost forecast vendor supplier product feature roadmap design document template ' +
  'checklist handbook guideline training onboarding employee payroll benefit compliance legal privacy retention backup ' +
  'recovery monitor alert escalation priority status update summary draft final version history note archive record'
).split(' ');

/** Sentences of common words, about `bytes` long. */
function prose(bytes: number): string {
  const sentences: string[] = [];
  let length = 0;
  while (length < bytes) {
    const count = 8 + Math.floor(random() * 12);
    const words = Array.from({ length: count }, () => pick(WORDS));
    const sentence = `${words[0]!.charAt(0).toUpperCase()}${words.join(' ').slice(1)}.`;
    sentences.push(sentence);
    length += sentence.length + 1;
  }
  return sentences.join(' ');
}

/** Paragraphs of prose, about `bytes` long in all. */
const paragraphs = (bytes: number): string => Array.from({ length: Math.max(1, Math.round(bytes / 400)) }, () => prose(Math.min(400, bytes))).join('\n\n');

/** A PNG of noise: it does not compress, so its size is about width × height × 3. */
const noisePng = (width: number, height: number): Buffer =>
  pngOf(width, height, () => [Math.floor(random() * 256), Math.floor(random() * 256), Math.floor(random() * 256)]);

const pad = (n: number): string => String(n).padStart(5, '0');
const b64 = (data: string | Buffer): string => (typeof data === 'string' ? Buffer.from(data, 'utf8') : data).toString('base64');

type SeedVersion = VersionSent;

interface SeedResource {
  type: 'knowledge' | 'skill' | 'memory' | 'artifact';
  name: string;
  versions: SeedVersion[];
  published?: number;
}

const versionBytes = (version: SeedVersion): number =>
  Buffer.byteLength(version.content, 'utf8') + (version.attachments ?? []).reduce((sum, file) => sum + Buffer.from(file.data_base64, 'base64').length, 0);

const at = (day: number): string => new Date(Date.UTC(2026, 0, 1) + day * 86_400_000).toISOString();

function knowledgeOf(i: number): SeedResource {
  const name = `Knowledge ${pad(i)}: ${pick(WORDS)} ${pick(WORDS)} ${pick(WORDS)}`;
  const base = paragraphs(1800);
  const versions = Array.from({ length: SIZES.knowledgeVersions }, (_, k): SeedVersion => {
    const version = k + 1;
    return {
      version,
      content: `# ${name}\n\n${base}\n\n## Revision ${version}\n\n${prose(160)}\n`,
      authority: i % 5 === 0 ? 'must_follow' : 'informational',
      author: pick(SOURCE_AUTHORS),
      at: at(version * 7 + (i % 30)),
    };
  });
  return { type: 'knowledge', name, versions, ...(i % 4 === 0 && SIZES.knowledgeVersions >= 3 ? { published: 3 } : {}) };
}

function skillOf(i: number): SeedResource {
  const name = `bench-skill-${pad(i)}`;
  const icon = b64(noisePng(32, 32));
  const script = b64(`#!/bin/sh\n# ${prose(200)}\nset -eu\necho "${name}"\n`);
  const versions = Array.from({ length: SIZES.skillVersions }, (_, k): SeedVersion => {
    const version = k + 1;
    return {
      version,
      content: `---\nname: ${name}\ndescription: ${prose(120)}\n---\n\n# ${name}\n\n${paragraphs(900)}\n\nRevision ${version}.\n`,
      attachments: [
        { path: 'references/guide.md', data_base64: b64(`# Guide\n\n${paragraphs(2000)}\n\nRevision ${version}.\n`) },
        { path: 'scripts/run.sh', data_base64: script },
        { path: 'assets/icon.png', data_base64: icon },
      ],
      author: pick(SOURCE_AUTHORS),
      at: at(version * 11 + (i % 30)),
    };
  });
  return { type: 'skill', name, versions, ...(i % 2 === 0 ? { published: 1 } : {}) };
}

function memoryOf(i: number): SeedResource {
  const name = `Memory ${pad(i)}`;
  const versions = Array.from({ length: SIZES.memoryVersions }, (_, k): SeedVersion => ({
    version: k + 1,
    content: `${prose(1000)}\n\nState ${k + 1}.\n`,
    author: pick(SOURCE_AUTHORS),
    at: at(k * 3 + (i % 30)),
  }));
  return { type: 'memory', name, versions };
}

function artifactOf(i: number): SeedResource {
  const name = `Report ${pad(i)}`;
  const chart = b64(noisePng(64, 48));
  const versions = Array.from({ length: SIZES.artifactVersions }, (_, k): SeedVersion => {
    const version = k + 1;
    const rows = Array.from({ length: 160 }, (_, r) => `${r},${pick(WORDS)},${Math.floor(random() * 100000)},${version}`).join('\n');
    return {
      version,
      content: `# ${name}\n\n${paragraphs(2000)}\n\nRevision ${version}.\n`,
      source_task: `quarterly review ${i}`,
      attachments: [
        { path: 'data/table.csv', data_base64: b64(`row,word,amount,version\n${rows}\n`) },
        { path: 'chart.png', data_base64: chart },
      ],
      author: pick(SOURCE_AUTHORS),
      at: at(version * 5 + (i % 30)),
    };
  });
  return { type: 'artifact', name, versions };
}

const NODE_TYPES = ['SOP / process', 'tool', 'strategy', 'data source', 'policy'] as const;
const TYPE_NOUNS: Readonly<Record<(typeof NODE_TYPES)[number], string>> = {
  'SOP / process': 'process',
  tool: 'system',
  strategy: 'plan',
  'data source': 'records',
  policy: 'policy',
};
const SYLLABLES = ['ka', 'lo', 'mi', 'ren', 'tor', 'vel', 'sa', 'dun', 'pi', 'ho', 'bra', 'zel', 'qui', 'mon', 'tes', 'ar', 'fi', 'gol', 'ne', 'us'];
const VERBS = ['uses', 'depends on', 'supports', 'governs', 'targets', 'can access', 'manages', 'owns'] as const;
const TAGS = ['finance', 'sales', 'hr', 'engineering', 'legal', 'support', 'core', 'legacy', 'critical', 'quarterly', 'eu', 'us'];
const OWNERS = ['Finance', 'Sales', 'People', 'Engineering', 'Legal', 'Support'];

/** The node's tier: half public, a quarter manager, a tenth each executive and hr, a twentieth restricted. */
function tierOf(): string {
  const r = random();
  return r < 0.5 ? 'public' : r < 0.75 ? 'manager' : r < 0.85 ? 'executive' : r < 0.95 ? 'hr' : 'restricted';
}

/** The brain file (JSON, which brain.import reads as YAML): nodes and relations as described above. */
function brainFile(): { text: string; nodes: number; relations: number; visible: number } {
  const word = () => Array.from({ length: 3 }, () => pick(SYLLABLES)).join('');
  const nodes: Record<string, unknown>[] = [];
  const publicIds: string[] = [];
  const relations = new Map<string, Record<string, unknown>>();
  let visible = 0;
  const relate = (from: string, to: string) => {
    const verb = pick(VERBS);
    const key = `${from}|${verb}|${to}`;
    if (from === to || relations.has(key)) return;
    const r = random();
    relations.set(key, { from, verb, to, ...(r < 0.02 ? { mark: 'inferred' } : r < 0.03 ? { mark: 'unresolved' } : {}) });
  };
  for (let i = 0; i < SIZES.brainNodes; i += 1) {
    const type = NODE_TYPES[i % NODE_TYPES.length]!;
    const [a, b] = [word(), word()];
    const id = `${a}-${b}-${i.toString(36)}`;
    const access = i === 0 ? 'public' : tierOf();
    if (access !== 'hr' && access !== 'restricted') visible += 1;
    nodes.push({
      id,
      type,
      title: `${a.charAt(0).toUpperCase()}${a.slice(1)} ${b} ${TYPE_NOUNS[type]}`,
      access,
      summary: prose(400),
      tags: [pick(TAGS), pick(TAGS)].filter((tag, k, all) => all.indexOf(tag) === k),
      ...(i % 3 === 0 ? { metadata: { Owner: pick(OWNERS), Score: Math.floor(random() * 10) } } : {}),
      ...(i % 4 === 0 ? { freshness: { verified: '2026-03-01', review_by: i % 8 === 0 ? '2026-06-01' : '2030-06-01' } } : {}),
      ...(i % 50 === 7 ? { mark: 'inferred' } : {}),
    });
    if (i > 0) relate(id, pick(publicIds));
    if (i > 1) relate(nodes[Math.floor(random() * i)]!.id as string, id);
    if (i % 100 === 1) relate('department:Operations', id);
    if (access === 'public') publicIds.push(id);
  }
  const text = `${JSON.stringify({ nodes, relations: [...relations.values()] }, null, 0)}\n`;
  return { text, nodes: nodes.length, relations: relations.size, visible };
}

/** The KB's files: notes in folders, PNGs, and a few large binary files. */
function vaultFiles(): { path: string; bytes: Buffer }[] {
  const files: { path: string; bytes: Buffer }[] = [];
  for (let n = 0; n < SIZES.notes; n += 1) {
    const other = (n * 7919 + 13) % SIZES.notes;
    const image = n % Math.max(1, Math.floor(SIZES.notes / SIZES.images)) === 0 ? `\n![[image-${n % SIZES.images}.png]]\n` : '';
    const text = `---\ntitle: Note ${n}\ntags: [area-${n % SIZES.noteFolders}, bench]\n---\n# Note ${n}\n\nSee [[Note ${other}]].\n${image}\n${paragraphs(1900)}\n`;
    files.push({ path: `Area ${n % SIZES.noteFolders}/Note ${n}.md`, bytes: Buffer.from(text, 'utf8') });
  }
  for (let i = 0; i < SIZES.images; i += 1) files.push({ path: `attachments/image-${i}.png`, bytes: noisePng(160, 120) });
  for (let i = 0; i < SIZES.largeFiles; i += 1) files.push({ path: `archive/dump-${i}.bin`, bytes: randomBytes(1536 * 1024) });
  return files;
}

// ---------------------------------------------------------------------------------------------
// Stores, processes

interface Store {
  readonly name: 'source' | 'local' | 'target';
  readonly env: NodeJS.ProcessEnv;
  /** The PostgreSQL database made for it, dropped at the end. */
  readonly database: string | undefined;
}

const BENCH_STARTED = performance.now();
const elapsed = (since: number): number => (performance.now() - since) / 1000;
const log = (line: string): void => void process.stderr.write(`bench ${elapsed(BENCH_STARTED).toFixed(0).padStart(5)} s: ${line}\n`);

/** The store's operations, in this process (or through its gateway's admin endpoint while one serves a PGlite folder). */
const ops = <T>(store: Store, work: (run: OpRunner) => Promise<T>): Promise<T> => withOps(loadConfig(store.env, ROOT), work);

/** Waits until the store's projections have nothing left to apply (at most 30 minutes); the seconds it took. */
async function drained(store: Store): Promise<number> {
  const started = performance.now();
  let said = false;
  for (const deadline = Date.now() + 30 * 60_000; ;) {
    const status = await ops(store, (run) => run('projections.status'));
    const backlog = status.reduce((sum, projection) => sum + projection.backlog, 0);
    if (backlog === 0) return (performance.now() - started) / 1000;
    const failing = status.filter((projection) => projection.lastError !== null && projection.failing > 0);
    if (failing.length > 0 && !said) {
      said = true;
      log(`projections failing at the ${store.name}: ${failing.map((p) => `${p.projection}: ${p.lastError ?? ''}`).join('; ')}`);
    }
    if (Date.now() > deadline) throw new Error(`the ${store.name}'s projections still had ${backlog} rows after 30 minutes`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

// ---------------------------------------------------------------------------------------------
// The command reports, as far as the bench reads them

interface Refusal {
  readonly name?: string;
  readonly path?: string;
  readonly kb?: string;
  readonly kind?: string;
  readonly reason: string;
}

interface ImportKind {
  read: number;
  created: number;
  updated: number;
  unchanged: number;
  versions_saved: number;
  failed: Refusal[];
}
type AlignbaseImport = Partial<Record<'knowledge' | 'skills' | 'memories' | 'artifacts', ImportKind>>;

interface BrainCounts {
  read: number;
  created: number;
  updated: number;
  unchanged: number;
  hidden: number;
  refused: Refusal[];
}
interface BrainImport {
  nodes: BrainCounts & { directory: number; unreached: number };
  relations: BrainCounts;
  failed: Refusal[];
  sweep: { queries: number; stopped: string | null };
}

interface AtminaExport {
  kbs: { local: string; files: number; bytes: number; created: number; updated: number; unchanged: number; failed: Refusal[] }[];
  failed: Refusal[];
}

interface AlignbaseExport {
  kinds: { kind: string; resources: number; created: number; updated: number; unchanged: number; failed: Refusal[]; not_carried: Refusal[] }[];
  failed: Refusal[];
}

const MiB = 1024 * 1024;
const round = (value: number, digits = 1): number => Number(value.toFixed(digits));

/** Seconds, exit code and rates of one run: each count with its rate (`nodes` gives `nodes_per_s`), and MiB and MiB/s of `bytes`. */
function rates(run: Timed, counts: Record<string, number>, bytes?: number): Record<string, number> {
  const out: Record<string, number> = { seconds: round(run.seconds), exit_code: run.code };
  for (const [name, count] of Object.entries(counts)) {
    out[name] = count;
    out[`${name}_per_s`] = round(count / run.seconds);
  }
  if (bytes !== undefined) {
    out['mib'] = round(bytes / MiB, 2);
    out['mib_per_s'] = round(bytes / MiB / run.seconds, 3);
  }
  return out;
}

/** Says what a run refused (a bench over a well-formed source should refuse nothing). */
function refusals(what: string, items: readonly Refusal[]): number {
  if (items.length > 0) {
    log(
      `${what}: ${items.length} refused, the first: ${items
        .slice(0, 3)
        .map((item) => `${item.name ?? item.path ?? item.kb ?? item.kind ?? '?'}: ${item.reason}`)
        .join(' | ')}`,
    );
  }
  return items.length;
}

// ---------------------------------------------------------------------------------------------
// The run

const serverUrl = values['database-url'];
const storeKind = serverUrl === undefined ? 'pglite' : 'postgres';
const work = await mkdtemp(path.join(os.tmpdir(), 'kgw-bench-migration-mcp-'));
const stores: Store[] = [];
const children: ChildProcess[] = [];
try {
  const suffix = randomBytes(4).toString('hex');
  for (const name of ['source', 'local', 'target'] as const) {
    const dataDir = path.join(work, name);
    await mkdir(dataDir, { recursive: true });
    let database: string | undefined;
    let databaseUrl: string | undefined;
    if (serverUrl !== undefined) {
      database = `kgw_bench_mcp_${suffix}_${name}`;
      await adminQuery(serverUrl, `CREATE DATABASE ${database}`);
      const url = new URL(serverUrl);
      url.pathname = `/${database}`;
      databaseUrl = url.toString();
    }
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      KGW_LOG_LEVEL: 'warn',
      KGW_PORT: '1',
      KGW_DATA_DIR: dataDir,
      NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE,
      ...(databaseUrl === undefined ? {} : { DATABASE_URL: databaseUrl }),
    };
    stores.push({ name, env, database });
  }
  const [source, local, target] = stores as [Store, Store, Store];

  // 1. The source: org file, Alignbase context, the brain, a token.
  log(`sizes ${JSON.stringify(SIZES)}, ${storeKind}`);
  const seeding = performance.now();
  const resources = [
    ...Array.from({ length: SIZES.knowledge }, (_, i) => knowledgeOf(i)),
    ...Array.from({ length: SIZES.skills }, (_, i) => skillOf(i)),
    ...Array.from({ length: SIZES.memories }, (_, i) => memoryOf(i)),
    ...Array.from({ length: SIZES.artifacts }, (_, i) => artifactOf(i)),
  ];
  // What an import reads: every version, but a Memory's latest only; what an export sends: each latest version.
  const readable = resources.flatMap((resource) => (resource.type === 'memory' ? resource.versions.slice(-1) : resource.versions));
  const importBytes = readable.reduce((sum, version) => sum + versionBytes(version), 0);
  const exportBytes = resources.reduce((sum, resource) => sum + versionBytes(resource.versions.at(-1)!), 0);
  const brain = brainFile();
  const sourceToken = await ops(source, async (run) => {
    await run('apply', { source: ORG, fileName: 'org.yaml' });
    log('source: org file applied');
    let seeded = 0;
    await mapInParallel(resources, 4, async (resource, i) => {
      await run('context.import', {
        tenant: TENANT,
        as: WRITER,
        source: 'https://seed.bench.invalid/alignbase/mcp',
        type: resource.type,
        source_id: `seed-${resource.type}-${i}`,
        name: resource.name,
        versions: resource.versions,
        ...(resource.published === undefined ? {} : { published_version: resource.published }),
      });
      seeded += 1;
      if (seeded % 250 === 0 || seeded === resources.length) log(`source: ${seeded}/${resources.length} resources seeded`);
    });
    const imported = await run('brain.import', { tenant: TENANT, source: brain.text, fileName: 'brain.json' });
    log(`source: brain of ${brain.nodes} nodes and ${brain.relations} relations seeded (${imported.changes.length} changes)`);
    return (await run('token.create', { tenant: TENANT, principal: WRITER, scopes: 'context.read brain:read', label: 'bench source' })).token;
  });
  const seedSource = elapsed(seeding);

  // 2. The local store: its org file and the KB the atmina export sends.
  const seedingLocal = performance.now();
  const files = vaultFiles();
  const vaultBytes = files.reduce((sum, file) => sum + file.bytes.length, 0);
  await ops(local, async (run) => {
    await run('apply', { source: LOCAL_ORG, fileName: 'org.yaml' });
    for (let i = 0; i < files.length; i += 100) {
      const batch = files.slice(i, i + 100);
      const answer = await run('kb.import', {
        tenant: TENANT,
        kb: 'vault',
        as: WRITER,
        files: batch.map((file) => ({ path: file.path, data_base64: file.bytes.toString('base64') })),
      });
      const failed = answer.files.filter((file) => 'error' in file);
      if (failed.length > 0) throw new Error(`seeding the KB refused ${failed.length} files: ${JSON.stringify(failed.slice(0, 3))}`);
    }
    log(`local: KB vault of ${files.length} files (${round(vaultBytes / MiB)} MiB) seeded`);
  });

  const seedLocal = elapsed(seedingLocal);

  // 3. The target: its org file and a token.
  const seedingTarget = performance.now();
  const targetToken = await ops(target, async (run) => {
    await run('apply', { source: ORG, fileName: 'org.yaml' });
    return (await run('token.create', { tenant: TENANT, principal: WRITER, scopes: 'context.write', label: 'bench target' })).token;
  });
  const seedTarget = elapsed(seedingTarget);

  // 4. Imports: the source served, read into the local store.
  const served = await serve(source.env, 'kgw serve (source)');
  children.push(served.child);
  log(`source served at ${served.url}; waiting for its projections`);
  const projectedSeconds = await drained(source);
  const importEnv = { ...local.env, KGW_IMPORT_TOKEN: sourceToken };
  const importArgs = (dialect: string) => [
    'import',
    'mcp',
    '--from',
    `${served.url}/${dialect}/mcp`,
    '--dialect',
    dialect,
    '--tenant',
    TENANT,
    '--as',
    WRITER,
    '--json',
  ];
  log('import mcp --dialect alignbase');
  const alignbaseFirst = await kgw(importArgs('alignbase'), importEnv, { refusals: true });
  log(`  ${round(alignbaseFirst.seconds)} s; again`);
  const alignbaseAgain = await kgw(importArgs('alignbase'), importEnv, { refusals: true });
  log(`  ${round(alignbaseAgain.seconds)} s; import mcp --dialect brain`);
  const brainFirst = await kgw(importArgs('brain'), importEnv, { refusals: true });
  log(`  ${round(brainFirst.seconds)} s; again`);
  const brainAgain = await kgw(importArgs('brain'), importEnv, { refusals: true });
  log(`  ${round(brainAgain.seconds)} s`);
  await stop(served.child);

  // 5. Exports: the target served, written from the local store.
  const targetServed = await serve(target.env, 'kgw serve (target)');
  children.push(targetServed.child);
  const exportEnv = { ...local.env, KGW_EXPORT_TOKEN: targetToken };
  const exportArgs = (dialect: string) => ['export', 'mcp', '--to', `${targetServed.url}/${dialect}/mcp`, '--dialect', dialect, '--tenant', TENANT, '--json'];
  log('export mcp --dialect atmina');
  const atminaFirst = await kgw(exportArgs('atmina'), exportEnv, { refusals: true });
  log(`  ${round(atminaFirst.seconds)} s; again`);
  const atminaAgain = await kgw(exportArgs('atmina'), exportEnv, { refusals: true });
  log(`  ${round(atminaAgain.seconds)} s; export mcp --dialect alignbase`);
  const exportFirst = await kgw(exportArgs('alignbase'), exportEnv, { refusals: true });
  log(`  ${round(exportFirst.seconds)} s; again`);
  const exportAgain = await kgw(exportArgs('alignbase'), exportEnv, { refusals: true });
  log(`  ${round(exportAgain.seconds)} s`);
  await stop(targetServed.child);

  // 6. The figures.
  const importFigures = (run: Timed) => {
    const report = JSON.parse(run.stdout) as AlignbaseImport;
    // The report holds the kinds beside from, dialect, tenant and not_carried.
    const kinds = (['knowledge', 'skills', 'memories', 'artifacts'] as const).flatMap((kind) => report[kind] ?? []);
    const sum = (field: 'read' | 'created' | 'updated' | 'unchanged' | 'versions_saved') => kinds.reduce((total, kind) => total + kind[field], 0);
    const saved = sum('versions_saved');
    return {
      // Bytes: what the saved versions hold (all of them on a first run; none when nothing was new).
      ...rates(run, { resources: sum('read'), versions: saved }, saved === 0 ? 0 : importBytes),
      created: sum('created'),
      updated: sum('updated'),
      unchanged: sum('unchanged'),
      refused: refusals(
        'import alignbase',
        kinds.flatMap((kind) => kind.failed),
      ),
    };
  };
  const brainFigures = (run: Timed) => {
    const report = JSON.parse(run.stdout) as BrainImport;
    return {
      ...rates(run, { nodes: report.nodes.read, relations: report.relations.read }),
      nodes_created: report.nodes.created,
      nodes_unchanged: report.nodes.unchanged,
      nodes_hidden: report.nodes.hidden,
      nodes_unreached: report.nodes.unreached,
      relations_created: report.relations.created,
      relations_unchanged: report.relations.unchanged,
      relations_hidden: report.relations.hidden,
      sweep_queries: report.sweep.queries,
      refused: refusals('import brain', [...report.nodes.refused, ...report.relations.refused, ...report.failed]),
    };
  };
  const atminaFigures = (run: Timed) => {
    const report = JSON.parse(run.stdout) as AtminaExport;
    const kb = report.kbs.find((item) => item.local === 'vault');
    if (kb === undefined) throw new Error(`export mcp --dialect atmina did not report the KB vault: ${run.stdout.slice(0, 2000)}`);
    return {
      ...rates(run, { files: kb.files }, kb.bytes),
      created: kb.created,
      updated: kb.updated,
      unchanged: kb.unchanged,
      refused: refusals('export atmina', [...kb.failed, ...report.failed]),
    };
  };
  const exportFigures = (run: Timed) => {
    const report = JSON.parse(run.stdout) as AlignbaseExport;
    const sum = (field: 'resources' | 'created' | 'updated' | 'unchanged') => report.kinds.reduce((total, kind) => total + kind[field], 0);
    const written = sum('created') + sum('updated');
    return {
      // One version written per resource created or changed: the latest, with its files.
      ...rates(run, { resources: sum('resources'), versions: written }, written === 0 ? 0 : exportBytes),
      created: sum('created'),
      updated: sum('updated'),
      unchanged: sum('unchanged'),
      not_carried: report.kinds.reduce((total, kind) => total + kind.not_carried.length, 0),
      refused: refusals('export alignbase', [...report.kinds.flatMap((kind) => kind.failed), ...report.failed]),
    };
  };

  const result = {
    suite: 'migration-mcp',
    store: storeKind,
    date: new Date().toISOString(),
    machine: machineInfo(),
    ...(serverUrl === undefined ? {} : { server: await serverSettings(serverUrl) }),
    load_average: os.loadavg().map((value) => round(value, 2)),
    scale: SCALE,
    sizes: {
      ...SIZES,
      alignbase_resources: resources.length,
      alignbase_versions: resources.reduce((sum, resource) => sum + resource.versions.length, 0),
      alignbase_versions_readable: readable.length,
      alignbase_mib_readable: round(importBytes / MiB, 2),
      alignbase_mib_latest: round(exportBytes / MiB, 2),
      brain_relations: brain.relations,
      brain_nodes_visible: brain.visible,
      vault_files: files.length,
      vault_mib: round(vaultBytes / MiB, 2),
    },
    // Making the stores (migrations included) and seeding them in this process: not part of any figure.
    seed_seconds: { source: round(seedSource), local: round(seedLocal), target: round(seedTarget) },
    source_projections_drained_seconds: round(projectedSeconds),
    import_mcp_alignbase: importFigures(alignbaseFirst),
    import_mcp_alignbase_again: importFigures(alignbaseAgain),
    import_mcp_brain: brainFigures(brainFirst),
    import_mcp_brain_again: brainFigures(brainAgain),
    export_mcp_atmina: atminaFigures(atminaFirst),
    export_mcp_atmina_again: atminaFigures(atminaAgain),
    export_mcp_alignbase: exportFigures(exportFirst),
    export_mcp_alignbase_again: exportFigures(exportAgain),
    total_seconds: round(elapsed(BENCH_STARTED)),
  };
  const out = values.out ?? path.join(ROOT, 'bench', 'results', `migration-mcp-${storeKind}.json`);
  await writeFile(out, `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  log(`wrote ${path.relative(process.cwd(), out)}`);
} finally {
  for (const child of children) await stop(child);
  if (serverUrl !== undefined)
    for (const store of stores) if (store.database !== undefined) await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${store.database} WITH (FORCE)`);
  await rm(work, { recursive: true, force: true });
}
