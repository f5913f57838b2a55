import type { Config } from '../config.ts';
import type { ScopeCatalogue } from '../kernel/access/scopes.ts';
import type { Endpoint } from '../mcp/registry.ts';

/** An MCP endpoint's resource URL (RFC 8707): what its OAuth access tokens are bound to. */
export const resourceUrl = (config: Config, endpoint: Endpoint): string => `${config.publicUrl}${endpoint.path}`;

/** The resource a grant is bound to when the authorization request names none. */
export const defaultResource = (config: Config): string => `${config.publicUrl}/mcp`;

export const oauthUrl = (config: Config, path: string): string => `${config.publicUrl}/oauth/${path}`;

/** Where an MCP endpoint's protected resource metadata (RFC 9728) is served. */
export const protectedResourceMetadataUrl = (config: Config, endpoint: Endpoint): string =>
  `${config.publicUrl}/.well-known/oauth-protected-resource${endpoint.path}`;

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
export function bearerChallenge(config: Config, endpoint: Endpoint, refusal: BearerRefusal): string {
  const metadata = `resource_metadata="${protectedResourceMetadataUrl(config, endpoint)}"`;
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

/** RFC 9728 protected resource metadata of one MCP endpoint. */
export function protectedResourceMetadata(config: Config, endpoint: Endpoint): Record<string, unknown> {
  return {
    resource: resourceUrl(config, endpoint),
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
