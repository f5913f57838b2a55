import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { InboxListing as AdminInbox } from '../../src/alignbase/dialect/messages.ts';
import { connectClient } from '../support/gateway.ts';
import type { CliStore, Served } from './support.ts';
import { cliStoreBackends, kgw, lines, lookedIn, serve, writeIn } from './support.ts';

/** kgw inbox: an agent's messages for an administrator, read through the store or a running gateway, marking nothing. */

const ORG = `tenant: inbox-co
name: Inbox Co
people:
  - { email: ann@inbox.test, name: Ann }
agents:
  - { name: sender, owner: ann@inbox.test }
  - { name: receiver, owner: ann@inbox.test }
groups:
  - { name: team, members: [receiver] }
grants:
  - { to: sender, on: all_artifacts, role: editor }
`;

for (const backend of cliStoreBackends()) {
  describe(`kgw inbox on ${backend.name}`, () => {
    let store: CliStore;
    let gateway: Served;
    const clients: Client[] = [];
    const sent: string[] = [];
    const inbox = (...args: string[]) => kgw(['inbox', ...args], store.env);

    const connect = async (agent: string, scopes: string): Promise<Client> => {
      const created = await kgw(['token', 'create', '--tenant', 'inbox-co', '--principal', agent, '--scopes', scopes], store.env);
      assert.equal(created.code, 0, created.stderr);
      const client = await connectClient(`${gateway.url}/alignbase/mcp`, created.stdout.trim());
      clients.push(client);
      return client;
    };
    const call = async (client: Client, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> => {
      const result = await client.callTool({ name, arguments: args });
      assert.notEqual(result.isError, true, JSON.stringify(result.content));
      return result.structuredContent as Record<string, unknown>;
    };
    const json = async (...args: string[]): Promise<AdminInbox> => {
      const run = await inbox('--tenant', 'inbox-co', '--agent', 'receiver', '--json', ...args);
      assert.equal(run.code, 0, run.stderr);
      return JSON.parse(run.stdout) as AdminInbox;
    };

    before(async () => {
      store = await backend.open();
      const applied = await kgw(['apply', await writeIn(store.workDir, 'org.yaml', ORG)], store.env);
      assert.equal(applied.code, 0, applied.stderr);
      gateway = await serve(store.env);
      const sender = await connect('sender', 'context.read context.write');
      const artifact = await call(sender, 'write_artifact', { expected_version: 0, name: 'Handoff', markdown: '# Handoff' });
      const [receiverId, teamId] = await Promise.all(
        ['agent', 'group'].map(async (type) => {
          const listed = (await call(sender, 'list_context_recipients', {})).recipients as { type: string; id: string }[];
          return listed.find((r) => r.type === type)!.id;
        }),
      );
      for (const args of [
        {
          recipients: [{ type: 'agent', id: receiverId }],
          message: 'First:\nplease take over.',
          artifacts: [{ artifact_id: artifact.artifact_id, access: 'viewer' }],
        },
        { recipients: [{ type: 'group', id: teamId }], message: 'Second, to the team.' },
      ]) {
        sent.push(String((await call(sender, 'send_context', { ...args, idempotency_key: randomUUID() })).message_id));
      }
    });
    after(async () => {
      for (const client of clients) await client.close();
      await gateway.stop();
      await store.dispose();
    });

    it('lists the unread messages oldest first, and marks nothing read', async () => {
      const run = await inbox('--tenant', 'inbox-co', '--agent', 'receiver');
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stderr, '');
      const output = lines(run.stdout);
      assert.equal(output[0], 'receiver in inbox-co: 2 unread');
      assert.equal(output[1], '');
      assert.deepEqual(output[2]?.split(/ {2,}/), ['MESSAGE', 'SENT', 'FROM', 'VIA', 'ARTIFACTS', 'TEXT']);
      const rows = output.slice(3).map((line) => line.split(/ {2,}/));
      assert.deepEqual(
        rows.map((r) => [r[0], r[2], r[3], r[4], r[5]]),
        [
          [sent[0], 'sender', '-', 'Handoff v1 (viewer)', 'First: please take over.'],
          [sent[1], 'sender', 'team', '-', 'Second, to the team.'],
        ],
      );
      const data = await json();
      assert.equal(data.unread, 2);
      assert.deepEqual(data.agent.name, 'receiver');
      assert.deepEqual(
        data.messages.map((m) => ({
          message_id: m.message_id,
          message: m.message,
          read_at: m.read_at,
          artifacts: m.artifacts.map((a) => ({ name: a.name, version: a.version, access: a.access, available: a.available })),
        })),
        [
          {
            message_id: sent[0],
            message: 'First:\nplease take over.',
            read_at: null,
            artifacts: [{ name: 'Handoff', version: 1, access: 'viewer', available: true }],
          },
          { message_id: sent[1], message: 'Second, to the team.', read_at: null, artifacts: [] },
        ],
      );
      assert.equal((await json()).unread, 2, 'listing marked nothing');
    });

    it('after the agent reads its inbox: no unread messages; --all lists every message newest first with when it was read', async () => {
      const receiver = await connect('receiver', 'context.read');
      const page = await call(receiver, 'read_inbox', {});
      assert.equal((page.messages as unknown[]).length, 2);
      const run = await inbox('--tenant', 'inbox-co', '--agent', 'receiver');
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout, 'receiver in inbox-co: 0 unread; no unread messages\n');
      const all = await inbox('--tenant', 'inbox-co', '--agent', 'receiver', '--all');
      assert.equal(all.code, 0, all.stderr);
      const output = lines(all.stdout);
      assert.deepEqual(output[2]?.split(/ {2,}/), ['MESSAGE', 'SENT', 'FROM', 'VIA', 'READ', 'ARTIFACTS', 'TEXT']);
      assert.deepEqual(
        output.slice(3).map((line) => line.split(/ {2,}/)[0]),
        [sent[1], sent[0]],
      );
      for (const line of output.slice(3)) assert.match(line.split(/ {2,}/)[4] ?? '', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
      const data = await json('--all');
      assert.ok(data.messages.every((m) => m.read_at !== null));
    });

    it('shows the escapes in agent-written message texts and Artifact names instead of sending them to the terminal', async () => {
      const sender = await connect('sender', 'context.read context.write');
      // Clear screen, window title, C1 CSI, a carriage return, bidi override and isolate, a hidden hyperlink.
      const name = 'Hand\u202eoff\x1b[31m';
      const message = '\x1b[2J\x1b]0;owned\x07\r\n\u009b31m \u202egnp.exe\u2066 \x1b]8;;http://e.t\x1b\\here\x1b]8;;\x1b\\';
      const artifact = await call(sender, 'write_artifact', { expected_version: 0, name, markdown: '# Escapes' });
      const receiverId = ((await call(sender, 'list_context_recipients', {})).recipients as { type: string; id: string }[]).find((r) => r.type === 'agent')!.id;
      const id = String(
        (
          await call(sender, 'send_context', {
            recipients: [{ type: 'agent', id: receiverId }],
            message,
            artifacts: [{ artifact_id: artifact.artifact_id, access: 'viewer' }],
            idempotency_key: randomUUID(),
          })
        ).message_id,
      );
      // eslint-disable-next-line no-control-regex -- the control characters are what is looked for
      const raw = /[\u001b\u0007\u000d\u0080-\u009f\u202a-\u202e\u2066-\u2069]/;

      const run = await inbox('--tenant', 'inbox-co', '--agent', 'receiver');
      assert.equal(run.code, 0, run.stderr);
      assert.doesNotMatch(run.stdout, raw);
      const output = lines(run.stdout);
      assert.equal(output[0], 'receiver in inbox-co: 1 unread');
      assert.equal(output.length, 4, run.stdout);
      const row = output[3]?.split(/ {2,}/);
      assert.deepEqual(
        [row?.[0], row?.[4], row?.[5]],
        [id, 'Hand\\u202eoff\\x1b[31m v1 (viewer)', '\\x1b[2J\\x1b]0;owned\\x07 \\x9b31m \\u202egnp.exe\\u2066 \\x1b]8;;http://e.t\\x1b\\here\\x1b]8;;\\x1b\\'],
      );

      // --json is exact: C1 and bidi characters as \u escapes too, which parse back to the same text.
      const json = await inbox('--tenant', 'inbox-co', '--agent', 'receiver', '--json');
      assert.equal(json.code, 0, json.stderr);
      assert.doesNotMatch(json.stdout, raw);
      for (const escape of ['\\u001b[2J', '\\u0007', '\\r\\n', '\\u009b31m', '\\u202e', '\\u2066']) assert.ok(json.stdout.includes(escape), escape);
      const data = JSON.parse(json.stdout) as AdminInbox;
      assert.deepEqual(
        data.messages.map((m) => ({ message_id: m.message_id, message: m.message, artifacts: m.artifacts.map((a) => a.name) })),
        [{ message_id: id, message, artifacts: [name] }],
      );
    });

    it('refuses an unknown agent, a person, and missing options', async () => {
      for (const agent of ['nobody', 'ann@inbox.test']) {
        const run = await inbox('--tenant', 'inbox-co', '--agent', agent);
        assert.equal(run.code, 1);
        assert.deepEqual(lines(run.stderr), [`kgw: no agent "${agent}" in tenant "inbox-co"${lookedIn(store)}`]);
      }
      const tenant = await inbox('--tenant', 'nope', '--agent', 'receiver');
      assert.equal(tenant.code, 1);
      assert.deepEqual(lines(tenant.stderr), [`kgw: tenant "nope" not found${lookedIn(store)}`]);
      const missing = await inbox('--agent', 'receiver');
      assert.equal(missing.code, 2);
      assert.deepEqual(lines(missing.stderr), ['kgw: --tenant is required (see "kgw inbox --help")']);
      const help = await inbox('--help');
      assert.equal(help.code, 0);
      assert.match(help.stdout, /^Usage: kgw inbox --tenant SLUG --agent NAME \[--all\] \[--json\]/);
    });
  });
}
