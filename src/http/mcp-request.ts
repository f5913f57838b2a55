import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { JSONRPCMessageSchema, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { InflightBytes } from './inflight.ts';
import { declaredBytes } from './inflight.ts';
import { jsonShapeProblem } from './json-shape.ts';
import { bodyText } from './utf8.ts';
import type { ModernHeaders, Rejection } from '../mcp/modern.ts';
import { MODERN_VERSIONS } from '../mcp/modern.ts';

/*
 * What every MCP POST goes through before its messages are answered, for the authenticated
 * endpoints (mcp-routes.ts) and the anonymous one (anonymous-routes.ts) alike: the headers, the
 * bytes in flight, the body read as JSON-RPC, and the JSON-RPC errors of a refusal.
 */

/** The largest MCP request body accepted; bigger files go through presigned uploads. */
export const MCP_BODY_LIMIT = 16 * 1024 * 1024;

/**
 * The most JSON-RPC messages one POST may hold. A batch is for a few calls that belong
 * together; tens of thousands in one body held the event loop and the memory of the whole
 * gateway. Its calls run a few at a time (MCP_LIMITS in src/mcp/server.ts).
 */
export const MCP_BATCH_MAX = 100;

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
