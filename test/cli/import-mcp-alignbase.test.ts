import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { CliStore, Served } from './support.ts';
import { ORG, cliStoreBackends, hostileEndpoint, kgw, openPeers, serveWithClient, writeIn } from './support.ts';

/**
 * kgw import mcp --dialect alignbase: a second gateway stands in for a hosted Alignbase, seeded
 * through its own tools with Knowledge of several versions (one published), a Skill with files
 * and two versions, a Memory and an Artifact with files; the import reads it through the tools
 * the spec names and is checked through this gateway's own tools, version by version, with the
 * source's provenance. A hostile source is an SDK McpServer in this process.
 */

interface KindReport {
  read: number;
  created: number;
  updated: number;
  unchanged: number;
  versions_saved: number;
  failed: { name: string; reason: string }[];
  drafts?: { read: number; created: number; unchanged: number; not_readable: number; not_listed: number; not_listed_reason?: string };
}

type Report = Partial<Record<'knowledge' | 'skills' | 'memories' | 'artifacts', KindReport>> & { not_carried: { name: string; reason: string }[] };

type Structured = Record<string, unknown>;

const SKILL_MD = (body: string) => `---\nname: release-notes\ndescription: Writes release notes from merged changes.\n---\n\n${body}\n`;
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 0, 255]);
/**
 * Alice owns every type of context at the source and here, so she may write and publish all of
 * it, and read every draft; Bob may propose drafts of Knowledge, and read only his own.
 */
const GRANTS = `${ORG}grants:
${['all_knowledge', 'all_skills', 'all_memories', 'all_artifacts'].map((on) => `  - { to: alice@acme.test, on: ${on}, role: owner }`).join('\n')}
  - { to: bob@acme.test, on: all_knowledge, role: proposer }
`;

async function grantAlice(store: CliStore): Promise<void> {
  const applied = await kgw(['apply', await writeIn(store.workDir, 'grants.yaml', GRANTS)], store.env);
  assert.equal(applied.code, 0, applied.stderr);
}

const counts = (part: KindReport | undefined) =>
  part && { read: part.read, created: part.created, updated: part.updated, unchanged: part.unchanged, versions_saved: part.versions_saved };

for (const backend of cliStoreBackends()) {
  describe(`kgw import mcp --dialect alignbase on ${backend.name}`, () => {
    let sourceStore: CliStore;
    let source: Served;
    let sourceClient: Client;
    let sourceToken: string;
    let bobToken: string;
    let store: CliStore;
    let client: Client;
    let peers: Awaited<ReturnType<typeof openPeers>>;
    const ids: Record<string, string> = {};
    const sourceUrl = () => `${source.url}/alignbase/mcp`;
    const imported = async (from: string, token: string, ...args: string[]): Promise<{ code: number | null; report: Report; stderr: string }> => {
      const result = await kgw(
        ['import', 'mcp', '--from', from, '--dialect', 'alignbase', '--token', token, '--tenant', 'acme', '--as', 'alice@acme.test', ...args, '--json'],
        store.env,
        { timeoutMs: 120_000 },
      );
      return { code: result.code, report: JSON.parse(result.stdout || '{}') as Report, stderr: result.stderr };
    };
    const call = async (on: Client, name: string, args: Structured): Promise<Structured> => {
      const result = await on.callTool({ name, arguments: args });
      assert.notEqual(result.isError, true, `${name}: ${JSON.stringify(result.content)}`);
      return result.structuredContent as Structured;
    };
    const listed = async (on: Client, tool: string, field: string): Promise<Structured[]> => (await call(on, tool, {}))[field] as Structured[];
    const localId = async (tool: string, field: string, key: string, name: string, id: string): Promise<string> => {
      const found = (await listed(client, tool, field)).find((item) => item[key] === name);
      assert.ok(found !== undefined, `${name} is not here`);
      return found[id] as string;
    };
    const fileBytes = async (on: Client, type: string, id: string, version: number, path: string): Promise<Buffer> => {
      const read = await call(on, 'read_context_attachment', { context_type: type, context_id: id, version, path, offset: 0 });
      return Buffer.from(read['data_base64'] as string, 'base64');
    };

    before(async () => {
      peers = await openPeers(backend, '/alignbase/mcp');
      ({ store: sourceStore, gateway: source, client: sourceClient, token: sourceToken } = peers.other);
      ({ store, client } = peers.local);
      await grantAlice(sourceStore);
      await grantAlice(store);
      const k1 = await call(sourceClient, 'write_knowledge', { expected_version: 0, title: 'Leave policy', content: '# Leave\n\nTwenty days.\n' });
      ids['knowledge'] = k1['knowledge_id'] as string;
      await call(sourceClient, 'write_knowledge', {
        knowledge_id: ids['knowledge'],
        expected_version: 1,
        content: '# Leave\n\nTwenty-five days.\n',
        authority: 'must_follow',
      });
      await call(sourceClient, 'publish_knowledge', { knowledge_id: ids['knowledge'], version: 2 });
      await call(sourceClient, 'write_knowledge', {
        knowledge_id: ids['knowledge'],
        expected_version: 2,
        content: '# Leave\n\nTwenty-five days, and holidays.\n',
      });
      const skill = await call(sourceClient, 'create_skill', {
        skill_md: SKILL_MD('Group changes by area.'),
        attachments: [
          { path: 'references/style.md', data_base64: Buffer.from('Short lines.\n').toString('base64') },
          { path: 'assets/logo.png', data_base64: PNG.toString('base64') },
        ],
      });
      ids['skill'] = skill['skill_id'] as string;
      await call(sourceClient, 'publish_skill', { skill_id: ids['skill'], version: 1 });
      await call(sourceClient, 'write_skill', {
        skill_id: ids['skill'],
        expected_version: 1,
        skill_md: SKILL_MD('Group changes by area, newest first.'),
        attachments: [{ path: 'references/style.md', data_base64: Buffer.from('Shorter lines.\n').toString('base64') }],
      });
      const memory = await call(sourceClient, 'create_memory', { name: 'Working memory', content: 'first\n' });
      await call(sourceClient, 'write_memory', { memory_id: memory['memory_id'], expected_version: 1, content: 'second\n' });
      const artifact = await call(sourceClient, 'write_artifact', {
        expected_version: 0,
        name: 'Q3 report',
        markdown: '# Q3\n',
        attachments: [{ path: 'data.csv', data_base64: Buffer.from('a,b\n1,2\n').toString('base64') }],
        source_task: 'quarterly review',
      });
      ids['artifact'] = artifact['artifact_id'] as string;
      await call(sourceClient, 'write_artifact', { artifact_id: ids['artifact'], expected_version: 1, markdown: '# Q3\n\nFinal.\n' });
      // Open drafts: Bob's on Knowledge version 2 (Alice, an Owner there, may read it), Alice's on the Skill.
      const bob = await kgw(['token', 'create', '--tenant', 'acme', '--principal', 'bob@acme.test', '--scopes', 'context.write'], sourceStore.env);
      assert.equal(bob.code, 0, bob.stderr);
      bobToken = bob.stdout.trim();
      const bobClient = await connectAs(sourceUrl(), bobToken);
      try {
        const draft = await call(bobClient, 'create_knowledge_draft', {
          knowledge_id: ids['knowledge'],
          base_version: 2,
          content: '# Leave\n\nThirty days.\n',
          rationale: 'Matches the new contract.',
        });
        ids['bobDraft'] = draft['draft_id'] as string;
      } finally {
        await bobClient.close();
      }
      const skillDraft = await call(sourceClient, 'create_skill_draft', { skill_id: ids['skill'], base_version: 1, skill_md: SKILL_MD('Group by team.') });
      ids['skillDraft'] = skillDraft['draft_id'] as string;
    });
    after(async () => {
      await peers?.close();
    });

    it('says what a dry run would do and writes nothing', async () => {
      const { code, report } = await imported(sourceUrl(), sourceToken, '--dry-run');
      assert.equal(code, 0, JSON.stringify(report));
      for (const kind of ['knowledge', 'skills', 'memories', 'artifacts'] as const)
        assert.deepEqual(counts(report[kind]), { read: 1, created: 1, updated: 0, unchanged: 0, versions_saved: 0 }, kind);
      assert.deepEqual(report.knowledge?.drafts, { read: 1, created: 1, unchanged: 0, not_readable: 0, not_listed: 0 });
      assert.deepEqual(await listed(client, 'list_knowledge', 'knowledge'), []);
      assert.deepEqual(await listed(client, 'list_skills', 'skills'), []);
    });

    it('copies every version the selectors reach, oldest first, with the published one and the source’s provenance', async () => {
      const { code, report } = await imported(sourceUrl(), sourceToken);
      assert.equal(code, 0, JSON.stringify(report));
      assert.deepEqual(counts(report.knowledge), { read: 1, created: 1, updated: 0, unchanged: 0, versions_saved: 3 });
      assert.deepEqual(counts(report.skills), { read: 1, created: 1, updated: 0, unchanged: 0, versions_saved: 2 });
      assert.deepEqual(counts(report.memories), { read: 1, created: 1, updated: 0, unchanged: 0, versions_saved: 1 });
      assert.deepEqual(counts(report.artifacts), { read: 1, created: 1, updated: 0, unchanged: 0, versions_saved: 2 });
      assert.deepEqual(
        report.not_carried.map((item) => item.name),
        ['routes and grants', 'others’ drafts', 'proposals of new Knowledge'],
      );
      assert.deepEqual(report.knowledge?.drafts, { read: 1, created: 1, unchanged: 0, not_readable: 0, not_listed: 0 });
      assert.deepEqual(report.skills?.drafts, { read: 1, created: 1, unchanged: 0, not_readable: 0, not_listed: 0 });

      const knowledge = await localId('list_knowledge', 'knowledge', 'title', 'Leave policy', 'knowledge_id');
      for (const version of [1, 2, 3]) {
        const here = await call(client, 'read_knowledge', { knowledge_id: knowledge, version });
        const there = await call(sourceClient, 'read_knowledge', { knowledge_id: ids['knowledge'], version });
        assert.equal(here['content'], there['content']);
        assert.equal(here['authority'], there['authority']);
        assert.equal(here['published_version'], 2);
        assert.deepEqual(here['imported_from'], {
          source: sourceUrl(),
          source_id: ids['knowledge'],
          source_version: version,
          author: null,
          at: new Date(there['version_created_at'] as string).toISOString(),
        });
        assert.equal(there['imported_from'], undefined, 'a version written there has no imported_from');
      }

      // Bob's draft is proposed here again by Alice, on the local version holding its base, naming Bob as its author there.
      const [draft, ...more] = (await call(client, 'list_knowledge_drafts', { knowledge_id: knowledge }))['drafts'] as Structured[];
      assert.equal(more.length, 0);
      const sourceDraft = await call(sourceClient, 'read_knowledge_draft', { draft_id: ids['bobDraft'] });
      const localDraft = await call(client, 'read_knowledge_draft', { draft_id: draft?.['draft_id'] });
      assert.equal(localDraft['content'], sourceDraft['content']);
      assert.equal(localDraft['rationale'], 'Matches the new contract.');
      assert.equal(localDraft['base_version'], 2);
      assert.equal(localDraft['is_stale'], true);
      assert.equal(localDraft['author_email'], 'alice@acme.test');
      assert.deepEqual(localDraft['imported_from'], {
        source: sourceUrl(),
        source_id: ids['bobDraft'],
        source_version: 2,
        author: 'bob@acme.test',
        at: new Date(sourceDraft['created_at'] as string).toISOString(),
      });
      assert.equal(sourceDraft['imported_from'], undefined, 'a draft proposed there has no imported_from');

      const skill = await localId('list_skills', 'skills', 'name', 'release-notes', 'id');
      const skillDrafts = (await call(client, 'list_skill_drafts', { skill_id: skill }))['drafts'] as Structured[];
      assert.deepEqual(
        skillDrafts.map((d) => [d['base_version'], (d['imported_from'] as { source_id: string }).source_id]),
        [[1, ids['skillDraft']]],
      );
      for (const version of [1, 2]) {
        const here = await call(client, 'read_skill', { skill_id: skill, version });
        const there = await call(sourceClient, 'read_skill', { skill_id: ids['skill'], version });
        assert.equal(here['skill_md'], there['skill_md']);
        assert.deepEqual(here['attachments'], there['attachments']);
        for (const file of there['attachments'] as { path: string }[])
          assert.deepEqual(
            await fileBytes(client, 'skill', skill, version, file.path),
            await fileBytes(sourceClient, 'skill', ids['skill'] ?? '', version, file.path),
          );
        assert.equal(here['published_version'], 1);
      }

      const memory = await localId('list_memories', 'memories', 'name', 'Working memory', 'memory_id');
      const readMemory = await call(client, 'read_memory', { memory_id: memory });
      assert.equal(readMemory['content'], 'second\n');
      assert.equal((readMemory['imported_from'] as { source_version: number }).source_version, 2);

      const artifact = await localId('list_artifacts', 'artifacts', 'name', 'Q3 report', 'artifact_id');
      for (const version of [1, 2]) {
        const here = await call(client, 'read_artifact', { artifact_id: artifact, version });
        const there = await call(sourceClient, 'read_artifact', { artifact_id: ids['artifact'], version });
        assert.equal(here['markdown'], there['markdown']);
        assert.equal(here['package_digest'], there['package_digest']);
        assert.equal(here['source_task'], there['source_task']);
        assert.equal((here['imported_from'] as { author: string }).author, 'alice@acme.test');
      }
    });

    it('changes nothing when run again, and carries only the newer versions after the source changes', async () => {
      const again = await imported(sourceUrl(), sourceToken);
      assert.equal(again.code, 0, JSON.stringify(again.report));
      for (const kind of ['knowledge', 'skills', 'memories', 'artifacts'] as const)
        assert.deepEqual(counts(again.report[kind]), { read: 1, created: 0, updated: 0, unchanged: 1, versions_saved: 0 }, kind);
      assert.deepEqual(again.report.knowledge?.drafts, { read: 1, created: 0, unchanged: 1, not_readable: 0, not_listed: 0 });
      assert.deepEqual(again.report.skills?.drafts, { read: 1, created: 0, unchanged: 1, not_readable: 0, not_listed: 0 });
      await call(sourceClient, 'write_knowledge', { knowledge_id: ids['knowledge'], expected_version: 3, content: '# Leave\n\nThirty days.\n', publish: true });
      const changed = await imported(sourceUrl(), sourceToken, '--only', 'knowledge');
      assert.deepEqual(counts(changed.report.knowledge), { read: 1, created: 0, updated: 1, unchanged: 0, versions_saved: 1 });
      assert.equal(changed.report.skills, undefined);
      const knowledge = await localId('list_knowledge', 'knowledge', 'title', 'Leave policy', 'knowledge_id');
      const latest = await call(client, 'read_knowledge', { knowledge_id: knowledge, version: 'latest' });
      assert.equal(latest['version'], 4);
      assert.equal(latest['published_version'], 4);
      assert.equal(latest['content'], '# Leave\n\nThirty days.\n');
      assert.equal(await listed(client, 'list_knowledge', 'knowledge').then((all) => all.length), 1);
    });

    it('imports only what the token may read', async () => {
      const created = await kgw(['token', 'create', '--tenant', 'acme', '--principal', 'release-bot', '--scopes', 'context.read'], sourceStore.env);
      assert.equal(created.code, 0, created.stderr);
      const agent = created.stdout.trim();
      const { code, report } = await imported(sourceUrl(), agent, '--dry-run');
      assert.equal(code, 0, JSON.stringify(report));
      // The agent reads nothing it was not granted: what its own listing shows is what is read.
      const readable = await fetchCounts(sourceUrl(), agent);
      for (const kind of ['knowledge', 'skills', 'memories', 'artifacts'] as const) assert.equal(report[kind]?.read, readable[kind], kind);
    });

    it('counts the drafts a token may not read, and reads its own', async () => {
      await call(sourceClient, 'create_knowledge_draft', { knowledge_id: ids['knowledge'], base_version: 1, content: '# Leave\n\nTen days.\n' });
      const { code, report } = await imported(sourceUrl(), bobToken, '--dry-run', '--only', 'knowledge');
      assert.equal(code, 0, JSON.stringify(report));
      // Bob's own draft was carried by Alice's import already; Alice's new one he may not read.
      assert.deepEqual(report.knowledge?.drafts, { read: 2, created: 0, unchanged: 1, not_readable: 1, not_listed: 0 });
    });

    it('imports each resource once when two imports run at once', async () => {
      const other = await backend.open();
      const served = await serveWithClient(other, '/alignbase/mcp');
      try {
        await grantAlice(other);
        const both = await Promise.all(
          [0, 1].map(() =>
            kgw(
              [
                'import',
                'mcp',
                '--from',
                sourceUrl(),
                '--dialect',
                'alignbase',
                '--token',
                sourceToken,
                '--tenant',
                'acme',
                '--as',
                'alice@acme.test',
                '--json',
              ],
              other.env,
              { timeoutMs: 120_000 },
            ),
          ),
        );
        for (const run of both) assert.equal(run.code, 0, run.stderr + run.stdout);
        const here = served.client;
        for (const [tool, field] of [
          ['list_knowledge', 'knowledge'],
          ['list_skills', 'skills'],
          ['list_memories', 'memories'],
          ['list_artifacts', 'artifacts'],
        ] as const)
          assert.equal((await listed(here, tool, field)).length, 1, tool);
        const knowledge = (await listed(here, 'list_knowledge', 'knowledge'))[0]!;
        const there = await call(sourceClient, 'read_knowledge', { knowledge_id: ids['knowledge'], version: 'latest' });
        assert.equal(knowledge['latest_version'], there['version'], 'every version once, none twice');
        const drafts = (await call(here, 'list_knowledge_drafts', { knowledge_id: knowledge['knowledge_id'] }))['drafts'] as Structured[];
        const sourceDrafts = (await call(sourceClient, 'list_knowledge_drafts', { knowledge_id: ids['knowledge'] }))['drafts'] as Structured[];
        assert.equal(drafts.length, sourceDrafts.length, 'every draft once, none twice');
      } finally {
        await served.client.close();
        await served.gateway.stop();
        await other.dispose();
      }
    });

    it('refuses bad usage, writing nothing', async () => {
      const only = await kgw(
        ['import', 'mcp', '--from', sourceUrl(), '--dialect', 'alignbase', '--token', 'x', '--tenant', 'acme', '--as', 'alice@acme.test', '--only', 'kbs'],
        store.env,
      );
      assert.equal(only.code, 2);
      assert.match(only.stderr, /--only takes a comma-separated list of knowledge, skills, memories, artifacts/);
      const kb = await kgw(
        ['import', 'mcp', '--from', sourceUrl(), '--dialect', 'alignbase', '--token', 'x', '--tenant', 'acme', '--as', 'alice@acme.test', '--kb', 'handbook'],
        store.env,
      );
      assert.equal(kb.code, 2);
      assert.match(kb.stderr, /--kb chooses Atmina Knowledge Bases/);
    });

    describe('from a hostile source', () => {
      let hostile: Awaited<ReturnType<typeof hostileEndpoint>>;
      let hostileUrl: string;
      before(async () => {
        hostile = await hostileEndpoint(hostileServer);
        hostileUrl = `${hostile.origin}/mcp`;
      });
      after(async () => {
        await hostile?.close();
      });

      it('refuses each bad resource with the reason and imports the honest one', async () => {
        const { code, report } = await imported(hostileUrl, 'any-token', '--only', 'knowledge,skills');
        assert.equal(code, 1);
        const reasons = new Map(report.knowledge?.failed.map((item) => [item.name, item.reason]));
        // The first of the id listed twice is read; the second is refused.
        assert.equal(report.knowledge?.created, 2, JSON.stringify(report));
        assert.match(reasons.get('Bidi id') ?? '', /provenance source_id must not contain bidirectional formatting characters/);
        assert.match(reasons.get('x'.repeat(201)) ?? '', /title/i);
        assert.match(reasons.get('Oversize') ?? '', /1 MB or smaller/);
        assert.match(reasons.get('Wrong version') ?? '', /read_knowledge did not give version 1/);
        assert.equal(reasons.get('Twice'), 'list_knowledge listed this id twice');
        const skillReasons = report.skills?.failed.map((item) => item.reason) ?? [];
        assert.deepEqual(skillReasons, ['the source sent more bytes for a.md than its manifest says']);
        const titles = (await listed(client, 'list_knowledge', 'knowledge')).map((item) => item['title']).sort();
        assert.deepEqual(titles, ['Honest', 'Leave policy', 'Twice']);
        // It has no draft tools: the resources are imported all the same, and the report says why no drafts came.
        assert.equal(report.knowledge?.drafts?.not_listed, report.knowledge?.created);
        assert.match(report.knowledge?.drafts?.not_listed_reason ?? '', /list_knowledge_drafts/);
      });
    });
  });
}

/** An SDK client of `url` with a bearer token. */
async function connectAs(url: string, token: string): Promise<Client> {
  const { Client: SdkClient } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const client = new SdkClient({ name: 'import-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

/** How many of each kind a token's own listing shows at the source. */
async function fetchCounts(url: string, token: string): Promise<Record<'knowledge' | 'skills' | 'memories' | 'artifacts', number>> {
  const client = await connectAs(url, token);
  const count = async (tool: string, field: string) =>
    (((await client.callTool({ name: tool, arguments: {} })).structuredContent as Record<string, unknown[]> | undefined)?.[field] ?? []).length;
  try {
    return {
      knowledge: await count('list_knowledge', 'knowledge'),
      skills: await count('list_skills', 'skills'),
      memories: await count('list_memories', 'memories'),
      artifacts: await count('list_artifacts', 'artifacts'),
    };
  } finally {
    await client.close();
  }
}

/** The lying source: Knowledge each wrong in its own way beside one honest one, and a Skill whose file is longer than its manifest says. */
function hostileServer(): McpServer {
  const server = new McpServer({ name: 'hostile', version: '1.0.0' });
  const json = (value: unknown) => ({ content: [{ type: 'text' as const, text: JSON.stringify(value) }], structuredContent: value as Record<string, unknown> });
  const knowledge = [
    { knowledge_id: 'k-honest', title: 'Honest', latest_version: 1 },
    { knowledge_id: 'k\u202ebidi', title: 'Bidi id', latest_version: 1 },
    { knowledge_id: 'k-long', title: 'x'.repeat(201), latest_version: 1 },
    { knowledge_id: 'k-big', title: 'Oversize', latest_version: 1 },
    { knowledge_id: 'k-wrong', title: 'Wrong version', latest_version: 1 },
    { knowledge_id: 'k-twice', title: 'Twice', latest_version: 1 },
    { knowledge_id: 'k-twice', title: 'Twice', latest_version: 1 },
  ];
  server.registerTool('list_knowledge', { inputSchema: {} }, () => json({ knowledge }));
  server.registerTool('read_knowledge', { inputSchema: { knowledge_id: z.string(), version: z.union([z.string(), z.number()]).optional() } }, (args) =>
    json({
      knowledge_id: args.knowledge_id,
      version: args.knowledge_id === 'k-wrong' ? 7 : 1,
      content: args.knowledge_id === 'k-big' ? 'x'.repeat(1024 * 1024 + 1) : `# ${args.knowledge_id}\n`,
      authority: 'informational',
      version_created_at: '2026-06-23T16:00:00Z',
    }),
  );
  server.registerTool('list_skills', { inputSchema: {} }, () => json({ skills: [{ id: 's1', name: 'liar', latest_version: 1 }] }));
  server.registerTool('read_skill', { inputSchema: { skill_id: z.string(), version: z.union([z.string(), z.number()]).optional() } }, () =>
    json({ skill_id: 's1', version: 1, skill_md: '---\nname: liar\ndescription: Lies.\n---\n', attachments: [{ path: 'a.md', size: 2 }] }),
  );
  server.registerTool(
    'read_context_attachment',
    { inputSchema: { context_type: z.string(), context_id: z.string(), version: z.number(), path: z.string(), offset: z.number() } },
    () => json({ data_base64: Buffer.from('abc').toString('base64'), offset: 0, next_offset: 3, size: 3, eof: true, version_id: 'v' }),
  );
  return server;
}
