import { setTimeout as sleep } from 'node:timers/promises';
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import { BUILD } from '../build.ts';
import { ItemRefused } from './kb-import.ts';
import { LoopbackSignIn, listenForCode, openInBrowser } from './mcp-sign-in.ts';
import { UsageError } from './usage.ts';

/**
 * Another MCP endpoint read as an agent reads it (`kgw import mcp`): the SDK's client over
 * Streamable HTTP with a bearer token, calling only the tools the source's dialect names. A
 * source is not trusted: its answers are checked by the importer, its download links are
 * followed only on its own origin (the token is never sent elsewhere), its bodies are read no
 * further than their bound, and its rate limits are waited out with backoff.
 */

/** Attempts of one request or tool call that the source answered with a rate limit. */
const RATE_LIMIT_ATTEMPTS = 6;
/** The longest wait a source's Retry-After (or a tool's "retry in N s") may ask for. */
const RETRY_AFTER_MAX_SECONDS = 60;
/** One request to the source may take this long. */
const REQUEST_TIMEOUT_MS = 60_000;

/** A source that failed as a whole (unreachable, refused the token, broke the protocol). */
export class SourceError extends Error {}

const waitSeconds = (attempt: number, asked: number | undefined): number =>
  Math.min(RETRY_AFTER_MAX_SECONDS, asked ?? Math.min(30, 0.5 * 2 ** attempt) * (0.5 + Math.random() / 2));

/** fetch that waits out 429 and 503 with Retry-After (bounded), with backoff between attempts. */
export async function politeFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  for (let attempt = 0; ; attempt += 1) {
    const response = await fetch(input, { ...init, signal: init?.signal ?? AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    if ((response.status !== 429 && response.status !== 503) || attempt + 1 >= RATE_LIMIT_ATTEMPTS) return response;
    const header = Number(response.headers.get('retry-after'));
    await response.body?.cancel();
    await sleep(waitSeconds(attempt, Number.isFinite(header) && header >= 0 ? header : undefined) * 1000);
  }
}

const isTextPart = (part: unknown): part is { type: 'text'; text: string } =>
  typeof part === 'object' && part !== null && (part as { type?: unknown }).type === 'text' && typeof (part as { text?: unknown }).text === 'string';

export interface McpSource {
  /** The endpoint, as given. */
  readonly url: URL;
  /** Which end it is, as what it refuses says: the source of an import, the target of an export. */
  readonly side: 'source' | 'target';
  /** The protocol revision the two ends agreed on (2026-07-28 where the endpoint offers it, else a legacy one). */
  readonly protocol: string | undefined;
  /** A tool's structured result; a tool error is thrown as ItemRefused with the source's text (rate limits waited out first). */
  call(tool: string, args: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** The first text part of a tool's answer, for a dialect that answers in text (Company Brain); errors and rate limits as for `call`. */
  text(tool: string, args: Record<string, unknown>): Promise<string>;
  /** The bytes at a download link of the source (its own origin only), at most `maxBytes`. */
  download(link: string, maxBytes: number): Promise<Buffer>;
  close(): Promise<void>;
}

/**
 * The SDK's client, speaking the 2026-07-28 revision where the other endpoint offers it
 * (`server/discover` at connect) and the legacy handshake (`initialize`) otherwise.
 */
const peerClient = (name: string): Client => new Client({ name, version: BUILD.version }, { versionNegotiation: { mode: 'auto' } });

/** How the command proves who it is to the other endpoint: a bearer token, or an OAuth sign-in in the person's browser. */
export type Credentials = { readonly token: string } | { readonly signIn: { readonly scope?: string | undefined } };

/** The SDK client connected with a bearer token, or after an OAuth sign-in (mcp-sign-in.ts); the header its downloads send. */
async function connected(url: URL, credentials: Credentials, name: string): Promise<{ client: Client; authorization: () => string | undefined }> {
  if ('token' in credentials) {
    const client = peerClient(name);
    const headers = { authorization: `Bearer ${credentials.token}` };
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers }, fetch: politeFetch }));
    return { client, authorization: () => headers.authorization };
  }
  const callback = await listenForCode();
  const provider = new LoopbackSignIn(callback.url, credentials.signIn.scope);
  const authorization = () => {
    const token = provider.tokens()?.access_token;
    return token === undefined ? undefined : `Bearer ${token}`;
  };
  try {
    const first = new StreamableHTTPClientTransport(url, { authProvider: provider, fetch: politeFetch });
    try {
      const client = peerClient(name);
      await client.connect(first);
      return { client, authorization };
    } catch (error) {
      // The endpoint asked for a sign-in: the SDK registered this client and built the
      // authorization address (with the PKCE challenge); the person approves in the browser.
      if (!(error instanceof UnauthorizedError) || provider.authorizationUrl === undefined) throw error;
    }
    openInBrowser(provider.authorizationUrl);
    await first.finishAuth(await callback.code(provider));
    const client = peerClient(name);
    await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider, fetch: politeFetch }));
    return { client, authorization };
  } finally {
    await callback.close();
  }
}

/**
 * Connects to another endpoint: `side` names it in what its failures say (the source of an
 * import, the target of an export).
 */
export async function connectSource(url: URL, credentials: Credentials, side: 'source' | 'target' = 'source'): Promise<McpSource> {
  let client: Client;
  let authorization: () => string | undefined;
  try {
    ({ client, authorization } = await connected(url, credentials, side === 'source' ? 'kgw-import' : 'kgw-export'));
  } catch (error) {
    throw new SourceError(`cannot connect to ${url.href}: ${error instanceof Error ? error.message : String(error)}`);
  }
  /** A tool's answer that is not an error (rate limits waited out first). */
  const answer = async (tool: string, args: Record<string, unknown>) => {
    for (let attempt = 0; ; attempt += 1) {
      let result: Awaited<ReturnType<Client['callTool']>>;
      try {
        result = await client.callTool({ name: tool, arguments: args }, { timeout: REQUEST_TIMEOUT_MS });
      } catch (error) {
        throw new SourceError(`${tool} failed at the ${side}: ${error instanceof Error ? error.message : String(error)}`);
      }
      const parts: unknown[] = Array.isArray(result.content) ? result.content : [];
      if (result.isError !== true) return { result, parts };
      const text = parts.map((part) => (isTextPart(part) ? part.text : '')).join(' ');
      const asked = /^rate_limited\b.*?retry (?:in|after) (\d+) ?s/s.exec(text);
      if (/^rate_limited\b/.test(text) && attempt + 1 < RATE_LIMIT_ATTEMPTS) {
        await sleep(waitSeconds(attempt, asked === null ? undefined : Number(asked[1])) * 1000);
        continue;
      }
      throw new ItemRefused(`${tool} at the ${side}: ${text.slice(0, 500)}`);
    }
  };
  return {
    url,
    side,
    protocol: client.getNegotiatedProtocolVersion(),
    async call(tool, args) {
      const structured = (await answer(tool, args)).result.structuredContent;
      if (typeof structured !== 'object' || structured === null) throw new SourceError(`${tool} at the ${side} answered without structured content`);
      return structured as Record<string, unknown>;
    },
    async text(tool, args) {
      const first = (await answer(tool, args)).parts.find(isTextPart);
      if (first === undefined) throw new SourceError(`${tool} at the ${side} answered without text`);
      return first.text;
    },
    async download(link, maxBytes) {
      let target: URL;
      try {
        target = new URL(link, url);
      } catch {
        throw new ItemRefused('the source gave a download link that is not a URL');
      }
      // The token goes to the source's own origin only: a link elsewhere could collect it.
      if (target.origin !== url.origin) throw new ItemRefused(`the source's download link is on another origin (${target.origin})`);
      const header = authorization();
      const response = await politeFetch(target, { headers: header === undefined ? {} : { authorization: header } });
      if (!response.ok || response.body === null) throw new ItemRefused(`the source's download answered ${response.status}`);
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const piece of response.body as AsyncIterable<Uint8Array>) {
        const chunk = Buffer.from(piece);
        size += chunk.length;
        if (size > maxBytes) {
          await response.body.cancel().catch(() => undefined);
          throw new ItemRefused(`the source sent more than ${maxBytes} bytes for it`);
        }
        chunks.push(chunk);
      }
      return Buffer.concat(chunks);
    },
    async close() {
      await client.close();
    },
  };
}

/** The options that name how to reach the other endpoint (kgw import mcp, kgw export mcp). */
export const PEER_OPTIONS = { token: { type: 'string' }, 'sign-in': { type: 'boolean' }, scope: { type: 'string' } } as const;

/**
 * The other endpoint's address (`--from` or `--to`) and how to prove who the command is: the
 * token from --token or the environment variable `env`, or --sign-in (with --scope).
 */
export function peerOf(
  values: { readonly token?: string | undefined; readonly 'sign-in'?: boolean | undefined; readonly scope?: string | undefined },
  given: { readonly option: '--from' | '--to'; readonly url: string; readonly env: string; readonly side: 'source' | 'target' },
): { url: URL; credentials: Credentials } {
  let url: URL;
  try {
    url = new URL(given.url);
  } catch {
    throw new UsageError(`${given.option} must be the URL of an MCP endpoint, not "${given.url}"`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new UsageError(`${given.option} must be an http or https URL`);
  const token = values.token ?? process.env[given.env];
  if (values['sign-in'] === true) {
    if (values.token !== undefined) throw new UsageError('give either --token or --sign-in, not both');
    return { url, credentials: { signIn: { scope: values.scope } } };
  }
  if (values.scope !== undefined) throw new UsageError('--scope goes with --sign-in (a token has its scopes already)');
  if (token === undefined || token === '') throw new UsageError(`give the ${given.side}’s token with --token or ${given.env}, or sign in there with --sign-in`);
  return { url, credentials: { token } };
}

/** `--only` as the set of kinds it names, each one of `kinds`; undefined when it is not given. */
export function onlyKinds(value: string | undefined, kinds: readonly string[]): Set<string> | undefined {
  if (value === undefined) return undefined;
  const named = new Set(value.split(',').map((kind) => kind.trim()));
  if (named.size === 0 || [...named].some((kind) => !kinds.includes(kind)))
    throw new UsageError(`--only takes a comma-separated list of ${kinds.join(', ')}, not "${value}"`);
  return named;
}
