import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { JSONRPCMessageSchema, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { authenticateBearer } from '../auth/bearer.ts';
import { bearerChallenge, resourceUrl } from '../auth/resources.ts';
import type { Config } from '../config.ts';
import type { Caller } from '../kernel/access/caller.ts';
import type { Services } from '../kernel/services.ts';
import type { Endpoint } from '../mcp/registry.ts';
import type { McpService } from '../mcp/server.ts';
import type { AnonymousService } from './anonymous-routes.ts';
import { registerAnonymousRoute } from './anonymous-routes.ts';
import { allowedOrigins, hostAllowed, originAllowed } from './guards.ts';
import type { InflightBytes } from './inflight.ts';
import { declaredBytes } from './inflight.ts';
import { jsonShapeProblem } from './json-shape.ts';
import { answerStatus } from './rate-limited.ts';
import { bodyText } from './utf8.ts';
import type { ModernHeaders, Rejection } from '../mcp/modern.ts';
import { MODERN_VERSIONS, classify } from '../mcp/modern.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller an MCP endpoint's onRequest authenticated, for the handler of the same request; null before that and elsewhere. */
    caller: Caller | null;
  }
}

/** The largest MCP request body accepted; bigger files go through presigned uploads. */
export const MCP_BODY_LIMIT = 16 * 1024 * 1024;

/**
 * The most JSON-RPC messages one POST may hold. A batch is for a few calls that belong
 * together; tens of thousands in one body held the event loop and the memory of the whole
 * gateway. Its calls run a few at a time (MCP_LIMITS in src/mcp/server.ts).
 */
export const MCP_BATCH_MAX = 100;

/**
 * The 401 text of an endpoint without a valid token. Only the Company Brain spec words it; `/mcp`
 * serves all three dialects and says the same sentence of the gateway's own token (its server
 * name), so a Company Brain client reads what its spec promised and the others a plain
 * sentence; `/alignbase/mcp` and `/atmina/mcp` keep the generic text (docs/decisions.md).
 */
const UNAUTHORIZED_TEXT: Readonly<Record<string, string>> = {
  '/brain/mcp': 'Unauthorized: the request is missing a valid Company Brain token.',
  '/mcp': 'Unauthorized: the request is missing a valid Knowledge Gateway token.',
};

/** The 401 text of the endpoints the specs leave it to the gateway. */
const UNAUTHORIZED_GENERIC = 'Unauthorized: a valid bearer token is required';

export function rpcError(reply: FastifyReply, status: number, code: number, message: string): FastifyReply {
  return reply.code(status).type('application/json').send({ jsonrpc: '2.0', error: { code, message }, id: null });
}

function acceptsJson(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  return accept.split(',').some((part) => /^\s*(?:application\/json|application\/\*|\*\/\*)\s*(?:;|$)/i.test(part));
}

function isJsonContentType(contentType: string | undefined): boolean {
  return contentType !== undefined && /^application\/json\s*(?:;|$)/i.test(contentType);
}

/** The refusal of an MCP POST whose Accept, Content-Type or MCP-Protocol-Version will not do, or undefined. */
export function headerRefusal(request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined {
  if (!acceptsJson(request.headers.accept)) return rpcError(reply, 406, -32000, 'Not Acceptable: the client must accept application/json');
  if (!isJsonContentType(request.headers['content-type'])) return rpcError(reply, 415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
  const version = request.headers['mcp-protocol-version'];
  if (typeof version === 'string' && !SUPPORTED_PROTOCOL_VERSIONS.includes(version) && !MODERN_VERSIONS.includes(version.trim())) {
    return rpcError(
      reply,
      400,
      -32000,
      `Bad Request: unsupported protocol version ${version} (supported: ${[...MODERN_VERSIONS, ...SUPPORTED_PROTOCOL_VERSIONS].join(', ')})`,
    );
  }
  return undefined;
}

/** The 2026-07-28 headers of a request: each once, as sent (a header given twice is not one value). */
export function modernHeaders(request: FastifyRequest): ModernHeaders {
  const one = (name: string): string | undefined => {
    const value = request.headers[name];
    return typeof value === 'string' ? value : undefined;
  };
  return { protocolVersion: one('mcp-protocol-version'), method: one('mcp-method'), name: one('mcp-name') };
}

/** Sends one JSON-RPC error with its data and the status the revision gives it. */
export function sendRejection(reply: FastifyReply, rejection: Rejection): FastifyReply {
  const { status, code, message, data, id } = rejection;
  return reply
    .code(status)
    .type('application/json')
    .send({ jsonrpc: '2.0', id, error: { code, message, ...(data === undefined ? {} : { data }) } });
}

/** A body readMessages refused: its JSON-RPC code, the problem and, for bytes that are not UTF-8, where. */
export interface BodyProblem {
  readonly code: number;
  readonly problem: string;
  readonly data?: { readonly offset: number } | undefined;
}

/**
 * The JSON-RPC messages of an MCP POST's body (its bytes, as the scope's parser keeps them), or
 * the 400 problem with it: not UTF-8 (with the offset of the first invalid byte as its data),
 * a shape over the limits, not JSON, too big a batch, not JSON-RPC, two requests with one id,
 * an empty batch.
 */
export function readMessages(given: unknown): { messages: JSONRPCMessage[]; batch: boolean } | BodyProblem {
  const text = bodyText(given);
  if ('problem' in text) return { code: -32700, problem: `Parse error: ${text.problem}`, data: { offset: text.offset } };
  const body = text.text;
  const shape = jsonShapeProblem(body);
  if (shape !== undefined) return { code: -32600, problem: `Invalid Request: the body ${shape}` };
  let payload: unknown;
  try {
    payload = JSON.parse(body);
  } catch {
    return { code: -32700, problem: 'Parse error: the body is not valid JSON' };
  }
  const batch = Array.isArray(payload);
  const raw = batch ? (payload as unknown[]) : [payload];
  if (raw.length > MCP_BATCH_MAX)
    return { code: -32600, problem: `Invalid Request: a batch holds at most ${MCP_BATCH_MAX} messages (this one has ${raw.length})` };
  const messages: JSONRPCMessage[] = [];
  const ids = new Set<string | number>();
  for (const item of raw) {
    const parsed = JSONRPCMessageSchema.safeParse(item);
    if (!parsed.success) return { code: -32600, problem: 'Invalid Request: not a JSON-RPC 2.0 message' };
    // Responses are matched to requests by id: two requests with one id could not both be answered.
    if ('id' in parsed.data && 'method' in parsed.data) {
      if (ids.has(parsed.data.id)) return { code: -32600, problem: 'Invalid Request: two requests in the batch have the same id' };
      ids.add(parsed.data.id);
    }
    messages.push(parsed.data);
  }
  if (messages.length === 0) return { code: -32600, problem: 'Invalid Request: empty batch' };
  return { messages, batch };
}

/**
 * Reserves the request's body bytes for `key` (a token, or an address) before the body is read,
 * given back when the answer is sent or the connection closes; over a bound the request is
 * refused unread: 429 when this caller has too much in flight, 503 when everyone together has,
 * each with Retry-After, and the connection closed (the unread body cannot be skipped).
 */
export function admitBody(inflight: InflightBytes, key: string, request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined {
  const header = request.headers['content-length'];
  const reservation = inflight.reserve(key, declaredBytes(typeof header === 'string' ? header : undefined, MCP_BODY_LIMIT));
  if ('release' in reservation) {
    reply.raw.once('close', reservation.release);
    return undefined;
  }
  const { retryAfterSeconds } = inflight.limits;
  reply.header('retry-after', String(retryAfterSeconds)).header('connection', 'close');
  return reservation.refused === 'caller'
    ? rpcError(
        reply,
        429,
        -32000,
        `Too many request bytes in flight for this caller (at most ${inflight.limits.perCaller}); retry after ${retryAfterSeconds} s`,
      )
    : rpcError(
        reply,
        503,
        -32000,
        `The gateway is reading as many request bytes as it takes at once (${inflight.limits.total}); retry after ${retryAfterSeconds} s`,
      );
}

/** The 400 of a body readMessages refused, with its data when it has some. */
export function sendBodyProblem(reply: FastifyReply, read: BodyProblem): FastifyReply {
  return sendRejection(reply, { status: 400, code: read.code, message: read.problem, ...(read.data === undefined ? {} : { data: read.data }), id: null });
}

/**
 * POST /mcp and each dialect's endpoint: stateless Streamable HTTP with JSON responses.
 * Checks run cheapest first, before the body is read: method, Origin, Host, token, headers.
 */
export function registerMcpRoutes(
  app: FastifyInstance,
  config: Config,
  services: Services,
  endpoints: readonly Endpoint[],
  mcp: McpService,
  anonymous: AnonymousService | undefined,
  inflight: InflightBytes,
): void {
  const origins = allowedOrigins(config);
  // On the root, null for every request (Fastify's rule: a decorator starts as null, never as a
  // shared object), so the declared type holds on every route, not only in the scope below.
  app.decorateRequest('caller', null);

  void app.register((scope, _options, done) => {
    // Read any body as bytes: checked as UTF-8 and parsed as JSON here, so a bad body gets a JSON-RPC error, not an HTML page.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MCP_BODY_LIMIT }, (_request, body, finish) => finish(null, body));
    scope.setErrorHandler((error: { statusCode?: number; message: string }, request, reply) => {
      if (error.statusCode === 413) return rpcError(reply, 413, -32600, `Request body exceeds ${MCP_BODY_LIMIT} bytes`);
      // A connection closed before the body arrived (its client left, or shutdown cut it off
      // after the grace period) is no failure of the gateway's, and nobody reads the answer.
      if (request.raw.destroyed && !request.raw.complete) {
        request.log.info({ err: error }, 'MCP request ended before its body arrived');
        return rpcError(reply, 400, -32600, 'Invalid Request: the connection closed before the body arrived');
      }
      request.log.error({ err: error }, 'MCP request failed');
      return rpcError(reply, error.statusCode && error.statusCode < 500 ? error.statusCode : 500, -32603, 'Internal error');
    });

    for (const endpoint of endpoints) {
      scope.route({
        method: ['GET', 'DELETE', 'PUT', 'PATCH'],
        url: endpoint.path,
        handler: (_request, reply) =>
          rpcError(reply.header('allow', 'POST'), 405, -32000, 'Method not allowed: this server is stateless and answers POST only'),
      });
      scope.route({
        method: 'POST',
        url: endpoint.path,
        bodyLimit: MCP_BODY_LIMIT,
        onRequest: async (request, reply) => {
          if (!originAllowed(request.headers.origin, origins)) return rpcError(reply, 403, -32000, 'Forbidden: origin not allowed');
          if (!hostAllowed(request.headers.host, config)) return rpcError(reply, 403, -32000, 'Forbidden: host not allowed');
          const auth = await authenticateBearer(services.db, request.headers.authorization, resourceUrl(config, endpoint));
          if ('failure' in auth) {
            reply.header('www-authenticate', bearerChallenge(config, endpoint, { error: auth.failure === 'invalid' ? 'invalid_token' : 'no_token' }));
            return rpcError(reply, 401, -32001, UNAUTHORIZED_TEXT[endpoint.path] ?? UNAUTHORIZED_GENERIC);
          }
          const headers = headerRefusal(request, reply);
          if (headers !== undefined) return headers;
          const admitted = admitBody(inflight, `token:${auth.caller.tokenId}`, request, reply);
          if (admitted !== undefined) return admitted;
          request.caller = auth.caller;
          return undefined;
        },
        handler: async (request, reply) => {
          const caller = request.caller;
          if (!caller) return rpcError(reply, 401, -32001, 'Unauthorized');
          const read = readMessages(request.body);
          if ('problem' in read) return sendBodyProblem(reply, read);
          const { messages, batch } = read;
          const era = classify(messages, batch, modernHeaders(request));
          if (era.era === 'rejected') return sendRejection(reply, era.rejection);
          const refused = mcp.insufficientScope(endpoint, caller, messages);
          if (refused) {
            reply.header('www-authenticate', bearerChallenge(config, endpoint, { error: 'insufficient_scope', held: caller.scopes, missing: refused.missing }));
            return sendRejection(reply, { status: 403, code: -32003, message: refused.text, id: refused.id });
          }
          const exchange = { endpoint, caller, requestId: request.id, log: request.log };
          if (era.era === 'modern') {
            const answer = await mcp.handleModern(exchange, era.message, era.method);
            if (answer === undefined) return reply.code(202).send();
            if ('status' in answer) return sendRejection(reply, answer);
            return reply
              .code(answerStatus(reply, [answer]))
              .type('application/json')
              .send(answer);
          }
          const responses = await mcp.handle(exchange, messages);
          if (responses.length === 0) return reply.code(202).send();
          return reply
            .code(answerStatus(reply, responses))
            .type('application/json')
            .send(batch ? responses : responses[0]);
        },
      });
    }
    // The anonymous endpoint reads its body the same way, so it lives in this scope.
    if (anonymous !== undefined) registerAnonymousRoute(scope, config, services, anonymous, inflight);
    done();
  });
}
