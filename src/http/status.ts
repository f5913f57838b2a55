import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorCode, KgwError } from '../kernel/errors.ts';
import { isKgwError } from '../kernel/errors.ts';

/**
 * The HTTP status of each error code: the one table every route answers a `KgwError` from.
 * (MCP endpoints answer tool errors inside JSON-RPC, in each dialect's words, not with these.)
 */
export const HTTP_STATUS: Readonly<Record<ErrorCode, number>> = {
  validation: 400,
  unauthenticated: 401,
  permission_denied: 403,
  not_found: 404,
  conflict: 409,
  content_integrity: 422,
  payload_too_large: 413,
  rate_limited: 429,
  unavailable: 503,
};

/**
 * A route's documented departures from HTTP_STATUS, for a route that must answer as some other
 * protocol does. A number replaces the status; `null` means the route does not answer the code
 * as itself: such an error is the gateway's own failure there, which the route answers as its
 * internal error.
 */
export type StatusOverride = Readonly<Partial<Record<ErrorCode, number | null>>>;

/** The status a route answers `code` with, or undefined when its override answers the code as an internal error. */
export function httpStatus(code: ErrorCode, override: StatusOverride = {}): number | undefined {
  const status = override[code];
  if (status === null) return undefined;
  return status ?? HTTP_STATUS[code];
}

/**
 * A scope's error handler (Fastify's `setErrorHandler`) answering every `KgwError` a route
 * throws with its status from HTTP_STATUS; `send` writes the scope's body. Any other error goes
 * on to Fastify's default handler, which answers Fastify's own refusals (a body over the limit,
 * not JSON, an unreadable Content-Type) as it always has: a route answers its own unexpected
 * failures itself, without their message.
 */
export function kgwErrorHandler(send: (reply: FastifyReply, status: number, error: KgwError) => FastifyReply) {
  return (error: unknown, _request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    if (!isKgwError(error)) throw error;
    return send(reply, HTTP_STATUS[error.code], error);
  };
}
