import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { loadConfig } from '../../src/config.ts';
import { brainReader, localNodeId, SOURCE_NODES_MAX } from '../../src/cli/import-mcp-brain.ts';
import { connectSource } from '../../src/cli/mcp-source.ts';
import { withOps } from '../../src/cli/session.ts';
import { connectClient } from '../support/gateway.ts';
import type { CliStore, RunResult, Served } from './support.ts';
import { cliStoreBackends, hostileEndpoint, kgw, serve, writeIn } from './support.ts';

/**
 * kgw import mcp --dialect brain: a second gateway (its own store and kgw serve) stands in for a
 * hosted Company Brain, seeded through its org file with nodes of every tier; the reader reads it
 * over HTTP at /brain/mcp with tokens of three tiers and writes into this gateway with
 * brain.import, checked through this gateway's own read_concept and query_index. A hostile
 * source is an SDK McpServer in this process.
 *
 * Company Brain answers in text only, and McpSource reads structured content: until it gives a
 * tool's text (`text`, TextSource), the reader runs here in-process on a source that does, with
 * this gateway's operations from withOps as the CLI gets them; the CLI's own run is checked
 * once McpSource has `text`, and its argument checks always.
 */

const SOURCE_ORG = `tenant: acme
name: Acme Inc.
people:
  - { email: rita@acme.test, name: Rita, tier: restricted, departments: [Sales] }
  - { email: mo@acme.test, name: Mo, tier: manager }
  - { email: pat@acme.test, name: Pat, departments: [Sales] }
agents:
  - { name: release-bot, owner: rita@acme.test }
brain:
  nodes:
    - id: erp
      type: tool
      title: ERP system
      access: public
      summary: Runs the books.
      metadata: { Owner: Finance, Score: 7 }
      tags: [finance, core]
      freshness: { verified: 2026-01-01, review_by: 2030-01-01 }
      mark: inferred
    - { id: crm, type: tool, title: Customer records, access: public }
    - { id: close, type: SOP / process, title: Month-end close, access: manager, summary: "Close the books.\\n\\n## Not a heading\\nStill the summary." }
    - { id: plan, type: strategy, title: Growth plan, access: restricted, summary: The plan. }
    - { id: payroll-data, type: data source, title: Payroll data, access: hr }
    - { id: vision, type: strategy, title: Vision, access: executive }
    - { id: lone, type: policy, title: Travel policy, access: public }
    - { id: sales-play, type: strategy, title: Sales play, access: department, department: Sales }
  relations:
    - { from: close, verb: uses, to: erp }
    - { from: plan, verb: depends on, to: crm, mark: unresolved }
    - { from: erp, verb: depends on, to: "agent:release-bot" }
    - { from: "department:Sales", verb: uses, to: crm }
    - { from: "person:rita@acme.test", verb: owns, to: close }
    - { from: payroll-data, verb: supports, to: plan }
`;

/** This gateway's org: the same department and agent (by name), its people its own. */
const TARGET_ORG = `tenant: acme
name: Acme Inc.
people:
  - { email: rita@acme.test, name: Rita, tier: restricted, departments: [Sales] }
  - { email: pat@acme.test, name: Pat, departments: [Sales] }
agents:
  - { name: release-bot, owner: rita@acme.test }
`;

const ALL = ['close', 'crm', 'erp', 'lone', 'payroll-data', 'plan', 'vision'];
const DEPARTMENT_REFUSAL = "access department: read_concept does not say which department's members see it, and a guess could show it to others";

interface Counts {
  read: number;
  created: number;
  updated: number;
  unchanged: number;
  hidden: number;
  refused: { name: string; reason: string }[];
}

interface Report {
  nodes: Counts & { directory: number; unreached: number; mapped: { source: string; local: string }[] };
  relations: Counts;
  failed: { reason: string }[];
  sweep: { queries: number; stopped: string | null };
}

const textOf = (result: CallToolResult): string => (result.content.find((c) => c.type === 'text') as { text: string } | undefined)?.text ?? '';
const counts = (c: Counts) => ({ read: c.read, created: c.created, updated: c.updated, unchanged: c.unchanged, hidden: c.hidden });
const reasons = (c: Counts) => new Map(c.refused.map((item) => [item.name, item.reason]));

/** Polls `probe` until it gives a value (a minute at most). */
async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 100))) {
    const value = await probe();
    if (value !== undefined) return value;
  }
  assert.fail(`${what} did not happen within a minute`);
}

const ok = (result: RunResult, what: string): string => {
  assert.equal(result.code, 0, `${what}: ${result.stderr}`);
  return result.stdout;
};

for (const backend of cliStoreBackends()) {
  describe(`kgw import mcp --dialect brain on ${backend.name}`, () => {
    let sourceStore: CliStore;
    let source: Served;
    const tokens = new Map<string, string>();
    let store: CliStore;
    let gateway: Served;
    let sourceClient: Client;
    let client: Client;
    const sourceUrl = () => `${source.url}/brain/mcp`;

    /** The reader run as `kgw import mcp --dialect brain --tenant acme --as rita@acme.test` runs it. */
    const imported = async (token: string, options: { dryRun?: boolean; from?: string } = {}) => {
      const from = await connectSource(new URL(options.from ?? sourceUrl()), { token });
      try {
        const outcome = await withOps(loadConfig(store.env), (run) =>
          brainReader.read({
            run,
            source: from,
            tenant: 'acme',
            as: 'rita@acme.test',
            dryRun: options.dryRun ?? false,
            only: undefined,
            progress: () => undefined,
          }),
        );
        return { ...outcome, report: outcome.report as unknown as Report };
      } finally {
        await from.close();
      }
    };
    const read = async (on: Client, id: string) => (await on.callTool({ name: 'read_concept', arguments: { id } })) as CallToolResult;
    /** A concept with the directory's ids (which differ between gateways) as their kind, and without relations to people (not copied). */
    const comparable = (text: string) =>
      text
        .replace(/\[(person|agent):[0-9a-f-]{36}\]/g, '[$1]')
        .split('\n')
        .filter((line) => !line.startsWith('- [person]'))
        .join('\n');
    const shown = async (id: string) => !(await read(client, id)).isError;

    before(async () => {
      sourceStore = await backend.open();
      ok(await kgw(['apply', await writeIn(sourceStore.workDir, 'org.yaml', SOURCE_ORG)], sourceStore.env), 'apply');
      for (const person of ['rita', 'mo', 'pat'])
        tokens.set(
          person,
          ok(
            await kgw(['token', 'create', '--tenant', 'acme', '--principal', `${person}@acme.test`, '--scopes', 'brain:read'], sourceStore.env),
            'token',
          ).trim(),
        );
      source = await serve(sourceStore.env, { timeoutMs: 120_000 });
      sourceClient = await connectClient(sourceUrl(), tokens.get('rita')!);
      // The source's search and graph follow its store through the outbox: the sweep needs both.
      await until('the source indexing its nodes', async () => {
        const hits = textOf((await sourceClient.callTool({ name: 'query_index', arguments: { query: 'travel vision', limit: 20 } })) as CallToolResult);
        return hits.includes('[lone]') && hits.includes('[vision]') && !(await read(sourceClient, 'sales-play')).isError ? true : undefined;
      });
      store = await backend.open();
      ok(await kgw(['apply', await writeIn(store.workDir, 'org.yaml', TARGET_ORG)], store.env), 'apply');
      const token = ok(await kgw(['token', 'create', '--tenant', 'acme', '--principal', 'rita@acme.test', '--scopes', 'brain:read'], store.env), 'token');
      gateway = await serve(store.env, { timeoutMs: 120_000 });
      client = await connectClient(`${gateway.url}/brain/mcp`, token.trim());
    });
    after(async () => {
      await sourceClient?.close();
      await client?.close();
      await source?.stop();
      await gateway?.stop();
      await sourceStore?.dispose();
      await store?.dispose();
    });

    it('says what a dry run would do and writes nothing', async () => {
      const { report, refused } = await imported(tokens.get('rita')!, { dryRun: true });
      assert.equal(refused, true);
      assert.deepEqual(counts(report.nodes), { read: 8, created: 7, updated: 0, unchanged: 0, hidden: 0 });
      assert.deepEqual(counts(report.relations), { read: 6, created: 5, updated: 0, unchanged: 0, hidden: 0 });
      assert.deepEqual(report.failed, []);
      for (const id of ALL) assert.equal(await shown(id), false, id);
    });

    it('imports with a lower tier only what it sees, and counts what is above it', async () => {
      const { report, lines } = await imported(tokens.get('mo')!);
      assert.deepEqual(counts(report.nodes), { read: 5, created: 4, updated: 0, unchanged: 0, hidden: 3 });
      assert.deepEqual(reasons(report.nodes), new Map([['sales-play', DEPARTMENT_REFUSAL]]));
      // plan depends on crm leads above a manager's tier: counted on crm, never named.
      assert.deepEqual(counts(report.relations), { read: 4, created: 3, updated: 0, unchanged: 0, hidden: 1 });
      assert.equal(report.nodes.unreached, 0, JSON.stringify(report));
      assert.match(lines[0] ?? '', /^nodes: 5 read, 4 created, 0 updated, 0 unchanged, 1 refused, 3 above the token's tier \(not copied\)$/);
      await until('the import reaching the graph', async () => ((await shown('close')) ? true : undefined));
      for (const id of ['plan', 'payroll-data', 'vision', 'sales-play']) assert.equal(await shown(id), false, id);
    });

    it('copies every node and relation the highest tier sees, as the source answers them', async () => {
      const { report, refused } = await imported(tokens.get('rita')!);
      assert.equal(refused, true);
      assert.deepEqual(counts(report.nodes), { read: 8, created: 3, updated: 0, unchanged: 4, hidden: 0 });
      assert.deepEqual(counts(report.relations), { read: 6, created: 2, updated: 0, unchanged: 3, hidden: 0 });
      assert.deepEqual(reasons(report.nodes), new Map([['sales-play', DEPARTMENT_REFUSAL]]));
      const [person] = report.relations.refused;
      assert.match(person?.name ?? '', /^person:[0-9a-f-]{36} owns close$/);
      assert.match(person?.reason ?? '', /^relations\[\d+\]\.from: no person in the directory named "[0-9a-f-]{36}"$/);
      assert.equal(report.nodes.directory, 6); // the organization, three people, the agent and Sales
      assert.deepEqual(report.nodes.mapped, []);
      // Nothing relates to lone, vision or Mo, and the skill pack lists none of them: query_index found them.
      assert.ok(report.sweep.queries > 0 && report.sweep.stopped === null, JSON.stringify(report.sweep));
      await until('the import reaching the graph', async () => ((await shown('vision')) && (await shown('payroll-data')) ? true : undefined));
      for (const id of ALL) assert.equal(comparable(textOf(await read(client, id))), comparable(textOf(await read(sourceClient, id))), id);
      const found = await until('the import reaching the search index', async () => {
        const text = textOf((await client.callTool({ name: 'query_index', arguments: { query: 'travel vision', limit: 20 } })) as CallToolResult);
        return text.includes('[lone]') && text.includes('[vision]') ? text : undefined;
      });
      assert.match(found, /\[vision\] Vision · strategy · access executive/);
    });

    it('changes nothing when run again', async () => {
      const { report } = await imported(tokens.get('rita')!);
      assert.deepEqual(counts(report.nodes), { read: 8, created: 0, updated: 0, unchanged: 7, hidden: 0 });
      assert.deepEqual(counts(report.relations), { read: 6, created: 0, updated: 0, unchanged: 5, hidden: 0 });
      const publicOnly = await imported(tokens.get('pat')!, { dryRun: true });
      assert.deepEqual(counts(publicOnly.report.nodes), { read: 3, created: 0, updated: 0, unchanged: 3, hidden: 5 });
    });

    it('refuses bad arguments as usage errors', async () => {
      const run = (...args: string[]) =>
        kgw(['import', 'mcp', '--from', sourceUrl(), '--token', 'x', '--tenant', 'acme', '--as', 'rita@acme.test', ...args], store.env);
      const only = await run('--dialect', 'brain', '--only', 'files');
      assert.equal(only.code, 2);
      assert.match(only.stderr, /--only takes a comma-separated list of nodes, not "files"/);
      const kb = await run('--dialect', 'brain', '--kb', 'handbook');
      assert.equal(kb.code, 2);
      assert.match(kb.stderr, /--kb chooses Atmina Knowledge Bases/);
      const dialect = await run('--dialect', 'brian');
      assert.equal(dialect.code, 2);
      assert.match(dialect.stderr, /--dialect must be one of .*brain/);
    });

    it('runs through kgw import mcp', async () => {
      const result = await kgw(
        ['import', 'mcp', '--from', sourceUrl(), '--dialect', 'brain', '--token', tokens.get('rita')!, '--tenant', 'acme', '--as', 'rita@acme.test', '--json'],
        store.env,
        { timeoutMs: 120_000 },
      );
      assert.equal(result.code, 1, result.stderr);
      const report = JSON.parse(result.stdout) as Report & { dialect: string };
      assert.equal(report.dialect, 'brain');
      assert.deepEqual(counts(report.nodes), { read: 8, created: 0, updated: 0, unchanged: 7, hidden: 0 });
      const only = await kgw(
        [
          'import',
          'mcp',
          '--from',
          sourceUrl(),
          '--dialect',
          'brain',
          '--only',
          'nodes',
          '--token',
          tokens.get('pat')!,
          '--tenant',
          'acme',
          '--as',
          'rita@acme.test',
        ],
        store.env,
        { timeoutMs: 120_000 },
      );
      assert.equal(only.code, 0, only.stderr);
      assert.match(only.stdout, /^nodes: 3 read, 0 created, 0 updated, 3 unchanged, 0 refused, 5 above the token's tier \(not copied\)$/m);
    });

    describe('from a hostile source', () => {
      let hostile: Awaited<ReturnType<typeof hostileEndpoint>>;
      let hostileUrl: string;

      before(async () => {
        hostile = await hostileEndpoint((req) => hostileServer(req.url?.startsWith('/endless/') === true));
        hostileUrl = hostile.origin;
      });
      after(async () => {
        await hostile?.close();
      });

      it('refuses each bad item with its reason and imports the rest', async () => {
        const { report, refused } = await imported('any-token', { from: `${hostileUrl}/mcp` });
        assert.equal(refused, true);
        assert.deepEqual(report.failed, []);
        const nodes = reasons(report.nodes);
        assert.deepEqual(
          [...nodes.keys()].sort(),
          ['\u202eevil', 'bidi-title', 'ghost', 'huge', 'nul\u0000id', 'odd-type', 'secret-dept'].sort(),
          JSON.stringify(report.nodes.refused),
        );
        assert.equal(nodes.get('nul\u0000id'), 'its id must not contain NUL (U+0000)');
        assert.equal(nodes.get('\u202eevil'), 'its id must not contain bidirectional formatting characters (they can disguise a name)');
        assert.equal(nodes.get('bidi-title'), 'title must not contain bidirectional formatting characters (they can disguise a name)');
        assert.equal(nodes.get('huge'), 'summary is longer than 4000 characters');
        assert.equal(nodes.get('ghost'), 'the source named it, but read_concept knows no node of this id');
        assert.equal(nodes.get('odd-type'), 'its type "gadget" is not one of the contract\'s node types');
        assert.equal(
          nodes.get('secret-dept'),
          "access department: read_concept does not say which department's members see it, and a guess could show it to others",
        );
        assert.deepEqual(report.nodes.mapped, [{ source: 'Mixed Case', local: localNodeId('Mixed Case') }]);
        assert.match(localNodeId('Mixed Case'), /^mixed-case-[0-9a-f]{12}$/);
        const relations = reasons(report.relations);
        assert.equal(relations.get('honest uses ghost'), 'its end ghost was not read (the source named it, but read_concept knows no node of this id)');
        assert.equal(relations.get('honest uses huge'), 'its end huge was refused');
        assert.equal(
          relations.get('honest uses \u202eevil'),
          'its end \u202eevil was not read (its id must not contain bidirectional formatting characters (they can disguise a name))',
        );
        // odd-type's answer is refused before it is a node; the source counted six tools and gave four.
        assert.deepEqual(counts(report.nodes), { read: 5, created: 2, updated: 0, unchanged: 0, hidden: 5 });
        assert.equal(report.nodes.unreached, 2);
        assert.deepEqual(counts(report.relations), { read: 4, created: 1, updated: 0, unchanged: 0, hidden: 0 });
        await until('the honest node reaching the graph', async () => ((await shown('honest')) ? true : undefined));
        const honest = textOf(await read(client, 'honest'));
        assert.match(honest, /^- \[honest\] uses \[mixed-case-[0-9a-f]{12}\] Mixed case \(tool\)$/m);
        assert.ok(honest.includes('\n## Summary\nFine.\u007f\u2028Still fine.\n'), honest);
      });

      it(`stops a source whose answers never end at ${SOURCE_NODES_MAX} nodes, importing nothing`, async () => {
        const { report, refused, lines } = await imported('any-token', { from: `${hostileUrl}/endless/mcp` });
        assert.equal(refused, true);
        assert.deepEqual(report.failed, [{ reason: `the source named more than ${SOURCE_NODES_MAX} nodes; nothing was imported` }]);
        assert.equal(lines.at(-1), `failed: the source named more than ${SOURCE_NODES_MAX} nodes; nothing was imported`);
        assert.equal(await shown('endless-1'), false);
      });
    });
  });
}

/** The endless source's next node: every search finds twenty it never named before. */
let endlessNext = 0;

/**
 * The lying source: in its first form a small brain with an honest node among nodes each wrong
 * in its own way (ids with NUL or bidi controls, a bidi title, a summary past the bound, a type
 * the contract lacks, a department tier without its department, an id named that no node has, an
 * id this gateway's files cannot hold); in its second (`endless`) a search that always finds
 * twenty new nodes.
 */
function hostileServer(endless: boolean): McpServer {
  const server = new McpServer({ name: 'hostile-brain', version: '1.0.0' });
  const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });
  const refusal = (value: string) => ({ content: [{ type: 'text' as const, text: value }], isError: true });
  const concept = (id: string, title: string, type: string, access: string, extra: string[] = [], relations: string[] = []) =>
    [
      `[${id}] ${title}`,
      `Type: ${type}`,
      `Access: ${access}`,
      ...extra,
      '',
      '## Freshness',
      '- Evidence status: unverified',
      '',
      '## Relations',
      ...relations,
    ].join('\n');
  server.registerTool('get_skill_pack', { inputSchema: {} }, () =>
    text(
      endless
        ? 'registry: revision=1 content_hash=sha256:0 generated_at=2026-01-01T00:00:00.000Z\n\n# Map\n\n## Overview\n'
        : [
            'registry: revision=1 content_hash=sha256:0 generated_at=2026-01-01T00:00:00.000Z',
            '',
            '## Overview',
            '- tool: 6',
            '- strategy: 1',
            '[hidden:2] 2 nodes are above your access tier and not shown.',
            '',
            '## Systems and tools',
            '- [honest] Honest',
            '- [nul\u0000id] Nul',
            '- [\u202eevil] Evil',
          ].join('\n'),
    ),
  );
  server.registerTool('query_index', { inputSchema: { query: z.string(), types: z.array(z.string()).optional(), limit: z.number().optional() } }, () => {
    if (endless) {
      const hits = Array.from({ length: 20 }, (_, i) => `${i + 1}. [endless-${endlessNext++}] Endless · tool · access public`);
      return text(`## Nodes\n${hits.join('\n')}`);
    }
    return text(
      [
        '## Nodes',
        '1. [bidi-title] Pay · tool · access public',
        '2. [huge] Huge · tool · access public',
        '3. [odd-type] Odd · tool · access public',
        '4. [secret-dept] Dept · strategy · access department',
        '5. [Mixed Case] Mixed case · tool · access public',
        '[hidden:5] 5 more matches are hidden behind a higher access tier.',
      ].join('\n'),
    );
  });
  server.registerTool('read_concept', { inputSchema: { id: z.string() } }, ({ id }) => {
    if (endless) return text(concept(id, 'Endless', 'tool', 'public'));
    switch (id) {
      case 'honest':
        return text(
          concept(
            'honest',
            'Honest',
            'tool',
            'public',
            ['', '## Summary', 'Fine.\u007f\u2028Still fine.'],
            [
              '- [honest] uses [ghost] Ghost (tool)',
              '- [honest] uses [huge] Huge (tool)',
              '- [honest] uses [\u202eevil] Evil (tool)',
              '- [honest] uses [Mixed Case] Mixed case (tool)',
            ],
          ),
        );
      case 'bidi-title':
        return text(concept('bidi-title', 'Pay\u202eroll', 'tool', 'public'));
      case 'huge':
        return text(concept('huge', 'Huge', 'tool', 'public', ['', '## Summary', 'x'.repeat(5000)], ['- [honest] Honest (tool) uses [huge]']));
      case 'odd-type':
        return text(concept('odd-type', 'Odd', 'gadget', 'public'));
      case 'secret-dept':
        return text(concept('secret-dept', 'Dept', 'strategy', 'department'));
      case 'Mixed Case':
        return text(concept('Mixed Case', 'Mixed case', 'tool', 'public', [], ['- [honest] Honest (tool) uses [Mixed Case]']));
      default:
        return refusal('Unknown node: no node has this id.');
    }
  });
  return server;
}
