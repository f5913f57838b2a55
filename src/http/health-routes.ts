import type { FastifyInstance } from 'fastify';
import { checkReadiness } from '../kernel/health/readiness.ts';
import { projectionStatus } from '../kernel/outbox/outbox.ts';
import type { ProjectionStatus } from '../kernel/outbox/outbox.ts';
import type { Services } from '../kernel/services.ts';

/**
 * How far each projection lags, in the /readyz body. A backlog never makes the gateway
 * unready: writes and reads from Postgres still work, and a 503 would only take a gateway out
 * of rotation while it is the one draining the backlog. A projection whose backend does not
 * answer shows up as its probe (which does answer 503) and as last_error here.
 */
async function projectionLag(services: Services): Promise<Record<string, unknown> | undefined> {
  let statuses: ProjectionStatus[];
  try {
    statuses = await projectionStatus(
      services.db,
      services.projections.projections.map((p) => p.name),
    );
  } catch {
    return undefined; // the store probe already says the store does not answer
  }
  return Object.fromEntries(
    statuses.map((s) => [
      s.projection,
      {
        backlog: s.backlog,
        oldest_age_ms: s.oldestAgeMs,
        failing: s.failing,
        last_applied_at: s.lastAppliedAt,
        last_error: s.lastError,
        last_error_at: s.lastErrorAt,
      },
    ]),
  );
}

/** Liveness answers as long as the process serves HTTP; readiness checks every backend. */
export function registerHealthRoutes(app: FastifyInstance, services: Services): void {
  app.get('/healthz', () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const [readiness, projections] = await Promise.all([checkReadiness(services.probes), projectionLag(services)]);
    const backends = Object.fromEntries(
      readiness.checks.map((c) => [c.role, { backend: c.backend, ok: c.ok, latency_ms: c.latencyMs, ...(c.error === undefined ? {} : { error: c.error }) }]),
    );
    return reply
      .code(readiness.ok ? 200 : 503)
      .send({ status: readiness.ok ? 'ready' : 'unavailable', backends, ...(projections === undefined ? {} : { projections }) });
  });
}
