import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/**
 * MCP 2026-07-28 beside the legacy revisions, on the same endpoints (docs/mcp.md, "Protocol
 * revisions"). That revision has no handshake: every request carries the protocol version and
 * the client's capabilities in `params._meta`, repeats its method (and the tool's name, or the
 * resource's URI) in headers, and every result says its `resultType`; lists carry cache hints.
 * A request is of that era when its `_meta` holds the protocol version key, whatever the
 * value; everything else is legacy and is served exactly as before.
 *
 * This module is the revision's wire: which era a POST is, the envelope and header checks with
 * the revision's error codes and HTTP statuses, and what every result gains. The methods
 * themselves are the same handlers for both eras (src/mcp/server.ts).
 */

export const MODERN_VERSION = '2026-07-28';
export const MODERN_VERSIONS: readonly string[] = [MODERN_VERSION];

export const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
} as const;

/** The revision's error codes this gateway answers with (beside JSON-RPC's own). */
export const MODERN_ERRORS = { headerMismatch: -32020, unsupportedVersion: -32022 } as const;

/** The methods of the revision this gateway serves; the rest (initialize, ping, prompts, …) are not found, with HTTP 404. */
const SERVED = new Set(['server/discover', 'tools/list', 'tools/call', 'resources/list', 'resources/templates/list', 'resources/read']);

/** The members a client's capabilities may have in this revision. */
const CLIENT_CAPABILITIES = new Set(['experimental', 'sampling', 'elicitation', 'roots', 'extensions']);

/** The header that repeats a request's field, by method: `Mcp-Name`. */
const NAME_FIELD: Readonly<Record<string, string>> = { 'tools/call': 'name', 'prompts/get': 'name', 'resources/read': 'uri' };

/**
 * Cache hints of the lists (SEP-2549). Every list depends on the token (its scopes, and for
 * Atmina tools the caller's roles), so only the requesting client may reuse one: `private`.
 * A minute is what a list may lag a change of roles by; every call is still checked when made,
 * so a tool listed a moment too long is refused, not run. A read resource is not to be reused.
 * The discovery answer is the endpoint's alone, the same for every caller.
 */
export const CACHE_HINTS: Readonly<Record<string, { readonly ttlMs: number; readonly cacheScope: 'private' | 'public' }>> = {
  'tools/list': { ttlMs: 60_000, cacheScope: 'private' },
  'resources/list': { ttlMs: 60_000, cacheScope: 'private' },
  'resources/templates/list': { ttlMs: 60_000, cacheScope: 'private' },
  'resources/read': { ttlMs: 0, cacheScope: 'private' },
  'server/discover': { ttlMs: 300_000, cacheScope: 'public' },
};

export interface ModernHeaders {
  readonly protocolVersion: string | undefined;
  readonly method: string | undefined;
  readonly name: string | undefined;
}

/** An answer the HTTP layer sends as it is: its status and one JSON-RPC error. */
export interface Rejection {
  readonly status: number;
  readonly code: number;
  readonly message: string;
  readonly data?: Record<string, unknown>;
  readonly id: string | number | null;
}

export type Classified =
  | { readonly era: 'legacy' }
  | { readonly era: 'modern'; readonly message: JSONRPCMessage; readonly method: string }
  | { readonly era: 'rejected'; readonly rejection: Rejection };

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

const metaOf = (message: JSONRPCMessage): Record<string, unknown> | undefined => {
  const params = 'params' in message ? (message.params as unknown) : undefined;
  const meta = isObject(params) ? params._meta : undefined;
  return isObject(meta) ? meta : undefined;
};

/** Whether a message is of the 2026-07-28 era: its `_meta` holds the protocol version key. */
export const isModern = (message: JSONRPCMessage): boolean => metaOf(message)?.[META.protocolVersion] !== undefined;

const idOf = (message: JSONRPCMessage): string | number | null => ('id' in message && message.id !== undefined ? message.id : null);

const reject = (message: JSONRPCMessage | undefined, status: number, code: number, text: string, data?: Record<string, unknown>): Classified => ({
  era: 'rejected',
  rejection: { status, code, message: text, ...(data === undefined ? {} : { data }), id: message === undefined ? null : idOf(message) },
});

const mismatch = (message: JSONRPCMessage, what: string, header: string | undefined, body: string): Classified =>
  reject(message, 400, MODERN_ERRORS.headerMismatch, `Bad Request: the request headers and body disagree: ${what}`, {
    mismatch: { header: header ?? '(missing)', body },
  });

/** A header value as sent: spaces and tabs around it dropped, `=?base64?…?=` decoded (UTF-8); undefined when that encoding is broken. */
export function headerValue(raw: string): string | undefined {
  const value = raw.replace(/^[ \t]+|[ \t]+$/g, '');
  const encoded = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/.exec(value);
  if (encoded === null) return value.startsWith('=?base64?') ? undefined : value;
  const bytes = Buffer.from(encoded[1] ?? '', 'base64');
  const text = bytes.toString('utf8');
  // A round trip catches what base64 or UTF-8 decoding forgave.
  return bytes.toString('base64').replace(/=+$/, '') === (encoded[1] ?? '').replace(/=+$/, '') && !text.includes('\uFFFD') ? text : undefined;
}

/**
 * Which era a POST's messages are, or the revision's refusal of them. Only a single message
 * can be of the 2026-07-28 era (the revision has no batches); a message without the envelope
 * under a 2026-07-28 header is refused rather than served as legacy, as the revision says.
 */
export function classify(messages: readonly JSONRPCMessage[], batch: boolean, headers: ModernHeaders): Classified {
  const modernHeader = headers.protocolVersion !== undefined && MODERN_VERSIONS.includes(headers.protocolVersion.trim());
  const modern = messages.filter(isModern);
  if (modern.length === 0) {
    if (!modernHeader) return { era: 'legacy' };
    const [first] = messages;
    if (first === undefined) return { era: 'legacy' };
    return reject(first, 400, -32602, `Invalid params: a ${MODERN_VERSION} request carries ${META.protocolVersion} in params._meta`, {
      envelope: { missing: metaOf(first) === undefined ? ['_meta'] : [META.protocolVersion] },
    });
  }
  if (batch) return reject(undefined, 400, -32600, `Invalid Request: a ${MODERN_VERSION} request is one message, never a batch`);
  const message = modern[0] as JSONRPCMessage;
  const meta = metaOf(message) ?? {};
  const version = meta[META.protocolVersion];
  if (typeof version !== 'string') {
    return reject(message, 400, -32602, `Invalid params: _meta.${META.protocolVersion} must be a string`, {
      envelope: { key: META.protocolVersion, problem: 'must be a string' },
    });
  }
  if (!MODERN_VERSIONS.includes(version)) {
    return reject(message, 400, MODERN_ERRORS.unsupportedVersion, `Unsupported protocol version: ${version.slice(0, 100)}`, {
      supported: [...MODERN_VERSIONS],
      requested: version.slice(0, 100),
    });
  }
  const isRequest = 'method' in message && 'id' in message;
  const method = 'method' in message ? message.method : '';
  // Notifications are exempt from the header rules; a response has no place in a POST of this era.
  if (!('method' in message)) return reject(message, 400, -32600, `Invalid Request: a ${MODERN_VERSION} POST carries a request or a notification`);
  if (headers.protocolVersion === undefined || headers.protocolVersion.trim() !== version) {
    return mismatch(message, 'MCP-Protocol-Version', headers.protocolVersion, version);
  }
  const capabilities = meta[META.clientCapabilities];
  if (!isObject(capabilities)) {
    return reject(message, 400, -32602, `Invalid params: _meta.${META.clientCapabilities}: ${capabilities === undefined ? 'missing' : 'must be an object'}`, {
      envelope: { key: META.clientCapabilities, problem: capabilities === undefined ? 'missing' : 'must be an object' },
    });
  }
  const unknown = Object.keys(capabilities).find((key) => !CLIENT_CAPABILITIES.has(key));
  if (unknown !== undefined) {
    return reject(message, 400, -32602, `Invalid params: _meta.${META.clientCapabilities} has no member ${JSON.stringify(unknown.slice(0, 50))}`, {
      envelope: { key: META.clientCapabilities, problem: `unknown member ${unknown.slice(0, 50)}` },
    });
  }
  const info = meta[META.clientInfo];
  if (info !== undefined && !isObject(info)) {
    return reject(message, 400, -32602, `Invalid params: _meta.${META.clientInfo} must be an object`, {
      envelope: { key: META.clientInfo, problem: 'must be an object' },
    });
  }
  if (!isRequest) return { era: 'modern', message, method };
  if (headers.method === undefined) return mismatch(message, 'Mcp-Method', undefined, method);
  if (headers.method.trim() !== method) return mismatch(message, 'Mcp-Method', headers.method.trim(), method);
  const field = NAME_FIELD[method];
  const params = 'params' in message && isObject(message.params) ? message.params : {};
  const named = field === undefined ? undefined : params[field];
  if (typeof named === 'string') {
    if (headers.name === undefined) return mismatch(message, 'Mcp-Name', undefined, named);
    const decoded = headerValue(headers.name);
    if (decoded === undefined) return mismatch(message, 'Mcp-Name (not valid =?base64?…?= UTF-8)', headers.name.slice(0, 200), named);
    if (decoded !== named) return mismatch(message, 'Mcp-Name', decoded.slice(0, 200), named);
  }
  return { era: 'modern', message, method };
}

/** Whether the endpoint serves `method` in this era; the revision answers the others -32601 with HTTP 404. */
export const servedMethod = (method: string, withResources: boolean): boolean => SERVED.has(method) && (withResources || !method.startsWith('resources/'));

export const methodNotFound = (message: JSONRPCMessage, method: string): Rejection => ({
  status: 404,
  code: -32601,
  message: `Method not found: ${method.slice(0, 100)} is not a method of MCP ${MODERN_VERSION} on this endpoint`,
  id: idOf(message),
});

/**
 * A legacy-era answer as the 2026-07-28 era gives it: every result says `resultType` and the
 * server's identity in `_meta`, lists and reads their cache hints; a resource that is not
 * there is -32602 with its URI (the revision's rule for every read miss).
 */
export function modernAnswer(
  answer: JSONRPCMessage,
  method: string,
  serverInfo: { readonly name: string; readonly version: string },
  uri?: string,
): JSONRPCMessage {
  if ('error' in answer) {
    if (method === 'resources/read' && answer.error.code === -32002) return { ...answer, error: { ...answer.error, code: -32602, data: { uri } } };
    return answer;
  }
  if (!('result' in answer)) return answer;
  const result = answer.result as Record<string, unknown>;
  const meta = isObject(result._meta) ? result._meta : {};
  return {
    ...answer,
    result: {
      ...result,
      resultType: 'complete',
      ...(CACHE_HINTS[method] ?? {}),
      _meta: { ...meta, [META.serverInfo]: { name: serverInfo.name, version: serverInfo.version } },
    },
  };
}
