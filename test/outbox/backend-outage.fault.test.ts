import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { CliStore, Served } from '../cli/support.ts';
import { cliStoreBackends, kgw, lines, serve, writeIn } from '../cli/support.ts';
import { connectClient } from '../support/gateway.ts';
import { until as untilWithin } from '../support/kgw-process.ts';
import type { PrivateMeilisearch, PrivateNeo4j } from '../support/services.ts';
import { meilisearchSkip, neo4jSkip, startMeilisearch, startNeo4j } from '../support/services.ts';

/*
 * The search engine and the graph store go down under a running `kgw serve` (real Meilisearch
 * and Neo4j processes, killed): every tool that reads one of them answers the spec's
 * `unavailable` in its dialect's words, at once, and the gateway logs one line per call naming
 * the backend, without a stack. Once both are back and the backlog drained, the tools answer
 * again and `kgw doctor` shows the outage as past, with its time.
 */

const ORG = `tenant: outage
name: Outage Co
people:
  - { email: ada@outage.test, name: Ada, tier: manager, brain_role: manager }
agents:
  - name: helper
    owner: ada@outage.test
teams:
  - slug: docs
    name: Docs
    members: { ada@outage.test: admin, helper: editor }
kbs:
  - slug: handbook
    name: Handbook
    team: docs
brain:
  nodes:
    - { id: erp, type: tool, title: ERP system, summary: The ledger lives here., access: public }
    - { id: crm, type: tool, title: CRM, summary: Customer records for the ledger., access: public }
  relations:
    - { from: crm, verb: depends on, to: erp }
`;

const BRAIN_GRAPH_DOWN = 'The brain is unavailable just now: its knowledge graph did not answer. Try again shortly.';
const BRAIN_SEARCH_DOWN = 'The brain is unavailable just now: its search index did not answer. Try again shortly.';

/** A tool answered at once rather than after the driver's retries: well below the 2 s Neo4j retry window. */
const PROMPT_MS = 1_500;

const textOf = (result: CallToolResult): string =>
  result.content
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('\n');

interface LogLine {
  level: number;
  msg: string;
  tool?: string;
  backend?: string;
  role?: string;
  cause?: string;
  err?: unknown;
}

interface ReadyBody {
  status: string;
  backends: Record<string, { backend: string; ok: boolean }>;
  projections: Record<string, { backlog: number; last_error: string | null }>;
}

async function readyz(url: string): Promise<{ status: number; body: ReadyBody }> {
  const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(30_000) });
  return { status: response.status, body: (await response.json()) as ReadyBody };
}

/** Everything here waits on real servers restarting: two minutes, polled every 200 ms. */
const until = <T>(what: string, probe: () => Promise<T | undefined>): Promise<T> => untilWithin(what, probe, 120_000, 200);

for (const backend of cliStoreBackends()) {
  describe(`tools while Meilisearch and Neo4j are down, store ${backend.name}`, { skip: neo4jSkip() || meilisearchSkip(), timeout: 600_000 }, () => {
    let neo4j: PrivateNeo4j;
    let meili: PrivateMeilisearch;
    let store: CliStore;
    let gateway: Served;
    let env: Record<string, string>;
    let kbId: string;
    let atmina: Client;
    let brain: Client;

    const call = async (client: Client, name: string, args: Record<string, unknown> = {}) => {
      const started = performance.now();
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
      return { isError: result.isError === true, text: textOf(result), ms: performance.now() - started };
    };
    const token = async (principal: string, scopes: string) => {
      const created = await kgw(['token', 'create', '--tenant', 'outage', '--principal', principal, '--scopes', scopes], env);
      assert.equal(created.code, 0, created.stderr);
      return created.stdout.trim();
    };
    const logLines = (): LogLine[] =>
      lines(gateway.output().stdout)
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as LogLine);

    before(async () => {
      [neo4j, meili] = await Promise.all([startNeo4j(), startMeilisearch()]);
      store = await backend.open();
      env = { ...store.env, ...neo4j.gatewayEnv(), ...meili.gatewayEnv() };
      const applied = await kgw(['apply', await writeIn(store.workDir, 'org.yaml', ORG)], env);
      assert.equal(applied.code, 0, applied.stderr);
      gateway = await serve(env, { timeoutMs: 60_000 });
      atmina = await connectClient(`${gateway.url}/atmina/mcp`, await token('helper', 'context.read context.write'));
      brain = await connectClient(`${gateway.url}/brain/mcp`, await token('ada@outage.test', 'brain:read brain:propose'));
      const kbs = (await atmina.callTool({ name: 'list_kbs', arguments: {} })).structuredContent as { kbs: { kb_id: string; slug: string }[] };
      kbId = kbs.kbs.find((kb) => kb.slug === 'handbook')?.kb_id ?? assert.fail('no handbook KB');
      for (const [path, content] of [
        ['a.md', '# Ledger\n\nSee [b](b.md).\n'],
        ['b.md', '# Ledger notes\n'],
      ]) {
        const written = await call(atmina, 'write_file', { kb_id: kbId, path, mode: 'create', content });
        assert.equal(written.isError, false, written.text);
      }
      await until('the projections caught up', async () => {
        const ready = await readyz(gateway.url);
        return ready.status === 200 && ready.body.projections.graph?.backlog === 0 && ready.body.projections.search?.backlog === 0 ? ready : undefined;
      });
    });
    after(async () => {
      await atmina?.close();
      await brain?.close();
      await gateway?.stop();
      await store?.dispose();
      await neo4j?.close();
      await meili?.close();
    });

    it('answers every projection tool while both backends answer', async () => {
      const related = await call(atmina, 'related', { kb_id: kbId, path: 'a.md' });
      assert.equal(related.isError, false, related.text);
      const found = await call(atmina, 'search', { query: 'ledger' });
      assert.equal(found.isError, false, found.text);
      for (const [tool, args] of [
        ['read_concept', { id: 'erp' }],
        ['query_index', { query: 'ledger' }],
        ['get_skill_pack', {}],
        ['list_gaps', {}],
      ] as const) {
        const answer = await call(brain, tool, args);
        assert.equal(answer.isError, false, `${tool}: ${answer.text}`);
      }
    });

    it('says unavailable in each dialect’s words, at once, and logs one line naming the backend', async () => {
      await Promise.all([neo4j.stop(), meili.stop()]);
      const before = logLines().length;
      const answers = {
        related: await call(atmina, 'related', { kb_id: kbId, path: 'a.md' }),
        search: await call(atmina, 'search', { query: 'ledger' }),
        read_concept: await call(brain, 'read_concept', { id: 'erp' }),
        query_index: await call(brain, 'query_index', { query: 'ledger' }),
        get_skill_pack: await call(brain, 'get_skill_pack'),
        list_gaps: await call(brain, 'list_gaps'),
        write_inbox: await call(brain, 'write_inbox', {
          kind: 'observation',
          title: 'ERP note',
          body: 'The ledger moved to a new host.',
          relatedNodeIds: ['erp'],
        }),
      };
      assert.deepEqual(Object.fromEntries(Object.entries(answers).map(([tool, a]) => [tool, [a.isError, a.text]])), {
        related: [
          true,
          'unavailable: references are unavailable just now: the graph store did not answer; try again shortly, or read the files themselves meanwhile',
        ],
        search: [true, 'unavailable: search is unavailable just now: the search engine did not answer; try again shortly, or list and read files meanwhile'],
        read_concept: [true, BRAIN_GRAPH_DOWN],
        query_index: [true, BRAIN_SEARCH_DOWN],
        get_skill_pack: [true, BRAIN_GRAPH_DOWN],
        list_gaps: [true, BRAIN_GRAPH_DOWN],
        write_inbox: [true, BRAIN_GRAPH_DOWN],
      });
      for (const [tool, answer] of Object.entries(answers)) assert.ok(answer.ms < PROMPT_MS, `${tool} took ${Math.round(answer.ms)} ms`);

      await until('every call logged', () =>
        Promise.resolve(
          logLines()
            .slice(before)
            .filter((l) => l.tool !== undefined).length >= 7
            ? true
            : undefined,
        ),
      );
      const logged = logLines()
        .slice(before)
        .filter((l) => l.tool !== undefined);
      assert.deepEqual(
        logged.map((l) => [l.tool, l.level, l.msg, l.backend]),
        [
          ['related', 40, 'backend outage: the graph store (neo4j) did not answer', 'neo4j'],
          ['search', 40, 'backend outage: the search engine (meilisearch) did not answer', 'meilisearch'],
          ['read_concept', 40, 'backend outage: the graph store (neo4j) did not answer', 'neo4j'],
          ['query_index', 40, 'backend outage: the search engine (meilisearch) did not answer', 'meilisearch'],
          ['get_skill_pack', 40, 'backend outage: the graph store (neo4j) did not answer', 'neo4j'],
          ['list_gaps', 40, 'backend outage: the graph store (neo4j) did not answer', 'neo4j'],
          ['write_inbox', 40, 'backend outage: the graph store (neo4j) did not answer', 'neo4j'],
        ],
      );
      for (const line of logged) {
        assert.equal(line.err, undefined, 'no error object, so no stack');
        assert.ok(typeof line.cause === 'string' && line.cause.length > 0 && !line.cause.includes('\n'), JSON.stringify(line));
      }
      assert.ok(!gateway.output().stdout.includes('tool failed unexpectedly'));
    });

    it('shows the outage in kgw doctor while it lasts, and as past with its time once the backlog drained', async () => {
      const written = await call(atmina, 'write_file', { kb_id: kbId, path: 'c.md', mode: 'create', content: '# Ledger three\n\nSee [a](a.md).\n' });
      assert.equal(written.isError, false, written.text);
      await until('both projections failing', async () => {
        const ready = await readyz(gateway.url);
        const { graph, search } = ready.body.projections;
        return graph?.last_error != null && search?.last_error != null && graph.backlog > 0 && search.backlog > 0 ? ready : undefined;
      });
      const during = await kgw(['doctor'], env);
      // The projections' table, below the backends' (which has a graph and a search row too).
      const rowOf = (stdout: string, projection: string) =>
        lines(stdout.slice(stdout.indexOf('\nPROJECTION '))).find((l) => l.startsWith(`${projection} `)) ?? assert.fail(`no ${projection} row in\n${stdout}`);
      for (const projection of ['graph', 'search']) assert.doesNotMatch(rowOf(during.stdout, projection), / past \(/);

      await Promise.all([neo4j.restart(), meili.restart()]);
      await until('the backlog drained', async () => {
        const ready = await readyz(gateway.url);
        return ready.status === 200 && ready.body.projections.graph?.backlog === 0 && ready.body.projections.search?.backlog === 0 ? ready : undefined;
      });
      const after = await kgw(['doctor'], env);
      assert.equal(after.code, 0, after.stderr + after.stdout);
      for (const projection of ['graph', 'search'])
        assert.match(rowOf(after.stdout, projection), /^\w+ +0 +- +0 +past \(\d{4}-\d\d-\d\dT[\d:.]+Z, applied since\): \S/, after.stdout);
      const json = await kgw(['doctor', '--json'], env);
      assert.equal(json.code, 0, json.stderr + json.stdout);
      const report = JSON.parse(json.stdout) as { projections: { projection: string; lastErrorPast: boolean }[] };
      assert.deepEqual(
        report.projections.filter((p) => p.projection === 'graph' || p.projection === 'search').map((p) => [p.projection, p.lastErrorPast]),
        [
          ['graph', true],
          ['search', true],
        ],
      );

      const related = await call(atmina, 'related', { kb_id: kbId, path: 'a.md' });
      assert.equal(related.isError, false, related.text);
      assert.ok(
        ((JSON.parse(related.text) as { incoming: { path: string }[] }).incoming ?? []).some((e) => e.path === 'c.md'),
        related.text,
      );
      const index = await call(brain, 'query_index', { query: 'ledger' });
      assert.equal(index.isError, false, index.text);
    });
  });
}
