import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Gateway } from '../../src/app.ts';
import { createGateway } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { hashPassword } from '../../src/kernel/access/passwords.ts';
import type { Db } from '../../src/store/db.ts';
import { formFields } from '../support/html-form.ts';
import { freePort } from '../cli/support.ts';

export const PASSWORD = 'correct horse battery staple';
export const REDIRECT = 'http://127.0.0.1:9/callback';

export interface OAuthGateway {
  readonly gateway: Gateway;
  /** Base URL and KGW_PUBLIC_URL, e.g. http://127.0.0.1:41234 */
  readonly url: string;
  close(): Promise<void>;
}

/** A gateway whose public URL is the address it listens on, so issuer and resources are real. */
export async function startOAuthGateway(db: Db, env: Record<string, string> = {}): Promise<OAuthGateway> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'kgw-oauth-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const config = loadConfig({ KGW_PORT: String(port), KGW_PUBLIC_URL: url, KGW_LOG_LEVEL: 'silent', KGW_DATA_DIR: dataDir, ...env });
  const gateway = await createGateway(config, { db });
  await gateway.app.listen({ host: '127.0.0.1', port });
  return {
    gateway,
    url,
    async close() {
      await gateway.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export async function setPassword(db: Db, tenant: string, email: string, password: string): Promise<void> {
  const hash = await hashPassword(password);
  await db.tx((tx) =>
    tx.query('UPDATE principals SET password_hash = $1 WHERE email = $2 AND tenant_id = (SELECT id FROM tenants WHERE slug = $3)', [hash, email, tenant]),
  );
}

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: Record<string, unknown>; headers: Headers }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown>, headers: response.headers };
}

export async function postForm(
  url: string,
  form: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: Record<string, unknown>; headers: Headers }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form).toString(),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown>, headers: response.headers };
}

export interface Client {
  readonly client_id: string;
  readonly redirect_uris: string[];
  readonly scope: string;
}

export async function registerClient(base: string, extra: Record<string, unknown> = {}): Promise<Client> {
  const { status, json } = await postJson(`${base}/oauth/register`, {
    client_name: 'Test Client',
    redirect_uris: [REDIRECT],
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    ...extra,
  });
  assert.equal(status, 201, JSON.stringify(json));
  return json as unknown as Client;
}

/** A minimal browser: one cookie, redirects left to the test. */
export class Browser {
  cookie: string | undefined;
  readonly base: string;
  constructor(base: string) {
    this.base = base;
  }

  async request(
    pathOrUrl: string,
    init: { method?: string; form?: Record<string, string>; headers?: Record<string, string> } = {},
  ): Promise<{ status: number; text: string; headers: Headers; location: string | null }> {
    const headers: Record<string, string> = { ...init.headers };
    if (this.cookie !== undefined) headers.cookie = this.cookie;
    if (init.form) headers['content-type'] = 'application/x-www-form-urlencoded';
    const url = pathOrUrl.startsWith('http') ? pathOrUrl : `${this.base}${pathOrUrl}`;
    const response = await fetch(url, {
      method: init.method ?? (init.form ? 'POST' : 'GET'),
      headers,
      body: init.form ? new URLSearchParams(init.form).toString() : undefined,
      redirect: 'manual',
    });
    const set = response.headers.get('set-cookie');
    if (set !== null) {
      const [pair] = set.split(';');
      this.cookie = pair!.endsWith('=') ? undefined : pair;
    }
    return { status: response.status, text: await response.text(), headers: response.headers, location: response.headers.get('location') };
  }

  /** Signs in with a password from the sign-in page of an authorization request. */
  async signIn(authorizeQuery: string, tenant: string, email: string, password: string) {
    return this.request('/oauth/login', { form: { authorize: authorizeQuery, tenant, email, password } });
  }
}

export interface AuthorizeOptions {
  readonly client: Client;
  readonly challenge: string;
  readonly scope?: string;
  readonly resource?: string;
  readonly state?: string;
  readonly redirectUri?: string;
}

export function authorizeQuery(options: AuthorizeOptions): string {
  const params: Record<string, string> = {
    response_type: 'code',
    client_id: options.client.client_id,
    redirect_uri: options.redirectUri ?? REDIRECT,
    code_challenge: options.challenge,
    code_challenge_method: 'S256',
    state: options.state ?? 'st-1',
  };
  if (options.scope !== undefined) params.scope = options.scope;
  if (options.resource !== undefined) params.resource = options.resource;
  return new URLSearchParams(params).toString();
}

/** Signs in (if needed), approves as the first listed agent or a new one, and returns the code. */
export async function authorizeCode(
  browser: Browser,
  options: AuthorizeOptions & { tenant?: string; email?: string; agent?: string; newAgent?: string },
): Promise<string> {
  const query = authorizeQuery(options);
  let page = await browser.request(`/oauth/authorize?${query}`);
  if (page.text.includes('action="' + browser.base + '/oauth/login"')) {
    const signedIn = await browser.signIn(query, options.tenant ?? 'acme', options.email ?? 'alice@acme.test', PASSWORD);
    assert.equal(signedIn.status, 303, signedIn.text);
    page = await browser.request(signedIn.location!);
  }
  assert.equal(page.status, 200, page.text);
  const { fields, agents } = formFields(page.text, `${browser.base}/oauth/authorize`);
  const agent = options.newAgent !== undefined ? 'new' : (options.agent ?? agents[0]!);
  const decided = await browser.request('/oauth/authorize', { form: { ...fields, agent, new_agent_name: options.newAgent ?? '', decision: 'approve' } });
  assert.equal(decided.status, 303, decided.text);
  const back = new URL(decided.location!);
  assert.equal(back.searchParams.get('state'), options.state ?? 'st-1');
  const code = back.searchParams.get('code');
  assert.ok(code, `a code in ${decided.location}`);
  return code;
}

export interface Tokens {
  readonly access_token: string;
  readonly refresh_token?: string;
  readonly token_type: string;
  readonly expires_in: number;
  readonly scope: string;
}

/** Exchanges a code for tokens, asserting success. */
export async function exchange(base: string, client: Client, code: string, verifier: string, extra: Record<string, string> = {}): Promise<Tokens> {
  const { status, json } = await postForm(`${base}/oauth/token`, {
    grant_type: 'authorization_code',
    client_id: client.client_id,
    code,
    code_verifier: verifier,
    redirect_uri: REDIRECT,
    ...extra,
  });
  assert.equal(status, 200, JSON.stringify(json));
  return json as unknown as Tokens;
}

export const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'oauth-test', version: '1' } },
};

/** POSTs initialize to an MCP endpoint with a bearer token and returns the response. */
export function mcpInit(url: string, token: string): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` },
    body: JSON.stringify(INIT),
  });
}

/** Calls whoami on an MCP endpoint; returns the status and, on success, the profile. */
export async function whoami(
  url: string,
  token: string,
): Promise<{ status: number; me?: { principal: { kind: string; name: string }; tenant: { slug: string }; scopes: string[] } }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'whoami', arguments: {} } }),
  });
  if (response.status !== 200) return { status: response.status };
  const body = (await response.json()) as { result: { structuredContent: NonNullable<Awaited<ReturnType<typeof whoami>>['me']> } };
  return { status: 200, me: body.result.structuredContent };
}

export { formFields };
