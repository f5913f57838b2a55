import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { searchProvisioning } from '../../src/kernel/health/search.ts';
import { storeBackends } from '../support/stores.ts';
import type { Agent, KbWire } from './support.ts';
import { KbSuite, backendLabel } from './support.ts';

const MISSING_ID = '0b1e7c5e-8f43-4d8e-9a51-3c2d1f0e9b7a';
const ORIENTING = ['health', 'list_kbs', 'whoami'];
const READING = ['file_history', 'get_context', 'get_file_outline', 'list_files', 'read_file', 'related', 'search'];
const WRITING = [
  'audit_log',
  'confirm_uploads',
  'generate_hub_index',
  'generate_nav',
  'get_audit_event',
  'move_file',
  'request_uploads',
  'restore_version',
  'update_file',
  'upload_file',
  'write_file',
  'write_files',
];
const ADMIN = ['delete_file', 'delete_kb', 'invite_to_kb', 'revoke_share', 'share_kb', 'update_kb'];
// Admin of a team as its member: create_kb and the team's settings.
const TEAM_ADMIN = ['create_kb', 'get_team_settings', 'update_team_settings'];

async function toolNames(agent: Agent): Promise<string[]> {
  return (await agent.client.listTools()).tools.map((t) => t.name).sort();
}

async function readJson<T>(agent: Agent, uri: string): Promise<T> {
  const { contents } = await agent.client.readResource({ uri });
  const [first] = contents;
  assert.ok(first !== undefined && 'text' in first, `${uri} has no text`);
  assert.deepEqual({ uri: first.uri, mimeType: first.mimeType }, { uri, mimeType: 'application/json' });
  return JSON.parse(first.text) as T;
}

async function readText(agent: Agent, uri: string): Promise<string> {
  const { contents } = await agent.client.readResource({ uri });
  const [first] = contents;
  assert.ok(first !== undefined && 'text' in first, `${uri} has no text`);
  assert.equal(first.mimeType, 'text/markdown');
  return first.text;
}

/** A resources/read refused with a JSON-RPC error of this code whose message starts with the Atmina code. */
async function assertReadRefused(agent: Agent, uri: string, code: number, text: RegExp): Promise<void> {
  await assert.rejects(agent.client.readResource({ uri }), (error: unknown) => {
    assert.equal((error as { code?: unknown }).code, code);
    assert.match((error as Error).message, text);
    return true;
  });
}

for (const backend of storeBackends()) {
  describe(`Atmina tools by role and resources on ${backendLabel(backend)}`, () => {
    let suite: KbSuite;
    before(async () => {
      suite = await KbSuite.open(backend);
    });
    after(async () => {
      await suite?.close();
    });

    describe('tools/list by role', () => {
      it('lists only the orienting tools to a caller without a role anywhere', async () => {
        assert.deepEqual(await toolNames(await suite.agent('outsider-bot')), ORIENTING);
      });

      it('lists the reading tools, and no writes, to a Viewer-only caller', async () => {
        assert.deepEqual(await toolNames(await suite.agent('viewer-bot')), [...ORIENTING, ...READING].sort());
      });

      it('counts an agent’s policy cap: an Admin capped at Viewer sees what a Viewer sees', async () => {
        assert.deepEqual(await toolNames(await suite.agent('capped-bot')), [...ORIENTING, ...READING].sort());
      });

      it('lists writes but not the Admin tools to an Editor by share', async () => {
        assert.deepEqual(await toolNames(await suite.agent('share-bot')), [...ORIENTING, ...READING, ...WRITING].sort());
      });

      it('lists every tool to an Admin of a team', async () => {
        assert.deepEqual(await toolNames(await suite.agent('admin-bot')), [...ORIENTING, ...READING, ...WRITING, ...ADMIN, ...TEAM_ADMIN].sort());
      });

      it('still filters by scopes: a read-only token of an Admin sees no writes', async () => {
        assert.deepEqual(
          await toolNames(await suite.agent('admin-bot', 'context.read')),
          [...ORIENTING, ...READING, 'audit_log', 'get_audit_event', 'get_team_settings'].sort(),
        );
      });

      it('refuses a call of a tool left out for the role, in Atmina’s words', async () => {
        const viewer = await suite.agent('viewer-bot');
        assert.equal(
          await viewer.fail('write_file', { kb_id: 'anything', path: 'a.md', mode: 'create', content: 'x' }),
          'permission_denied: write_file needs the Editor role on a Knowledge Base; you have Viewer at most',
        );
      });

      it('refuses create_kb to a caller who is Admin of no team as its member', async () => {
        const share = await suite.agent('share-bot');
        assert.equal(
          await share.fail('create_kb', { name: 'Nope' }),
          'permission_denied: create_kb needs the Admin role in a team; you are Admin of no team as its member',
        );
      });

      it('refuses a reading tool to a caller without any role', async () => {
        const outsider = await suite.agent('outsider-bot');
        assert.equal(
          await outsider.fail('list_files', { kb_id: 'anything' }),
          'permission_denied: list_files needs the Viewer role on a Knowledge Base; you have no role on any Knowledge Base or team',
        );
      });
    });

    describe('health: search provisioning', () => {
      it('reports the built-in engine as answering but not provisioned when no projection feeds it here', async () => {
        const health = await (await suite.agent('viewer-bot')).ok<{ search: Record<string, unknown> }>('health');
        assert.partialDeepStrictEqual(health.search, { backend: 'builtin', configured: true, answers: true, projection_running: false, provisioned: false });
      });

      it('counts search as provisioned only when configured, answering and fed', async () => {
        const answering = { ok: true, checks: [{ role: 'search' as const, backend: 'meilisearch', ok: true, latencyMs: 1 }] };
        const silent = { ok: false, checks: [{ role: 'search' as const, backend: 'meilisearch', ok: false, latencyMs: 1, error: 'no answer' }] };
        const fed = { configured: true, projections: ['search', 'graph'] };
        const provisioned = async (input: typeof fed, readiness: typeof answering | typeof silent) =>
          (await searchProvisioning(suite.db, input, readiness)).provisioned;
        assert.deepEqual(
          {
            fed: await provisioned(fed, answering),
            silent: await provisioned(fed, silent),
            unfed: await provisioned({ configured: true, projections: ['graph'] }, answering),
          },
          { fed: true, silent: false, unfed: false },
        );
      });

      it('reports the search backlog the writes left', async () => {
        const kb = await suite.kb();
        await suite.file(kb.kb_id, 'waiting.md', 'x');
        const search = await searchProvisioning(suite.db, { configured: false, projections: [] }, { ok: true, checks: [] });
        assert.ok(search.pending >= 1, `pending ${search.pending}`);
      });
    });

    describe('resources', () => {
      let kb: KbWire;
      let fileId: string;
      before(async () => {
        kb = await suite.kb();
        fileId = (await suite.file(kb.kb_id, 'decisions/search.md', '# Search decision\n\nUse hybrid retrieval.\n')).file_id;
      });

      it('declares the resources capability on the Atmina endpoints only', async () => {
        const atmina = await suite.agent('admin-bot');
        assert.partialDeepStrictEqual(atmina.client.getServerCapabilities(), { resources: { listChanged: false } });
        const alignbase = await suite.connect('admin-bot', 'context.read', { path: '/alignbase/mcp' });
        assert.equal(alignbase.client.getServerCapabilities()?.resources, undefined);
      });

      it('lists the fixed resources and the templates', async () => {
        const admin = await suite.agent('admin-bot');
        const { resources } = await admin.client.listResources();
        assert.deepEqual(resources.map((r) => r.uri).sort(), [
          'atmina://docs/agent-quickstart',
          'atmina://my-kbs',
          'atmina://my-team',
          'atmina://my-team-status',
          'atmina://status',
        ]);
        const { resourceTemplates } = await admin.client.listResourceTemplates();
        assert.deepEqual(resourceTemplates.map((r) => r.uriTemplate).sort(), [
          'atmina://kb/{kb_id}',
          'atmina://kb/{kb_id}/files',
          'atmina://kb/{kb_id}/files/{file_id}',
          'atmina://kb/{kb_id}/indexing-status',
          'atmina://kb/{kb_id}/write-guide',
        ]);
      });

      it('shows nothing to a token without context.read', async () => {
        const blind = await suite.connect('admin-bot', 'activity.write', { path: '/atmina/mcp' });
        assert.deepEqual((await blind.client.listResources()).resources, []);
        await assertReadRefused(blind, 'atmina://my-kbs', -32600, /^MCP error -32600: permission_denied: my-kbs needs the context.read scope$/);
      });

      it('atmina://status reports the build and each backend', async () => {
        const status = await readJson<{ status: string; backends: { role: string; ok: boolean }[] }>(await suite.agent('viewer-bot'), 'atmina://status');
        assert.equal(status.status, 'ok');
        assert.ok(status.backends.some((b) => b.role === 'store' && b.ok));
      });

      it('atmina://my-kbs answers as list_kbs', async () => {
        const viewer = await suite.agent('viewer-bot');
        assert.deepEqual(await readJson(viewer, 'atmina://my-kbs'), await viewer.ok('list_kbs'));
      });

      it('atmina://my-team shows the teams with roles, the current team and the default team of create_kb', async () => {
        type MyTeam = { teams: { slug: string; role: string }[]; current_team: { slug: string } | null; default_team_for_create_kb: string | null };
        const mine = await readJson<MyTeam>(await suite.agent('editor-bot'), 'atmina://my-team');
        assert.deepEqual(
          { teams: mine.teams.map((t) => ({ slug: t.slug, role: t.role })), current: mine.current_team?.slug, default: mine.default_team_for_create_kb },
          {
            teams: [
              { slug: 'docs', role: 'editor' },
              { slug: 'support', role: 'viewer' },
            ],
            current: 'docs',
            default: null,
          },
        );
        const multi = await readJson<MyTeam>(await suite.agent('multi-bot'), 'atmina://my-team');
        assert.deepEqual({ current: multi.current_team?.slug, default: multi.default_team_for_create_kb }, { current: 'docs', default: 'docs' });
        const outsider = await readJson<MyTeam>(await suite.agent('outsider-bot'), 'atmina://my-team');
        assert.deepEqual({ current: outsider.current_team, default: outsider.default_team_for_create_kb }, { current: null, default: null });
      });

      it('atmina://my-team-status counts the files of each readable KB and what waits for indexing', async () => {
        const status = await readJson<{ teams: { slug: string; kbs: { kb_id: string; files: number; indexed: boolean }[] }[] }>(
          await suite.agent('admin-bot'),
          'atmina://my-team-status',
        );
        const docs = status.teams.find((t) => t.slug === 'docs');
        // No projection runs in these suites, so the write still waits in the outbox.
        assert.partialDeepStrictEqual(
          docs?.kbs.find((k) => k.kb_id === kb.kb_id),
          { files: 1, indexed: false },
        );
      });

      it('atmina://kb/{kb_id} shows the KB with its file count, by id or slug', async () => {
        const viewer = await suite.agent('viewer-bot');
        const byId = await readJson<Record<string, unknown>>(viewer, `atmina://kb/${kb.kb_id}`);
        assert.partialDeepStrictEqual(byId, { kb_id: kb.kb_id, slug: kb.slug, role: 'viewer', files: 1 });
        assert.deepEqual(await readJson(viewer, `atmina://kb/${kb.slug}`), byId);
      });

      it('atmina://kb/{kb_id}/files lists the live files', async () => {
        const files = await readJson<{ files: { path: string; file_id: string }[]; next_cursor: string | null }>(
          await suite.agent('viewer-bot'),
          `atmina://kb/${kb.kb_id}/files`,
        );
        assert.deepEqual(
          { files: files.files.map((f) => ({ path: f.path, file_id: f.file_id })), next_cursor: files.next_cursor },
          { files: [{ path: 'decisions/search.md', file_id: fileId }], next_cursor: null },
        );
      });

      it('atmina://kb/{kb_id}/files/{file_id} answers as read_file', async () => {
        const viewer = await suite.agent('viewer-bot');
        const read = await viewer.ok<Record<string, unknown>>('read_file', { kb_id: kb.kb_id, file_id: fileId });
        // The contribution note is the read_file tool's advice ahead of the content, not part of the file.
        delete read.contribution_note;
        assert.deepEqual(await readJson(viewer, `atmina://kb/${kb.kb_id}/files/${fileId}`), read);
      });

      it('atmina://kb/{kb_id}/indexing-status shows the rows waiting per projection', async () => {
        const status = await readJson<{ indexed: boolean; projections: { projection: string; pending: number; failing: number }[] }>(
          await suite.agent('viewer-bot'),
          `atmina://kb/${kb.kb_id}/indexing-status`,
        );
        assert.deepEqual(
          { indexed: status.indexed, projections: status.projections.map((p) => ({ projection: p.projection, pending: p.pending, failing: p.failing })) },
          {
            indexed: false,
            projections: [
              { projection: 'graph', pending: 1, failing: 0 },
              { projection: 'search', pending: 1, failing: 0 },
            ],
          },
        );
      });

      it('atmina://kb/{kb_id}/write-guide names the KB and what the reader’s role allows', async () => {
        const guide = await readText(await suite.agent('viewer-bot'), `atmina://kb/${kb.kb_id}/write-guide`);
        assert.ok(guide.includes(`kb_id: \`${kb.kb_id}\``), guide);
        assert.ok(guide.includes('Your role here: **viewer**'), guide);
        assert.ok(guide.includes('if_match'), guide);
      });

      it('atmina://docs/agent-quickstart explains orienting, if_match and every error code', async () => {
        const quickstart = await readText(await suite.agent('outsider-bot'), 'atmina://docs/agent-quickstart');
        for (const part of ['whoami', 'list_kbs', 'if_match', 'request_uploads', 'content_integrity', 'payload_too_large', 'rate_limited'])
          assert.ok(quickstart.includes(part), part);
      });

      it('reads a KB out of reach as a missing one', async () => {
        const outsider = await suite.agent('outsider-bot');
        const expected = (given: string) => new RegExp(`^MCP error -32002: not_found: no Knowledge Base "${given}" is available to you`);
        await assertReadRefused(outsider, `atmina://kb/${kb.kb_id}`, -32002, expected(kb.kb_id));
        await assertReadRefused(outsider, `atmina://kb/${MISSING_ID}/files`, -32002, expected(MISSING_ID));
        const globex = await suite.agent('globex-bot', 'context.read context.write', 'globex');
        await assertReadRefused(globex, `atmina://kb/${kb.kb_id}/indexing-status`, -32002, expected(kb.kb_id));
      });

      it('reads a file of another KB as a missing file', async () => {
        const other = await suite.kb();
        await assertReadRefused(await suite.agent('admin-bot'), `atmina://kb/${other.kb_id}/files/${fileId}`, -32002, /^MCP error -32002: not_found: /);
      });

      it('answers an unknown resource with not_found', async () => {
        await assertReadRefused(
          await suite.agent('admin-bot'),
          'atmina://nothing-here',
          -32002,
          /^MCP error -32002: not_found: no resource atmina:\/\/nothing-here/,
        );
      });

      it('records each read in the audit log', async () => {
        const admin = await suite.agent('admin-bot');
        await readJson(admin, `atmina://kb/${kb.kb_id}`);
        const rows = await suite.db.query<{ tool: string; action: string; result: string }>(
          `SELECT tool, action, result FROM audit_events WHERE tenant_id = $1 AND tool = 'resource:kb' ORDER BY at DESC LIMIT 1`,
          [await suite.tenantIdOf()],
        );
        assert.deepEqual({ ...rows[0] }, { tool: 'resource:kb', action: 'resource.read', result: 'ok' });
      });
    });
  });
}
