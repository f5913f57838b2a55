import { randomBytes } from 'node:crypto';
import type { Scope } from '../core/access/scopes.ts';
import { normalizeScopes } from '../core/access/scopes.ts';
import type { Db, Queryable } from '../store/db.ts';
import { oauthError } from './oauth-error.ts';

/** A registered public client (RFC 7591). It has no secret: PKCE protects its codes. */
export interface OAuthClient {
  readonly clientId: string;
  readonly clientName: string | null;
  readonly redirectUris: readonly string[];
  readonly grantTypes: readonly string[];
  readonly scopes: readonly Scope[];
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly createdAt: Date;
}

export const DEFAULT_CLIENT_SCOPE = 'context.read context.write';
const MAX_REDIRECT_URIS = 10;
const MAX_URI_LENGTH = 2000;
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);
// Descriptive fields kept and echoed back as registered; anything else unknown is ignored (RFC 7591 §2).
const TEXT_FIELDS = ['client_uri', 'logo_uri', 'tos_uri', 'policy_uri', 'software_id', 'software_version'] as const;

const isText = (value: unknown, max: number): value is string => typeof value === 'string' && value.length <= max;
const metadataError = (description: string) => oauthError('invalid_client_metadata', description);

/** HTTPS anywhere, or plain HTTP on a loopback address; never a fragment or user info. */
export function checkRedirectUri(value: unknown): string {
  if (!isText(value, MAX_URI_LENGTH) || value === '') throw oauthError('invalid_redirect_uri', `each redirect URI must be a URL of at most ${MAX_URI_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw oauthError('invalid_redirect_uri', `"${value}" is not an absolute URL`);
  }
  if (value.includes('#')) throw oauthError('invalid_redirect_uri', `"${value}" must not contain a fragment`);
  if (url.username !== '' || url.password !== '') throw oauthError('invalid_redirect_uri', `"${value}" must not contain user info`);
  const loopback = url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
  if (url.protocol !== 'https:' && !loopback) throw oauthError('invalid_redirect_uri', `"${value}" must use https, or http on 127.0.0.1, [::1] or localhost`);
  return value;
}

export interface ClientRegistration {
  readonly clientName: string | null;
  readonly redirectUris: string[];
  readonly grantTypes: string[];
  readonly scopes: Scope[];
  readonly metadata: Record<string, unknown>;
}

function stringList(body: Record<string, unknown>, key: string): string[] | undefined {
  const value = body[key];
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.length > 10 || !value.every((v) => isText(v, 100))) throw metadataError(`${key} must be a list of names`);
  return value;
}

/** Checks a registration request; refusals follow RFC 7591 §3.2.2. */
export function parseRegistration(body: unknown): ClientRegistration {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw metadataError('the request body must be a JSON object');
  const fields = body as Record<string, unknown>;
  const uris = fields.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0) throw oauthError('invalid_redirect_uri', 'redirect_uris must list at least one redirect URI');
  if (uris.length > MAX_REDIRECT_URIS) throw oauthError('invalid_redirect_uri', `at most ${MAX_REDIRECT_URIS} redirect URIs may be registered`);
  const redirectUris = [...new Set(uris.map(checkRedirectUri))];

  const method = fields.token_endpoint_auth_method;
  if (method !== undefined && method !== 'none') throw metadataError('only public clients are accepted: token_endpoint_auth_method must be "none"');
  const responseTypes = stringList(fields, 'response_types') ?? ['code'];
  if (responseTypes.length !== 1 || responseTypes[0] !== 'code') throw metadataError('response_types must be ["code"]');
  // An omitted list means both grants: refresh tokens spare people an hourly consent page.
  const grantTypes = stringList(fields, 'grant_types') ?? ['authorization_code', 'refresh_token'];
  if (!grantTypes.includes('authorization_code')) throw metadataError('grant_types must contain authorization_code');
  const unsupported = grantTypes.find((grant) => grant !== 'authorization_code' && grant !== 'refresh_token');
  if (unsupported !== undefined) throw metadataError(`grant type "${unsupported}" is not supported; use authorization_code and refresh_token`);

  const scope = fields.scope ?? DEFAULT_CLIENT_SCOPE;
  if (!isText(scope, 1000)) throw metadataError('scope must be a space-separated string');
  let scopes: Scope[];
  try {
    scopes = normalizeScopes(scope.trim() === '' ? DEFAULT_CLIENT_SCOPE : scope);
  } catch (error) {
    throw metadataError((error as Error).message);
  }

  const name = fields.client_name;
  if (name !== undefined && (!isText(name, 200) || [...name].some((c) => c < ' ' || c === '\u007f'))) throw metadataError('client_name must be text of at most 200 characters');
  const metadata: Record<string, unknown> = {};
  for (const key of TEXT_FIELDS) {
    const value = fields[key];
    if (value === undefined) continue;
    if (!isText(value, MAX_URI_LENGTH)) throw metadataError(`${key} must be text of at most ${MAX_URI_LENGTH} characters`);
    metadata[key] = value;
  }
  const contacts = fields.contacts;
  if (contacts !== undefined) {
    if (!Array.isArray(contacts) || contacts.length > 10 || !contacts.every((c) => isText(c, 254))) throw metadataError('contacts must be a list of at most 10 addresses');
    metadata.contacts = contacts;
  }
  return { clientName: typeof name === 'string' && name.trim() !== '' ? name.trim() : null, redirectUris, grantTypes: [...new Set(grantTypes)], scopes, metadata };
}

interface ClientRow {
  client_id: string;
  client_name: string | null;
  redirect_uris: string[];
  grant_types: string[];
  scopes: Scope[];
  metadata: Record<string, unknown>;
  created_at: Date;
}

const toClient = (row: ClientRow): OAuthClient => ({
  clientId: row.client_id,
  clientName: row.client_name,
  redirectUris: row.redirect_uris,
  grantTypes: row.grant_types,
  scopes: row.scopes,
  metadata: row.metadata,
  createdAt: row.created_at,
});

export async function storeClient(db: Db, registration: ClientRegistration): Promise<OAuthClient> {
  const clientId = `kgwc_${randomBytes(16).toString('base64url')}`;
  const [row] = await db.tx((tx) =>
    tx.query<ClientRow>(
      `INSERT INTO oauth_clients (client_id, client_name, redirect_uris, grant_types, scopes, metadata)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
      [clientId, registration.clientName, registration.redirectUris, registration.grantTypes, registration.scopes, JSON.stringify(registration.metadata)],
    ),
  );
  return toClient(row!);
}

export async function findClient(q: Queryable, clientId: string): Promise<OAuthClient | undefined> {
  if (clientId === '' || clientId.length > 100) return undefined;
  const [row] = await q.query<ClientRow>('SELECT * FROM oauth_clients WHERE client_id = $1', [clientId]);
  return row ? toClient(row) : undefined;
}

/** The RFC 7591 §3.2.1 response: what was registered, with the values the server chose. */
export function registrationResponse(client: OAuthClient): Record<string, unknown> {
  return {
    client_id: client.clientId,
    client_id_issued_at: Math.floor(client.createdAt.getTime() / 1000),
    ...(client.clientName === null ? {} : { client_name: client.clientName }),
    redirect_uris: client.redirectUris,
    grant_types: client.grantTypes,
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    scope: client.scopes.join(' '),
    ...client.metadata,
  };
}
