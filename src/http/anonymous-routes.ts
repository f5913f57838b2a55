import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import type { AnonymousCaller } from '../kernel/access/anonymous.ts';
import type { TenantRef } from '../kernel/access/caller.ts';
import { anonymousCaller } from '../kernel/access/anonymous.ts';
import { calledTools, noteAccess } from './access-log.ts';
import { findTenant } from '../kernel/directory/directory.ts';
import type { Services } from '../kernel/services.ts';
import type { AnonymousMcp } from '../mcp/anonymous.ts';
import type { Endpoint } from '../mcp/registry.ts';
import { allowedOrigins, hostAllowed, originAllowed } from './guards.ts';
import type { InflightBytes } from './inflight.ts';
import { MCP_BODY_LIMIT, admitBody, headerRefusal, readMessages, rpcError, sendBodyProblem } from './mcp-request.ts';
import { answerStatus } from './rate-limited.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The anonymous connection the anonymous endpoint's onRequest established; null elsewhere. */
    anonymousCaller: AnonymousCaller | null;
  }
}

/**
 * The anonymous MCP service, the endpoint whose tool it offers (Atmina's /atmina/mcp) and its
 * route, with `:tenant` for the tenant's slug (Atmina's /atmina/public/:tenant/mcp), as the
 * product declares them (Product.anonymous).
 */
export interface AnonymousService {
  readonly mcp: AnonymousMcp;
  readonly endpoint: Endpoint;
  readonly path: string;
}

/** How long the tenant of an allowed slug is kept before the store is asked again: requests without credentials then cost no store query. */
export const TENANT_CACHE_MS = 30_000;

const NOT_HERE = 'Not Found: no anonymous search endpoint here; an organisation that allows anonymous search names its own';

/**
 * POST /atmina/public/{tenant}/mcp (the path the product declares): MCP without credentials, for a tenant the operator listed
 * in KGW_ANONYMOUS_SEARCH_TENANTS, offering only `search` over its public KBs. The authenticated
 * endpoints keep answering a request without a token with 401 and WWW-Authenticate, which MCP
 * clients rely on to start OAuth: anonymous access has a path of its own, so no client is ever
 * served anonymously where it should have signed in. A tenant that does not exist and one that
 * does not allow anonymous search get the same 404, so the endpoint cannot probe tenant names.
 * A request that brings a token is refused rather than served anonymously: its client expects
 * its own access and would silently get less.
 */
export function registerAnonymousRoute(scope: FastifyInstance, config: Config, services: Services, anonymous: AnonymousService, inflight: InflightBytes): void {
  const origins = allowedOrigins(config);
  const enabled = new Set(config.anonymousSearch.tenants);
  // One entry per allowed slug at most (the operator's list), so it needs no bound of its own.
  const known = new Map<string, { tenant: TenantRef | undefined; until: number }>();
  const tenantOf = async (slug: string): Promise<TenantRef | undefined> => {
    // The set is checked first: a tenant that did not opt in costs no store query.
    if (!enabled.has(slug)) return undefined;
    const cached = known.get(slug);
    if (cached !== undefined && cached.until > Date.now()) return cached.tenant;
    const tenant = await findTenant(services.db, slug);
    known.set(slug, { tenant, until: Date.now() + TENANT_CACHE_MS });
    return tenant;
  };
  scope.decorateRequest('anonymousCaller', null);
  scope.route({
    method: ['GET', 'DELETE', 'PUT', 'PATCH'],
    url: anonymous.path,
    handler: (_request, reply) => rpcError(reply.header('allow', 'POST'), 405, -32000, 'Method not allowed: this server is stateless and answers POST only'),
  });
  scope.route<{ Params: { tenant: string } }>({
    method: 'POST',
    url: anonymous.path,
    bodyLimit: MCP_BODY_LIMIT,
    onRequest: async (request, reply) => {
      if (!originAllowed(request.headers.origin, origins)) return rpcError(reply, 403, -32000, 'Forbidden: origin not allowed');
      if (!hostAllowed(request.headers.host, config)) return rpcError(reply, 403, -32000, 'Forbidden: host not allowed');
      const slug = request.params.tenant;
      const tenant = await tenantOf(slug);
      if (tenant === undefined) return rpcError(reply, 404, -32000, NOT_HERE);
      if (request.headers.authorization !== undefined)
        return rpcError(
          reply,
          400,
          -32000,
          `Bad Request: ${anonymous.path.replace(':tenant', slug)} is anonymous and takes no Authorization header; send the token to ${anonymous.endpoint.path}`,
        );
      const headers = headerRefusal(request, reply);
      if (headers !== undefined) return headers;
      const admitted = admitBody(inflight, `address:${request.ip}`, request, reply);
      if (admitted !== undefined) return admitted;
      request.anonymousCaller = anonymousCaller(tenant);
      noteAccess(request, { tenant: tenant.slug, anonymous: true });
      return undefined;
    },
    handler: async (request, reply) => {
      const caller = request.anonymousCaller;
      if (!caller) return rpcError(reply, 404, -32000, NOT_HERE);
      const read = readMessages(request.body);
      if ('problem' in read) return sendBodyProblem(reply, read);
      noteAccess(request, { tools: calledTools(read.messages) });
      const responses = await anonymous.mcp.handle(
        { endpoint: anonymous.endpoint, caller, address: request.ip, requestId: request.id, log: request.log },
        read.messages,
      );
      if (responses.length === 0) return reply.code(202).send();
      return reply
        .code(answerStatus(reply, responses))
        .type('application/json')
        .send(read.batch ? responses : responses[0]);
    },
  });
}
