import type { FastifyInstance } from 'fastify';
import { KgwError, isKgwError } from '../kernel/errors.ts';
import type { Services } from '../kernel/services.ts';
import { hashSecret } from '../kernel/tokens/tokens.ts';
import { LOOPBACK_ADDRESSES, bearerSecret, sameSecret } from './secret-check.ts';
import { kgwErrorHandler } from './status.ts';
import { bodyText } from './utf8.ts';

/** The operations the route runs, handed in by the composition root (src/admin/ops.ts). */
export interface AdminOps {
  isOpName(name: string): boolean;
  runOp(services: Services, name: string, args: unknown): Promise<unknown>;
}

/**
 * POST /admin/rpc: how the `kgw` CLI reaches a gateway that holds an embedded data folder.
 * Loopback only, and only with the admin secret the gateway wrote into that folder.
 */
export function registerAdminRoutes(app: FastifyInstance, services: Services, adminSecret: string, ops: AdminOps): void {
  const expected = hashSecret(adminSecret);
  void app.register((scope, _options, done) => {
    // Every KgwError of the route, a refusal here or an operation's, is answered with the registry's status.
    // JSON read from bytes: a body that is not UTF-8 is refused with where, not decoded with U+FFFD in its place.
    const json = scope.getDefaultJsonParser('error', 'error');
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, finish) => {
      const text = bodyText(body);
      if ('problem' in text) return finish(new KgwError('validation', text.problem), undefined);
      return json(request, text.text, finish);
    });
    scope.setErrorHandler(
      kgwErrorHandler((reply, status, error) => reply.code(status).send({ error: { code: error.code, message: error.message, details: error.details } })),
    );
    scope.post<{ Body: { op?: unknown; args?: unknown } }>('/admin/rpc', { bodyLimit: 16 * 1024 * 1024 }, async (request, reply) => {
      const presented = bearerSecret(request.headers.authorization);
      if (!LOOPBACK_ADDRESSES.has(request.socket.remoteAddress ?? '') || presented === undefined || !sameSecret(presented, expected)) {
        throw new KgwError('unauthenticated', 'admin secret required');
      }
      const op = typeof request.body?.op === 'string' ? request.body.op : '';
      if (!ops.isOpName(op)) throw new KgwError('not_found', `unknown operation "${op}"`);
      try {
        return { result: await ops.runOp(services, op, request.body.args) };
      } catch (error) {
        if (isKgwError(error)) throw error;
        // Anything else is a fault of the gateway: logged with the operation, answered without its message.
        request.log.error({ err: error, op }, 'admin operation failed');
        return reply.code(500).send({ error: { code: 'unavailable', message: `internal error; request id ${request.id}` } });
      }
    });
    done();
  });
}
