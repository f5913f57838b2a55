import { createHash } from 'node:crypto';
import type { ReferencedFiles } from '../src/kernel/org/referenced-files.ts';
import type { Db } from '../src/store/db.ts';
import { ORG_YAML, field, toolCall } from './scenarios.ts';

/**
 * The files suite: Atmina's write_file and read_file over `/atmina/mcp`, as an Editor of one
 * KB. The parent seeds the KB through the org file's `kbs:` section (with one 1 KiB file from
 * `files_from`, as `kgw apply` would send it), generates a new path and content for every
 * write, and checks every answer against what it sent.
 */

export const FILE_BYTES = 1024;
export const FILES_KB = 'bench';
/** release-bot is an Editor of the docs team in the example org file; writing needs context.write. */
export const FILES_CALLER = { tenant: 'acme', principal: 'release-bot', scopes: ['context.read', 'context.write'] } as const;
export const SEED_PATH = 'seed.md';
/** Where the writes go: `writes/<n>.md`, a new n for every request of the suite. */
const WRITES_PREFIX = 'writes/';

/** The example org file with one team KB added, seeded from the folder `bench-kb`. */
export const FILES_ORG_YAML = `${ORG_YAML}kbs:
  - slug: ${FILES_KB}
    name: Bench
    team: docs
    files_from: ./bench-kb
`;

const FILLER = 'The quick brown fox jumps over the lazy dog; pack my box with five dozen liquor jugs.\n';

/** Exactly FILE_BYTES of ASCII Markdown naming `label`, so every path gets bytes of its own. */
export function benchContent(label: string): string {
  const head = `# ${label}\n\n`;
  const body = FILLER.repeat(Math.ceil(FILE_BYTES / FILLER.length)).slice(0, FILE_BYTES - head.length - 1);
  return `${head}${body}\n`;
}

export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

export const SEED_CONTENT = benchContent(SEED_PATH);

/** The seeded folder as the CLI reads it for applyOrgFile (readReferencedFiles). */
export const SEED_FILES: ReferencedFiles = {
  'bench-kb': { folder: [{ path: SEED_PATH, data_base64: Buffer.from(SEED_CONTENT).toString('base64') }] },
};

export const READ_BODY = toolCall('read_file', { kb_id: FILES_KB, path: SEED_PATH });

/** The structured content of a tool's answer, or why the answer is not a successful result. */
function structured(body: string): { readonly content: unknown } | { readonly problem: string } {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { problem: `body is not JSON: ${body.slice(0, 200)}` };
  }
  const result = field(json, 'result');
  if (result === undefined) return { problem: `no JSON-RPC result: ${body.slice(0, 200)}` };
  const isError = field(result, 'isError');
  if (isError !== undefined && isError !== false) return { problem: `tool error: ${body.slice(0, 200)}` };
  const content = field(result, 'structuredContent');
  if (content === undefined) return { problem: `no structured content: ${body.slice(0, 200)}` };
  return { content };
}

/** Why an answer is not read_file's of the seeded file, or undefined when it is. */
export function checkRead(body: string): string | undefined {
  const answer = structured(body);
  if ('problem' in answer) return answer.problem;
  const file = answer.content;
  if (field(file, 'path') !== SEED_PATH) return `path is not ${SEED_PATH}: ${body.slice(0, 200)}`;
  if (field(file, 'size_bytes') !== FILE_BYTES) return `size_bytes is not ${FILE_BYTES}`;
  if (field(file, 'sha256') !== sha256(SEED_CONTENT)) return 'sha256 is not the seeded content’s';
  if (field(file, 'content') !== SEED_CONTENT) return 'content is not the seeded content';
  return undefined;
}

/**
 * The write_file load: a new path and new content for each request, and the check of each
 * answer against the request that asked for that path. An answer counts only once.
 */
export class WriteLoad {
  private next = 0;
  /** Paths sent and not yet answered, with the SHA-256 of what was sent there. */
  private readonly pending = new Map<string, string>();
  /** Paths whose write was answered as expected. */
  readonly acknowledged = new Set<string>();
  /** The first answer that failed its check, for the report. */
  firstProblem: string | undefined;

  /** The JSON-RPC body of the next write. */
  body(): string {
    this.next += 1;
    const path = `${WRITES_PREFIX}${this.next}.md`;
    const content = benchContent(path);
    this.pending.set(path, sha256(content));
    return toolCall('write_file', { kb_id: FILES_KB, path, mode: 'create', content });
  }

  /** Why an answer is not the successful create of a path sent, or undefined when it is. */
  check(body: string): string | undefined {
    const problem = this.problemOf(body);
    if (problem !== undefined) this.firstProblem ??= problem;
    return problem;
  }

  private problemOf(body: string): string | undefined {
    const answer = structured(body);
    if ('problem' in answer) return answer.problem;
    const written = answer.content;
    const path = field(written, 'path');
    const expected = typeof path === 'string' ? this.pending.get(path) : undefined;
    if (typeof path !== 'string' || expected === undefined) return `path ${JSON.stringify(path)} was not sent or was answered before`;
    if (field(written, 'size_bytes') !== FILE_BYTES) return `size_bytes of ${path} is not ${FILE_BYTES}`;
    if (field(written, 'sha256') !== expected) return `sha256 of ${path} is not the sent content’s`;
    if (field(written, 'operation') !== 'create' || field(written, 'version') !== 1 || field(written, 'changed') !== true)
      return `${path} was not created as version 1: ${body.slice(0, 200)}`;
    this.pending.delete(path);
    this.acknowledged.add(path);
    return undefined;
  }

  /** Paths sent whose answer never came (the load stopped while they were in flight). */
  get unanswered(): ReadonlySet<string> {
    return new Set(this.pending.keys());
  }
}

/** What the store holds after the write_file scenario, compared with the answers. */
export interface WrittenCheck {
  /** Live files under writes/ in the bench KB. */
  readonly files: number;
  /** Their saved versions. */
  readonly versions: number;
  /** Writes answered as expected. */
  readonly acknowledged: number;
  /** Files whose write was sent but not answered before the load stopped (the server finished them). */
  readonly writtenUnanswered: number;
  /** Acknowledged paths the store does not hold. */
  readonly missing: number;
  /** Files at paths never sent, with other than one version, or with other bytes than sent. */
  readonly unexpected: number;
  /** Every acknowledged write is one file with one version, and the store holds nothing else. */
  readonly linear: boolean;
}

export async function checkWritten(db: Db, load: WriteLoad): Promise<WrittenCheck> {
  const rows = await db.query<{ path: string; latest_version: number; sha256: string; versions: number }>(
    `SELECT f.path, f.latest_version, f.sha256,
            (SELECT count(*)::int FROM kb_file_versions v WHERE v.tenant_id = f.tenant_id AND v.file_id = f.id) AS versions
       FROM kb_files f
       JOIN kbs k ON k.tenant_id = f.tenant_id AND k.id = f.kb_id
       JOIN tenants t ON t.id = k.tenant_id
      WHERE t.slug = $1 AND k.slug = $2 AND f.path LIKE $3 AND f.deleted_at IS NULL`,
    [FILES_CALLER.tenant, FILES_KB, `${WRITES_PREFIX}%`],
  );
  const stored = new Set(rows.map((row) => row.path));
  const unanswered = load.unanswered;
  const unexpected = rows.filter(
    (row) =>
      (!load.acknowledged.has(row.path) && !unanswered.has(row.path)) ||
      row.latest_version !== 1 ||
      row.versions !== 1 ||
      row.sha256 !== sha256(benchContent(row.path)),
  ).length;
  const missing = [...load.acknowledged].filter((path) => !stored.has(path)).length;
  return {
    files: rows.length,
    versions: rows.reduce((sum, row) => sum + row.versions, 0),
    acknowledged: load.acknowledged.size,
    writtenUnanswered: rows.filter((row) => unanswered.has(row.path)).length,
    missing,
    unexpected,
    linear: missing === 0 && unexpected === 0,
  };
}
