import assert from 'node:assert/strict';
import { randomBytes, randomInt } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type pg from 'pg';
import { orgGraph } from '../../src/brain/org-graph.ts';
import type { TokenInfo } from '../../src/kernel/tokens/tokens.ts';
import type { CliStore } from '../cli/support.ts';
import { INITIALIZE, kgw, postgresBackend, writeIn } from '../cli/support.ts';
import type { KgwProcess } from '../support/kgw-process.ts';
import { callOk, callTool, closeAll, createTokenCli, kgwOk, mcpClient, sleep, startKgw, textOf, until, withPg } from '../support/kgw-process.ts';

/*
 * Two `kgw serve` processes on different ports over ONE PostgreSQL database, as replicas run:
 * (a) compare-and-set writers on both gateways write the same Knowledge: no lost update, a
 *     contiguous history, every acknowledged write stored as acknowledged;
 * (b) both gateways drain the one outbox: every graph row is applied once, the graph equals
 *     the directory, and the per-projection applied count is not doubled. Test-only triggers
 *     in this test's own database log every outbox insert and every graph-table write, with the
 *     application_name of the connection that made it (each gateway gets its own through
 *     DATABASE_URL);
 * (c) a token revoked through the CLI is refused (401) by the other gateway on its very next
 *     request.
 */

const CONFLICT = 'version conflict: read the Knowledge again before writing';
const MCP = '/alignbase/mcp';
const TENANT = 'rep';
const WRITERS_PER_GATEWAY = 4;
const WRITES_PER_WRITER = 6;
const GRAPH_TENANTS = 4;

const ORG = `tenant: ${TENANT}
name: Replica Co
people:
  - { email: owner@rep.test, name: Owner, departments: [ops] }
agents:
  - { name: writer-a, owner: owner@rep.test }
  - { name: writer-b, owner: owner@rep.test }
  - { name: revoked-bot, owner: owner@rep.test }
grants:
  - { to: writer-a, on: all_knowledge, role: editor }
  - { to: writer-b, on: all_knowledge, role: editor }
`;

/**
 * A tenant with a directory big enough for many outbox rows: `size` people in departments and
 * projects, 8 agents. `variant` 2 moves people and agents around and drops a department and a
 * project, so the second apply enqueues relation and node deletes as well as upserts.
 */
function graphOrg(tenant: number, variant: 1 | 2, size = 24): string {
  const departments = variant === 1 ? 4 : 3;
  const projects = variant === 1 ? 3 : 2;
  const people = Array.from({ length: size }, (_, n) => {
    const department = `dept-${(n + variant - 1) % departments}`;
    const project = `proj-${(n * variant) % projects}`;
    return `  - { email: p${n}@g${tenant}.test, name: Person ${n}, departments: [${department}], projects: [${n % 5 === 0 ? '' : project}] }`;
  });
  const agents = Array.from({ length: 8 }, (_, k) => `  - { name: bot-${k}, owner: p${(k * 3 + variant - 1) % 24}@g${tenant}.test }`);
  return `tenant: graph-${tenant}\nname: Graph ${tenant}\npeople:\n${people.join('\n')}\nagents:\n${agents.join('\n')}\n`;
}

/** Test-only logs of this test's own database: what was enqueued, and every write to the graph tables and by whom. */
const LOGS = `
CREATE TABLE test_outbox_enqueued (outbox_id bigint NOT NULL, tenant_id uuid NOT NULL, projection text NOT NULL, operation text NOT NULL);
CREATE FUNCTION test_log_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO test_outbox_enqueued VALUES (NEW.id, NEW.tenant_id, NEW.projection, NEW.operation);
  RETURN NULL;
END $$;
CREATE TRIGGER test_log_outbox AFTER INSERT ON outbox FOR EACH ROW EXECUTE FUNCTION test_log_outbox();
CREATE TABLE test_graph_writes (seq bigserial PRIMARY KEY, tenant_id uuid NOT NULL, kind text NOT NULL, id text NOT NULL, op text NOT NULL, app text NOT NULL, txid bigint NOT NULL);
CREATE FUNCTION test_log_graph() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    INSERT INTO test_graph_writes (tenant_id, kind, id, op, app, txid) VALUES (OLD.tenant_id, TG_TABLE_NAME, OLD.id, TG_OP, current_setting('application_name'), txid_current());
  ELSE
    INSERT INTO test_graph_writes (tenant_id, kind, id, op, app, txid) VALUES (NEW.tenant_id, TG_TABLE_NAME, NEW.id, TG_OP, current_setting('application_name'), txid_current());
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER test_log_graph AFTER INSERT OR UPDATE OR DELETE ON graph_nodes FOR EACH ROW EXECUTE FUNCTION test_log_graph();
CREATE TRIGGER test_log_graph AFTER INSERT OR UPDATE OR DELETE ON graph_relations FOR EACH ROW EXECUTE FUNCTION test_log_graph();
`;

type Written = { knowledge_id: string; version_id: string; version: number; updated: boolean; created: boolean };

interface Attempt {
  readonly gateway: 'a' | 'b';
  readonly writer: number;
  readonly expected: number;
  readonly content: string;
  outcome: 'acked' | 'conflict' | 'pending';
  version?: number;
  versionId?: string;
}

const postgres = postgresBackend();

describe('two gateways over one PostgreSQL database', { skip: postgres === undefined ? 'KGW_TEST_DATABASE_URL is not set' : false, timeout: 180_000 }, () => {
  let store: CliStore;
  let databaseUrl: string;
  let a: KgwProcess | undefined;
  let b: KgwProcess | undefined;
  const envs: Record<'a' | 'b', Record<string, string>> = { a: {}, b: {} };
  const sql = <R>(text: string, params: unknown[] = []): Promise<R[]> => withPg(databaseUrl, async (client) => (await client.query(text, params)).rows as R[]);

  before(async () => {
    assert.ok(postgres);
    store = await postgres.open();
    assert.ok(store.databaseUrl);
    databaseUrl = store.databaseUrl;
    const gatewayEnv = async (name: 'a' | 'b') => {
      // Each replica its own folder (bytes on local disk are per host) and its own application_name.
      const dataDir = path.join(store.dataDir, `replica-${name}`);
      await mkdir(dataDir, { recursive: true });
      envs[name] = { ...store.env, KGW_DATA_DIR: dataDir, DATABASE_URL: `${databaseUrl}?application_name=kgw-replica-${name}` };
    };
    await Promise.all([gatewayEnv('a'), gatewayEnv('b')]);
    // Started together: both migrate the empty database at once.
    [a, b] = await Promise.all([startKgw(envs.a), startKgw(envs.b)]);
    const [migrations] = await sql<{ n: number; distinct_n: number }>(
      'SELECT count(*)::int AS n, count(DISTINCT number)::int AS distinct_n FROM schema_migrations',
    );
    assert.equal(migrations?.n, migrations?.distinct_n, 'each migration applied once');
    await withPg(databaseUrl, (client) => client.query(LOGS));
    await kgwOk(['apply', await writeIn(store.workDir, 'org.yaml', ORG)], store.env);
  });
  after(async () => {
    await Promise.allSettled([a?.stop(), b?.stop()]);
    await store?.dispose();
  });

  it('(a) writers on both gateways lose no update: one linear history with every acknowledged write', async (t) => {
    assert.ok(a && b);
    const gateways = { a, b };
    const [tokenA, tokenB] = await Promise.all(['writer-a', 'writer-b'].map((agent) => createTokenCli(store.env, TENANT, agent, 'context.read context.write')));
    const creator = await mcpClient(`${a.url}${MCP}`, tokenA!);
    const first = await callOk<Written>(creator, 'write_knowledge', { title: 'Shared by replicas', expected_version: 0, content: '# Shared\n' });
    await closeAll([creator]);
    const id = first.knowledge_id;

    const attempts: Attempt[] = [];
    const clients: Client[] = [];
    const deadline = Date.now() + 45_000;
    const writer = async (gateway: 'a' | 'b', w: number): Promise<number> => {
      const client = await mcpClient(`${gateways[gateway].url}${MCP}`, w % 2 === 0 ? tokenA! : tokenB!);
      clients.push(client);
      let acked = 0;
      let conflicts = 0;
      for (let seq = 0; acked < WRITES_PER_WRITER && seq < 500 && Date.now() < deadline; seq++) {
        const { version } = await callOk<{ version: number }>(client, 'read_knowledge', { knowledge_id: id, version: 'latest' });
        const attempt: Attempt = {
          gateway,
          writer: w,
          expected: version,
          content: `gateway ${gateway} writer ${w} seq ${seq}\n${randomBytes(64).toString('hex')}\n`,
          outcome: 'pending',
        };
        attempts.push(attempt);
        const result = await callTool(client, 'write_knowledge', { knowledge_id: id, expected_version: version, content: attempt.content });
        if (result.isError === true) {
          assert.equal(textOf(result), CONFLICT);
          attempt.outcome = 'conflict';
          conflicts += 1;
          await sleep(randomInt(1, Math.min(50, 2 ** Math.min(conflicts, 6)) + 1));
          continue;
        }
        conflicts = 0;
        const written = result.structuredContent as Written;
        assert.deepEqual([written.version, written.updated], [version + 1, true]);
        Object.assign(attempt, { outcome: 'acked', version: written.version, versionId: written.version_id });
        acked += 1;
      }
      return acked;
    };
    const started = Date.now();
    try {
      const done = await Promise.all(Array.from({ length: 2 * WRITERS_PER_GATEWAY }, (_, w) => writer(w < WRITERS_PER_GATEWAY ? 'a' : 'b', w)));
      assert.deepEqual(
        done,
        Array.from({ length: 2 * WRITERS_PER_GATEWAY }, () => WRITES_PER_WRITER),
        'every writer got its writes through',
      );
    } finally {
      await closeAll(clients);
    }
    const elapsed = Date.now() - started;

    const acked = attempts.filter((x) => x.outcome === 'acked');
    const total = 1 + acked.length;
    const rows = await sql<{ version: number; id: string; content: string }>(
      'SELECT version, id::text, content FROM context_versions WHERE resource_id = $1 ORDER BY version',
      [id],
    );
    assert.deepEqual(
      rows.map((r) => Number(r.version)),
      Array.from({ length: total }, (_, n) => n + 1),
      'versions 1..N, one per acknowledged write',
    );
    for (const attempt of acked) {
      const row = rows[attempt.version! - 1];
      assert.deepEqual([row?.content, row?.id], [attempt.content, attempt.versionId], `version ${attempt.version} is the write acknowledged as it`);
    }
    const [head] = await sql<{ latest_version: number }>('SELECT latest_version FROM context_resources WHERE id = $1', [id]);
    assert.equal(Number(head?.latest_version), total);
    // Both gateways read the same head.
    for (const gateway of [a, b]) {
      const client = await mcpClient(`${gateway.url}${MCP}`, tokenA!);
      try {
        const read = await callOk<{ version: number; content: string }>(client, 'read_knowledge', { knowledge_id: id, version: 'latest' });
        assert.deepEqual([read.version, read.content], [total, rows[total - 1]?.content]);
      } finally {
        await closeAll([client]);
      }
    }
    const byGateway = (g: 'a' | 'b') => acked.filter((x) => x.gateway === g).length;
    t.diagnostic(
      `${2 * WRITERS_PER_GATEWAY} writers, ${attempts.length} attempts in ${elapsed} ms: acknowledged ${acked.length} (gateway a ${byGateway('a')}, b ${byGateway('b')}), ` +
        `conflicts ${attempts.filter((x) => x.outcome === 'conflict').length}; stored versions ${rows.length}`,
    );
  });

  it('(b) both gateways drain the outbox: each graph row applied once, the graph equals the directory, applied_total not doubled', async (t) => {
    const counters = async () => {
      const [state] = await sql<{ applied_total: number; last_applied_id: number | null }>(
        "SELECT applied_total, last_applied_id FROM projection_state WHERE projection = 'graph'",
      );
      return {
        appliedTotal: Number(state?.applied_total ?? 0),
        lastApplied: state?.last_applied_id === null || state === undefined ? 0 : Number(state.last_applied_id),
      };
    };
    const backlog = async () => Number((await sql<{ n: number }>("SELECT count(*)::int AS n FROM outbox WHERE projection = 'graph'"))[0]?.n);
    await until('the outbox drained before the applies', async () => ((await backlog()) === 0 ? true : undefined), 30_000, 100);

    /**
     * The replica that wrote the graph last, once a write after `mark` is seen, is killed with
     * SIGKILL: its claim transaction dies with its connections, and the other replica must
     * drain the rest, still applying every row exactly once. Returns the backlog left at the kill.
     */
    const killTheDrainer = async (mark: number): Promise<{ killed: 'a' | 'b'; backlog: number }> => {
      const app = await until(
        'a graph write of this round',
        async () => (await sql<{ app: string }>('SELECT app FROM test_graph_writes WHERE seq > $1 ORDER BY seq DESC LIMIT 1', [mark]))[0]?.app,
        60_000,
        10,
      );
      const killed = app === 'kgw-replica-a' ? 'a' : 'b';
      const left = await backlog();
      const ended = await (killed === 'a' ? a : b)?.kill9();
      assert.equal(ended?.signal, 'SIGKILL');
      return { killed, backlog: left };
    };

    const applyRound = async (round: number, variant: 1 | 2, size = 24, crash = false) => {
      const before = await counters();
      const [marks] = await sql<{ enqueued: number; writes: number }>(
        'SELECT (SELECT coalesce(max(outbox_id), 0) FROM test_outbox_enqueued) AS enqueued, (SELECT coalesce(max(seq), 0) FROM test_graph_writes) AS writes',
      );
      const sinceOutbox = Number(marks?.enqueued ?? 0);
      const files = await Promise.all(
        Array.from({ length: GRAPH_TENANTS }, (_, n) => writeIn(store.workDir, `graph-${n}-${round}.yaml`, graphOrg(n, variant, size))),
      );
      const started = Date.now();
      // Every tenant's apply in its own process at once, while both gateways poll the outbox.
      const [runs, kill] = await Promise.all([
        Promise.all(files.map((file) => kgw(['apply', file], store.env))),
        crash ? killTheDrainer(Number(marks?.writes ?? 0)) : undefined,
      ]);
      for (const run of runs) assert.equal(run.code, 0, run.stderr);
      const applied = Date.now();
      await until('the outbox drained', async () => ((await backlog()) === 0 ? true : undefined), 60_000, 50);
      const drained = Date.now();
      const enqueued = await sql<{ outbox_id: number; operation: string }>(
        "SELECT outbox_id, operation FROM test_outbox_enqueued WHERE projection = 'graph' AND outbox_id > $1",
        [sinceOutbox],
      );
      const writes = await sql<{ tenant_id: string; kind: string; id: string; op: string; app: string; txid: string }>(
        'SELECT tenant_id::text, kind, id, op, app, txid::text FROM test_graph_writes WHERE seq > $1 ORDER BY seq',
        [Number(marks?.writes ?? 0)],
      );
      const after = await counters();
      const upserts = enqueued.filter((e) => e.operation === 'upsert').length;
      const deletes = enqueued.length - upserts;
      assert.ok(enqueued.length > 0);
      // Each enqueued row applied once: one graph-table write per upsert (insert or update) and one per delete.
      assert.equal(writes.filter((w) => w.op !== 'DELETE').length, upserts, 'one graph write per upserted row');
      assert.equal(writes.filter((w) => w.op === 'DELETE').length, deletes, 'one graph delete per deleted row');
      assert.equal(after.appliedTotal - before.appliedTotal, enqueued.length, 'applied_total grew by the rows enqueued, once each');
      assert.equal(after.lastApplied, Math.max(...enqueued.map((e) => Number(e.outbox_id))));
      if (round === 1) {
        // A first apply creates each node and relation: exactly one INSERT per id, nothing else.
        const keys = writes.map((w) => `${w.tenant_id} ${w.kind} ${w.id}`);
        assert.equal(new Set(keys).size, keys.length, 'no node or relation written twice');
        assert.ok(writes.every((w) => w.op === 'INSERT'));
      }
      const apps = new Map<string, number>();
      for (const w of writes) apps.set(w.app, (apps.get(w.app) ?? 0) + 1);
      for (const app of apps.keys()) assert.match(app, /^kgw-replica-[ab]$/, 'only the gateways write the graph');
      t.diagnostic(
        `apply round ${round}: ${GRAPH_TENANTS} tenants applied in ${applied - started} ms, ${enqueued.length} graph rows (${upserts} upserts, ${deletes} deletes) ` +
          (kill === undefined ? '' : `gateway ${kill.killed} killed with SIGKILL while draining, ${kill.backlog} rows left; `) +
          `drained ${drained - applied} ms later in ${new Set(writes.map((w) => w.txid)).size} transactions; applied by ${[...apps].map(([app, n]) => `${app} ${n}`).join(', ')}; ` +
          `applied_total ${before.appliedTotal} -> ${after.appliedTotal}`,
      );
      if (kill !== undefined) assert.equal(apps.size, 2, 'the killed replica applied rows before the kill, the other one the rest');
      return kill;
    };
    await applyRound(1, 1);
    await applyRound(2, 2);
    // Bigger: enough new people that each tenant's rows (about 3 a person) fill several of the
    // worker's batches (400 rows on PostgreSQL). One tenant's rows are applied batch after
    // batch, so when the first batch's writes are seen, that tenant still has rows waiting; with
    // 72 people a tenant fitted in one batch and the drain could end before the kill.
    const killed = await applyRound(3, 1, 300, true);
    assert.ok(killed !== undefined && killed.backlog > 0, 'the replica was killed with rows still waiting');
    // The killed replica comes back on the same port for the next test.
    const port = (killed.killed === 'a' ? a : b)?.port;
    const restarted = await startKgw(envs[killed.killed], { port });
    if (killed.killed === 'a') a = restarted;
    else b = restarted;

    // The graph tables equal every tenant's directory, each node and relation once.
    await withPg(databaseUrl, async (client: pg.Client) => {
      const q = { query: async <R>(text: string, params: readonly unknown[] = []) => (await client.query(text, params as unknown[])).rows as R[] };
      const tenants = (await client.query<{ id: string; slug: string }>('SELECT id::text, slug FROM tenants ORDER BY slug')).rows;
      assert.equal(tenants.length, GRAPH_TENANTS + 1);
      for (const tenant of tenants) {
        const expected = await orgGraph(q, tenant.id);
        const nodes = (
          await client.query<{ id: string; type: string; title: string }>(
            "SELECT id, type, properties->>'title' AS title FROM graph_nodes WHERE tenant_id = $1 ORDER BY id",
            [tenant.id],
          )
        ).rows;
        const relations = (
          await client.query<{ id: string; from_id: string; to_id: string; verb: string }>(
            'SELECT id, from_id, to_id, verb FROM graph_relations WHERE tenant_id = $1 ORDER BY id',
            [tenant.id],
          )
        ).rows;
        assert.deepEqual(
          nodes.map((n) => [n.id, n.type, n.title]),
          expected.nodes.map((n) => [n.id, n.type, n.properties.title]).sort((x, y) => String(x[0]).localeCompare(String(y[0]), 'en')),
          `${tenant.slug}: nodes`,
        );
        assert.deepEqual(
          relations.map((r) => [r.id, r.from_id, r.to_id, r.verb]),
          expected.relations.map((r) => [r.id, r.from, r.to, r.verb]).sort((x, y) => String(x[0]).localeCompare(String(y[0]), 'en')),
          `${tenant.slug}: relations`,
        );
      }
    });
  });

  it('(c) a token revoked through the CLI is refused by the other gateway on its very next request', async (t) => {
    assert.ok(a && b);
    const token = await createTokenCli(store.env, TENANT, 'revoked-bot', 'context.read', 'to-revoke');
    const status = async (gateway: KgwProcess): Promise<number> => {
      const response = await fetch(`${gateway.url}${MCP}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` },
        body: JSON.stringify(INITIALIZE),
        signal: AbortSignal.timeout(30_000),
      });
      await response.arrayBuffer();
      return response.status;
    };
    assert.deepEqual([await status(a), await status(b)], [200, 200]);
    const client = await mcpClient(`${b.url}${MCP}`, token);
    try {
      await callOk(client, 'list_knowledge', {});
      const listed = JSON.parse(await kgwOk(['token', 'list', '--tenant', TENANT, '--json'], store.env)) as TokenInfo[];
      const info = listed.find((x) => x.label === 'to-revoke');
      assert.ok(info);

      // Gateway B is asked without a pause while the revocation runs in another process.
      const seen: { start: number; end: number; status: number }[] = [];
      let polling = true;
      const poller = (async () => {
        for (let n = 0; polling && n < 5000; n++) {
          const start = performance.now();
          const code = await status(b);
          seen.push({ start, end: performance.now(), status: code });
        }
      })();
      // Wait for answers rather than for a fixed time: on a loaded machine one request may take
      // longer than any pause chosen here.
      await until('a request answered before the revocation', () => Promise.resolve(seen.length > 0 ? true : undefined), 60_000, 20);
      const revokeStart = performance.now();
      const revoked = await kgw(['token', 'revoke', info.id], store.env);
      const revokeEnd = performance.now();
      await until('a request answered after the revocation', () => Promise.resolve(seen.some((s) => s.start > revokeEnd) ? true : undefined), 60_000, 20);
      polling = false;
      await poller;
      assert.equal(revoked.code, 0, revoked.stderr);
      assert.equal(revoked.stdout, `revoked ${info.id} (revoked-bot in ${TENANT})\n`);

      const beforeRevoke = seen.filter((s) => s.end < revokeStart);
      const afterRevoke = seen.filter((s) => s.start > revokeEnd);
      assert.ok(beforeRevoke.length > 0 && afterRevoke.length > 0, `requests before (${beforeRevoke.length}) and after (${afterRevoke.length}) the revocation`);
      assert.ok(
        beforeRevoke.every((s) => s.status === 200),
        'accepted until revoked',
      );
      assert.deepEqual([...new Set(afterRevoke.map((s) => s.status))], [401], 'refused from the first request after the revocation on');
      // The SDK client connected to B before: its next call is refused too, and so is A.
      await assert.rejects(callTool(client, 'list_knowledge', {}), (error: unknown) => {
        assert.equal((error as { code?: unknown }).code, 401);
        return true;
      });
      assert.equal(await status(a), 401);
      const during = seen.filter((s) => s.end >= revokeStart && s.start <= revokeEnd);
      t.diagnostic(
        `gateway B: ${beforeRevoke.length} requests accepted before, ${during.length} during (${during.filter((s) => s.status === 200).length} accepted), ` +
          `${afterRevoke.length} refused after the revocation (kgw token revoke took ${Math.round(revokeEnd - revokeStart)} ms)`,
      );
    } finally {
      await closeAll([client]);
    }
  });
});
