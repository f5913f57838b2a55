import { randomUUID } from 'node:crypto';
import path from 'node:path';
import Fastify, { LogController } from 'fastify';
import type { FastifyInstance } from 'fastify';
import { DiskBlobStore } from '../connectors/blob/disk.ts';
import { uploadOrigin } from '../connectors/blob/index.ts';
import type { Config } from './config.ts';
import type { ProjectionSet } from '../connectors/projection.ts';
import { OutboxWorker } from './kernel/outbox/worker.ts';
import type { WorkerOptions } from './kernel/outbox/worker.ts';
import type { Services } from './kernel/services.ts';
import { openServices } from './open-services.ts';
import type { OpenedServices } from './open-services.ts';
import {
  accessGates,
  allResources,
  allTools,
  anonymousOffer,
  consoleInbox,
  consoleSections,
  dialectErrors,
  mcpEndpoints,
  rateLimiters,
  scopeCatalogue,
  signInHooks,
} from './products.ts';
import { PasswordSignIns } from './auth/password-sign-in.ts';
import type { OrgReading } from './console/admin/org-pages.ts';
import { adminSection } from './console/admin/section.ts';
import { registerConsoleRoutes } from './console/routes.ts';
import type { OpRunner } from './admin/ops.ts';
import { isOpName, runOp } from './admin/ops.ts';
import { tenantOrgFile } from './admin/org-file.ts';
import { registerAccessLog } from './http/access-log.ts';
import { registerMetricsRoute } from './http/metrics-route.ts';
import { GatewayMetrics } from './metrics.ts';
import { startTracing, tracedServices } from './tracing.ts';
import { measuredSearchBackend } from './search/measured.ts';
import { registerAdminRoutes } from './http/admin-routes.ts';
import { SharedRateLimiter } from './auth/shared-rate.ts';
import { clientErrorAnswer, registerLingeringClose } from './http/linger.ts';
import { RequestDrain, SHUTDOWN_LIMITS } from './http/drain.ts';
import type { ShutdownLimits } from './http/drain.ts';
import { registerHealthRoutes } from './http/health-routes.ts';
import { registerMcpRoutes } from './http/mcp-routes.ts';
import { InflightBytes, MCP_INFLIGHT_LIMITS } from './http/inflight.ts';
import type { InflightLimits } from './http/inflight.ts';
import { registerOAuthRoutes } from './http/oauth-routes.ts';
import { serializeError } from './http/log-safety.ts';
import { registerKbFileRoutes, registerUploadRoutes } from './atmina/index.ts';
import { ToolRegistry } from './mcp/registry.ts';
import { McpService } from './mcp/server.ts';
import { AnonymousMcp } from './mcp/anonymous.ts';
import type { ExchangeLimits } from './mcp/transport.ts';
import type { Db } from './store/db.ts';
import { migrate } from './store/migrate.ts';
import { openPostgres } from './store/postgres.ts';
import { checkDataFolder } from './store/private-dir.ts';

import { BUILD } from './build.ts';

/** The organisation of a tenant as its org file has it, for the console's Admin pages. */
async function consoleOrg(services: Services, tenant: string): Promise<OrgReading> {
  const run: OpRunner = (name, ...[args]) => runOp(services, name, args);
  const file = await tenantOrgFile(run, tenant);
  return { ...file.directory, grants: file.grants, routes: file.routes, leftOut: file.leftOut, text: file.text };
}

/** How long the HTTP server waits for a client; see README "Hardening". */
export const HTTP_LIMITS = { requestTimeoutMs: 300_000, idleTimeoutMs: 120_000, keepAliveTimeoutMs: 5_000 } as const;

/** The embedded store lives here inside the data folder. */
export const pgliteDir = (config: Config): string => path.join(config.dataDir, 'pgdata');

/**
 * Opens the store the configuration names: PostgreSQL when DATABASE_URL is set, PGlite otherwise.
 * First checks the data folder (src/store/private-dir.ts): what of the gateway's group or others
 * had access to is made private and `warn` (stderr by default) names it; a path that cannot be
 * repaired stops the start.
 */
export async function openStore(config: Config, options: { warn?: (message: string) => void } = {}): Promise<Db> {
  // The data folder also holds file bytes on local disk, whichever store is used.
  await checkDataFolder(config.dataDir, options.warn ?? ((message) => void process.stderr.write(`kgw: warning: ${message}\n`)));
  if (config.databaseUrl !== undefined) return openPostgres(config.databaseUrl);
  // Loaded only here: a gateway on PostgreSQL never loads PGlite's code (ten modules) nor runs its checks at load.
  const { openPglite } = await import('./store/pglite.ts');
  return openPglite(pgliteDir(config));
}

export interface GatewayOptions {
  /** A store opened by the caller (tests); otherwise the configured one is opened and migrated. */
  readonly db?: Db;
  /** Enables POST /admin/rpc for the CLI, guarded by this secret. */
  readonly adminSecret?: string;
  /** Replaces the configured projections fed by the outbox worker (tests pass their own). */
  readonly projections?: ProjectionSet;
  /** Outbox worker timing (tests make it fast). */
  readonly outboxWorker?: WorkerOptions;
  /** How an MCP POST's calls run (tests shorten the deadline); MCP_LIMITS otherwise. */
  readonly mcpLimits?: ExchangeLimits;
  /** Request bytes in flight per caller and in total on the MCP endpoints (tests lower them); MCP_INFLIGHT_LIMITS otherwise. */
  readonly inflightLimits?: InflightLimits;
  /** How long close() lets requests finish (tests shorten it); SHUTDOWN_LIMITS otherwise. */
  readonly shutdown?: ShutdownLimits;
  /** Where log lines go (tests read them); stdout otherwise. */
  readonly logStream?: { write(line: string): void };
}

export interface Gateway {
  readonly app: FastifyInstance;
  readonly services: Services;
  /** Request bytes in flight on the MCP endpoints (its `held()` shows them: tests and metrics). */
  readonly inflight: InflightBytes;
  /**
   * Stops serving, lets the requests in flight finish within SHUTDOWN_LIMITS (src/http/drain.ts),
   * then closes everything the gateway opened, in reverse order.
   */
  close(): Promise<void>;
}

/** Builds the whole gateway from a configuration; nothing is listening until `app.listen`. */
export async function createGateway(config: Config, options: GatewayOptions = {}): Promise<Gateway> {
  const ownsDb = options.db === undefined;
  const db = options.db ?? (await openStore(config));
  let opened: OpenedServices | undefined;
  let tracing: { flush(): Promise<void> } | undefined;
  try {
    if (ownsDb) await migrate(db);
    opened = await openServices(config, db, options.projections === undefined ? {} : { projections: options.projections });
    // The gateway's metrics (src/metrics.ts): every search timed by engine, the rest told by the layers that see it.
    const metrics = new GatewayMetrics(db);
    // With KGW_TRACES_URL, the store, blob, graph and search calls a request makes are spans below its tool's (src/tracing.ts).
    tracing = config.traces === undefined ? undefined : await startTracing(config.traces);
    const measured = { ...opened.services, search: measuredSearchBackend(opened.services.search, metrics), meter: metrics };
    const services: Services = Object.freeze(tracing === undefined ? measured : tracedServices(measured));
    const blob = services.blob;
    const endpoints = mcpEndpoints(BUILD.version);
    const registry = new ToolRegistry(endpoints, allTools, dialectErrors, { resources: allResources, gates: accessGates });
    const app = Fastify({
      logger: {
        level: config.logLevel,
        redact: ['req.headers.authorization', 'req.headers.cookie'],
        serializers: { err: serializeError, error: serializeError },
        ...(options.logStream === undefined ? {} : { stream: options.logStream }),
      },
      // The request id (logs, audit log, x-request-id answer) is always the gateway's own: one a
      // client chose could repeat another request's id or lay false trails in the audit log.
      genReqId: () => randomUUID(),
      // Behind the trusted reverse proxies only, the client's address is read from
      // X-Forwarded-For (request.ip): per-address limits then count each client, not the proxy.
      trustProxy: config.trustedProxies.length === 0 ? false : [...config.trustedProxies],
      // A client's X-Request-Id is kept for correlation only, as `clientRequestId` on the
      // request's logger: at most 64 characters, visible ASCII only, so it cannot garble a line.
      childLoggerFactory: (logger, bindings, options, request) => {
        const given = request.headers['x-request-id'];
        if (typeof given !== 'string' || given === '') return logger.child(bindings, options);
        return logger.child({ ...bindings, clientRequestId: given.slice(0, 64).replace(/[^\x21-\x7e]/g, '_') }, options);
      },
      requestIdHeader: false,
      // The gateway writes its own access line per request (src/http/access-log.ts); tool calls
      // log their own line at debug.
      logController: new LogController({ disableRequestLogging: true }),
      // Closing stops listening and closes idle connections only: the requests in flight get to
      // answer, and RequestDrain closes what is left after its grace period. Destroying every
      // socket at once cut clients off while their handlers ran on, into the closed store.
      forceCloseConnections: 'idle',
      // Late arrivals are refused by RequestDrain, in the gateway's JSON, not Fastify's.
      return503OnClosing: false,
      // Every request ends: a client must send its whole request (a large upload included) within
      // 5 minutes and its headers within 60 s (Node's default), a connection idle for 120 s is
      // closed, and an MCP exchange answers every call within 60 s (src/mcp/server.ts).
      requestTimeout: HTTP_LIMITS.requestTimeoutMs,
      connectionTimeout: HTTP_LIMITS.idleTimeoutMs,
      keepAliveTimeout: HTTP_LIMITS.keepAliveTimeoutMs,
      // A request Node's parser refuses gets its answer before the connection closes, not a reset (src/http/linger.ts).
      clientErrorHandler: (error, socket) => clientErrorAnswer(error, socket),
    });
    // Connections the gateway closes linger, so a client still sending reads the answer it was sent.
    registerLingeringClose(app);
    registerAccessLog(app, services.meter);
    const drain = new RequestDrain();
    drain.register(app, endpoints);
    app.addHook('onSend', async (request, reply) => {
      reply.header('x-request-id', request.id);
    });
    registerHealthRoutes(app, services);
    registerMetricsRoute(app, config.metrics, metrics);
    // A product's endpoint for connections without credentials: Atmina's anonymous search (docs/atmina.md, "Anonymous search").
    const offered = anonymousOffer(endpoints);
    const anonymous =
      offered === undefined
        ? undefined
        : {
            endpoint: offered.endpoint,
            path: offered.offer.path,
            mcp: new AnonymousMcp(registry, services, offered.offer, config.anonymousSearch, options.mcpLimits),
          };
    const inflight = new InflightBytes(options.inflightLimits ?? MCP_INFLIGHT_LIMITS);
    registerMcpRoutes(app, config, services, endpoints, new McpService(registry, services, rateLimiters, options.mcpLimits), anonymous, inflight);
    // One set of sign-in counters for every page that takes a password (the OAuth flow, the console).
    const signIns = new PasswordSignIns(services, signInHooks);
    registerOAuthRoutes(app, services, endpoints, scopeCatalogue, signInHooks, signIns);
    registerConsoleRoutes(app, services, {
      inbox: consoleInbox,
      sections: [...consoleSections, adminSection({ scopes: scopeCatalogue, org: (tenant) => consoleOrg(services, tenant) })],
      scopes: scopeCatalogue.all,
      signIns,
      // The Knowledge Bases pages upload straight to S3's presigned URLs: their script may connect there.
      connectSources: [uploadOrigin(config)].filter((origin): origin is string => origin !== undefined),
    });
    registerKbFileRoutes(app, config, services, endpoints);
    // Local disk has no presigned URLs of its own: the gateway serves single-use upload URLs,
    // their PUTs counted per client address in the store every replica shares.
    if (blob instanceof DiskBlobStore) registerUploadRoutes(app, blob, new SharedRateLimiter(db, 'upload_puts', config.rateLimits.uploadPutsPerMinute, 60_000));
    if (options.adminSecret !== undefined) registerAdminRoutes(app, services, options.adminSecret, { isOpName, runOp });
    await app.ready();
    const outbox = new OutboxWorker(db, services.projections.projections, {
      onError: (error, projection) => app.log.warn({ projection, err: error }, 'outbox: projection not applied; will retry'),
      ...options.outboxWorker,
    });
    outbox.start();
    return {
      app,
      services,
      inflight,
      async close() {
        // The outbox and the requests wind down together: a projection's apply may wait on a
        // lock or a pool connection that a request in flight holds, so stopping the worker
        // first could hold the drain (and its grace period) back until that request ends.
        // Every handler that started has answered (or the bounds passed) before the store closes.
        await Promise.all([outbox.stop(), drain.close(app, options.shutdown ?? SHUTDOWN_LIMITS)]);
        await opened?.close();
        if (ownsDb) await db.close();
        // Spans still batched go out before the process may end.
        await tracing?.flush().catch((error: unknown) => app.log.warn({ err: error }, 'traces not sent at shutdown'));
      },
    };
  } catch (error) {
    await opened?.close();
    if (ownsDb) await db.close();
    throw error;
  }
}
