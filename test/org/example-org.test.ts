import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { connectClient } from '../support/gateway.ts';
import type { CliStore, Env, Served } from '../cli/support.ts';
import { ROOT, cliStoreBackends, kgw, lines, serve } from '../cli/support.ts';

/**
 * The README's quick start, run as a new user runs it: `kgw serve` on a fresh store, then the
 * README's own shell block (the apply of docs/examples/org.yaml, the token, one curl per
 * dialect) through bash, against the served port. Every answer must be a real one.
 */

const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');

/** The sh block that follows the quick start's "Then, in a second terminal". */
function quickStartBlock(): string {
  const start = README.indexOf('Then, in a second terminal');
  assert.ok(start >= 0, 'the README has the quick start');
  const open = README.indexOf('```sh\n', start);
  const close = README.indexOf('\n```\n', open);
  assert.ok(open >= 0 && close > open, 'an sh block follows');
  return README.slice(open + 6, close + 1);
}

interface Rpc {
  result?: { content?: { type: string; text: string }[]; structuredContent?: Record<string, unknown>; isError?: boolean };
  error?: unknown;
}

/** Runs the block with bash (the gateway's port in place of the default) and returns its output. */
function runBlock(block: string, env: Env, port: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const script = `set -eu\n${block.replaceAll('127.0.0.1:8787', `127.0.0.1:${port}`)}printf 'token %s\\n' "$TOKEN"\n`;
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], { cwd: ROOT, env: { ...env, KGW_PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const textOf = (rpc: Rpc): string => rpc.result?.content?.[0]?.text ?? '';

for (const backend of cliStoreBackends()) {
  describe(`the README's quick start with docs/examples/org.yaml on ${backend.name}`, () => {
    let store: CliStore;
    let served: Served;
    let token = '';
    let answers: Rpc[] = [];
    let applied: string[] = [];
    const clients: Client[] = [];

    before(async () => {
      store = await backend.open();
      served = await serve(store.env);
      const run = await runBlock(quickStartBlock(), store.env, served.port);
      assert.equal(run.code, 0, run.stderr);
      const out = lines(run.stdout);
      const tokenLine = out.pop() ?? '';
      assert.match(tokenLine, /^token kgw_/);
      token = tokenLine.slice('token '.length);
      answers = out.slice(-3).map((line) => JSON.parse(line) as Rpc);
      applied = out.slice(0, -3);
    });
    after(async () => {
      await Promise.all(clients.map((c) => c.close()));
      await served.stop();
      await store.dispose();
    });

    async function client(endpoint: string): Promise<Client> {
      const c = await connectClient(`${served.url}${endpoint}`, token);
      clients.push(c);
      return c;
    }

    it('applies the whole organisation in one go', () => {
      const summary = applied.at(-1) ?? '';
      assert.match(summary, /^applied \d+ changes to tenant acme$/);
      assert.equal(applied.length - 1, Number(/\d+/.exec(summary)?.[0]));
      for (const change of [
        '+ create knowledge base handbook (team docs, team)',
        '+ create kb file handbook/on-call.md',
        '~ publish knowledge Release checklist (version 1)',
        '~ publish skill release-check (version 1)',
        '+ create memory Release state',
        '+ add grant release-bot (on all_memories as editor)',
        '+ add route skill:release-check (to release-bot)',
        '+ create brain node release-signing-keys (policy; access manager)',
      ])
        assert.ok(applied.includes(change), `the apply printed ${change}`);
    });

    it('Alignbase: get_current_context delivers the routed Knowledge, Skill and Memory', () => {
      const [alignbase] = answers;
      assert.ok(alignbase?.result !== undefined && alignbase.result.isError !== true, JSON.stringify(alignbase));
      const text = textOf(alignbase);
      assert.match(text, /<alignbase_knowledge [^>]*title="Release checklist"[^>]*authority="must_follow"/);
      assert.match(text, /- "release-check": "Checks that the main branch is ready/);
      assert.match(text, /<alignbase_memory [^>]*name="Release state"[^>]*can_write="true"/);
      assert.match(text, /No release in progress\./);
    });

    it("Atmina: search finds the handbook's on-call page first", () => {
      const [, atmina] = answers;
      const results = atmina?.result?.structuredContent?.results as { kb_slug: string; path: string }[] | undefined;
      assert.ok(results !== undefined && results.length > 0, JSON.stringify(atmina));
      assert.deepEqual({ kb_slug: results[0]?.kb_slug, path: results[0]?.path }, { kb_slug: 'handbook', path: 'on-call.md' });
    });

    it('Company Brain: query_index shows what the agent may see and counts the manager-tier node', () => {
      const [, , brain] = answers;
      const text = textOf(brain ?? {});
      assert.match(text, /^1\. \[release-process\] Release process · SOP \/ process · access department$/m);
      assert.match(text, /\[ci\] CI pipeline · tool · access public/);
      assert.match(text, /^\[hidden:1\] /m);
      assert.doesNotMatch(text, /signing/i);
    });

    it('the token writes a new Memory and a new Knowledge, and may not publish', async () => {
      const alignbase = await client('/alignbase/mcp');
      const memory = await alignbase.callTool({ name: 'create_memory', arguments: { name: 'Open questions', content: 'None yet.' } });
      assert.equal(memory.isError, undefined, JSON.stringify(memory));
      assert.equal((memory.structuredContent as { created: boolean }).created, true);
      const knowledge = await alignbase.callTool({
        name: 'write_knowledge',
        arguments: { title: 'Hotfix notes', content: 'Hotfixes follow the checklist.', expected_version: 0 },
      });
      assert.equal(knowledge.isError, undefined, JSON.stringify(knowledge));
      assert.deepEqual(
        {
          created: (knowledge.structuredContent as { created: boolean }).created,
          published: (knowledge.structuredContent as { published: boolean }).published,
        },
        { created: true, published: false },
      );
      const publish = await alignbase.callTool({
        name: 'write_knowledge',
        arguments: { title: 'Release notes', content: 'x', expected_version: 0, publish: true },
      });
      assert.deepEqual({ isError: publish.isError, text: (publish.content as { text: string }[])[0]?.text }, { isError: true, text: 'forbidden' });
    });

    it('the token writes a file into the team Knowledge Base', async () => {
      const atmina = await client('/atmina/mcp');
      const kbs = await atmina.callTool({ name: 'list_kbs', arguments: {} });
      const handbook = (kbs.structuredContent as { kbs: { slug: string; kb_id: string }[] }).kbs.find((kb) => kb.slug === 'handbook');
      assert.ok(handbook, JSON.stringify(kbs.structuredContent));
      const written = await atmina.callTool({
        name: 'write_file',
        arguments: { kb_id: handbook.kb_id, path: 'incidents/2026-12-04-ci.md', content: '# CI outage\n', mode: 'create' },
      });
      assert.equal(written.isError, undefined, JSON.stringify(written));
    });

    it('applies again with nothing to change', async () => {
      const again = await kgw(['apply', path.join(ROOT, 'docs', 'examples', 'org.yaml')], { ...store.env, KGW_PORT: String(served.port) });
      assert.deepEqual({ code: again.code, stdout: again.stdout }, { code: 0, stdout: 'tenant acme is up to date\n' });
    });
  });
}
