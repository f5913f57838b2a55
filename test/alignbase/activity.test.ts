import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { setActivityEnabled } from '../../src/alignbase/activity/activity.ts';
import { addRoute } from '../../src/alignbase/access/routes.ts';
import { cliTrail } from '../support/audit.ts';
import { issueToken } from '../support/gateway.ts';
import { storeBackends } from '../support/stores.ts';
import { MCP_PATH, OrgGateway, assertScopeRefused } from './support.ts';

/**
 * The Activity tools through the SDK's client over HTTP: activity.write (with context.read)
 * to see and call them, installations per agent, events only for the caller's own installation
 * and reported capabilities, strict shapes that store nothing when refused, a hook session
 * started once under concurrent calls with the current context, hook events and coverage, and
 * the tenant's Activity switch.
 */

const ORG = `tenant: act
name: Activity Co
people:
  - email: ann@act.test
    name: Ann
agents:
  - name: hooky
    owner: ann@act.test
  - name: other-bot
    owner: ann@act.test
grants:
  - { to: hooky, on: all_memories, role: editor }
`;

const SPY_ORG = `tenant: spyco
name: Spy Co
people:
  - email: oz@spy.test
    name: Oz
agents:
  - name: spy
    owner: oz@spy.test
`;

const ACTIVITY_TOOLS = ['report_installation_capabilities', 'record_activity_event', 'start_hook_session', 'record_hook_activity_event'];
const FULL = 'context.read activity.write';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const NOT_FOUND = 'installation not found: call report_installation_capabilities and use the local_installation_id it returns';
const DISABLED = 'activity_disabled: Activity is disabled for this tenant; nothing was recorded';
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

interface Reply {
  isError: boolean;
  text: string;
  data: Record<string, unknown> | undefined;
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<Reply> {
  const result = await client.callTool({ name, arguments: args });
  const text = (result.content as { type: string; text: string }[])[0]?.text ?? '';
  return { isError: result.isError === true, text, data: result.structuredContent as Record<string, unknown> | undefined };
}

async function ok(client: Client, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const reply = await call(client, name, args);
  assert.equal(reply.isError, false, `${name}: ${reply.text}`);
  assert.ok(reply.data, `${name} returned structured content`);
  return reply.data;
}

async function fails(client: Client, name: string, args: Record<string, unknown>, text: string | RegExp): Promise<void> {
  const reply = await call(client, name, args);
  assert.equal(reply.isError, true, `${name} should fail with "${String(text)}", got ${reply.text.slice(0, 300)}`);
  if (typeof text === 'string') assert.equal(reply.text, text);
  else assert.match(reply.text, text);
}

const capability = (what: string, name: string) =>
  `capability_not_reported: ${what} needs the "${name}" capability; report it with report_installation_capabilities first`;

for (const backend of storeBackends()) {
  describe(`Alignbase Activity on ${backend.name}`, () => {
    let gw: OrgGateway;
    let tenantId: string;
    let hooky: Client;
    let other: Client;
    let spy: Client;
    /** hooky's installation, registered by the second test; the tests after it record on it, in order. */
    let installation: string;

    const connect = async (tenant: string, principal: string, scopes = FULL) => (await gw.connect(principal, scopes, { tenant })).client;

    /** Every Activity row of the store, to show that a refused call stored nothing. */
    const activityRows = async () => ({
      installations: await gw.db.query(
        'SELECT id, integration, transport, capabilities, client_version, coverage::text, updated_at::text, last_seen_at::text FROM activity_installations ORDER BY id',
      ),
      sessions: await gw.db.query('SELECT id, session_id, last_seen_at::text FROM activity_sessions ORDER BY id'),
      events: await gw.db.query('SELECT id FROM activity_events ORDER BY id'),
    });
    const switchActivity = (enabled: boolean) => setActivityEnabled(gw.db, cliTrail(gw.db), { tenant: 'act', enabled });

    before(async () => {
      gw = await OrgGateway.start(backend, [ORG, SPY_ORG], { tenant: 'act', endpoint: MCP_PATH });
      tenantId = await gw.tenantIdOf();
      hooky = await connect('act', 'hooky');
      other = await connect('act', 'other-bot');
      spy = await connect('spyco', 'spy');
    });
    after(() => gw.close());

    it('hides and refuses the Activity tools without activity.write (HTTP 403), and without context.read', async () => {
      const { tools } = await hooky.listTools();
      for (const name of ACTIVITY_TOOLS) {
        const tool = tools.find((t) => t.name === name);
        assert.ok(tool, `${name} is listed with activity.write`);
        assert.ok(tool.outputSchema, `${name} has an output schema`);
      }
      for (const scopes of ['context.read', 'context.read context.write', 'activity.write']) {
        const reader = await connect('act', 'hooky', scopes);
        const names = (await reader.listTools()).tools.map((t) => t.name);
        for (const name of ACTIVITY_TOOLS) assert.ok(!names.includes(name), `${name} is hidden for ${scopes}`);
        for (const name of ACTIVITY_TOOLS) await assertScopeRefused(reader.callTool({ name, arguments: {} }));
      }
      // On the wire: 403 with the insufficient_scope challenge naming activity.write.
      const token = await issueToken(gw.db, 'act', 'hooky', 'context.read');
      const response = await fetch(gw.url, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 3,
          method: 'tools/call',
          params: { name: 'report_installation_capabilities', arguments: { integration: 'x', transport: 'stdio', capabilities: [] } },
        }),
      });
      assert.equal(response.status, 403);
      assert.match(response.headers.get('www-authenticate') ?? '', /error="insufficient_scope", scope="context\.read activity\.write"/);
      assert.deepEqual(await response.json(), { jsonrpc: '2.0', id: 3, error: { code: -32003, message: 'forbidden' } });
      assert.deepEqual((await activityRows()).installations, []);
    });

    it('registers installations per agent and updates one on re-report', async () => {
      const first = await ok(hooky, 'report_installation_capabilities', {
        integration: 'claude-code',
        transport: 'stdio',
        capabilities: ['skills_install', 'context_load', 'context_load'],
        client_version: '2.1.0',
      });
      assert.deepEqual(Object.keys(first).sort(), ['capabilities', 'local_installation_id', 'registered']);
      assert.match(String(first.local_installation_id), UUID);
      assert.equal(first.registered, true);
      // Deduplicated, in the canonical order.
      assert.deepEqual(first.capabilities, ['context_load', 'skills_install']);
      installation = String(first.local_installation_id);

      const again = await ok(hooky, 'report_installation_capabilities', {
        integration: 'claude-code',
        transport: 'streamable-http',
        capabilities: ['context_load', 'skills_install', 'skills_update', 'session_start_hook', 'prompt_submit_hook', 'tool_use_hook'],
        local_installation_id: installation.toUpperCase(),
      });
      assert.deepEqual(again, {
        local_installation_id: installation,
        registered: false,
        capabilities: ['context_load', 'skills_install', 'skills_update', 'session_start_hook', 'prompt_submit_hook', 'tool_use_hook'],
      });
      const [row] = await gw.db.query<{ transport: string; client_version: string | null }>(
        'SELECT transport, client_version FROM activity_installations WHERE id = $1',
        [installation],
      );
      assert.deepEqual({ ...row }, { transport: 'streamable-http', client_version: null });

      // A second installation of the same agent, and one of another agent.
      const second = await ok(hooky, 'report_installation_capabilities', { integration: 'cursor', transport: 'sse', capabilities: [] });
      assert.equal(second.registered, true);
      assert.notEqual(second.local_installation_id, installation);
      await ok(other, 'report_installation_capabilities', { integration: 'codex', transport: 'stdio', capabilities: ['context_load'] });
      const [count] = await gw.db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM activity_installations i JOIN principals p ON p.id = i.agent_id WHERE p.name = 'hooky'",
      );
      assert.equal(count?.n, 2);

      // Nobody else can re-report it: another agent, another tenant, an unknown id.
      const before = await activityRows();
      await fails(
        other,
        'report_installation_capabilities',
        { integration: 'codex', transport: 'stdio', capabilities: [], local_installation_id: installation },
        NOT_FOUND,
      );
      await fails(
        spy,
        'report_installation_capabilities',
        { integration: 'codex', transport: 'stdio', capabilities: [], local_installation_id: installation },
        NOT_FOUND,
      );
      await fails(
        hooky,
        'report_installation_capabilities',
        { integration: 'codex', transport: 'stdio', capabilities: [], local_installation_id: UNKNOWN_ID },
        NOT_FOUND,
      );
      assert.deepEqual(await activityRows(), before);
    });

    it('refuses a person, unknown capabilities, unknown fields and oversized names, storing nothing', async () => {
      const before = await activityRows();
      const person = await connect('act', 'ann@act.test');
      await fails(person, 'report_installation_capabilities', { integration: 'claude-code', transport: 'stdio', capabilities: [] }, 'forbidden');
      const base = { integration: 'claude-code', transport: 'stdio', capabilities: ['context_load'] };
      const invalid = /^invalid arguments: /;
      for (const args of [
        { ...base, capabilities: ['context_load', 'read_everything'] },
        { ...base, capabilities: Array.from({ length: 51 }, () => 'context_load') },
        { ...base, transport: 'websocket' },
        { ...base, integration: 'x'.repeat(101) },
        { ...base, integration: 'Claude Code' },
        { ...base, integration: '' },
        { ...base, client_version: '1'.repeat(51) },
        { ...base, client_version: '1.0 (PATH=/usr/bin)' },
        { ...base, local_installation_id: 'not-a-uuid' },
        { ...base, environment: { HOME: '/root' } },
        { ...base, transcript: 'user: hello' },
      ]) {
        await fails(hooky, 'report_installation_capabilities', args, invalid);
      }
      const ev = (event: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ local_installation_id: installation, event, ...extra });
      for (const args of [
        ev({ type: 'knowledge_memorised' }),
        ev({ type: 'context_loaded', prompt: 'the whole prompt' }),
        ev({ type: 'context_loaded' }, { reasoning: 'because' }),
        ev({ type: 'context_loaded', error_code: 'x'.repeat(65), status: 'error' }),
        ev({ type: 'context_loaded', error_code: 'has spaces', status: 'error' }),
        ev({ type: 'context_loaded', status: 'maybe' }),
        ev({ type: 'context_loaded', occurred_at: 'yesterday' }),
        ev({ type: 'skill_installed', subject: { type: 'skill', id: UNKNOWN_ID, content: 'SKILL.md…' } }),
        ev({ type: 'skill_installed', subject: { type: 'document', id: UNKNOWN_ID } }),
        ev({ type: 'skill_installed', subject: { type: 'skill', id: UNKNOWN_ID, version: 0 } }),
        { event: { type: 'context_loaded' } },
      ]) {
        await fails(hooky, 'record_activity_event', args, invalid);
      }
      for (const args of [
        { local_installation_id: installation, hook: 'session_start', session_id: 's'.repeat(129) },
        { local_installation_id: installation, hook: 'session_start', session_id: 'has space' },
        { local_installation_id: installation, hook: 'pre_tool_use', session_id: 's1' },
        { local_installation_id: installation, hook: 'session_start', session_id: 's1', cwd: '/home/ann' },
      ]) {
        await fails(hooky, 'start_hook_session', args, invalid);
      }
      for (const args of [
        { local_installation_id: installation, session_id: 's1', event: { type: 'tool_used', tool_name: 'Bash', tool_input: { command: 'ls' } } },
        { local_installation_id: installation, session_id: 's1', event: { type: 'tool_used', tool_name: 'Bash ls -la' } },
        { local_installation_id: installation, session_id: 's1', event: { type: 'tool_used', tool_name: 't'.repeat(101) } },
        { local_installation_id: installation, session_id: 's1', event: { type: 'prompt_submitted', prompt: 'hello' } },
        { local_installation_id: installation, session_id: 's1', event: { type: 'compacted' } },
      ]) {
        await fails(hooky, 'record_hook_activity_event', args, invalid);
      }
      assert.deepEqual(await activityRows(), before);
    });

    // The next four tests record on the installation registered above and run in this order: the
    // last reads the audit rows the three before it wrote.
    const skillId = '11111111-2222-4333-8444-555555555555';

    it('records events on the caller’s own installation, storing subject, status and occurred_at as given', async () => {
      const recorded = await ok(hooky, 'record_activity_event', { local_installation_id: installation, event: { type: 'context_loaded' } });
      assert.deepEqual(Object.keys(recorded).sort(), ['event_id', 'recorded']);
      assert.equal(recorded.recorded, true);
      assert.match(String(recorded.event_id), UUID);
      const at = new Date(Date.now() - 3_600_000).toISOString();
      const skill = await ok(hooky, 'record_activity_event', {
        local_installation_id: installation,
        event: { type: 'skill_installed', occurred_at: at, subject: { type: 'skill', id: skillId, version: 3 } },
      });
      await ok(hooky, 'record_activity_event', {
        local_installation_id: installation,
        event: { type: 'skill_updated', subject: { type: 'skill', id: skillId }, status: 'error', error_code: 'write_failed' },
      });
      const [row] = await gw.db.query<Record<string, unknown>>(
        'SELECT source, type, subject_type, subject_id, subject_version, status, error_code, occurred_at, agent_id FROM activity_events WHERE id = $1',
        [skill.event_id],
      );
      assert.partialDeepStrictEqual(row, {
        source: 'client',
        type: 'skill_installed',
        subject_type: 'skill',
        subject_id: skillId,
        subject_version: 3,
        status: 'ok',
        error_code: null,
      });
      assert.equal(new Date(row?.occurred_at as Date).toISOString(), at);
    });

    it('refuses events whose capability is not reported, or whose subject, error_code or occurred_at breaks the rules, storing nothing', async () => {
      const before = await activityRows();
      await fails(
        hooky,
        'record_activity_event',
        { local_installation_id: installation, event: { type: 'session_started' } },
        capability('event type "session_started"', 'session_lifecycle'),
      );
      await fails(
        hooky,
        'record_activity_event',
        { local_installation_id: installation, event: { type: 'connection_tested' } },
        capability('event type "connection_tested"', 'connection_test'),
      );
      await fails(
        hooky,
        'record_activity_event',
        { local_installation_id: installation, event: { type: 'skill_installed' } },
        'event type "skill_installed" needs a subject of type skill',
      );
      await fails(
        hooky,
        'record_activity_event',
        { local_installation_id: installation, event: { type: 'skill_installed', subject: { type: 'memory', id: skillId } } },
        'event type "skill_installed" needs a subject of type skill',
      );
      await fails(
        hooky,
        'record_activity_event',
        { local_installation_id: installation, event: { type: 'context_loaded', subject: { type: 'knowledge', id: skillId } } },
        'event type "context_loaded" takes no subject',
      );
      await fails(
        hooky,
        'record_activity_event',
        { local_installation_id: installation, event: { type: 'context_loaded', error_code: 'oops' } },
        'error_code is only allowed with status "error"',
      );
      const window = 'occurred_at must be within the last 7 days and at most 5 minutes in the future';
      await fails(
        hooky,
        'record_activity_event',
        { local_installation_id: installation, event: { type: 'context_loaded', occurred_at: new Date(Date.now() - 8 * 86_400_000).toISOString() } },
        window,
      );
      await fails(
        hooky,
        'record_activity_event',
        { local_installation_id: installation, event: { type: 'context_loaded', occurred_at: new Date(Date.now() + 10 * 60_000).toISOString() } },
        window,
      );
      assert.deepEqual(await activityRows(), before);
    });

    it('answers not found for another agent’s, another tenant’s or an unknown installation, and forbidden to a person, storing nothing', async () => {
      const before = await activityRows();
      // Another agent's installation, another tenant, an unknown id: not found, alike.
      await fails(other, 'record_activity_event', { local_installation_id: installation, event: { type: 'context_loaded' } }, NOT_FOUND);
      await fails(spy, 'record_activity_event', { local_installation_id: installation, event: { type: 'context_loaded' } }, NOT_FOUND);
      await fails(hooky, 'record_activity_event', { local_installation_id: UNKNOWN_ID, event: { type: 'context_loaded' } }, NOT_FOUND);
      const person = await connect('act', 'ann@act.test');
      await fails(person, 'record_activity_event', { local_installation_id: installation, event: { type: 'context_loaded' } }, 'forbidden');
      assert.deepEqual(await activityRows(), before);
    });

    it('audits installations and events as identifiers and metadata without payloads, and each refused event with its kind', async () => {
      const audits = await gw.db.query<{ action: string; tool: string; details: Record<string, unknown> }>(
        "SELECT action, tool, details FROM audit_events WHERE tenant_id = $1 AND action LIKE 'activity.%' ORDER BY at, id",
        [tenantId],
      );
      assert.deepEqual(
        audits.map((a) => a.action),
        [
          'activity.installation_register',
          'activity.installation_update',
          'activity.installation_register',
          'activity.installation_register',
          'activity.event',
          'activity.event',
          'activity.event',
        ],
      );
      assert.deepEqual(audits.at(-1)?.details, { event_type: 'skill_updated', status: 'error' });
      // The refusals of the two tests above, in order: a capability not reported is not permitted.
      const refused = await gw.db.query<{ error_code: string }>(
        "SELECT error_code FROM audit_events WHERE tenant_id = $1 AND tool = 'record_activity_event' AND result = 'error' ORDER BY at, id",
        [tenantId],
      );
      assert.deepEqual(
        refused.slice(-11).map((r) => r.error_code),
        [
          'permission_denied',
          'permission_denied',
          'validation',
          'validation',
          'validation',
          'validation',
          'validation',
          'validation',
          'not_found',
          'not_found',
          'permission_denied',
        ],
      );
    });

    it('starts a hook session once under 10 concurrent calls and returns the current context', async () => {
      // Something routed to hooky, so the context is not empty.
      const memory = await ok(hooky, 'report_installation_capabilities', {
        integration: 'claude-code',
        transport: 'stdio',
        capabilities: [],
        local_installation_id: installation,
      });
      assert.equal(memory.registered, false);
      const reader = await connect('act', 'hooky', 'context.read context.write');
      const created = await ok(reader, 'create_memory', { name: 'Hook memory', content: 'Remember the release train.' });
      await gw.db.tx(async (tx) => {
        const [agent] = await tx.query<{ id: string }>("SELECT id FROM principals WHERE tenant_id = $1 AND name = 'hooky'", [tenantId]);
        await addRoute(tx, { tenantId, resourceId: String(created.memory_id), target: { agentId: agent!.id } });
      });
      const args = { local_installation_id: installation, hook: 'session_start', session_id: 'sess-0001' };
      // The hook capability is not reported (the re-report above dropped every capability).
      await fails(hooky, 'start_hook_session', args, capability('the session_start hook', 'session_start_hook'));
      await ok(hooky, 'report_installation_capabilities', {
        integration: 'claude-code',
        transport: 'stdio',
        capabilities: ['context_load', 'session_start_hook', 'prompt_submit_hook', 'tool_use_hook'],
        local_installation_id: installation,
      });
      await fails(other, 'start_hook_session', args, NOT_FOUND);
      await fails(spy, 'start_hook_session', args, NOT_FOUND);

      const expected = (await reader.callTool({ name: 'get_current_context', arguments: {} })).content as { text: string }[];
      const context = expected[0]!.text;
      assert.match(context, /Remember the release train\./);
      const replies = await Promise.all(Array.from({ length: 10 }, () => call(hooky, 'start_hook_session', args)));
      for (const reply of replies) {
        assert.equal(reply.isError, false, reply.text);
        assert.equal(reply.text, context);
        assert.deepEqual(Object.keys(reply.data ?? {}).sort(), ['activity_enabled', 'context', 'hook', 'session_id', 'started']);
        assert.equal(reply.data?.context, context);
        assert.equal(reply.data?.session_id, 'sess-0001');
        assert.equal(reply.data?.hook, 'session_start');
        assert.equal(reply.data?.activity_enabled, true);
      }
      assert.equal(replies.filter((r) => r.data?.started === true).length, 1);
      const sessions = await gw.db.query('SELECT hook FROM activity_sessions WHERE session_id = $1', ['sess-0001']);
      assert.deepEqual(
        sessions.map((s) => ({ ...s })),
        [{ hook: 'session_start' }],
      );
      const starts = await gw.db.query("SELECT source FROM activity_events WHERE session_id = $1 AND type = 'session_started'", ['sess-0001']);
      assert.deepEqual(
        starts.map((s) => ({ ...s })),
        [{ source: 'hook' }],
      );
      // Once more, from the prompt hook: the same session, not started again.
      const later = await ok(hooky, 'start_hook_session', { ...args, hook: 'prompt_submit' });
      assert.equal(later.started, false);
      // The start is audited once, and every call as a context request.
      const [starts2] = await gw.db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM audit_events WHERE tenant_id = $1 AND action = 'activity.session_start'",
        [tenantId],
      );
      assert.equal(starts2?.n, 1);
      const [requests] = await gw.db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM audit_events WHERE tenant_id = $1 AND action = 'context.request' AND tool = 'start_hook_session'",
        [tenantId],
      );
      assert.equal(requests?.n, 11);
      const [coverage] = await gw.db.query<{ coverage: Record<string, string> }>('SELECT coverage FROM activity_installations WHERE id = $1', [installation]);
      assert.deepEqual(Object.keys(coverage!.coverage).sort(), ['prompt_submit_hook', 'session_start_hook']);
    });

    it('records hook events and refreshes the hook coverage', async () => {
      const [before] = await gw.db.query<{ coverage: Record<string, string> }>('SELECT coverage FROM activity_installations WHERE id = $1', [installation]);
      await new Promise((resolve) => setTimeout(resolve, 5));
      const prompt = await ok(hooky, 'record_hook_activity_event', {
        local_installation_id: installation,
        session_id: 'sess-0001',
        event: { type: 'prompt_submitted' },
      });
      assert.deepEqual(Object.keys(prompt).sort(), ['event_id', 'recorded']);
      await ok(hooky, 'record_hook_activity_event', {
        local_installation_id: installation,
        session_id: 'sess-0001',
        event: { type: 'tool_used', tool_name: 'mcp__alignbase__read_skill' },
      });
      await ok(hooky, 'record_hook_activity_event', {
        local_installation_id: installation,
        session_id: 'sess-0002',
        event: { type: 'tool_used', tool_name: 'Bash', status: 'error', error_code: 'exit_1' },
      });
      const [after] = await gw.db.query<{ coverage: Record<string, string> }>('SELECT coverage FROM activity_installations WHERE id = $1', [installation]);
      assert.deepEqual(Object.keys(after!.coverage).sort(), ['prompt_submit_hook', 'session_start_hook', 'tool_use_hook']);
      assert.ok(after!.coverage.prompt_submit_hook! > before!.coverage.prompt_submit_hook!, 'prompt_submit_hook refreshed');
      assert.equal(after!.coverage.session_start_hook, before!.coverage.session_start_hook);
      const rows = await gw.db.query<{ type: string; session_id: string; tool_name: string | null; source: string }>(
        "SELECT type, session_id, tool_name, source FROM activity_events WHERE installation_id = $1 AND source = 'hook' AND type <> 'session_started' ORDER BY recorded_at, tool_name NULLS FIRST",
        [installation],
      );
      assert.deepEqual(
        rows.map((r) => ({ type: r.type, session_id: r.session_id, tool_name: r.tool_name })),
        [
          { type: 'prompt_submitted', session_id: 'sess-0001', tool_name: null },
          { type: 'tool_used', session_id: 'sess-0001', tool_name: 'mcp__alignbase__read_skill' },
          { type: 'tool_used', session_id: 'sess-0002', tool_name: 'Bash' },
        ],
      );

      const snapshot = await activityRows();
      await fails(
        hooky,
        'record_hook_activity_event',
        { local_installation_id: installation, session_id: 'sess-0001', event: { type: 'session_stopped' } },
        capability('hook event "session_stopped"', 'stop_hook'),
      );
      await fails(
        hooky,
        'record_hook_activity_event',
        { local_installation_id: installation, session_id: 'sess-0001', event: { type: 'prompt_submitted', tool_name: 'Bash' } },
        'tool_name is only allowed for tool_used',
      );
      await fails(
        other,
        'record_hook_activity_event',
        { local_installation_id: installation, session_id: 'sess-0001', event: { type: 'prompt_submitted' } },
        NOT_FOUND,
      );
      await fails(
        spy,
        'record_hook_activity_event',
        { local_installation_id: installation, session_id: 'sess-0001', event: { type: 'prompt_submitted' } },
        NOT_FOUND,
      );
      assert.deepEqual(await activityRows(), snapshot);
    });

    it('refuses events while Activity is disabled for the tenant, and still hands hooks the context', async () => {
      const snapshot = await activityRows();
      assert.equal((await switchActivity(false)).changed, true);
      try {
        await fails(hooky, 'record_activity_event', { local_installation_id: installation, event: { type: 'context_loaded' } }, DISABLED);
        await fails(
          hooky,
          'record_hook_activity_event',
          { local_installation_id: installation, session_id: 'sess-0001', event: { type: 'prompt_submitted' } },
          DISABLED,
        );
        const [disabled] = await gw.db.query<{ error_code: string }>(
          "SELECT error_code FROM audit_events WHERE tenant_id = $1 AND tool = 'record_hook_activity_event' AND result = 'error' ORDER BY at DESC, id DESC LIMIT 1",
          [tenantId],
        );
        assert.equal(disabled?.error_code, 'permission_denied');
        const reply = await call(hooky, 'start_hook_session', { local_installation_id: installation, hook: 'session_start', session_id: 'sess-off' });
        assert.equal(reply.isError, false, reply.text);
        assert.match(reply.text, /Remember the release train\./);
        assert.equal(reply.data?.started, false);
        assert.equal(reply.data?.activity_enabled, false);
        // The installation checks still apply.
        await fails(other, 'start_hook_session', { local_installation_id: installation, hook: 'session_start', session_id: 'sess-off' }, NOT_FOUND);
        assert.deepEqual(await activityRows(), snapshot);
        // Spyco's switch is its own.
        const spyInstall = await ok(spy, 'report_installation_capabilities', {
          integration: 'claude-code',
          transport: 'stdio',
          capabilities: ['context_load'],
        });
        await ok(spy, 'record_activity_event', { local_installation_id: spyInstall.local_installation_id, event: { type: 'context_loaded' } });
      } finally {
        assert.equal((await switchActivity(true)).changed, true);
      }
      await ok(hooky, 'record_activity_event', { local_installation_id: installation, event: { type: 'context_loaded' } });
      const started = await ok(hooky, 'start_hook_session', { local_installation_id: installation, hook: 'session_start', session_id: 'sess-off' });
      assert.equal(started.started, true);
      const switches = await gw.db.query<{ action: string }>(
        "SELECT action FROM audit_events WHERE tenant_id = $1 AND action IN ('activity.enable', 'activity.disable') ORDER BY at, id",
        [tenantId],
      );
      assert.deepEqual(
        switches.map((s) => s.action),
        ['activity.disable', 'activity.enable'],
      );
    });
  });
}
