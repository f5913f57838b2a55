import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Caller } from '../access/caller.ts';
import type { Scope } from '../access/scopes.ts';
import { requirePrincipal, requireTenant } from '../directory/directory.ts';
import { toPrincipal } from '../directory/principals.ts';
import type { AuditTrail } from '../audit/trail.ts';
import { notFound } from '../errors.ts';
import { iso, isoOrNull } from '../instants.ts';
import type { Db, Queryable, Transaction } from '../../store/db.ts';

const TOKEN_PREFIX = 'kgw_';
export const DEFAULT_TOKEN_TTL_MS = 90 * 86_400_000;

/** Tokens are 256-bit random secrets, so one SHA-256 is a sound at-rest hash. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export interface TokenInfo {
  readonly id: string;
  readonly tenant: string;
  readonly principal: string;
  readonly principalKind: 'person' | 'agent';
  readonly scopes: readonly Scope[];
  readonly label: string | null;
  readonly source: TokenSource;
  readonly createdAt: string;
  readonly expiresAt: string | null;
  readonly revokedAt: string | null;
}

/** Where a token was issued: `kgw token`, an OAuth grant, or the console's Admin pages. */
export type TokenSource = 'cli' | 'oauth' | 'console';

export interface CreateTokenInput {
  readonly tenant: string;
  readonly principal: string;
  /** Canonical scopes (ScopeCatalogue.normalize): the kernel knows no product's scope names. */
  readonly scopes: readonly Scope[];
  /** Lifetime in milliseconds; undefined means the token never expires. */
  readonly ttlMs: number | undefined;
  readonly label?: string | undefined;
  readonly source?: TokenSource;
}

const INFO_COLUMNS = `t.id, n.slug AS tenant, coalesce(p.email, p.name) AS principal, p.kind AS "principalKind",
  t.scopes, t.label, t.source, t.created_at AS "createdAt", t.expires_at AS "expiresAt", t.revoked_at AS "revokedAt"`;
const INFO_FROM = `tokens t JOIN tenants n ON n.id = t.tenant_id JOIN principals p ON p.tenant_id = t.tenant_id AND p.id = t.principal_id`;

interface InfoRow extends Omit<TokenInfo, 'createdAt' | 'expiresAt' | 'revokedAt'> {
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
}

const toInfo = (row: InfoRow): TokenInfo => ({
  ...row,
  createdAt: iso(row.createdAt),
  expiresAt: isoOrNull(row.expiresAt),
  revokedAt: isoOrNull(row.revokedAt),
});

/**
 * Issues a bearer token for a principal from the CLI; the secret is returned once and stored only
 * hashed. The issue is audited through `audit` (the CLI's trail, told the tenant here) in the
 * same transaction (never the secret).
 */
export async function createToken(db: Db, input: CreateTokenInput, audit: AuditTrail): Promise<{ token: string; info: TokenInfo }> {
  const { scopes } = input;
  return db.tx(async (tx) => {
    const tenant = await requireTenant(tx, input.tenant);
    const principal = await requirePrincipal(tx, tenant, input.principal);
    const { id, token: secret } = await insertToken(tx, {
      tenantId: tenant.id,
      principalId: principal.id,
      scopes,
      ttlMs: input.ttlMs,
      label: input.label,
      source: input.source,
    });
    const [row] = await tx.query<InfoRow>(`SELECT ${INFO_COLUMNS} FROM ${INFO_FROM} WHERE t.tenant_id = $1 AND t.id = $2`, [tenant.id, id]);
    const info = toInfo(row!);
    await audit
      .about({ tenantId: tenant.id })
      .recordIn(tx, 'token.create', [{ type: 'token', id }], { principal_id: principal.id, scopes, expires_at: info.expiresAt });
    return { token: secret, info };
  });
}

export interface TokenRow {
  readonly tenantId: string;
  readonly principalId: string;
  readonly scopes: readonly Scope[];
  readonly ttlMs: number | undefined;
  readonly label?: string | undefined;
  readonly source?: TokenSource | undefined;
  /** OAuth only: the MCP resource URL the token is valid for, its client and its grant. */
  readonly audience?: string | undefined;
  readonly clientId?: string | undefined;
  readonly familyId?: string | undefined;
}

/** Inserts a token inside the caller's transaction; the ids must already be resolved. */
export async function insertToken(tx: Transaction, row: TokenRow): Promise<{ id: string; token: string; expiresAt: Date | null }> {
  const secret = TOKEN_PREFIX + randomBytes(32).toString('base64url');
  const id = randomUUID();
  const expiresAt = row.ttlMs === undefined ? null : new Date(Date.now() + row.ttlMs);
  const oauth = row.familyId === undefined ? [] : [row.audience ?? null, row.clientId ?? null, row.familyId];
  await tx.query(
    `INSERT INTO tokens (tenant_id, id, secret_hash, principal_id, scopes, label, source, expires_at${oauth.length ? ', audience, client_id, family_id' : ''})
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8${oauth.length ? ', $9, $10, $11' : ''})`,
    [row.tenantId, id, hashSecret(secret), row.principalId, row.scopes, row.label ?? null, row.source ?? 'cli', expiresAt, ...oauth],
  );
  return { id, token: secret, expiresAt };
}

/** Lists tokens, newest first, optionally for one tenant; never returns secrets or hashes. */
export async function listTokens(q: Queryable, options: { tenant?: string | undefined; includeRevoked?: boolean } = {}): Promise<TokenInfo[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (options.tenant !== undefined) {
    const tenant = await requireTenant(q, options.tenant);
    params.push(tenant.id);
    where.push(`t.tenant_id = $${params.length}`);
  }
  if (!options.includeRevoked) where.push('t.revoked_at IS NULL');
  const rows = await q.query<InfoRow>(
    `SELECT ${INFO_COLUMNS} FROM ${INFO_FROM} ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY t.created_at DESC, t.id LIMIT 1000`,
    params,
  );
  return rows.map(toInfo);
}

/** Revokes a token by id (CLI, audited like the issue); revoking twice is harmless and reports the first revocation. */
export async function revokeToken(db: Db, id: string, audit: AuditTrail): Promise<TokenInfo> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) throw notFound(`no token with id "${id}"`);
  return db.tx(async (tx) => {
    const [updated] = await tx.query<{ tenant_id: string }>('UPDATE tokens SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL RETURNING tenant_id', [
      id,
    ]);
    const [row] = await tx.query<InfoRow>(`SELECT ${INFO_COLUMNS} FROM ${INFO_FROM} WHERE t.id = $1`, [id]);
    if (!row) throw notFound(`no token with id "${id}"`);
    if (updated) {
      await tx.signal(AUTH_CHANNEL);
      await audit.about({ tenantId: updated.tenant_id }).recordIn(tx, 'token.revoke', [{ type: 'token', id }]);
    }
    return toInfo(row);
  });
}

interface AuthRow {
  token_id: string;
  scopes: Scope[];
  audience: string | null;
  tenant_id: string;
  slug: string;
  tenant_name: string;
  language: string;
  id: string;
  kind: 'person' | 'agent';
  name: string;
  email: string | null;
  owner_id: string | null;
  expires_at: Date | null;
}

/**
 * The channel a change to what a token's check reads is signalled on: by the store's own
 * triggers (migration 0032) whoever makes the change, and by the revocations here too, so that
 * this process's token cache (token-cache.ts) forgets the moment they commit.
 */
export const AUTH_CHANNEL = 'kgw_auth';

/** A token's check: who calls with it, where, and until when. */
export interface AuthenticatedToken {
  readonly caller: Caller;
  /** The MCP resource URL an OAuth access token is bound to; null for a CLI token, valid on every endpoint. */
  readonly audience: string | null;
  /** When the token stops being valid; null when it never expires. */
  readonly expiresAt: Date | null;
}

/** Whether a bearer secret could be one of ours at all: anything else is refused without a query. */
export function plausibleSecret(secret: string): boolean {
  return secret.startsWith(TOKEN_PREFIX) && secret.length <= 200;
}

/** Resolves a bearer secret to its caller, audience and expiry; undefined when unknown, revoked or expired. */
export async function authenticateToken(q: Queryable, secret: string): Promise<AuthenticatedToken | undefined> {
  if (!plausibleSecret(secret)) return undefined;
  return authenticateHash(q, hashSecret(secret));
}

/** `authenticateToken` for a secret already hashed (the token cache's key). */
export async function authenticateHash(q: Queryable, secretHash: string): Promise<AuthenticatedToken | undefined> {
  const [row] = await q.query<AuthRow>(
    `SELECT t.id AS token_id, t.scopes, t.audience, t.expires_at, n.id AS tenant_id, n.slug, n.name AS tenant_name, n.language,
            p.id, p.kind, p.name, p.email, p.owner_id
       FROM tokens t
       JOIN tenants n ON n.id = t.tenant_id
       JOIN principals p ON p.tenant_id = t.tenant_id AND p.id = t.principal_id
      WHERE t.secret_hash = $1 AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > now())`,
    [secretHash],
    { prepare: 'kgw_authenticate_token' },
  );
  if (!row) return undefined;
  const caller: Caller = {
    tenant: { id: row.tenant_id, slug: row.slug, name: row.tenant_name, language: row.language },
    principal: toPrincipal(row),
    scopes: new Set(row.scopes),
    tokenId: row.token_id,
  };
  return { caller, audience: row.audience, expiresAt: row.expires_at };
}

/** A token as its tenant's administrators see it: with when it was last used. */
export interface TenantTokenInfo extends TokenInfo {
  /** The newest audited event that names the token (an MCP call made with it); null if none. */
  readonly lastUsedAt: string | null;
}

/**
 * One page of a tenant's tokens, revoked and expired ones included, newest first (the console's
 * Admin pages); `more` says whether another page follows. Never a secret or its hash.
 */
export async function listTenantTokens(
  q: Queryable,
  tenantId: string,
  page: { readonly offset: number; readonly limit: number },
): Promise<{ tokens: TenantTokenInfo[]; more: boolean }> {
  const rows = await q.query<InfoRow & { lastUsedAt: Date | null }>(
    `SELECT ${INFO_COLUMNS},
            (SELECT max(e.at) FROM audit_events e WHERE e.tenant_id = t.tenant_id AND e.token_id = t.id) AS "lastUsedAt"
       FROM ${INFO_FROM} WHERE t.tenant_id = $1 ORDER BY t.created_at DESC, t.id LIMIT $2 OFFSET $3`,
    [tenantId, page.limit + 1, page.offset],
  );
  const tokens = rows.slice(0, page.limit).map(({ lastUsedAt, ...row }) => ({ ...toInfo(row), lastUsedAt: isoOrNull(lastUsedAt) }));
  return { tokens, more: rows.length > page.limit };
}

/**
 * Revokes a token of one tenant (the console's Admin pages), audited through `audit`; a token of
 * another tenant, like an unknown id, is not found. Revoking twice reports the first revocation.
 */
export async function revokeTenantToken(db: Db, tenantId: string, id: string, audit: AuditTrail): Promise<TokenInfo> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) throw notFound(`no token with id "${id}"`);
  return db.tx(async (tx) => {
    const updated = await tx.query('UPDATE tokens SET revoked_at = now() WHERE tenant_id = $1 AND id = $2 AND revoked_at IS NULL RETURNING id', [tenantId, id]);
    const [row] = await tx.query<InfoRow>(`SELECT ${INFO_COLUMNS} FROM ${INFO_FROM} WHERE t.tenant_id = $1 AND t.id = $2`, [tenantId, id]);
    if (!row) throw notFound(`no token with id "${id}"`);
    if (updated.length > 0) {
      await tx.signal(AUTH_CHANNEL);
      await audit.about({ tenantId }).recordIn(tx, 'token.revoke', [{ type: 'token', id }]);
    }
    return toInfo(row);
  });
}
