import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CONNECT_CLIENTS } from '../../src/cli/connect-snippets.ts';
import { pythonInterpreter } from '../interop/support.ts';
import type { CliStore, Env, Served } from './support.ts';
import { ORG, ROOT, cliStoreBackends, kgw, lines, serve, writeIn } from './support.ts';
import { sdkClient } from '../support/mcp-client.ts';

/*
 * `kgw connect CLIENT` (README, "Connect your client"): each snippet is handed to a client that
 * reads it as its users would — the MCP Inspector's --config for .mcp.json, the Python and
 * TypeScript SDKs for their code, the SDK's client for the URL and header of the others — and
 * must reach the running gateway with the token it carries.
 */

const run = promisify(execFile);
const require = createRequire(import.meta.url);
const INSPECTOR = path.join(path.dirname(require.resolve('@modelcontextprotocol/inspector/package.json')), 'clients/launcher/build/index.js');
const python = pythonInterpreter();

interface HttpServer {
  readonly type: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
}

/** The tool names the SDK's client lists at `url` with `authorization`. */
async function toolsAt(url: string, authorization: string): Promise<string[]> {
  const client = sdkClient('kgw-connect-test');
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: authorization } } }));
  try {
    return (await client.listTools()).tools.map((tool) => tool.name);
  } finally {
    await client.close();
  }
}

// One store is enough: the snippets do not depend on it.
const [backend] = cliStoreBackends();

describe('kgw connect', { skip: backend === undefined }, () => {
  let store: CliStore;
  let served: Served;
  let env: Env;
  let scratch: string;
  const connect = (...args: string[]) => kgw(['connect', ...args], env);
  const snippet = async (client: string, ...more: string[]): Promise<string> => {
    const result = await connect(client, '--tenant', 'acme', '--principal', 'release-bot', ...more);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /^kgw: a token for release-bot in acme \(.+\), valid until \S+, id \S+, for http:\/\/127\.0\.0\.1:\d+\/\S+; .+\n$/);
    return result.stdout;
  };

  before(async () => {
    store = await (backend as NonNullable<typeof backend>).open();
    const applied = await kgw(['apply', await writeIn(store.workDir, 'org.yaml', ORG)], store.env);
    assert.equal(applied.code, 0, applied.stderr);
    served = await serve(store.env);
    env = { ...store.env, KGW_PORT: String(served.port) };
    // Below the project, so that node finds the SDK for the TypeScript snippet.
    await mkdir(path.join(ROOT, '.cache'), { recursive: true });
    scratch = await mkdtemp(path.join(ROOT, '.cache', 'connect-'));
  });
  after(async () => {
    await served?.stop();
    await store?.dispose();
    if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
  });

  it('.mcp.json: the MCP Inspector reads the file and lists the tools with its token', async () => {
    const text = await snippet('mcp-json', '--endpoint', 'atmina', '--name', 'acme-kb');
    const file = path.join(scratch, 'mcp.json');
    await writeFile(file, text);
    const config = JSON.parse(text) as { mcpServers: Record<string, HttpServer> };
    assert.deepEqual(Object.keys(config.mcpServers), ['acme-kb']);
    assert.equal(config.mcpServers['acme-kb']?.type, 'http');
    assert.equal(config.mcpServers['acme-kb']?.url, `${served.url}/atmina/mcp`);
    const listed = await run(process.execPath, [INSPECTOR, '--cli', '--config', file, '--server', 'acme-kb', '--method', 'tools/list'], {
      timeout: 60_000,
      env: { PATH: process.env.PATH ?? '', HOME: scratch, NO_COLOR: '1' },
    });
    const tools = (JSON.parse(listed.stdout) as { tools: { name: string }[] }).tools.map((tool) => tool.name);
    assert.ok(tools.includes('search') && tools.includes('write_file'), listed.stdout);
  });

  it('Cursor, VS Code and Claude Code: the URL and header each carries reach the endpoint', async () => {
    const cursor = JSON.parse(await snippet('cursor')) as { mcpServers: { kgw: HttpServer } };
    assert.equal(cursor.mcpServers.kgw.type, 'http');
    assert.ok((await toolsAt(cursor.mcpServers.kgw.url, cursor.mcpServers.kgw.headers.Authorization ?? '')).includes('get_current_context'));

    const vscode = JSON.parse(await snippet('vscode', '--endpoint', '/brain/mcp', '--scopes', 'brain:read')) as { servers: { kgw: HttpServer } };
    assert.equal(vscode.servers.kgw.url, `${served.url}/brain/mcp`);
    assert.deepEqual((await toolsAt(vscode.servers.kgw.url, vscode.servers.kgw.headers.Authorization ?? '')).sort(), [
      'get_onboarding_action_catalog',
      'get_onboarding_status',
      'get_skill_pack',
      'list_gaps',
      'query_index',
      'read_concept',
    ]);

    const command = await snippet('claude-code', '--endpoint', 'alignbase');
    assert.equal(lines(command).length, 1);
    const match = /^claude mcp add --transport http kgw (\S+) --header 'Authorization: Bearer (kgw_[\w-]+)'\n$/.exec(command);
    assert.ok(match, command);
    assert.equal(match[1], `${served.url}/alignbase/mcp`);
    assert.ok((await toolsAt(match[1] ?? '', `Bearer ${match[2] ?? ''}`)).includes('read_knowledge'));
  });

  it('Claude Desktop: mcp-remote with the header through a variable', async () => {
    const config = JSON.parse(await snippet('claude-desktop')) as {
      mcpServers: { kgw: { command: string; args: string[]; env: Record<string, string> } };
    };
    const { command, args, env: variables } = config.mcpServers.kgw;
    assert.equal(command, 'npx');
    assert.deepEqual(args, ['-y', 'mcp-remote', `${served.url}/mcp`, '--header', 'Authorization:${KGW_AUTHORIZATION}']);
    assert.match(variables.KGW_AUTHORIZATION ?? '', /^Bearer kgw_/);
    assert.ok((await toolsAt(args[2] ?? '', variables.KGW_AUTHORIZATION ?? '')).includes('query_index'));
  });

  it('the TypeScript SDK: the printed program runs and lists the tools', async () => {
    const file = path.join(scratch, 'agent.mjs');
    await writeFile(file, await snippet('typescript', '--endpoint', 'atmina'));
    const { stdout } = await run(process.execPath, [file], { timeout: 60_000 });
    assert.match(stdout, /'whoami'/);
  });

  it('the Python SDK: the printed program runs and lists the tools', { skip: python === undefined ? 'KGW_TEST_PYTHON is not set' : false }, async () => {
    const file = path.join(scratch, 'agent.py');
    await writeFile(file, await snippet('python', '--endpoint', 'atmina'));
    const { stdout } = await run(python as string, [file], { timeout: 60_000 });
    assert.match(stdout, /'whoami'/);
  });

  it('gives each token the endpoint’s scopes unless told, labelled with the client', async () => {
    const listed = async () => {
      const result = await kgw(['token', 'list', '--json'], env);
      assert.equal(result.code, 0, result.stderr);
      return JSON.parse(result.stdout) as { label: string | null; scopes: string[] }[];
    };
    const before = (await listed()).length;
    await snippet('mcp-json', '--endpoint', 'brain');
    await snippet('mcp-json', '--endpoint', 'mcp', '--scopes', 'context.write');
    const [newest, previous] = await listed();
    assert.equal((await listed()).length, before + 2);
    assert.deepEqual(newest, { ...newest, label: 'kgw connect mcp-json', scopes: ['context.read', 'context.write'] });
    assert.deepEqual(previous?.scopes, ['brain:read']);
  });

  it('refuses a bad client, endpoint, name or principal with one line, printing no snippet and issuing no token', async () => {
    const count = async () => (JSON.parse((await kgw(['token', 'list', '--json'], env)).stdout) as unknown[]).length;
    const tokens = await count();
    const cases: [string[], number, RegExp][] = [
      [[], 2, /^kgw: name the client: claude-code, mcp-json, cursor, vscode, claude-desktop, python, typescript \(see "kgw connect --help"\)\n$/],
      [['emacs', '--tenant', 'acme', '--principal', 'release-bot'], 2, /^kgw: unknown client "emacs"; use one of claude-code, /],
      [['cursor', '--principal', 'release-bot'], 2, /^kgw: --tenant is required/],
      [
        ['cursor', '--tenant', 'acme', '--principal', 'release-bot', '--endpoint', 'nope'],
        2,
        /^kgw: unknown endpoint "nope"; use one of mcp, alignbase, atmina, brain /,
      ],
      [['cursor', '--tenant', 'acme', '--principal', 'release-bot', '--name', 'kgw prod'], 2, /^kgw: --name must be 1 to 64 letters/],
      [['cursor', '--tenant', 'acme', '--principal', 'release-bot', '--name', 'kgw\u001b[2J'], 2, /^kgw: --name must be 1 to 64 letters/],
      [['cursor', '--tenant', 'acme', '--principal', 'release-bot', '--name', 'k'.repeat(65)], 2, /^kgw: --name must be 1 to 64 letters/],
      [['cursor', '--tenant', 'acme', '--principal', 'nobody@acme.test'], 1, /^kgw: .*nobody@acme\.test/],
      [['cursor', '--tenant', 'acme', '--principal', 'release-bot', '--scopes', 'admin'], 1, /^kgw: unknown scope "admin"/],
      [['cursor', '--tenant', 'acme', '--principal', 'release-bot', '--ttl', 'forever'], 1, /^kgw: .*forever/],
    ];
    for (const [args, code, message] of cases) {
      const result = await connect(...args);
      assert.equal(result.code, code, `${args.join(' ')}: ${result.stderr}`);
      assert.equal(result.stdout, '', args.join(' '));
      assert.match(result.stderr, message, args.join(' '));
      assert.equal(lines(result.stderr).length, 1, result.stderr);
    }
    assert.equal(await count(), tokens);
  });

  it('lists every client in its help', async () => {
    const help = await kgw(['connect', '--help'], env);
    assert.equal(help.code, 0);
    for (const client of CONNECT_CLIENTS) assert.match(help.stdout, new RegExp(`^  ${client} +\\S`, 'm'));
  });
});
