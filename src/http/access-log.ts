import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Meter } from '../kernel/meter.ts';

/** What the routes learn about a request that its access line names: who, and which tools. */
export interface AccessNote {
  tenant?: string;
  /** The principal's id (never a name, an email or a token). */
  principal?: string;
  anonymous?: boolean;
  /** The tools a POST called, in order (names cut at 100 characters; at most MCP_BATCH_MAX). */
  tools?: string[];
}

declare module 'fastify' {
  interface FastifyRequest {
    accessNote: AccessNote | null;
  }
}

/** Probes a load balancer or scraper asks every few seconds: their lines would drown the rest, so they go at debug. */
const PROBES = new Set(['/healthz', '/readyz', '/metrics']);

/** The tools the messages of an MCP POST call, for its access line. */
export function calledTools(messages: readonly JSONRPCMessage[]): string[] {
  return messages.flatMap((message) => {
    if (!('method' in message) || message.method !== 'tools/call') return [];
    const name = (message.params as { name?: unknown } | undefined)?.name;
    return typeof name === 'string' ? [name.slice(0, 100)] : [];
  });
}

/** Adds to what the request's access line will say (the MCP routes: tenant, principal, tools). */
export function noteAccess(request: FastifyRequest, note: AccessNote): void {
  request.accessNote = { ...request.accessNote, ...note };
}

/**
 * One access line per request at `info` (docs/architecture.md, "Logs"), and its count and
 * latency for the metrics (Meter.request): method, route (the
 * pattern, never the path's values), status, duration in ms and the client's address, and for
 * MCP the tenant, the principal's id and the tools called. Never a header, a token, a query or
 * a body. Health probes and metric scrapes log at `debug`.
 */
export function registerAccessLog(app: FastifyInstance, meter: Meter | undefined): void {
  app.decorateRequest('accessNote', null);
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? null;
    meter?.request(route, request.method, reply.statusCode, reply.elapsedTime / 1000);
    const line = {
      method: request.method,
      route,
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 10) / 10,
      address: request.ip,
      ...request.accessNote,
    };
    if (route !== null && PROBES.has(route)) request.log.debug(line, 'request');
    else request.log.info(line, 'request');
  });
}
