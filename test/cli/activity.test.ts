import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { ActivityListing } from '../../src/alignbase/activity/activity.ts';
import { records } from '../support/fixtures.ts';
import { connectClient } from '../support/gateway.ts';
import type { CliStore, Served } from './support.ts';
import { ORG, TOKEN_LINE, cliStoreBackends, kgw, lines, lookedIn, serve, writeIn } from './support.ts';

/**
 * kgw activity: an admin's listing of Activity installations and recent events, and the
 * tenant's Activity switch, while kgw serve holds the store (so the embedded store goes through
 * the gateway's admin endpoint). The events come in through the real MCP tools.
 */

for (const backend of cliStoreBackends()) {
  describe(`kgw activity on ${backend.name}`, () => {
    let store: CliStore;
    let gateway: Served;
    let client: Client;
    let installation: string;
    const activity = (...args: string[]) => kgw(['activity', ...args], store.env);
    const listing = async (...args: string[]): Promise<ActivityListing> => {
      const run = await activity('--tenant', 'acme', '--json', ...args);
      assert.equal(run.code, 0, run.stderr);
      return JSON.parse(run.stdout) as ActivityListing;
    };
    const tool = async (name: string, args: Record<string, unknown>) => {
      const result = await client.callTool({ name, arguments: args });
      return {
        isError: result.isError === true,
        text: (result.content as { text: string }[])[0]?.text ?? '',
        data: result.structuredContent as Record<string, unknown> | undefined,
      };
    };

    before(async () => {
      store = await backend.open();
      const applied = await kgw(['apply', await writeIn(store.workDir, 'org.yaml', ORG)], store.env);
      assert.equal(applied.code, 0, applied.stderr);
      const created = await kgw(['token', 'create', '--tenant', 'acme', '--principal', 'release-bot', '--scopes', 'context.read activity.write'], store.env);
      assert.equal(created.code, 0, created.stderr);
      assert.match(created.stdout, TOKEN_LINE);
      gateway = await serve(store.env);
      client = await connectClient(`${gateway.url}/alignbase/mcp`, created.stdout.trim());
      await client.listTools();
    });
    after(async () => {
      await client.close();
      await gateway.stop();
      await store.dispose();
    });

    it('lists nothing before any client reported, with Activity enabled by default', async () => {
      const empty = await listing();
      assert.deepEqual(empty, { tenant: 'acme', activity_enabled: true, agent: null, installations: [], events: [], limit: 20 });
      const text = await activity('--tenant', 'acme');
      assert.equal(text.code, 0, text.stderr);
      assert.deepEqual(lines(text.stdout), ['Activity in acme: enabled', '', 'no installations', '', 'no events']);
    });

    it('lists installations and recent events, newest first', async () => {
      const reported = await tool('report_installation_capabilities', {
        integration: 'claude-code',
        transport: 'stdio',
        capabilities: ['context_load', 'skills_install', 'session_start_hook', 'tool_use_hook'],
        client_version: '2.1.0',
      });
      assert.equal(reported.isError, false, reported.text);
      installation = String(reported.data?.local_installation_id);
      for (const [name, args] of [
        ['record_activity_event', { local_installation_id: installation, event: { type: 'context_loaded' } }],
        [
          'record_activity_event',
          {
            local_installation_id: installation,
            event: { type: 'skill_installed', subject: { type: 'skill', id: '11111111-2222-4333-8444-555555555555', version: 2 } },
          },
        ],
        ['start_hook_session', { local_installation_id: installation, hook: 'session_start', session_id: 'cli-session' }],
        [
          'record_hook_activity_event',
          {
            local_installation_id: installation,
            session_id: 'cli-session',
            event: { type: 'tool_used', tool_name: 'Bash', status: 'error', error_code: 'exit_2' },
          },
        ],
      ] as const) {
        const reply = await tool(name, args);
        assert.equal(reply.isError, false, `${name}: ${reply.text}`);
        // Distinct recording times, so newest first is a fixed order.
        await new Promise((resolve) => setTimeout(resolve, 20));
      }

      const all = await listing();
      assert.equal(all.activity_enabled, true);
      assert.equal(all.installations.length, 1);
      const [install] = all.installations;
      assert.deepEqual(
        { ...install, created_at: undefined, updated_at: undefined, last_seen_at: undefined, coverage: Object.keys(install!.coverage).sort() },
        {
          local_installation_id: installation,
          agent: 'release-bot',
          integration: 'claude-code',
          transport: 'stdio',
          capabilities: ['context_load', 'skills_install', 'session_start_hook', 'tool_use_hook'],
          client_version: '2.1.0',
          coverage: ['session_start_hook', 'tool_use_hook'],
          sessions: 1,
          events: 4,
          created_at: undefined,
          updated_at: undefined,
          last_seen_at: undefined,
        },
      );
      assert.deepEqual(
        all.events.map((e) => ({
          source: e.source,
          type: e.type,
          session_id: e.session_id,
          tool_name: e.tool_name,
          subject_type: e.subject?.type ?? null,
          status: e.status,
          error_code: e.error_code,
        })),
        records(
          ['source', 'type', 'session_id', 'tool_name', 'subject_type', 'status', 'error_code'],
          [
            ['hook', 'tool_used', 'cli-session', 'Bash', null, 'error', 'exit_2'],
            ['hook', 'session_started', 'cli-session', null, null, 'ok', null],
            ['client', 'skill_installed', null, null, 'skill', 'ok', null],
            ['client', 'context_loaded', null, null, null, 'ok', null],
          ],
        ),
      );
      assert.deepEqual(
        (await listing('--agent', 'release-bot', '--limit', '1')).events.map((e) => e.type),
        ['tool_used'],
      );

      const text = await activity('--tenant', 'acme', '--limit', '2');
      assert.equal(text.code, 0, text.stderr);
      const output = lines(text.stdout);
      assert.equal(output[0], 'Activity in acme: enabled');
      assert.equal(output[2], 'Installations (1):');
      assert.match(output[3] ?? '', /^ID +AGENT +INTEGRATION +TRANSPORT +VERSION +SESSIONS +EVENTS +LAST SEEN +CAPABILITIES +HOOKS SEEN$/);
      const row = (output[4] ?? '').split(/ {2,}/);
      assert.deepEqual(
        [...row.slice(0, 7), ...row.slice(8)],
        [
          installation,
          'release-bot',
          'claude-code',
          'stdio',
          '2.1.0',
          '1',
          '4',
          'context_load,skills_install,session_start_hook,tool_use_hook',
          'session_start_hook,tool_use_hook',
        ],
      );
      assert.equal(output[6], 'Recent events (newest first, at most 2):');
      assert.match(output[7] ?? '', /^RECORDED +OCCURRED +AGENT +INSTALLATION +SOURCE +TYPE +STATUS +DETAIL$/);
      assert.deepEqual((output[8] ?? '').split(/ {2,}/).slice(2), [
        'release-bot',
        installation,
        'hook',
        'tool_used',
        'error (exit_2)',
        'session cli-session, tool Bash',
      ]);
      assert.deepEqual((output[9] ?? '').split(/ {2,}/).slice(2), ['release-bot', installation, 'hook', 'session_started', 'ok', 'session cli-session']);
      assert.equal(output.length, 10);
    });

    it('switches Activity off and on for the tenant', async () => {
      const off = await activity('--tenant', 'acme', '--disable');
      assert.equal(off.code, 0, off.stderr);
      assert.equal(off.stdout, 'Activity disabled for acme\n');
      assert.equal((await activity('--tenant', 'acme', '--disable')).stdout, 'Activity was already disabled for acme\n');
      const refused = await tool('record_activity_event', { local_installation_id: installation, event: { type: 'context_loaded' } });
      assert.equal(refused.isError, true);
      assert.equal(refused.text, 'activity_disabled: Activity is disabled for this tenant; nothing was recorded');
      const disabled = await listing();
      assert.equal(disabled.activity_enabled, false);
      assert.equal(disabled.events.length, 4);
      assert.equal(lines((await activity('--tenant', 'acme')).stdout)[0], 'Activity in acme: disabled');

      const on = await activity('--tenant', 'acme', '--enable', '--json');
      assert.equal(on.code, 0, on.stderr);
      assert.deepEqual(JSON.parse(on.stdout), { tenant: 'acme', activity_enabled: true, changed: true });
      const accepted = await tool('record_activity_event', { local_installation_id: installation, event: { type: 'context_loaded' } });
      assert.equal(accepted.isError, false, accepted.text);
    });

    it('refuses bad usage with exit 2 and unknown names with exit 1', async () => {
      const cases: [string[], number, string][] = [
        [[], 2, 'kgw: --tenant is required (see "kgw activity --help")'],
        [['--tenant', 'acme', '--limit', '0'], 2, 'kgw: --limit must be a whole number from 1 to 1000 (see "kgw activity --help")'],
        [['--tenant', 'acme', '--enable', '--disable'], 2, 'kgw: --enable and --disable exclude each other (see "kgw activity --help")'],
        [['--tenant', 'acme', '--agent', 'ghost-bot'], 1, `kgw: no agent "ghost-bot" in tenant "acme"${lookedIn(store)}`],
        [['--tenant', 'acme', '--agent', 'alice@acme.test'], 1, `kgw: no agent "alice@acme.test" in tenant "acme"${lookedIn(store)}`],
        [['--tenant', 'globex'], 1, `kgw: tenant "globex" not found${lookedIn(store)}`],
      ];
      for (const [args, code, line] of cases) {
        const run = await activity(...args);
        assert.equal(run.code, code, `${args.join(' ')}: ${run.stderr}`);
        assert.equal(run.stderr, `${line}\n`);
        assert.equal(run.stdout, '');
      }
      const help = await activity('--help');
      assert.equal(help.code, 0);
      assert.match(help.stdout, /^Usage:\n {2}kgw activity --tenant SLUG/);
    });
  });
}
