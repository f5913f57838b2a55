import type { FastifyInstance } from 'fastify';
import { authenticateBearer } from '../auth/bearer.ts';
import { bearerChallenge, resourceUrl } from '../auth/resources.ts';
import type { Config } from '../config.ts';
import type { Caller } from '../kernel/access/caller.ts';
import type { Services } from '../kernel/services.ts';
import type { Endpoint } from '../mcp/registry.ts';
import type { McpService } from '../mcp/server.ts';
import type { AnonymousService } from './anonymous-routes.ts';
import { registerAnonymousRoute } from './anonymous-routes.ts';
import { inRequestSpan } from '../kernel/tracing.ts';
import { calledTools, noteAccess } from './access-log.ts';
import { registerMcpCors } from './cors.ts';
import { allowedOrigins, hostAllowed, originAllowed } from './guards.ts';
import type { InflightBytes } from './inflight.ts';
import { MCP_BODY_LIMIT, admitBody, headerRefusal, modernHeaders, readMessages, rpcError, sendBodyProblem, sendRejection } from './mcp-request.ts';
import { answerStatus } from './rate-limited.ts';
import { classify } from '../mcp/modern.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller an MCP endpoint's onRequest authenticated, for the handler of the same request; null before that and elsewhere. */
    caller: Caller | null;
  }
}

/**
 * The 401 text of the endpoints the specs leave it to the gateway; an endpoint whose spec words
 * one says that instead (Endpoint.unauthorizedText; docs/decisions.md).
 */
const UNAUTHORIZED_GENERIC = 'Unauthorized: a valid bearer token is required';

/**
 * POST /mcp and each dialect's endpoint: stateless Streamable HTTP with JSON responses.
 * Checks run cheapest first, before the body is read: method, Origin, Host, token, headers.
 */
export function registerMcpRoutes(
  app: FastifyInstance,
  config: Config,
  services: Services,
  endpoints: readonly Endpoint[],
  mcp: McpService,
  anonymous: AnonymousService | undefined,
  inflight: InflightBytes,
): void {
  const origins = allowedOrigins(config);
  // On the root, null for every request (Fastify's rule: a decorator starts as null, never as a
  // shared object), so the declared type holds on every route, not only in the scope below.
  app.decorateRequest('caller', null);

  void app.register(async (scope) => {
    // Browsers on the allowed origins: preflights answered and answers readable (src/http/cors.ts).
    await registerMcpCors(scope, origins, [...endpoints.map((endpoint) => endpoint.path), ...(anonymous === undefined ? [] : [anonymous.path])]);
    // Read any body as bytes: checked as UTF-8 and parsed as JSON here, so a bad body gets a JSON-RPC error, not an HTML page.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MCP_BODY_LIMIT }, (_request, body, finish) => finish(null, body));
    scope.setErrorHandler((error: { statusCode?: number; message: string }, request, reply) => {
      if (error.statusCode === 413) return rpcError(reply, 413, -32600, `Request body exceeds ${MCP_BODY_LIMIT} bytes`);
      // A connection closed before the body arrived (its client left, or shutdown cut it off
      // after the grace period) is no failure of the gateway's, and nobody reads the answer.
      if (request.raw.destroyed && !request.raw.complete) {
        request.log.info({ err: error }, 'MCP request ended before its body arrived');
        return rpcError(reply, 400, -32600, 'Invalid Request: the connection closed before the body arrived');
      }
      request.log.error({ err: error }, 'MCP request failed');
      return rpcError(reply, error.statusCode && error.statusCode < 500 ? error.statusCode : 500, -32603, 'Internal error');
    });

    for (const endpoint of endpoints) {
      scope.route({
        method: ['GET', 'DELETE', 'PUT', 'PATCH'],
        url: endpoint.path,
        handler: (_request, reply) =>
          rpcError(reply.header('allow', 'POST'), 405, -32000, 'Method not allowed: this server is stateless and answers POST only'),
      });
      scope.route({
        method: 'POST',
        url: endpoint.path,
        bodyLimit: MCP_BODY_LIMIT,
        onRequest: async (request, reply) => {
          if (!originAllowed(request.headers.origin, origins)) return rpcError(reply, 403, -32000, 'Forbidden: origin not allowed');
          if (!hostAllowed(request.headers.host, config)) return rpcError(reply, 403, -32000, 'Forbidden: host not allowed');
          const auth = await authenticateBearer(services.tokens, request.headers.authorization, resourceUrl(config, endpoint));
          if ('failure' in auth) {
            // A request without a token is how OAuth discovery begins; a token refused is worth a warning.
            if (auth.failure === 'invalid') {
              request.log.warn({ route: endpoint.path, address: request.ip }, 'bearer token refused');
              services.meter?.authFailure('bearer');
            }
            reply.header(
              'www-authenticate',
              bearerChallenge(config, endpoint, { error: auth.failure === 'invalid' ? 'invalid_token' : 'no_token' }, request.headers.host),
            );
            return rpcError(reply, 401, -32001, endpoint.unauthorizedText ?? UNAUTHORIZED_GENERIC);
          }
          const headers = headerRefusal(request, reply);
          if (headers !== undefined) return headers;
          const admitted = admitBody(inflight, `token:${auth.caller.tokenId}`, request, reply);
          if (admitted !== undefined) return admitted;
          request.caller = auth.caller;
          noteAccess(request, { tenant: auth.caller.tenant.slug, principal: auth.caller.principal.id });
          return undefined;
        },
        // The request's span (continuing a caller's `traceparent`), its tools' spans below it.
        handler: (request, reply) =>
          inRequestSpan(`POST ${endpoint.path}`, request.headers, { 'http.request.method': 'POST', 'http.route': endpoint.path }, async () => {
            const caller = request.caller;
            if (!caller) return rpcError(reply, 401, -32001, 'Unauthorized');
            const read = readMessages(request.body);
            if ('problem' in read) return sendBodyProblem(reply, read);
            const { messages, batch } = read;
            noteAccess(request, { tools: calledTools(messages) });
            const era = classify(messages, batch, modernHeaders(request));
            if (era.era === 'rejected') return sendRejection(reply, era.rejection);
            const refused = mcp.insufficientScope(endpoint, caller, messages);
            if (refused) {
              reply.header(
                'www-authenticate',
                bearerChallenge(config, endpoint, { error: 'insufficient_scope', held: caller.scopes, missing: refused.missing }, request.headers.host),
              );
              return sendRejection(reply, { status: 403, code: -32003, message: refused.text, id: refused.id });
            }
            const exchange = { endpoint, caller, requestId: request.id, log: request.log };
            if (era.era === 'modern') {
              const answer = await mcp.handleModern(exchange, era.message, era.method);
              if (answer === undefined) return reply.code(202).send();
              if ('status' in answer) return sendRejection(reply, answer);
              return reply
                .code(answerStatus(reply, [answer]))
                .type('application/json')
                .send(answer);
            }
            const responses = await mcp.handle(exchange, messages);
            if (responses.length === 0) return reply.code(202).send();
            return reply
              .code(answerStatus(reply, responses))
              .type('application/json')
              .send(batch ? responses : responses[0]);
          }),
      });
    }
    // The anonymous endpoint reads its body the same way, so it lives in this scope.
    if (anonymous !== undefined) registerAnonymousRoute(scope, config, services, anonymous, inflight);
  });
}
