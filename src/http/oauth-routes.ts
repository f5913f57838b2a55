import { readFileSync } from 'node:fs';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { findClient, parseRegistration, registrationResponse, storeClient } from '../auth/clients.ts';
import { exchangeCode, refresh } from '../auth/grants.ts';
import { AuditTrail } from '../kernel/audit/trail.ts';
import { OAuthError, oauthError } from '../auth/oauth-error.ts';
import { RateLimiter } from '../auth/rate-limit.ts';
import { authorizationServerMetadata, canonicalResource, protectedResourceMetadata, resourceUrl } from '../auth/resources.ts';
import type { ScopeCatalogue } from '../kernel/access/scopes.ts';
import type { Services } from '../kernel/services.ts';
import type { SignInHook } from '../auth/sessions.ts';
import type { Endpoint } from '../mcp/registry.ts';
import { messagePage } from './pages/messages.ts';
import { registerPageRoutes } from './pages/page-routes.ts';
import type { PasswordSignIns } from '../auth/password-sign-in.ts';
import { parseForm, securityHeaders, sendPage } from './pages/respond.ts';
import { bodyText } from './utf8.ts';

/** Registration documents and forms are small; anything bigger is refused before parsing. */
const OAUTH_BODY_LIMIT = 16 * 1024;
const STYLESHEET = readFileSync(new URL('./pages/oauth.css', import.meta.url), 'utf8');
// Endpoints that machines call: JSON answers, readable cross-origin by browser-based clients.
const MACHINE_PATHS = /^\/(?:\.well-known\/|oauth\/(?:token|register|jwks)(?:$|\?))/;

/**
 * Fastify's own refusals of a request it cannot read (a body over the limit, a Content-Type that
 * is no media type at all, a broken Content-Length) are the client's mistake: they keep their
 * 4xx status in the OAuth error format instead of turning into a 500.
 */
function clientError(error: Error & { statusCode?: number }): OAuthError | undefined {
  const status = error.statusCode;
  if (status === 413) return oauthError('invalid_request', `the body exceeds ${OAUTH_BODY_LIMIT} bytes`, 413);
  if (status === 415) return oauthError('invalid_request', 'the Content-Type header is not a media type', 415);
  if (status !== undefined && status >= 400 && status < 500) return oauthError('invalid_request', 'the request cannot be read', status);
  return undefined;
}

function required(form: URLSearchParams, name: string): string {
  const value = form.get(name);
  if (value === null || value === '') throw oauthError('invalid_request', `${name} is required`);
  return value;
}

/**
 * OAuth 2.1 for MCP clients: metadata (RFC 9728, RFC 8414), dynamic registration (RFC 7591),
 * the authorization endpoint with its pages, and the token endpoint. docs/oauth.md explains it.
 */
export function registerOAuthRoutes(
  app: FastifyInstance,
  services: Services,
  endpoints: readonly Endpoint[],
  scopes: ScopeCatalogue,
  onSignIn: readonly SignInHook[],
  signIns: PasswordSignIns,
): void {
  const { config, db } = services;
  const resources = endpoints.map((endpoint) => resourceUrl(config, endpoint));
  const registrations = new RateLimiter(60, 15 * 60_000);
  const basePath = new URL(config.publicUrl).pathname.replace(/\/$/, '');

  void app.register((scope, _options, done) => {
    // Bodies stay bytes: each route reads the one format it accepts (UTF-8 checked, src/http/utf8.ts) and refuses the others itself.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: OAUTH_BODY_LIMIT }, (_request, body, finish) => finish(null, body));
    scope.addHook('onRequest', async (request, reply) => {
      securityHeaders(reply);
      if (MACHINE_PATHS.test(request.url)) reply.header('access-control-allow-origin', '*');
    });
    scope.setErrorHandler((error: Error & { statusCode?: number }, request: FastifyRequest, reply: FastifyReply) => {
      const refusal = error instanceof OAuthError ? error : clientError(error);
      if (!refusal) request.log.error({ err: error }, 'OAuth request failed');
      else {
        request.log.warn(
          { route: request.routeOptions.url ?? null, address: request.ip, error: refusal.code, status: refusal.status },
          'OAuth request refused',
        );
        services.meter?.authFailure('oauth');
      }
      const status = refusal?.status ?? 500;
      if (MACHINE_PATHS.test(request.url))
        return reply.code(status).send(refusal?.toJSON() ?? { error: 'server_error', error_description: `internal error; request id ${request.id}` });
      return sendPage(reply, status, messagePage(config.publicUrl, 'Something went wrong', refusal?.message ?? `Internal error; request id ${request.id}.`));
    });

    const cors = (_request: FastifyRequest, reply: FastifyReply) =>
      reply
        .code(204)
        .header('access-control-allow-methods', 'GET, POST')
        .header('access-control-allow-headers', 'content-type, mcp-protocol-version')
        .header('access-control-max-age', '600')
        .send();

    // Protected resource metadata: the root document describes /mcp; each endpoint has its own.
    const resourcePaths = new Map<string, Endpoint>();
    for (const endpoint of endpoints) {
      for (const prefix of new Set(['', basePath])) resourcePaths.set(`/.well-known/oauth-protected-resource${prefix}${endpoint.path}`, endpoint);
      if (endpoint.path === '/mcp') resourcePaths.set('/.well-known/oauth-protected-resource', endpoint);
    }
    for (const [path, endpoint] of resourcePaths) {
      scope.get(path, (request, reply) => reply.send(protectedResourceMetadata(config, endpoint, request.headers.host)));
      scope.options(path, cors);
    }
    // Authorization server metadata at the root and at the path-inserted places clients probe.
    const serverPaths = new Set([
      '/.well-known/oauth-authorization-server',
      ...[basePath, ...endpoints.map((e) => e.path)].filter((p) => p !== '').map((p) => `/.well-known/oauth-authorization-server${p}`),
    ]);
    for (const path of serverPaths) {
      scope.get(path, (_request, reply) => reply.send(authorizationServerMetadata(config, scopes)));
      scope.options(path, cors);
    }
    scope.get('/oauth/jwks', (_request, reply) => reply.send({ keys: [] }));
    scope.get('/oauth/static/oauth.css', (_request, reply) =>
      reply.header('cache-control', 'public, max-age=3600').type('text/css; charset=utf-8').send(STYLESHEET),
    );

    scope.options('/oauth/register', cors);
    scope.post('/oauth/register', async (request, reply) => {
      const wait = registrations.wait(request.ip);
      if (wait !== undefined) {
        return reply
          .code(429)
          .header('retry-after', String(wait))
          .send(oauthError('invalid_request', `too many registrations from this address; retry in ${wait} s`).toJSON());
      }
      registrations.hit(request.ip);
      if (!/^application\/json\s*(?:;|$)/i.test(request.headers['content-type'] ?? ''))
        throw oauthError('invalid_client_metadata', 'the body must be application/json');
      const text = bodyText(request.body);
      if ('problem' in text) throw oauthError('invalid_client_metadata', text.problem);
      let body: unknown;
      try {
        body = JSON.parse(text.text);
      } catch {
        throw oauthError('invalid_client_metadata', 'the body is not valid JSON');
      }
      const client = await storeClient(db, parseRegistration(body, scopes));
      return reply.code(201).send(registrationResponse(client));
    });

    scope.options('/oauth/token', cors);
    scope.post('/oauth/token', async (request, reply) => {
      reply.header('pragma', 'no-cache');
      const form = parseForm(request);
      // Public clients only: a secret or Basic credentials mean a confused or foreign client.
      if (request.headers.authorization !== undefined || form.has('client_secret')) {
        throw oauthError('invalid_client', 'clients authenticate with client_id only, without a secret or HTTP Basic credentials', 401);
      }
      const client = await findClient(db, form.get('client_id') ?? '');
      if (!client) throw oauthError('invalid_client', 'unknown client_id', 401);
      const grantType = form.get('grant_type');
      // A loopback alias of a loopback public URL names the same resource (canonicalResource).
      const sentResource = form.get('resource');
      const resource = sentResource === null ? undefined : canonicalResource(config, sentResource);
      if (grantType === 'authorization_code') {
        const input = {
          client,
          code: required(form, 'code'),
          verifier: required(form, 'code_verifier'),
          redirectUri: required(form, 'redirect_uri'),
          resource,
        };
        return exchangeCode(db, input, AuditTrail.forSurface(services.audit, 'oauth'));
      }
      if (grantType === 'refresh_token') {
        if (!client.grantTypes.includes('refresh_token')) throw oauthError('unauthorized_client', 'the client did not register the refresh_token grant');
        return refresh(
          db,
          { client, refreshToken: required(form, 'refresh_token'), scope: form.get('scope') ?? undefined, resource, catalogue: scopes },
          AuditTrail.forSurface(services.audit, 'oauth'),
        );
      }
      if (grantType === null) throw oauthError('invalid_request', 'grant_type is required');
      throw oauthError('unsupported_grant_type', `grant_type "${grantType}" is not supported; use authorization_code or refresh_token`);
    });

    registerPageRoutes(scope, services, resources, scopes, onSignIn, signIns);
    done();
  });
}
