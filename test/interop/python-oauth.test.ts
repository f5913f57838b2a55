import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import type { OAuthGateway } from '../oauth/support.ts';
import { PASSWORD, setPassword, startOAuthGateway } from '../oauth/support.ts';
import { browserSkip, launchChromium, signInAndConsent } from '../support/browser.ts';
import { connectClient, drainedOutbox, issueToken, seedOrg } from '../support/gateway.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';
import type { PythonAnswer } from './support.ts';
import { ENDPOINT_CALLS, pythonInterpreter } from './support.ts';

/*
 * The official Python MCP SDK (2.3; test/services/python-mcp.sh) signing in with its own
 * OAuthClientProvider on every endpoint, in its default mode: it meets the 401, discovers the
 * protected resource and the authorization server, registers itself, hands the authorization
 * URL to "the browser" — headless Chromium here, where Alice signs in and connects the client
 * as release-bot — catches the code on its own loopback callback, exchanges it, and then
 * discovers at 2026-07-28, lists and calls, its structured output checked by the Python
 * client against the tool's output schema. No warning may be logged (no fallback).
 */

const SCRIPT = fileURLToPath(new URL('./python_oauth_client.py', import.meta.url));
const CLIENT_NAME = 'Python SDK OAuth Test';

const ORG = `tenant: acme
name: Acme Inc.
people:
  - { email: alice@acme.test, name: Alice }
agents:
  - { name: release-bot, owner: alice@acme.test }
teams:
  - slug: docs
    name: Docs team
    members: { alice@acme.test: admin, release-bot: editor }
brain:
  nodes:
    - { id: erp, type: tool, title: ERP, access: public }
`;

/** The scopes each endpoint's 401 challenge names: what the SDK asks for, unprompted. */
const CHALLENGE_SCOPES: Readonly<Record<string, string>> = {
  '/mcp': 'context.read context.write brain:read',
  '/alignbase/mcp': 'context.read context.write',
  '/atmina/mcp': 'context.read context.write',
  '/brain/mcp': 'brain:read',
};

interface OAuthAnswer extends PythonAnswer {
  client_id: string | null;
  scope: string | null;
  has_refresh_token: boolean;
}

interface Run {
  answer: OAuthAnswer;
  /** The scope list the consent page showed. */
  consented: string;
}

const interpreter = pythonInterpreter();
const [backend] = storeBackends();
const skip = interpreter === undefined ? 'KGW_TEST_PYTHON is not set' : browserSkip;

describe("the official Python MCP SDK's OAuth client provider, signed in through headless Chromium", { skip }, () => {
  let store: TestStore;
  let gw: OAuthGateway;
  let browser: Browser;

  before(async () => {
    store = await (backend as NonNullable<typeof backend>).open({ migrated: true });
    await seedOrg(store.db, ORG);
    await setPassword(store.db, 'acme', 'alice@acme.test', PASSWORD);
    gw = await startOAuthGateway(store.db);
    await drainedOutbox(store.db);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await gw?.close();
    await store?.dispose();
  });

  /** Runs the Python client; when it prints the authorization URL, a person signs in and consents in Chromium. */
  async function signInWithPython(url: string, tool: string, args: Record<string, unknown>): Promise<Run> {
    const child = spawn(interpreter as string, [SCRIPT, url, tool, JSON.stringify(args)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
    let consented = '';
    let answer: OAuthAnswer | undefined;
    const page = await browser.newPage();
    try {
      for await (const line of createInterface({ input: child.stdout })) {
        const message = JSON.parse(line) as { authorize?: string; result?: OAuthAnswer };
        if (message.authorize !== undefined) {
          assert.ok(message.authorize.startsWith(`${gw.url}/`), `the authorization URL is the gateway's: ${message.authorize}`);
          await page.goto(message.authorize);
          consented = await signInAndConsent(page, CLIENT_NAME, { tenant: 'acme', email: 'alice@acme.test', password: PASSWORD }, 'release-bot');
        }
        if (message.result !== undefined) answer = message.result;
      }
      const code = await exited;
      assert.equal(code, 0, stderr);
      assert.ok(answer, `the client printed its result; stderr:\n${stderr}`);
      return { answer, consented };
    } finally {
      clearTimeout(timer);
      child.kill('SIGKILL');
      await page.close();
    }
  }

  // Every endpoint under the public URL's own name (http://127.0.0.1:PORT), and one under
  // localhost: the protected resource then answers in that name, which the SDK checks.
  const runs = [...Object.keys(ENDPOINT_CALLS).map((endpoint) => ({ endpoint, name: '' })), { endpoint: '/atmina/mcp', name: 'localhost' }];
  for (const { endpoint, name } of runs) {
    const { tool, args } = ENDPOINT_CALLS[endpoint]!;
    it(`${endpoint}${name === '' ? '' : ` at ${name}`}: registers, signs in through the browser, discovers at 2026-07-28, lists and calls ${tool}`, async () => {
      const scopes = CHALLENGE_SCOPES[endpoint];
      assert.ok(scopes, `the scopes of ${endpoint}'s challenge are known`);
      const named = new URL(gw.url);
      if (name !== '') named.hostname = name;
      const url = `${named.origin}${endpoint}`;
      const { answer, consented } = await signInWithPython(url, tool, args);
      // The same agent with the same scopes through the TypeScript SDK's legacy client.
      const token = await issueToken(store.db, 'acme', 'release-bot', scopes);
      const legacy = await connectClient(url, token);
      try {
        const expected = await legacy.callTool({ name: tool, arguments: args });
        assert.deepEqual(
          {
            version: answer.protocol_version,
            tools: answer.tools,
            isError: answer.is_error,
            warnings: answer.warnings,
            scope: answer.scope,
            refresh: answer.has_refresh_token,
          },
          { version: '2026-07-28', tools: (await legacy.listTools()).tools.map((t) => t.name), isError: false, warnings: [], scope: scopes, refresh: true },
        );
        assert.match(answer.client_id ?? '', /^kgwc_/);
        for (const scope of scopes.split(' ')) assert.ok(consented.includes(scope), `the consent page showed ${scope}: ${consented}`);
        if (tool === 'whoami') {
          const me = answer.structured as { principal: { kind: string; name: string } };
          assert.deepEqual(me.principal.kind === 'agent' && me.principal.name, 'release-bot');
        } else {
          const text = (expected.content as { type: string; text: string }[])[0]?.text;
          assert.deepEqual({ text: answer.text, structured: answer.structured }, { text, structured: expected.structuredContent ?? null });
        }
      } finally {
        await legacy.close();
      }
    });
  }
});
