import type { FastifyInstance } from 'fastify';
import { checkReadiness } from '../core/health/readiness.ts';
import type { Services } from '../core/services.ts';

/** Liveness answers as long as the process serves HTTP; readiness checks every backend. */
export function registerHealthRoutes(app: FastifyInstance, services: Services): void {
  app.get('/healthz', () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const readiness = await checkReadiness(services.probes);
    const backends = Object.fromEntries(
      readiness.checks.map((c) => [c.role, { backend: c.backend, ok: c.ok, latency_ms: c.latencyMs, ...(c.error === undefined ? {} : { error: c.error }) }]),
    );
    return reply.code(readiness.ok ? 200 : 503).send({ status: readiness.ok ? 'ready' : 'unavailable', backends });
  });
}
