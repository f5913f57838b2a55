import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import Fastify, { LogController } from 'fastify';
import type { FastifyInstance } from 'fastify';
import { DiskBlobStore } from '../connectors/blob/disk.ts';
import type { Config } from './config.ts';
import type { ProjectionSet } from '../connectors/projection.ts';
import { OutboxWorker } from './core/outbox/worker.ts';
import type { WorkerOptions } from './core/outbox/worker.ts';
import type { Services } from './core/services.ts';
import { openServices } from './core/open-services.ts';
import type { OpenedServices } from './core/open-services.ts';
import { allTools, dialectErrors, mcpEndpoints } from './dialects/index.ts';
import { registerAdminRoutes } from './http/admin-routes.ts';
import { registerHealthRoutes } from './http/health-routes.ts';
import { registerMcpRoutes } from './http/mcp-routes.ts';
import { registerOAuthRoutes } from './http/oauth-routes.ts';
import { registerUploadRoutes } from './http/upload-routes.ts';
import { ToolRegistry } from './mcp/registry.ts';
import { McpService } from './mcp/server.ts';
import type { Db } from './store/db.ts';
import { migrate } from './store/migrate.ts';
import { openPglite } from './store/pglite.ts';
import { openPostgres } from './store/postgres.ts';

import { BUILD } from './build.ts';

/** The embedded store lives here inside the data folder. */
export const pgliteDir = (config: Config): string => path.join(config.dataDir, 'pgdata');

/** Opens the store the configuration names: PostgreSQL when DATABASE_URL is set, PGlite otherwise. */
export async function openStore(config: Config): Promise<Db> {
  // The data folder also holds file bytes on local disk, whichever store is used.
  await mkdir(config.dataDir, { recursive: true });
  if (config.databaseUrl !== undefined) return openPostgres(config.databaseUrl);
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
}

export interface Gateway {
  readonly app: FastifyInstance;
  readonly services: Services;
  /** Stops serving and closes everything the gateway opened, in reverse order. */
  close(): Promise<void>;
}

/** Builds the whole gateway from a configuration; nothing is listening until `app.listen`. */
export async function createGateway(config: Config, options: GatewayOptions = {}): Promise<Gateway> {
  const ownsDb = options.db === undefined;
  const db = options.db ?? (await openStore(config));
  let opened: OpenedServices | undefined;
  try {
    if (ownsDb) await migrate(db);
    opened = await openServices(config, db, options.projections === undefined ? {} : { projections: options.projections });
    const { services } = opened;
    const blob = services.blob;
    const endpoints = mcpEndpoints(BUILD.version);
    const registry = new ToolRegistry(endpoints, allTools, dialectErrors);
    const app = Fastify({
      logger: { level: config.logLevel, redact: ['req.headers.authorization', 'req.headers.cookie'] },
      genReqId: (request) => {
        const given = request.headers['x-request-id'];
        return typeof given === 'string' && /^[A-Za-z0-9._-]{1,64}$/.test(given) ? given : randomUUID();
      },
      requestIdHeader: false,
      // Per-request access lines only when debugging; tool calls log their own line at debug.
      logController: new LogController({ disableRequestLogging: config.logLevel !== 'debug' && config.logLevel !== 'trace' }),
      forceCloseConnections: true,
    });
    app.addHook('onSend', async (request, reply) => {
      reply.header('x-request-id', request.id);
    });
    registerHealthRoutes(app, services);
    registerMcpRoutes(app, config, services, endpoints, new McpService(registry, services));
    registerOAuthRoutes(app, services, endpoints);
    // Local disk has no presigned URLs of its own: the gateway serves single-use upload URLs.
    if (blob instanceof DiskBlobStore) registerUploadRoutes(app, blob);
    if (options.adminSecret !== undefined) registerAdminRoutes(app, services, options.adminSecret);
    await app.ready();
    const outbox = new OutboxWorker(db, services.projections.projections, {
      onError: (error, projection) => app.log.warn({ projection, err: error }, 'outbox: projection not applied; will retry'),
      ...options.outboxWorker,
    });
    outbox.start();
    return {
      app,
      services,
      async close() {
        await outbox.stop();
        await app.close();
        await opened?.close();
        if (ownsDb) await db.close();
      },
    };
  } catch (error) {
    await opened?.close();
    if (ownsDb) await db.close();
    throw error;
  }
}
