import type { Config } from '../config.ts';
import type { Scope, ScopeCatalogue } from '../kernel/access/scopes.ts';
import type { Queryable } from '../store/db.ts';
import type { OAuthClient } from './clients.ts';
import { findClient } from './clients.ts';
import type { OAuthErrorCode } from './oauth-error.ts';
import { canonicalResource, defaultResource } from './resources.ts';
import { isPkceValue } from './secrets.ts';

/** The parameters of an authorization request that the sign-in and consent forms carry along. */
export const AUTHORIZE_PARAMS = [
  'response_type',
  'client_id',
  'redirect_uri',
  'code_challenge',
  'code_challenge_method',
  'scope',
  'state',
  'resource',
] as const;
export type AuthorizeParams = Partial<Record<(typeof AUTHORIZE_PARAMS)[number], string>>;

/** A checked authorization request: everything the consent page and the code need. */
export interface AuthorizationRequest {
  readonly client: OAuthClient;
  readonly redirectUri: string;
  readonly state: string | undefined;
  readonly codeChallenge: string;
  readonly scopes: readonly Scope[];
  /** The MCP resource URL the grant will be bound to. */
  readonly resource: string;
  readonly params: AuthorizeParams;
}

export type AuthorizeCheck =
  | { readonly request: AuthorizationRequest }
  /** The client or redirect URI cannot be trusted: tell the person, never redirect. */
  | { readonly page: { readonly title: string; readonly message: string } }
  /** The redirect URI is trusted: send the error back to the client. */
  | { readonly redirect: string };

/** The redirect back to the client, with RFC 9207 `iss` so it knows which server answered. */
export function clientRedirect(config: Config, redirectUri: string, values: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [key, value] of Object.entries({ ...values, iss: config.publicUrl })) if (value !== undefined) url.searchParams.set(key, value);
  return url.toString();
}

/** Reads the known parameters; a repeated one is reported by name. */
export function readAuthorizeParams(input: URLSearchParams): { params: AuthorizeParams; repeated: string | undefined } {
  const params: AuthorizeParams = {};
  let repeated: string | undefined;
  for (const name of AUTHORIZE_PARAMS) {
    const values = input.getAll(name);
    if (values.length > 1) repeated ??= name;
    if (values[0] !== undefined) params[name] = values[0];
  }
  return { params, repeated };
}

/**
 * Checks an authorization request (OAuth 2.1 §4.1.1 with PKCE and RFC 8707 resource). Until the
 * client and its exact redirect URI are known, errors are shown as a page; after, they go back
 * to the client. `resources` are the MCP endpoints' URLs a token may be for; `scopes`, what a
 * client may ask for.
 */
export async function checkAuthorizeRequest(
  q: Queryable,
  config: Config,
  { resources, scopes: catalogue }: { readonly resources: readonly string[]; readonly scopes: ScopeCatalogue },
  input: URLSearchParams,
): Promise<AuthorizeCheck> {
  const { params, repeated } = readAuthorizeParams(input);
  const page = (message: string): AuthorizeCheck => ({ page: { title: 'This connection request cannot be used', message } });
  if (repeated === 'client_id' || repeated === 'redirect_uri') return page(`The request repeats ${repeated}.`);
  const client = params.client_id === undefined ? undefined : await findClient(q, params.client_id);
  if (!client) return page('The app asking to connect is not registered here (unknown client_id). Start the connection again from the app.');
  const redirectUri = params.redirect_uri;
  if (redirectUri === undefined || !client.redirectUris.includes(redirectUri)) {
    return page('The redirect address in the request is not one the app registered, so the request is refused.');
  }
  const fail = (error: OAuthErrorCode, description: string): AuthorizeCheck => ({
    redirect: clientRedirect(config, redirectUri, { error, error_description: description, state: params.state }),
  });
  if (repeated !== undefined) return fail(repeated === 'resource' ? 'invalid_target' : 'invalid_request', `the request repeats ${repeated}`);
  if (params.response_type !== 'code') return fail('unsupported_response_type', 'response_type must be "code"');
  if (params.code_challenge === undefined) return fail('invalid_request', 'code_challenge is required (PKCE)');
  if (params.code_challenge_method !== 'S256') return fail('invalid_request', 'code_challenge_method must be "S256"');
  if (!isPkceValue(params.code_challenge)) return fail('invalid_request', 'code_challenge must be 43 to 128 unreserved characters');
  let scopes: Scope[];
  try {
    scopes = params.scope === undefined || params.scope.trim() === '' ? [...client.scopes] : catalogue.normalize(params.scope);
  } catch (error) {
    return fail('invalid_scope', (error as Error).message);
  }
  const beyond = scopes.filter((scope) => !client.scopes.includes(scope));
  if (beyond.length > 0) return fail('invalid_scope', `the client is not registered for ${beyond.join(', ')}`);
  const resource = params.resource === undefined ? defaultResource(config) : canonicalResource(config, params.resource);
  if (!resources.includes(resource)) return fail('invalid_target', `resource must be one of ${resources.join(', ')}`);
  return { request: { client, redirectUri, state: params.state, codeChallenge: params.code_challenge, scopes, resource, params } };
}
