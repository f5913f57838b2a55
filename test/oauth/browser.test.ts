import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { Browser, Page } from 'playwright-core';
import { allTools } from '../../src/products.ts';
import { browserSkip, launchChromium } from '../support/browser.ts';
import { ACME_ORG, seedOrg } from '../support/gateway.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';
import type { OAuthGateway } from './support.ts';
import { PASSWORD, setPassword, startOAuthGateway } from './support.ts';
import { standingAllows } from '../../src/atmina/kb/standing.ts';

/** What /atmina/mcp lists to a connection with context.read and context.write: every Atmina tool. */
// release-bot is an Editor of the docs team (test/fixtures/acme.yaml) and Admin nowhere: the list
// holds every Atmina tool that standing allows, and no Admin tool.
const RELEASE_BOT_STANDING = { highest: 'editor', teamAdmin: false } as const;
const ATMINA_TOOLS = allTools
  .filter((t) => t.dialect === 'atmina' && (t.minimumRole === undefined || standingAllows(RELEASE_BOT_STANDING, t.minimumRole)))
  .map((t) => t.name);

/** Catches the authorization response on a loopback port, as a desktop MCP client does. */
async function callbackServer(): Promise<{ url: string; next(): Promise<URLSearchParams>; close(): Promise<void> }> {
  let deliver: (query: URLSearchParams) => void = () => undefined;
  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/callback') return void response.writeHead(404).end();
    response.writeHead(200, { 'content-type': 'text/html' }).end('<p>You can close this window.</p>');
    deliver(url.searchParams);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`,
    next: () => new Promise((resolve) => (deliver = resolve)),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** An in-memory OAuthClientProvider whose authorization step opens the page in Chromium. */
class BrowserProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  readonly redirectUrl: string;
  readonly page: Page;
  readonly authMethod: string;
  constructor(redirectUrl: string, page: Page, authMethod: string) {
    this.redirectUrl = redirectUrl;
    this.page = page;
    this.authMethod = authMethod;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Browser Test Client',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: this.authMethod,
    };
  }
  state = () => 'browser-state';
  clientInformation = () => this.client;
  saveClientInformation = (info: OAuthClientInformationMixed) => void (this.client = info);
  tokens = () => this.saved;
  saveTokens = (tokens: OAuthTokens) => void (this.saved = tokens);
  saveCodeVerifier = (verifier: string) => void (this.verifier = verifier);
  codeVerifier = () => this.verifier;
  async redirectToAuthorization(url: URL): Promise<void> {
    await this.page.goto(url.toString());
  }
}

for (const backend of storeBackends()) {
  describe(`OAuth in a real browser on ${backend.name}`, { skip: browserSkip }, () => {
    let store: TestStore;
    let gw: OAuthGateway;
    let browser: Browser;

    before(async () => {
      store = await backend.open({ migrated: true });
      await seedOrg(store.db, ACME_ORG);
      await setPassword(store.db, 'acme', 'alice@acme.test', PASSWORD);
      gw = await startOAuthGateway(store.db);
      browser = await launchChromium();
    });
    after(async () => {
      await browser?.close();
      await gw?.close();
      await store?.dispose();
    });

    // The gateway's public URL is http://127.0.0.1:PORT. A client may name it localhost (the
    // resource metadata then answers in that name, or the SDK refuses it) and may ask to be a
    // confidential client, as the SDK's own example client does (it is registered as public).
    const cases = [
      { name: '127.0.0.1', authMethod: 'none' },
      { name: 'localhost', authMethod: 'client_secret_post' },
    ] as const;
    for (const { name, authMethod } of cases) {
      it(`connects the SDK client at ${name} (${authMethod}): discovery, registration, sign-in, consent, code, MCP calls, refresh`, async () => {
        const callback = await callbackServer();
        const page = await browser.newPage();
        try {
          const named = new URL(gw.url);
          named.hostname = name;
          const serverUrl = `${named.origin}/atmina/mcp`;
          const provider = new BrowserProvider(callback.url, page, authMethod);
          const response = callback.next();
          assert.equal(await auth(provider, { serverUrl }), 'REDIRECT');
          assert.match(String(provider.client?.client_id), /^kgwc_/);
          assert.equal((provider.client as { token_endpoint_auth_method?: string } | undefined)?.token_endpoint_auth_method, 'none');

          // The sign-in page, as a person sees it.
          assert.equal(await page.locator('h1').textContent(), 'Sign in to connect Browser Test Client');
          await page.fill('input[name=tenant]', 'acme');
          await page.fill('input[name=email]', 'alice@acme.test');
          await page.fill('input[name=password]', PASSWORD);
          await page.click('button[type=submit]');

          // The consent page: pick the existing agent and allow.
          await page.waitForSelector('text=Connect Browser Test Client?');
          assert.match((await page.locator('.facts').textContent()) ?? '', new RegExp(`Returns to${callback.url.replace(/[/.]/g, '\\$&')}`));
          assert.match((await page.locator('.scopes').textContent()) ?? '', /context\.read.*context\.write/s);
          await page.check('label.choice:has-text("release-bot") input[type=radio]');
          await page.click('button[value=approve]');
          const query = await response;
          assert.equal(query.get('state'), 'browser-state');
          assert.equal(query.get('iss'), gw.url);
          const code = query.get('code');
          assert.ok(code, `a code, got ${query.toString()}`);

          assert.equal(await auth(provider, { serverUrl, authorizationCode: code }), 'AUTHORIZED');
          const first = provider.saved!;
          assert.equal(first.token_type, 'Bearer');
          assert.ok(first.refresh_token);

          const whoamiAs = async () => {
            const client = new Client({ name: 'browser-test', version: '1' });
            await client.connect(new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider }));
            try {
              const { tools } = await client.listTools();
              assert.deepEqual(tools.map((t) => t.name).sort(), [...ATMINA_TOOLS].sort());
              return (await client.callTool({ name: 'whoami', arguments: {} })).structuredContent as {
                principal: { kind: string; name: string };
                scopes: string[];
              };
            } finally {
              await client.close();
            }
          };
          const me = await whoamiAs();
          assert.equal(me.principal.kind, 'agent');
          assert.equal(me.principal.name, 'release-bot');
          assert.deepEqual(me.scopes, ['context.read', 'context.write']);

          // A refresh rotates both tokens; the client keeps working with the new ones.
          assert.equal(await auth(provider, { serverUrl }), 'AUTHORIZED');
          assert.notEqual(provider.saved?.access_token, first.access_token);
          assert.notEqual(provider.saved?.refresh_token, first.refresh_token);
          assert.equal((await whoamiAs()).principal.name, 'release-bot');
        } finally {
          await page.close();
          await callback.close();
        }
      });
    }
  });
}
