/**
 * The server child of the bench: serves one scenario on a loopback port over an already seeded
 * store, tells the parent the port over IPC, answers usage questions and stops when told.
 */
import Fastify, { LogController } from 'fastify';
import type { FastifyInstance } from 'fastify';
import { authenticateBearer } from '../src/auth/bearer.ts';
import { TokenCache } from '../src/kernel/tokens/token-cache.ts';
import type { Caller } from '../src/kernel/access/caller.ts';
import { AuditLog } from '../src/kernel/audit/audit-log.ts';
import { AuditTrail } from '../src/kernel/audit/trail.ts';
import { describeCaller } from '../src/kernel/directory/whoami.ts';
import type { Db } from '../src/store/db.ts';
import type { ChildSpec, FromChild, ToChild } from './scenarios.ts';
import { BENCH_KB_WRITES_PER_MINUTE, GATEWAY_SCENARIOS, PATHS, usageNow } from './scenarios.ts';

const LOG_LEVEL = 'warn';
/** How long the store must have run nothing before the child closes it. */
const IDLE_MS = 500;

function tell(message: FromChild): void {
  process.send?.(message);
}

/** A Fastify app configured like the gateway's (logger on, per-request logging off). */
function plainFastify(): FastifyInstance {
  return Fastify({ logger: { level: LOG_LEVEL }, logController: new LogController({ disableRequestLogging: true }) });
}

/** The tool call's audit record, which every scenario writes like the gateway does. */
function auditWhoami(audit: AuditLog, caller: Caller, requestId: string): Promise<void> {
  return AuditTrail.forTool(audit, caller, { name: 'whoami', dialect: 'atmina' }, requestId).finish({ ok: true });
}

/** (2) The same work as the MCP tool, without MCP: authenticate, describe, audit, reply JSON. */
function plainApp(db: Db): FastifyInstance {
  const app = plainFastify();
  const audit = new AuditLog(db);
  const tokens = new TokenCache(db);
  app.post(PATHS.plain, async (request, reply) => {
    const result = await authenticateBearer(tokens, request.headers.authorization);
    if ('failure' in result) return reply.code(401).send({ error: result.failure });
    const profile = await describeCaller(db, result.caller);
    await auditWhoami(audit, result.caller, request.id);
    return profile;
  });
  return app;
}

/** (3) The common naive pattern: a new McpServer, tool, zod schema and SDK transport per request. */
async function naiveSdkApp(db: Db): Promise<FastifyInstance> {
  // Imported here so that each scenario's memory holds only the modules it uses.
  const { McpServer } = await import('@modelcontextprotocol/sdk/server/mcp.js');
  const { StreamableHTTPServerTransport } = await import('@modelcontextprotocol/sdk/server/streamableHttp.js');
  const { z } = await import('zod');
  const app = plainFastify();
  const audit = new AuditLog(db);
  const tokens = new TokenCache(db);
  app.post(PATHS['naive-sdk'], async (request, reply) => {
    const result = await authenticateBearer(tokens, request.headers.authorization);
    if ('failure' in result) return reply.code(401).send({ error: result.failure });
    const { caller } = result;
    const server = new McpServer({ name: 'naive', version: '1.0.0' });
    server.registerTool('whoami', { title: 'Who am I', description: 'The authenticated caller.', inputSchema: z.object({}).strict() }, async () => {
      const profile = await describeCaller(db, caller);
      await auditWhoami(audit, caller, request.id);
      return { content: [{ type: 'text', text: JSON.stringify(profile, null, 2) }], structuredContent: { ...profile } };
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    reply.hijack();
    await transport.handleRequest(request.raw, reply.raw, request.body);
    return reply;
  });
  return app;
}

/**
 * The store with a count of its running queries and transactions: when the load stops, tool
 * calls the server already took on are still running (their connections are gone), and closing
 * the store under them would fail them, so stopping waits until the store has been idle a while.
 */
function draining(db: Db): { readonly db: Db; idle(): Promise<void> } {
  let running = 0;
  let lastActive = Date.now();
  const track = async <T>(work: Promise<T>): Promise<T> => {
    running += 1;
    try {
      return await work;
    } finally {
      running -= 1;
      lastActive = Date.now();
    }
  };
  const tracked: Db = {
    kind: db.kind,
    query: (sql, params, options) => track(db.query(sql, params, options)),
    tx: (work) => track(db.tx(work)),
    write: (sql, params) => track(db.write(sql, params)),
    listen: (channel, listener) => db.listen(channel, listener),
    hears: (channel) => db.hears(channel),
    close: () => db.close(),
  };
  return {
    db: tracked,
    async idle() {
      const deadline = Date.now() + 30_000;
      while (Date.now() < deadline && (running > 0 || Date.now() - lastActive < IDLE_MS)) await new Promise((resolve) => setTimeout(resolve, 50));
    },
  };
}

async function openStore(spec: ChildSpec['store']): Promise<Db> {
  if (spec.kind === 'pglite') return (await import('../src/store/pglite.ts')).openPglite(spec.dataDir);
  return (await import('../src/store/postgres.ts')).openPostgres(spec.url, { max: Number(process.env.BENCH_POOL ?? 10) });
}

async function start(spec: ChildSpec, db: Db): Promise<{ app: FastifyInstance; close(): Promise<void> }> {
  const { scenario } = spec;
  if (GATEWAY_SCENARIOS.has(scenario)) {
    const { createGateway } = await import('../src/app.ts');
    const { loadConfig } = await import('../src/config.ts');
    const env = {
      KGW_PORT: '0',
      KGW_LOG_LEVEL: LOG_LEVEL,
      // The parent's folder: the blob store holds the bytes of the files it seeded.
      KGW_DATA_DIR: spec.dataDir,
      KGW_KB_WRITES_PER_MINUTE: String(BENCH_KB_WRITES_PER_MINUTE),
    };
    const gateway = await createGateway(loadConfig(env), { db });
    return { app: gateway.app, close: () => gateway.close() };
  }
  const app = scenario === 'plain' ? plainApp(db) : await naiveSdkApp(db);
  await app.ready();
  return { app, close: () => app.close() };
}

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2] ?? '{}') as ChildSpec;
  const store = draining(await openStore(spec.store));
  const { db } = store;
  const server = await start(spec, db);
  await server.app.listen({ host: '127.0.0.1', port: 0 });
  const address = server.app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  process.on('message', (message: ToChild) => {
    if (message.type === 'usage') tell({ type: 'usage', usage: usageNow() });
    if (message.type === 'stop') {
      void (async () => {
        await server.close();
        await store.idle();
        await db.close();
        // Leaving the event loop empty lets the process end normally (and --cpu-prof write its profile).
        process.disconnect();
      })();
    }
  });
  tell({ type: 'ready', port: address.port, usage: usageNow() });
}

main().catch((error: unknown) => {
  tell({ type: 'failed', message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  process.exitCode = 1;
  process.disconnect();
});
