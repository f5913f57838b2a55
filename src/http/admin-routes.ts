import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { isOpName, runOp } from '../admin/ops.ts';
import type { ErrorCode } from '../core/errors.ts';
import { isKgwError } from '../core/errors.ts';
import type { Services } from '../core/services.ts';
import { hashSecret } from '../core/tokens/tokens.ts';

const STATUS: Readonly<Record<ErrorCode, number>> = {
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

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

function sameSecret(presented: string, expectedHash: string): boolean {
  return timingSafeEqual(Buffer.from(hashSecret(presented), 'hex'), Buffer.from(expectedHash, 'hex'));
}

/**
 * POST /admin/rpc: how the `kgw` CLI reaches a gateway that holds an embedded data folder.
 * Loopback only, and only with the admin secret the gateway wrote into that folder.
 */
export function registerAdminRoutes(app: FastifyInstance, services: Services, adminSecret: string): void {
  const expected = hashSecret(adminSecret);
  app.post<{ Body: { op?: unknown; args?: unknown } }>('/admin/rpc', { bodyLimit: 16 * 1024 * 1024 }, async (request, reply) => {
    const presented = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1];
    if (!LOOPBACK.has(request.socket.remoteAddress ?? '') || presented === undefined || !sameSecret(presented, expected)) {
      return reply.code(401).send({ error: { code: 'unauthenticated', message: 'admin secret required' } });
    }
    const op = typeof request.body?.op === 'string' ? request.body.op : '';
    if (!isOpName(op)) return reply.code(404).send({ error: { code: 'not_found', message: `unknown operation "${op}"` } });
    try {
      return { result: await runOp(services, op, request.body.args) };
    } catch (error) {
      if (isKgwError(error)) return reply.code(STATUS[error.code]).send({ error: { code: error.code, message: error.message, details: error.details } });
      request.log.error({ err: error, op }, 'admin operation failed');
      return reply.code(500).send({ error: { code: 'unavailable', message: `internal error; request id ${request.id}` } });
    }
  });
}
