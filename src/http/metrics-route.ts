import type { FastifyInstance } from 'fastify';
import type { MetricsConfig } from '../config.ts';
import { hashSecret } from '../kernel/tokens/tokens.ts';
import { LOOPBACK_ADDRESSES, bearerSecret, sameSecret } from './secret-check.ts';

/** What the route serves: the exposition of the gateway's metrics (src/metrics.ts). */
export interface MetricsExposition {
  exposition(): Promise<{ contentType: string; text: string }>;
}

/**
 * GET /metrics in Prometheus's text format (docs/architecture.md, "Metrics"). With
 * KGW_METRICS_TOKEN set, a scraper anywhere presents it as a bearer token; without one, only a
 * client on this machine's loopback may read it (the address KGW_TRUSTED_PROXIES yields, so a
 * trusted proxy's clients are not taken for local ones). KGW_METRICS=off registers nothing.
 */
export function registerMetricsRoute(app: FastifyInstance, config: MetricsConfig, metrics: MetricsExposition): void {
  if (!config.enabled) return;
  const expected = config.token === undefined ? undefined : hashSecret(config.token);
  app.get('/metrics', async (request, reply) => {
    reply.header('cache-control', 'no-store');
    if (expected !== undefined) {
      const presented = bearerSecret(request.headers.authorization);
      if (presented === undefined || !sameSecret(presented, expected))
        return reply
          .code(401)
          .header('www-authenticate', 'Bearer realm="metrics"')
          .type('text/plain; charset=utf-8')
          .send('metrics need the KGW_METRICS_TOKEN bearer token\n');
    } else if (!LOOPBACK_ADDRESSES.has(request.ip)) {
      return reply
        .code(403)
        .type('text/plain; charset=utf-8')
        .send('metrics are served to this machine only; set KGW_METRICS_TOKEN to scrape from elsewhere\n');
    }
    const { contentType, text } = await metrics.exposition();
    return reply.type(contentType).send(text);
  });
}
