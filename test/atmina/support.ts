import assert from 'node:assert/strict';
import { drainedOutbox } from '../support/gateway.ts';
import { createHash } from 'node:crypto';
import { Agent, OrgGateway, backendLabel, s3GatewayEnv } from '../support/harness.ts';
import type { StoreBackend } from '../support/stores.ts';

/*
 * Shared setup of the Atmina Knowledge-Base suites: one store and one gateway per describe, the
 * tenants below applied through the org file, real tokens and the MCP SDK's own client over
 * HTTP on /atmina/mcp (PGlite with the disk blob store; PostgreSQL with MinIO when configured).
 * The gateway runs no projections, so the outbox keeps every row the writes enqueue.
 *
 * Tenant acme, its teams and who is what (agents act for Alice):
 *
 *   docs     admin-bot Admin, editor-bot Editor, viewer-bot Viewer, capped-bot Admin with a
 *            Viewer policy, multi-bot Admin; shares every KB with share-bot (Editor) and with
 *            team eng (Viewer)
 *   support  support-bot Admin, multi-bot Admin, editor-bot Viewer
 *   eng      eng-bot Viewer
 *   (none)   outsider-bot
 *
 * Tenant globex: globex-bot, Admin of its team ops.
 */

export const ATMINA_PATH = '/atmina/mcp';
export { backendLabel };

export const ACME_KB_ORG = `tenant: acme
name: Acme Inc.
people:
  - { email: alice@acme.test, name: Alice }
agents:
  - { name: admin-bot, owner: alice@acme.test }
  - { name: editor-bot, owner: alice@acme.test }
  - { name: viewer-bot, owner: alice@acme.test }
  - { name: capped-bot, owner: alice@acme.test, policy: { max_team_role: viewer } }
  - { name: multi-bot, owner: alice@acme.test }
  - { name: support-bot, owner: alice@acme.test }
  - { name: share-bot, owner: alice@acme.test }
  - { name: eng-bot, owner: alice@acme.test }
  - { name: outsider-bot, owner: alice@acme.test }
teams:
  - slug: docs
    name: Docs team
    members: { alice@acme.test: admin, admin-bot: admin, editor-bot: editor, viewer-bot: viewer, capped-bot: admin, multi-bot: admin }
    shares:
      - { with: share-bot, role: editor }
      - { with: team:eng, role: viewer }
  - slug: support
    name: Support
    members: { support-bot: admin, multi-bot: admin, editor-bot: viewer }
  - slug: eng
    name: Engineering
    members: { eng-bot: viewer }
`;

export const GLOBEX_KB_ORG = `tenant: globex
name: Globex
people:
  - { email: hank@globex.test, name: Hank }
agents:
  - { name: globex-bot, owner: hank@globex.test }
teams:
  - slug: ops
    name: Operations
    members: { globex-bot: admin }
`;

export const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

export interface KbWire {
  kb_id: string;
  slug: string;
  name: string;
  description: string;
  visibility: string;
  location_policy: string;
  team: { team_id: string; slug: string; name: string };
  role: string;
  created_at: string;
  updated_at: string;
}

export interface WriteWire {
  kb_id: string;
  file_id: string;
  path: string;
  version: number;
  sha256: string;
  etag: string;
  size_bytes: number;
  changed: boolean;
  operation: string;
}

export interface ReadWire extends Omit<WriteWire, 'changed' | 'operation'> {
  content: string;
  media_type: string;
  kind: string;
  updated_at: string;
}

/** The gateway of acme and globex, with clients on /atmina/mcp. */
export class KbSuite extends OrgGateway {
  readonly #agents = new Map<string, Promise<Agent>>();

  /**
   * `env` adds to the gateway's environment (as the blob store's), e.g. a short upload URL
   * lifetime. By default no projection drains the outbox, so the suites can read what each
   * write enqueued; `projections: true` runs the configured ones (search, graph), polled often
   * (every `idleMs`, default 10 ms).
   */
  static async open(backend: StoreBackend, env: Record<string, string> = {}, options: { projections?: boolean; idleMs?: number } = {}): Promise<KbSuite> {
    const { store, running } = await OrgGateway.launch(
      backend,
      [ACME_KB_ORG, GLOBEX_KB_ORG],
      { ...s3GatewayEnv(backend), ...env },
      options.projections === true
        ? { outboxWorker: { idleMs: options.idleMs ?? 10, backoff: { baseMs: 20, maxMs: 500 } } }
        : { projections: { projections: [], rebuilders: [] } },
    );
    return new KbSuite(store, running, 'acme', ATMINA_PATH);
  }

  /** Waits until the outbox worker has applied every row (a minute at most), so search shows every write. */
  async settled(): Promise<void> {
    await drainedOutbox(this.db);
  }

  /** A connected client of an agent on /atmina/mcp (cached per tenant, agent and scopes). */
  override agent(principal: string, scopes = 'context.read context.write', tenant = this.tenant): Promise<Agent> {
    const key = `${tenant}\n${principal}\n${scopes}`;
    let agent = this.#agents.get(key);
    if (agent === undefined) {
      agent = this.connect(principal, scopes, { tenant, path: ATMINA_PATH });
      this.#agents.set(key, agent);
    }
    return agent;
  }

  /** A KB of team docs made by admin-bot, with a name no other test uses. */
  async kb(extra: Record<string, unknown> = {}, by = 'admin-bot'): Promise<KbWire> {
    const admin = await this.agent(by);
    return admin.ok<KbWire>('create_kb', { name: this.unique('Handbook'), team: 'docs', ...extra });
  }

  /** Creates a file as admin-bot. */
  async file(kbId: string, path: string, content: string): Promise<WriteWire> {
    const admin = await this.agent('admin-bot');
    return admin.ok<WriteWire>('write_file', { kb_id: kbId, path, mode: 'create', content });
  }

  /** Every row of the KB tables of a tenant, to show that a refused call changed nothing. */
  async snapshot(tenant = this.tenant): Promise<unknown> {
    const tenantId = await this.tenantIdOf(tenant);
    const [kbs, files, versions, contributions, outbox] = await Promise.all([
      this.db.query('SELECT id, slug, name, description, visibility, location_policy, archived_at::text FROM kbs WHERE tenant_id = $1 ORDER BY id', [tenantId]),
      this.db.query('SELECT id, path, latest_version, sha256, deleted_at::text FROM kb_files WHERE tenant_id = $1 ORDER BY id', [tenantId]),
      this.db.query('SELECT file_id, version, sha256, operation FROM kb_file_versions WHERE tenant_id = $1 ORDER BY file_id, version', [tenantId]),
      this.db.query('SELECT kb_id, principal_id, last_write_at::text FROM kb_contributions WHERE tenant_id = $1 ORDER BY kb_id, principal_id', [tenantId]),
      this.db.query('SELECT count(*)::int AS n FROM outbox WHERE tenant_id = $1', [tenantId]),
    ]);
    return { kbs, files, versions, contributions, outbox };
  }
}

/** Paths a KB refuses, each with the start of the reason it gives. */
export const HOSTILE_PATHS: readonly { readonly name: string; readonly path: string; readonly problem: string }[] = [
  { name: 'empty', path: '', problem: 'must not be empty' },
  { name: 'absolute', path: '/etc/passwd', problem: 'must be relative' },
  { name: 'parent segment', path: '../escape.md', problem: 'must not have . or .. segments' },
  { name: 'parent segment inside', path: 'a/../../b.md', problem: 'must not have . or .. segments' },
  { name: 'dot segment', path: 'a/./b.md', problem: 'must not have . or .. segments' },
  { name: 'trailing slash', path: 'folder/', problem: 'must not have empty segments' },
  { name: 'doubled slash', path: 'a//b.md', problem: 'must not have empty segments' },
  { name: 'backslash', path: 'a\\..\\b.md', problem: 'must use / between folders' },
  { name: 'NUL', path: 'a\u0000.md', problem: 'must not contain control characters' },
  { name: 'newline', path: 'a\nb.md', problem: 'must not contain control characters' },
  { name: 'escape', path: '\u001b[31mred.md', problem: 'must not contain control characters' },
  { name: 'DEL', path: 'a\u007f.md', problem: 'must not contain control characters' },
  { name: 'C1 control', path: 'a\u009b.md', problem: 'must not contain control characters' },
  { name: 'right-to-left override', path: 'invoice\u202etxt.md', problem: 'must not contain invisible format characters' },
  { name: 'bidi isolate', path: 'a\u2067b.md', problem: 'must not contain invisible format characters' },
  { name: 'zero-width space', path: 'read\u200bme.md', problem: 'must not contain invisible format characters' },
  { name: 'byte-order mark', path: '\ufeffa.md', problem: 'must not contain invisible format characters' },
  { name: 'line separator', path: 'a\u2028b.md', problem: 'must not contain line or paragraph separators' },
  { name: 'lone surrogate', path: 'a\ud800.md', problem: 'must be well-formed Unicode' },
  { name: 'trailing space', path: 'notes.md ', problem: 'must not have segments that start or end with a space' },
  { name: 'segment of 256 bytes', path: `${'a'.repeat(253)}.md`, problem: 'must have segments of at most 255 bytes' },
  { name: 'path over 1024 bytes', path: Array.from({ length: 11 }, () => 'a'.repeat(99)).join('/'), problem: 'must be at most 1024 bytes' },
  { name: '33 segments', path: Array.from({ length: 33 }, () => 'a').join('/'), problem: 'must be at most 32 segments deep' },
  { name: 'a huge path', path: 'a'.repeat(10_000_000), problem: 'must be at most 1024 bytes' },
];

/** Asserts an Atmina error text: its code, and (when given) a part of its message. */
export function assertAtminaError(text: string, code: string, part?: string | RegExp): void {
  assert.ok(text.startsWith(`${code}: `), `expected "${code}: …", got ${text}`);
  if (typeof part === 'string') assert.ok(text.includes(part), `expected ${JSON.stringify(part)} in ${text}`);
  else if (part !== undefined) assert.match(text, part);
}

export { Agent };
