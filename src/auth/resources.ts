import type { Config } from '../config.ts';
import type { ScopeCatalogue } from '../kernel/access/scopes.ts';
import type { Endpoint } from '../mcp/registry.ts';

/** An MCP endpoint's resource URL (RFC 8707): what its OAuth access tokens are bound to. */
export const resourceUrl = (config: Config, endpoint: Endpoint): string => `${config.publicUrl}${endpoint.path}`;

/** The names of this machine's loopback interface, as a URL's hostname gives them. */
export const LOOPBACK_NAMES: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * The public URL as a client on this machine names it. A gateway whose public URL is a loopback
 * address (`npm start`'s `http://127.0.0.1:8787`) is the same service under `localhost` and
 * `[::1]`, and an MCP client checks that the protected resource it is told of is the URL it
 * connected to (the SDKs refuse `http://127.0.0.1:8787/mcp` for `http://localhost:8787/mcp`).
 * For a request whose Host is another loopback name with the same port, this is the public URL
 * under that name; otherwise, and for every public URL that is not loopback, the public URL.
 */
export function publicUrlAsNamed(config: Config, host: string | undefined): string {
  const base = new URL(config.publicUrl);
  if (host === undefined || !LOOPBACK_NAMES.has(base.hostname)) return config.publicUrl;
  let asked: URL;
  try {
    asked = new URL(`${base.protocol}//${host}`);
  } catch {
    return config.publicUrl;
  }
  if (!LOOPBACK_NAMES.has(asked.hostname) || asked.port !== base.port || asked.hostname === base.hostname) return config.publicUrl;
  base.hostname = asked.hostname;
  return `${base.origin}${base.pathname.replace(/\/+$/, '')}`;
}

/**
 * A resource URL a client sent (authorization and token requests), in the public URL's own
 * name: a loopback alias of a loopback public URL is the same resource, so a grant is bound to
 * one URL whichever name the client connected with. Any other value is returned as sent.
 */
export function canonicalResource(config: Config, resource: string): string {
  let url: URL;
  try {
    url = new URL(resource);
  } catch {
    return resource;
  }
  if (url.search !== '' || url.hash !== '') return resource;
  const named = publicUrlAsNamed(config, url.host);
  const asSent = `${url.origin}${url.pathname}`;
  if (named === config.publicUrl || !`${asSent}/`.startsWith(`${named}/`)) return resource;
  return `${config.publicUrl}${asSent.slice(named.length)}`;
}

/** The resource a grant is bound to when the authorization request names none. */
export const defaultResource = (config: Config): string => `${config.publicUrl}/mcp`;

export const oauthUrl = (config: Config, path: string): string => `${config.publicUrl}/oauth/${path}`;

/** Where an MCP endpoint's protected resource metadata (RFC 9728) is served, under the public URL as the client named it. */
const protectedResourceMetadataUrl = (publicUrl: string, endpoint: Endpoint): string => `${publicUrl}/.well-known/oauth-protected-resource${endpoint.path}`;

/**
 * Why an MCP endpoint refuses a bearer request: no token (401), a token it does not accept (401),
 * or a token without the scopes the request needs (403), naming the scopes it holds and lacks.
 */
export type BearerRefusal =
  | { readonly error: 'no_token' }
  | { readonly error: 'invalid_token' }
  | { readonly error: 'insufficient_scope'; readonly held: Iterable<string>; readonly missing: Iterable<string> };

/**
 * The `WWW-Authenticate` header of every 401 and 403 of an MCP endpoint (RFC 6750 §3): where
 * to discover the authorization server (RFC 9728 §5.1) and what to ask for, so a client can sign
 * in, or step up to the scopes it lacks. The parameters keep the order clients have always seen.
 */
export function bearerChallenge(config: Config, endpoint: Endpoint, refusal: BearerRefusal, host?: string): string {
  const metadata = `resource_metadata="${protectedResourceMetadataUrl(publicUrlAsNamed(config, host), endpoint)}"`;
  if (refusal.error === 'insufficient_scope') {
    // The scopes to ask for are those the token holds plus the missing ones: a new token replaces the old.
    const scope = [...new Set([...refusal.held, ...refusal.missing])].join(' ');
    return `Bearer error="insufficient_scope", scope="${scope}", ${metadata}`;
  }
  const challenge = [`Bearer ${metadata}`, `scope="${endpoint.defaultScopes.join(' ')}"`];
  if (refusal.error === 'invalid_token')
    challenge.push('error="invalid_token"', 'error_description="The access token is unknown, revoked, expired or issued for another endpoint"');
  return challenge.join(', ');
}

/**
 * RFC 9728 protected resource metadata of one MCP endpoint, its resource under the name the
 * client used (publicUrlAsNamed); the authorization server keeps the public URL's own name, so
 * the sign-in pages and their cookies live under one name.
 */
export function protectedResourceMetadata(config: Config, endpoint: Endpoint, host?: string): Record<string, unknown> {
  return {
    resource: `${publicUrlAsNamed(config, host)}${endpoint.path}`,
    authorization_servers: [config.publicUrl],
    scopes_supported: endpoint.scopes,
    bearer_methods_supported: ['header'],
    resource_name: endpoint.serverInfo.title ?? endpoint.serverInfo.name,
  };
}

/** RFC 8414 authorization server metadata; the issuer is the public URL. */
export function authorizationServerMetadata(config: Config, scopes: ScopeCatalogue): Record<string, unknown> {
  return {
    issuer: config.publicUrl,
    authorization_endpoint: oauthUrl(config, 'authorize'),
    token_endpoint: oauthUrl(config, 'token'),
    registration_endpoint: oauthUrl(config, 'register'),
    jwks_uri: oauthUrl(config, 'jwks'),
    scopes_supported: [...scopes.all],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    authorization_response_iss_parameter_supported: true,
  };
}
