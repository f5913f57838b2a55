import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Meter } from './kernel/meter.ts';
import { projectionStatus } from './kernel/outbox/outbox.ts';
import type { Db } from './store/db.ts';

/** Latency buckets in seconds: a cached read (1 ms) to a tool call at its deadline (60 s). */
const SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * The gateway's metrics in Prometheus's format (docs/architecture.md, "Metrics"), each gateway
 * with its own registry: requests by route, method and status with their latency; tool calls
 * by dialect, tool and outcome (`ok` or the error code, `rate_limited` among them) with their
 * latency; credentials refused; search time by engine; and, read at each scrape, the outbox's
 * backlog and the age of its oldest row per projection, the PostgreSQL pool, and the process
 * (memory, CPU, event-loop lag, handles) as prom-client measures it.
 */
/**
 * The process's own figures (memory, CPU, event-loop lag, GC, handles), collected once per
 * process however many gateways it runs (tests run many): each gateway's exposition merges them.
 */
let processRegistry: Registry | undefined;
function processMetrics(): Registry {
  if (processRegistry === undefined) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry, prefix: 'kgw_' });
  }
  return processRegistry;
}

export class GatewayMetrics implements Meter {
  readonly registry = new Registry();
  readonly #requests = new Counter({
    name: 'kgw_http_requests_total',
    help: 'HTTP requests answered',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  });
  readonly #requestSeconds = new Histogram({
    name: 'kgw_http_request_duration_seconds',
    help: 'Time to answer an HTTP request',
    labelNames: ['route', 'method'] as const,
    buckets: SECONDS,
    registers: [this.registry],
  });
  readonly #toolCalls = new Counter({
    name: 'kgw_tool_calls_total',
    help: 'MCP tool calls by outcome: ok, or the error code (rate_limited, permission_denied, validation, …)',
    labelNames: ['dialect', 'tool', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly #toolSeconds = new Histogram({
    name: 'kgw_tool_call_duration_seconds',
    help: 'Time to run an MCP tool call, from admission to its audit record',
    labelNames: ['dialect', 'tool'] as const,
    buckets: SECONDS,
    registers: [this.registry],
  });
  readonly #authFailures = new Counter({
    name: 'kgw_auth_failures_total',
    help: 'Credentials refused: bearer tokens, sign-ins, OAuth requests',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  readonly #searchSeconds = new Histogram({
    name: 'kgw_search_duration_seconds',
    help: 'Time the search engine took to answer a query',
    labelNames: ['engine', 'ok'] as const,
    buckets: SECONDS,
    registers: [this.registry],
  });

  constructor(db: Db) {
    const backlog = new Gauge({
      name: 'kgw_outbox_backlog',
      help: 'Outbox rows not yet applied, per projection',
      labelNames: ['projection'] as const,
      registers: [this.registry],
    });
    const lag = new Gauge({
      name: 'kgw_outbox_oldest_age_seconds',
      help: 'Age of the oldest outbox row not yet applied, per projection (how far search and the graph lag the store)',
      labelNames: ['projection'] as const,
      registers: [this.registry],
    });
    const failing = new Gauge({
      name: 'kgw_outbox_failing',
      help: 'Outbox rows whose last attempt failed, per projection',
      labelNames: ['projection'] as const,
      registers: [this.registry],
    });
    // Read at each scrape, in one query of the store; a scrape while the store is down shows the last figures.
    new Gauge({
      name: 'kgw_outbox_projections',
      help: 'Projections the outbox knows',
      registers: [this.registry],
      async collect() {
        const status = await projectionStatus(db).catch(() => undefined);
        if (status === undefined) return;
        for (const row of status) {
          backlog.set({ projection: row.projection }, row.backlog);
          lag.set({ projection: row.projection }, row.oldestAgeMs / 1000);
          failing.set({ projection: row.projection }, row.failing);
        }
        this.set(status.length);
      },
    });
    if (db.poolStats !== undefined) {
      const stats = db.poolStats.bind(db);
      new Gauge({
        name: 'kgw_store_pool_connections',
        help: 'PostgreSQL pool connections by state (total, idle, waiting queries, max)',
        labelNames: ['state'] as const,
        registers: [this.registry],
        collect() {
          const now = stats();
          for (const state of ['total', 'idle', 'waiting', 'max'] as const) this.set({ state }, now[state]);
        },
      });
    }
  }

  request(route: string | null, method: string, status: number, seconds: number): void {
    const labels = { route: route ?? 'unmatched', method };
    this.#requests.inc({ ...labels, status: String(status) });
    this.#requestSeconds.observe(labels, seconds);
  }

  toolCall(dialect: string, tool: string, outcome: string, seconds: number): void {
    this.#toolCalls.inc({ dialect, tool, outcome });
    this.#toolSeconds.observe({ dialect, tool }, seconds);
  }

  authFailure(kind: 'bearer' | 'sign_in' | 'oauth'): void {
    this.#authFailures.inc({ kind });
  }

  search(engine: string, ok: boolean, seconds: number): void {
    this.#searchSeconds.observe({ engine, ok: String(ok) }, seconds);
  }

  /** The exposition text (this gateway's figures and the process's) and its content type. */
  async exposition(): Promise<{ contentType: string; text: string }> {
    const merged = Registry.merge([processMetrics(), this.registry]);
    return { contentType: merged.contentType, text: await merged.metrics() };
  }
}
