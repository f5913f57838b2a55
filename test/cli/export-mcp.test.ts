import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { pngOf } from '../atmina/assets/fixtures.ts';
import { connectClient } from '../support/gateway.ts';
import type { CliStore, Env, Served } from './support.ts';
import { ORG, cliStoreBackends, kgw, serveWithClient, writeIn } from './support.ts';

/**
 * kgw export mcp: a tenant's content pushed from this gateway (a kgw store seeded through its own
 * MCP tools) to a second real gateway standing in for a hosted Atmina or Alignbase, through the
 * target's write tools with a real token, and checked item by item through the target's tools.
 */

const sha = (bytes: Buffer | string): string => createHash('sha256').update(bytes).digest('hex');
const IMAGE = pngOf(12, 7);
const SMALL = randomBytes(2000);
const BIG = randomBytes(1536 * 1024);
const CHECKLIST = '# Release checklist\n\n1. Tag.\n2. Announce.\n';
const SKILL_MD = '---\nname: release-check\ndescription: Checks a release.\n---\n# Release check\n';
const SCRIPT = '#!/bin/sh\necho ok\n';
const TABLE = 'step,owner\ntag,alice\n';

/** Every kind of context is Alice's to write on both gateways; release-bot may only edit Knowledge (not publish) at the target. */
const GRANTS = `grants:
  - { to: alice@acme.test, on: all_knowledge, role: owner }
  - { to: alice@acme.test, on: all_skills, role: owner }
  - { to: alice@acme.test, on: all_memories, role: owner }
  - { to: alice@acme.test, on: all_artifacts, role: owner }
  - { to: release-bot, on: all_knowledge, role: editor }
`;
/** The local tenant's grant and route on single resources: not carried by MCP tools. */
const LOCAL_GRANTS = `${GRANTS}  - { to: release-bot, on: "knowledge:Release checklist", role: publisher }
routes:
  - { deliver: "memory:Release state", to: release-bot }
`;

interface KbReport {
  local: string;
  remote: string;
  kb_created: boolean;
  files: number;
  created: number;
  updated: number;
  unchanged: number;
  failed: { path: string; reason: string }[];
  only_target: string[];
}

interface KindReport {
  kind: string;
  resources: number;
  created: number;
  updated: number;
  unchanged: number;
  failed: { name: string; reason: string }[];
  not_carried: { name: string; reason: string }[];
}

interface Report {
  to: string;
  dialect: string;
  dry_run: boolean;
  kbs: KbReport[];
  kinds: KindReport[];
  failed: { kb?: string; kind?: string; reason: string }[];
}

type Json = Record<string, unknown>;
type Listed = { files: { path: string; sha256: string; kind: string }[]; next_cursor: string | null };
type Upload = { url: string; headers: Record<string, string> };

for (const backend of cliStoreBackends()) {
  describe(`kgw export mcp on ${backend.name}`, () => {
    let store: CliStore;
    let gateway: Served;
    let local: Client;
    let localAb: Client;
    let targetStore: CliStore;
    let target: Served;
    let remote: Client;
    let remoteAb: Client;
    let token: string;
    let botToken: string;

    const run = (args: readonly string[], env: Env = store.env) => kgw(args, env, { timeoutMs: 180_000 });
    const exported = async (
      dialect: string,
      withToken: string | undefined,
      ...args: string[]
    ): Promise<{ code: number | null; report: Report; stderr: string }> => {
      const endpoint = `${target.url}/${dialect}/mcp`;
      const result = await run(
        [
          'export',
          'mcp',
          '--to',
          endpoint,
          '--dialect',
          dialect,
          '--tenant',
          'acme',
          ...(withToken === undefined ? [] : ['--token', withToken]),
          ...args,
          '--json',
        ],
        withToken === undefined ? { ...store.env, KGW_EXPORT_TOKEN: token } : store.env,
      );
      return { code: result.code, report: JSON.parse(result.stdout || '{}') as Report, stderr: result.stderr };
    };
    const call = async (on: Client, name: string, args: Json): Promise<Json> => {
      const result = await on.callTool({ name, arguments: args });
      assert.notEqual(result.isError, true, `${name}: ${JSON.stringify(result.content)}`);
      return result.structuredContent as Json;
    };
    const listAll = async (on: Client, kb: string): Promise<[string, string, string][]> => {
      const found: [string, string, string][] = [];
      let cursor: string | null = null;
      do {
        const page = (await call(on, 'list_files', { kb_id: kb, limit: 500, ...(cursor === null ? {} : { cursor }) })) as Listed;
        found.push(...page.files.map((f): [string, string, string] => [f.path, f.kind, f.sha256]));
        cursor = page.next_cursor;
      } while (cursor !== null);
      return found.sort(([a], [b]) => (a < b ? -1 : 1));
    };
    const kbSlugs = async (on: Client): Promise<string[]> => ((await call(on, 'list_kbs', {})).kbs as { slug: string }[]).map((kb) => kb.slug).sort();
    /** A file through request_uploads, a PUT and confirm_uploads, as a client sends one over 1 MiB. */
    const uploadLarge = async (on: Client, kb: string, path: string, bytes: Buffer): Promise<void> => {
      const requested = await call(on, 'request_uploads', { kb_id: kb, items: [{ path, size_bytes: bytes.length, sha256: sha(bytes) }] });
      const [ticket] = requested.uploads as Upload[];
      assert.ok(ticket !== undefined, JSON.stringify(requested));
      const headers = Object.fromEntries(Object.entries(ticket.headers).filter(([name]) => name !== 'content-length'));
      const response = await fetch(ticket.url, { method: 'PUT', headers, body: bytes });
      assert.equal(response.status, 200, await response.text());
      const confirmed = await call(on, 'confirm_uploads', { kb_id: kb, batch_token: requested.batch_token });
      assert.equal(confirmed.confirmed, 1, JSON.stringify(confirmed));
    };
    /** The bytes of an attachment, read with read_context_attachment chunk by chunk. */
    const attachment = async (on: Client, type: string, id: string, version: number, path: string): Promise<Buffer> => {
      const chunks: Buffer[] = [];
      for (let offset = 0; ;) {
        const read = await call(on, 'read_context_attachment', { context_type: type, context_id: id, version, path, offset });
        chunks.push(Buffer.from(read.data_base64 as string, 'base64'));
        if (read.eof === true) return Buffer.concat(chunks);
        offset = read.next_offset as number;
      }
    };
    const idOf = async (on: Client, tool: string, field: string, idField: string, nameField: string, name: string): Promise<string> => {
      const found = ((await call(on, tool, {}))[field] as Json[]).filter((item) => item[nameField] === name);
      assert.equal(found.length, 1, `${tool}: ${name}`);
      return found[0]?.[idField] as string;
    };
    const kbOf = (report: Report, slug: string) => report.kbs.find((kb) => kb.local === slug);
    const counts = (item: KbReport | KindReport | undefined) =>
      item && { created: item.created, updated: item.updated, unchanged: item.unchanged, failed: item.failed.length };
    const kindOf = (report: Report, kind: string) => report.kinds.find((k) => k.kind === kind);

    before(async () => {
      store = await backend.open();
      let localToken: string;
      ({ gateway, client: local, token: localToken } = await serveWithClient(store));
      const applied = await kgw(['apply', await writeIn(store.workDir, 'grants.yaml', `${ORG}${GRANTS}`)], store.env);
      assert.equal(applied.code, 0, applied.stderr);
      localAb = await connectClient(`${gateway.url}/alignbase/mcp`, localToken);
      await call(local, 'create_kb', { name: 'Handbook', team: 'docs', description: 'How we work.' });
      await call(local, 'create_kb', { name: 'Private', team: 'docs', visibility: 'private' });
      await call(local, 'write_files', {
        kb_id: 'handbook',
        items: [
          { path: 'README.md', mode: 'create', content: '# Handbook\n\nSee [[policies/leave]].\n' },
          { path: 'policies/leave.md', mode: 'create', content: '---\ntags: [hr]\n---\n# Leave\n\nTwenty days.\n' },
          { path: 'notes/ünïcödé name.md', mode: 'create', content: 'Ünïcödé\n' },
        ],
      });
      await call(local, 'upload_file', { kb_id: 'handbook', filename: 'img/chart.png', content_base64: IMAGE.toString('base64') });
      await call(local, 'upload_file', { kb_id: 'handbook', filename: 'data/small.bin', content_base64: SMALL.toString('base64') });
      await uploadLarge(local, 'handbook', 'data/big.bin', BIG);
      await call(local, 'write_file', { kb_id: 'private', path: 'plans.md', mode: 'create', content: '# Plans\n' });

      await call(localAb, 'write_knowledge', {
        expected_version: 0,
        title: 'Release checklist',
        content: CHECKLIST,
        authority: 'must_follow',
        publish: true,
        review_by: '2030-01-31',
      });
      await call(localAb, 'write_knowledge', { expected_version: 0, title: 'Writing style', content: 'Short sentences.\n' });
      await call(localAb, 'create_memory', { name: 'Release state', content: 'No release in progress.\n' });
      const skill = await call(localAb, 'create_skill', {
        skill_md: SKILL_MD,
        attachments: [
          { path: 'scripts/check.sh', data_base64: Buffer.from(SCRIPT).toString('base64') },
          { path: 'assets/logo.png', data_base64: IMAGE.toString('base64') },
        ],
      });
      await call(localAb, 'publish_skill', { skill_id: skill.skill_id });
      await call(localAb, 'write_artifact', {
        expected_version: 0,
        name: 'Handoff',
        markdown: '# Handoff\n\nSee the table.\n',
        attachments: [{ path: 'data/table.csv', data_base64: Buffer.from(TABLE).toString('base64') }],
        source_task: 'release 1.2',
      });
      const routed = await kgw(['apply', await writeIn(store.workDir, 'routes.yaml', `${ORG}${LOCAL_GRANTS}`)], store.env);
      assert.equal(routed.code, 0, routed.stderr);

      targetStore = await backend.open();
      ({ gateway: target, client: remote, token } = await serveWithClient(targetStore));
      const granted = await kgw(['apply', await writeIn(targetStore.workDir, 'grants.yaml', `${ORG}${GRANTS}`)], targetStore.env);
      assert.equal(granted.code, 0, granted.stderr);
      remoteAb = await connectClient(`${target.url}/alignbase/mcp`, token);
      const bot = await kgw(['token', 'create', '--tenant', 'acme', '--principal', 'release-bot', '--scopes', 'context.write'], targetStore.env);
      assert.equal(bot.code, 0, bot.stderr);
      botToken = bot.stdout.trim();
    });
    after(async () => {
      for (const client of [local, localAb, remote, remoteAb]) await client?.close();
      await gateway?.stop();
      await target?.stop();
      await store?.dispose();
      await targetStore?.dispose();
    });

    it('refuses bad usage before it connects, changing nothing at the target', async () => {
      const endpoint = `${target.url}/atmina/mcp`;
      const usage = async (args: string[], pattern: RegExp, env: Env = store.env) => {
        const result = await run(['export', 'mcp', ...args], env);
        assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
        assert.match(result.stderr, pattern);
      };
      const base = ['--tenant', 'acme', '--token', token];
      await usage(['--to', 'ftp://example.test/mcp', '--dialect', 'atmina', ...base], /--to must be an http or https URL/);
      await usage(['--to', 'not a url', '--dialect', 'atmina', ...base], /--to must be the URL of an MCP endpoint, not "not a url"/);
      await usage(['--to', endpoint, '--dialect', 'brain', ...base], /--dialect must be one of atmina, alignbase, not "brain"/);
      await usage(['--to', endpoint, '--dialect', 'atmina', '--tenant', 'acme'], /KGW_EXPORT_TOKEN/);
      await usage(['--to', endpoint, '--dialect', 'atmina', '--tenant', 'acme', '--token', ''], /KGW_EXPORT_TOKEN/);
      await usage(['--to', endpoint, '--dialect', 'alignbase', '--kb', 'handbook', ...base], /--kb chooses Atmina Knowledge Bases/);
      await usage(['--to', endpoint, '--dialect', 'atmina', '--only', 'skills', ...base], /--only chooses Alignbase kinds/);
      await usage(['--to', endpoint, '--dialect', 'alignbase', '--only', 'skills,files', ...base], /--only takes a comma-separated list of knowledge, skills/);
      await usage(['--to', endpoint, '--dialect', 'atmina', '--kb', '=x', ...base], /--kb takes LOCAL or LOCAL=REMOTE/);
      await usage(['--to', endpoint, '--dialect', 'atmina', '--token', token], /--tenant is required/);
      await usage(['--to', endpoint, '--dialect', 'atmina', 'extra', ...base], /this command takes no arguments/);
      const help = await run(['export', 'mcp', '--help']);
      assert.equal(help.code, 0);
      assert.match(help.stdout, /^Usage:\n {2}kgw export mcp --to URL --dialect atmina\|alignbase --tenant SLUG/);
      assert.deepEqual(await kbSlugs(remote), []);
      assert.deepEqual((await call(remoteAb, 'list_knowledge', {})).knowledge, []);
      const unreachable = await run(['export', 'mcp', '--to', 'http://127.0.0.1:1/atmina/mcp', '--dialect', 'atmina', ...base]);
      assert.equal(unreachable.code, 1);
      assert.match(unreachable.stderr, /^kgw: cannot connect to http:\/\/127\.0\.0\.1:1\/atmina\/mcp/);
    });

    it('says what a dry run would send and writes nothing (the token from KGW_EXPORT_TOKEN)', async () => {
      const { code, report } = await exported('atmina', undefined, '--dry-run');
      assert.equal(code, 0, JSON.stringify(report));
      assert.equal(report.dry_run, true);
      assert.deepEqual(counts(kbOf(report, 'handbook')), { created: 6, updated: 0, unchanged: 0, failed: 0 });
      assert.deepEqual(counts(kbOf(report, 'private')), { created: 1, updated: 0, unchanged: 0, failed: 0 });
      assert.equal(kbOf(report, 'handbook')?.kb_created, true);
      assert.deepEqual(await kbSlugs(remote), []);
      const renamed = await exported('atmina', token, '--dry-run', '--kb', 'private=vault');
      assert.equal(renamed.code, 0, JSON.stringify(renamed.report));
      assert.deepEqual(
        renamed.report.kbs.map((kb) => [kb.local, kb.remote, kb.kb_created, kb.created]),
        [['private', 'vault', true, 1]],
      );
      assert.deepEqual(await kbSlugs(remote), []);
    });

    it('makes the missing KBs and sends every file, text, Assets and a file over 1 MiB, byte for byte', async () => {
      const { code, report } = await exported('atmina', token);
      assert.equal(code, 0, JSON.stringify(report));
      assert.deepEqual(counts(kbOf(report, 'handbook')), { created: 6, updated: 0, unchanged: 0, failed: 0 });
      assert.deepEqual(counts(kbOf(report, 'private')), { created: 1, updated: 0, unchanged: 0, failed: 0 });
      assert.deepEqual(await kbSlugs(remote), ['handbook', 'private']);
      const kbs = (await call(remote, 'list_kbs', {})).kbs as { slug: string; name: string; description: string; visibility: string; team: { slug: string } }[];
      assert.deepEqual(kbs.map((kb) => [kb.slug, kb.name, kb.description, kb.visibility, kb.team.slug]).sort(), [
        ['handbook', 'Handbook', 'How we work.', 'team', 'docs'],
        ['private', 'Private', '', 'private', 'docs'],
      ]);
      for (const kb of ['handbook', 'private']) assert.deepEqual(await listAll(remote, kb), await listAll(local, kb), kb);
      const there = await listAll(remote, 'handbook');
      assert.deepEqual(
        there.filter(([path]) => path.startsWith('data/') || path.startsWith('img/')),
        [
          ['data/big.bin', 'asset', sha(BIG)],
          ['data/small.bin', 'asset', sha(SMALL)],
          ['img/chart.png', 'asset', sha(IMAGE)],
        ],
      );
      const read = await call(remote, 'read_file', { kb_id: 'handbook', path: 'notes/ünïcödé name.md' });
      assert.equal(read.content, 'Ünïcödé\n');
    });

    it('sends nothing when run again; a changed file goes as an update, a file only at the target is left alone and listed', async () => {
      const again = await exported('atmina', token);
      assert.equal(again.code, 0, JSON.stringify(again.report));
      assert.deepEqual(counts(kbOf(again.report, 'handbook')), { created: 0, updated: 0, unchanged: 6, failed: 0 });
      assert.deepEqual(counts(kbOf(again.report, 'private')), { created: 0, updated: 0, unchanged: 1, failed: 0 });
      assert.equal(kbOf(again.report, 'handbook')?.kb_created, false);
      const history = async (path: string) => ((await call(remote, 'file_history', { kb_id: 'handbook', path })).versions as unknown[]).length;
      assert.equal(await history('README.md'), 1);

      await call(local, 'write_file', { kb_id: 'handbook', path: 'README.md', mode: 'append', content: 'Updated.\n' });
      const small = (await call(local, 'read_file', { kb_id: 'handbook', path: 'data/small.bin' })) as { file_id: string; sha256: string };
      const smaller = randomBytes(1000);
      await call(local, 'update_file', {
        kb_id: 'handbook',
        file_id: small.file_id,
        if_match: small.sha256,
        mime_type: 'application/octet-stream',
        content_base64: smaller.toString('base64'),
      });
      const bigger = randomBytes(1100 * 1024);
      await uploadLarge(local, 'handbook', 'data/big.bin', bigger);
      await call(remote, 'write_file', { kb_id: 'handbook', path: 'only-there.md', mode: 'create', content: 'Theirs.\n' });

      const changed = await exported('atmina', token, '--kb', 'handbook');
      assert.equal(changed.code, 0, JSON.stringify(changed.report));
      assert.deepEqual(
        changed.report.kbs.map((kb) => kb.local),
        ['handbook'],
      );
      assert.deepEqual(counts(kbOf(changed.report, 'handbook')), { created: 0, updated: 3, unchanged: 3, failed: 0 });
      assert.deepEqual(kbOf(changed.report, 'handbook')?.only_target, ['only-there.md']);
      assert.deepEqual(
        (await listAll(remote, 'handbook')).filter(([path]) => path !== 'only-there.md'),
        await listAll(local, 'handbook'),
      );
      assert.equal(await history('README.md'), 2);
      assert.equal(await history('data/big.bin'), 2);
      assert.ok((await listAll(remote, 'handbook')).some(([path, , hash]) => path === 'data/big.bin' && hash === sha(bigger)));
    });

    it('reports a KB the token may not create and still sends the rest', async () => {
      await call(local, 'create_kb', { name: 'Extra', team: 'docs' });
      await call(local, 'write_file', { kb_id: 'extra', path: 'x.md', mode: 'create', content: 'x\n' });
      await call(local, 'write_file', { kb_id: 'handbook', path: 'news.md', mode: 'create', content: '# News\n' });
      const { code, report } = await exported('atmina', botToken, '--kb', 'extra', '--kb', 'handbook', '--kb', 'nowhere');
      assert.equal(code, 1, JSON.stringify(report));
      assert.deepEqual(
        report.failed.map((item) => item.kb),
        ['nowhere', 'extra'],
      );
      assert.match(report.failed[1]?.reason ?? '', /^create_kb at the target: /);
      assert.deepEqual(counts(kbOf(report, 'handbook')), { created: 1, updated: 0, unchanged: 6, failed: 0 });
      assert.deepEqual(await kbSlugs(remote), ['handbook', 'private']);
      assert.ok((await listAll(remote, 'handbook')).some(([path]) => path === 'news.md'));
      const text = await run([
        'export',
        'mcp',
        '--to',
        `${target.url}/atmina/mcp`,
        '--dialect',
        'atmina',
        '--tenant',
        'acme',
        '--token',
        botToken,
        '--kb',
        'extra',
      ]);
      assert.equal(text.code, 1);
      assert.match(text.stdout, /^refused extra: create_kb at the target: /m);
    });

    it('says what a dry run of Alignbase content would send and writes nothing', async () => {
      const { code, report } = await exported('alignbase', token, '--dry-run');
      assert.equal(code, 0, JSON.stringify(report));
      assert.deepEqual(
        report.kinds.map((kind) => [kind.kind, kind.resources, kind.created]),
        [
          ['knowledge', 2, 2],
          ['skills', 1, 1],
          ['memories', 1, 1],
          ['artifacts', 1, 1],
        ],
      );
      for (const [tool, field] of [
        ['list_knowledge', 'knowledge'],
        ['list_skills', 'skills'],
        ['list_memories', 'memories'],
        ['list_artifacts', 'artifacts'],
      ] as const)
        assert.deepEqual((await call(remoteAb, tool, {}))[field], [], tool);
    });

    it('sends every Knowledge, Skill, Memory and Artifact with its files, and lists what MCP tools cannot carry', async () => {
      const { code, report } = await exported('alignbase', token);
      assert.equal(code, 0, JSON.stringify(report));
      for (const [kind, created] of [
        ['knowledge', 2],
        ['skills', 1],
        ['memories', 1],
        ['artifacts', 1],
      ] as const)
        assert.deepEqual(counts(kindOf(report, kind)), { created, updated: 0, unchanged: 0, failed: 0 }, kind);
      assert.deepEqual(kindOf(report, 'knowledge')?.not_carried, [
        { name: 'Release checklist', reason: 'its grants (release-bot: publisher): MCP tools do not manage permissions' },
      ]);
      assert.deepEqual(kindOf(report, 'memories')?.not_carried, [
        { name: 'Release state', reason: 'its routes (to release-bot): MCP tools do not manage routes' },
      ]);

      const checklist = await call(remoteAb, 'read_knowledge', {
        knowledge_id: await idOf(remoteAb, 'list_knowledge', 'knowledge', 'knowledge_id', 'title', 'Release checklist'),
        version: 'latest',
      });
      assert.deepEqual(
        [sha(checklist.content as string), checklist.authority, checklist.is_published_version, checklist.review_by],
        [sha(CHECKLIST), 'must_follow', true, '2030-01-31'],
      );
      const style = await call(remoteAb, 'read_knowledge', {
        knowledge_id: await idOf(remoteAb, 'list_knowledge', 'knowledge', 'knowledge_id', 'title', 'Writing style'),
      });
      assert.deepEqual([style.content, style.authority, style.published_version], ['Short sentences.\n', 'informational', null]);
      const memory = await call(remoteAb, 'read_memory', {
        memory_id: await idOf(remoteAb, 'list_memories', 'memories', 'memory_id', 'name', 'Release state'),
      });
      assert.equal(memory.content, 'No release in progress.\n');
      const skillId = await idOf(remoteAb, 'list_skills', 'skills', 'id', 'name', 'release-check');
      const skill = await call(remoteAb, 'read_skill', { skill_id: skillId, version: 'latest' });
      assert.deepEqual([skill.skill_md, skill.is_published_version], [SKILL_MD, true]);
      const skillFiles = (skill.attachments as { path: string }[]).map((a) => a.path).sort();
      assert.deepEqual(skillFiles, ['assets/logo.png', 'scripts/check.sh']);
      assert.equal(sha(await attachment(remoteAb, 'skill', skillId, skill.version as number, 'scripts/check.sh')), sha(SCRIPT));
      assert.equal(sha(await attachment(remoteAb, 'skill', skillId, skill.version as number, 'assets/logo.png')), sha(IMAGE));
      const artifactId = await idOf(remoteAb, 'list_artifacts', 'artifacts', 'artifact_id', 'name', 'Handoff');
      const artifact = await call(remoteAb, 'read_artifact', { artifact_id: artifactId });
      assert.deepEqual([artifact.markdown, artifact.source_task], ['# Handoff\n\nSee the table.\n', 'release 1.2']);
      assert.equal(sha(await attachment(remoteAb, 'artifact', artifactId, artifact.version as number, 'data/table.csv')), sha(TABLE));
    });

    it('sends nothing when run again, and a changed Knowledge, Memory or Skill as a new version', async () => {
      const again = await exported('alignbase', token);
      assert.equal(again.code, 0, JSON.stringify(again.report));
      for (const kind of again.report.kinds) assert.deepEqual(counts(kind), { created: 0, updated: 0, unchanged: kind.resources, failed: 0 }, kind.kind);

      const styleId = await idOf(localAb, 'list_knowledge', 'knowledge', 'knowledge_id', 'title', 'Writing style');
      await call(localAb, 'write_knowledge', { knowledge_id: styleId, expected_version: 1, content: 'Short sentences. Plain words.\n' });
      const memoryId = await idOf(localAb, 'list_memories', 'memories', 'memory_id', 'name', 'Release state');
      await call(localAb, 'write_memory', { memory_id: memoryId, expected_version: 1, content: 'Release 1.2 in progress.\n' });
      const skillId = await idOf(localAb, 'list_skills', 'skills', 'id', 'name', 'release-check');
      await call(localAb, 'write_skill', {
        skill_id: skillId,
        expected_version: 1,
        skill_md: SKILL_MD,
        attachments: [{ path: 'scripts/check.sh', data_base64: Buffer.from(`${SCRIPT}exit 0\n`).toString('base64') }],
      });

      const changed = await exported('alignbase', token, '--only', 'knowledge,memories,skills');
      assert.equal(changed.code, 0, JSON.stringify(changed.report));
      assert.deepEqual(
        changed.report.kinds.map((kind) => [kind.kind, kind.created, kind.updated, kind.unchanged]),
        [
          ['knowledge', 0, 1, 1],
          ['skills', 0, 1, 0],
          ['memories', 0, 1, 0],
        ],
      );
      // Published here at its version 1 only: the target's copy keeps the new text unpublished, and says so.
      assert.deepEqual(kindOf(changed.report, 'skills')?.not_carried, [
        { name: 'release-check', reason: 'its published version 1: only the latest version (2) is carried, unpublished' },
      ]);
      const style = await call(remoteAb, 'read_knowledge', {
        knowledge_id: await idOf(remoteAb, 'list_knowledge', 'knowledge', 'knowledge_id', 'title', 'Writing style'),
      });
      assert.deepEqual([style.version, style.content], [2, 'Short sentences. Plain words.\n']);
      const memory = await call(remoteAb, 'read_memory', {
        memory_id: await idOf(remoteAb, 'list_memories', 'memories', 'memory_id', 'name', 'Release state'),
      });
      assert.deepEqual([memory.version, memory.content], [2, 'Release 1.2 in progress.\n']);
      const remoteSkillId = await idOf(remoteAb, 'list_skills', 'skills', 'id', 'name', 'release-check');
      const skill = await call(remoteAb, 'read_skill', { skill_id: remoteSkillId, version: 'latest' });
      assert.deepEqual(
        (skill.attachments as { path: string }[]).map((a) => a.path),
        ['scripts/check.sh'],
      );
      assert.equal(sha(await attachment(remoteAb, 'skill', remoteSkillId, skill.version as number, 'scripts/check.sh')), sha(`${SCRIPT}exit 0\n`));
      const third = await exported('alignbase', token);
      assert.equal(third.code, 0, JSON.stringify(third.report));
      for (const kind of third.report.kinds) assert.equal(kind.unchanged, kind.resources, kind.kind);
    });

    it('reports each resource the target refuses and still sends the others', async () => {
      await call(localAb, 'write_knowledge', { expected_version: 0, title: 'Published news', content: '# News\n', publish: true });
      await call(localAb, 'write_knowledge', { expected_version: 0, title: 'Draft notes', content: '# Notes\n' });
      await call(localAb, 'create_memory', { name: 'Scratch', content: 'scratch\n' });
      // release-bot may edit Knowledge at the target, not publish it, and holds no role on Memories.
      const { code, report } = await exported('alignbase', botToken, '--only', 'memories,knowledge');
      assert.equal(code, 1, JSON.stringify(report));
      assert.deepEqual(
        report.kinds.map((kind) => kind.kind),
        ['knowledge', 'memories'],
      );
      const knowledge = kindOf(report, 'knowledge');
      assert.deepEqual(counts(knowledge), { created: 1, updated: 0, unchanged: 2, failed: 1 });
      assert.equal(knowledge?.failed[0]?.name, 'Published news');
      assert.match(knowledge?.failed[0]?.reason ?? '', /^write_knowledge at the target: forbidden/);
      const memories = kindOf(report, 'memories');
      assert.deepEqual(memories?.failed.map((item) => item.name).sort(), ['Release state', 'Scratch']);
      assert.deepEqual(((await call(remoteAb, 'list_knowledge', {})).knowledge as { title: string }[]).map((k) => k.title).sort(), [
        'Draft notes',
        'Release checklist',
        'Writing style',
      ]);
      const text = await run([
        'export',
        'mcp',
        '--to',
        `${target.url}/alignbase/mcp`,
        '--dialect',
        'alignbase',
        '--tenant',
        'acme',
        '--token',
        botToken,
        '--only',
        'memories',
      ]);
      assert.equal(text.code, 1);
      assert.match(text.stdout, /^memories: 2 resources, 0 created, 0 updated, 0 unchanged, 2 refused, 0 not carried\n/);
      assert.match(text.stdout, /^ {2}refused "Scratch": create_memory at the target: forbidden$/m);
    });
  });
}
