import { randomBytes } from 'node:crypto';
import type { Scope, ScopeCatalogue } from '../kernel/access/scopes.ts';
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

/** The token endpoint methods a registration may ask for; each is registered as "none". */
const PUBLIC_OR_SECRET: ReadonlySet<string> = new Set(['none', 'client_secret_post', 'client_secret_basic']);
const MAX_REDIRECT_URIS = 10;
const MAX_URI_LENGTH = 2000;
const MAX_NAME_LENGTH = 200;
const MAX_CONTACTS = 10;
const MAX_CONTACT_LENGTH = 254;
const MAX_LIST_ENTRIES = 10;
const MAX_LIST_ENTRY_LENGTH = 100;
const MAX_SCOPE_LENGTH = 1000;
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);
/** Marks, embeddings, overrides and isolates: they can reorder how a name reads. */
const BIDI_CONTROL = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
// Descriptive fields kept and echoed back as registered; anything else unknown is ignored (RFC 7591 §2).
const TEXT_FIELDS = ['client_uri', 'logo_uri', 'tos_uri', 'policy_uri', 'software_id', 'software_version'] as const;

/**
 * No NUL, no other C0 or C1 control character or DEL, and no UTF-16 half without its pair.
 * PostgreSQL stores neither NUL in text nor a lone surrogate in jsonb, so such a value would
 * fail in the store; control characters have no place in a name, an address or a URL shown on
 * the consent page either.
 */
function isPlainText(value: string): boolean {
  if (!value.isWellFormed()) return false;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return false;
  }
  return true;
}

const PLAIN = 'without control characters or unpaired surrogates';
const isText = (value: unknown, max: number): value is string => typeof value === 'string' && value.length <= max && isPlainText(value);
const metadataError = (description: string) => oauthError('invalid_client_metadata', description);

/**
 * HTTPS anywhere, or plain HTTP on a loopback address; never a fragment or user info. The URI
 * must be in the normal form the URL parser gives it (`new URL(uri).href`): the redirect is built
 * from that form, and the authorization request is matched against the registered string, so
 * a URI the parser would rewrite (`https:host`, a backslash, an upper-case host, a default port)
 * would show one address on the consent page and redirect to another.
 */
export function checkRedirectUri(value: unknown): string {
  if (typeof value !== 'string' || value === '' || value.length > MAX_URI_LENGTH)
    throw oauthError('invalid_redirect_uri', `each redirect URI must be a URL of at most ${MAX_URI_LENGTH} characters`);
  if (!isPlainText(value)) throw oauthError('invalid_redirect_uri', `each redirect URI must be ${PLAIN}`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw oauthError('invalid_redirect_uri', `"${value}" is not an absolute URL`);
  }
  if (value.includes('#')) throw oauthError('invalid_redirect_uri', `"${value}" must not contain a fragment`);
  if (url.href !== value) throw oauthError('invalid_redirect_uri', `"${value}" is not in normal form; register it as "${url.href}"`);
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
  if (!Array.isArray(value) || value.length > MAX_LIST_ENTRIES || !value.every((v) => isText(v, MAX_LIST_ENTRY_LENGTH)))
    throw metadataError(`${key} must be a list of names`);
  return value;
}

/**
 * Checks a registration request against the scopes the gateway declares; refusals follow RFC
 * 7591 §3.2.2. A client naming no scope gets the catalogue's registration defaults.
 */
export function parseRegistration(body: unknown, catalogue: ScopeCatalogue): ClientRegistration {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw metadataError('the request body must be a JSON object');
  const fields = body as Record<string, unknown>;
  const uris = fields.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0) throw oauthError('invalid_redirect_uri', 'redirect_uris must list at least one redirect URI');
  if (uris.length > MAX_REDIRECT_URIS) throw oauthError('invalid_redirect_uri', `at most ${MAX_REDIRECT_URIS} redirect URIs may be registered`);
  const redirectUris = [...new Set(uris.map(checkRedirectUri))];

  // Every client is public (PKCE, no secret). One asking for a client secret is registered as
  // public all the same and told so by the answer (RFC 7591 §3.2.1 lets the server replace a
  // requested value): the SDKs' own example clients ask for client_secret_post and then
  // authenticate as the registration answered. A method that is no secret scheme is refused.
  const method = fields.token_endpoint_auth_method;
  if (method !== undefined && !(typeof method === 'string' && PUBLIC_OR_SECRET.has(method)))
    throw metadataError(`token_endpoint_auth_method must be one of ${[...PUBLIC_OR_SECRET].join(', ')}; every client is registered as public ("none")`);
  const responseTypes = stringList(fields, 'response_types') ?? ['code'];
  if (responseTypes.length !== 1 || responseTypes[0] !== 'code') throw metadataError('response_types must be ["code"]');
  // An omitted list means both grants: refresh tokens spare people an hourly consent page.
  const grantTypes = stringList(fields, 'grant_types') ?? ['authorization_code', 'refresh_token'];
  if (!grantTypes.includes('authorization_code')) throw metadataError('grant_types must contain authorization_code');
  const unsupported = grantTypes.find((grant) => grant !== 'authorization_code' && grant !== 'refresh_token');
  if (unsupported !== undefined) throw metadataError(`grant type "${unsupported}" is not supported; use authorization_code and refresh_token`);

  const scope = fields.scope ?? '';
  if (!isText(scope, MAX_SCOPE_LENGTH)) throw metadataError(`scope must be a space-separated string of at most ${MAX_SCOPE_LENGTH} characters`);
  let scopes: Scope[];
  try {
    scopes = scope.trim() === '' ? [...catalogue.registrationDefaults] : catalogue.normalize(scope);
  } catch (error) {
    throw metadataError((error as Error).message);
  }

  const name = fields.client_name;
  if (name !== undefined && !isText(name, MAX_NAME_LENGTH)) throw metadataError(`client_name must be text of at most ${MAX_NAME_LENGTH} characters, ${PLAIN}`);
  // The consent page shows the name to a person deciding whom to trust: bidirectional formatting
  // characters could reorder it ("Claude\u202Emoc.evil" reads as "Claudelive.com").
  if (typeof name === 'string' && BIDI_CONTROL.test(name)) throw metadataError('client_name must not contain bidirectional formatting characters');
  const metadata: Record<string, unknown> = {};
  for (const key of TEXT_FIELDS) {
    const value = fields[key];
    if (value === undefined) continue;
    if (!isText(value, MAX_URI_LENGTH)) throw metadataError(`${key} must be text of at most ${MAX_URI_LENGTH} characters, ${PLAIN}`);
    metadata[key] = value;
  }
  const contacts = fields.contacts;
  if (contacts !== undefined) {
    if (!Array.isArray(contacts) || contacts.length > MAX_CONTACTS || !contacts.every((c) => isText(c, MAX_CONTACT_LENGTH))) {
      throw metadataError(`contacts must be a list of at most ${MAX_CONTACTS} addresses of at most ${MAX_CONTACT_LENGTH} characters, ${PLAIN}`);
    }
    metadata.contacts = contacts;
  }
  return {
    clientName: typeof name === 'string' && name.trim() !== '' ? name.trim() : null,
    redirectUris,
    grantTypes: [...new Set(grantTypes)],
    scopes,
    metadata,
  };
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

/** The shape storeClient gives every client id. */
const CLIENT_ID = /^kgwc_[A-Za-z0-9_-]{22}$/;

export async function findClient(q: Queryable, clientId: string): Promise<OAuthClient | undefined> {
  // Anything else is unknown without asking the store, which refuses some text (NUL) with an error.
  if (!CLIENT_ID.test(clientId)) return undefined;
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
