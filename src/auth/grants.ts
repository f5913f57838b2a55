import { randomUUID } from 'node:crypto';
import type { Scope, ScopeCatalogue } from '../kernel/access/scopes.ts';
import type { AuditTrail } from '../kernel/audit/trail.ts';
import { AUTH_CHANNEL, insertToken } from '../kernel/tokens/tokens.ts';
import type { Db, Transaction } from '../store/db.ts';
import type { OAuthClient } from './clients.ts';
import { OAuthError, oauthError } from './oauth-error.ts';
import { newSecret, pkceMatches, sha256 } from './secrets.ts';

/** A code only has to survive the redirect back to the client and one token request. */
export const CODE_TTL_MS = 60_000;
export const ACCESS_TOKEN_TTL_MS = 3_600_000;
export const REFRESH_TOKEN_TTL_MS = 90 * 86_400_000;

export interface Approval {
  readonly tenantId: string;
  readonly personId: string;
  readonly agentId: string;
  readonly client: OAuthClient;
  readonly scopes: readonly Scope[];
  readonly resource: string;
  readonly redirectUri: string;
  readonly codeChallenge: string;
}

/** Records the person's approval as a grant and returns its one authorization code. */
export async function approve(tx: Transaction, approval: Approval, audit: AuditTrail): Promise<string> {
  await tx.query("DELETE FROM oauth_codes WHERE expires_at < now() - interval '1 day'");
  const grantId = randomUUID();
  await tx.query('INSERT INTO oauth_grants (tenant_id, id, client_id, principal_id, approved_by, scopes, audience) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
    approval.tenantId,
    grantId,
    approval.client.clientId,
    approval.agentId,
    approval.personId,
    approval.scopes,
    approval.resource,
  ]);
  const code = newSecret('kgwa_');
  await tx.query(
    'INSERT INTO oauth_codes (tenant_id, id, secret_hash, grant_id, redirect_uri, code_challenge, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)',
    [approval.tenantId, randomUUID(), sha256(code), grantId, approval.redirectUri, approval.codeChallenge, new Date(Date.now() + CODE_TTL_MS)],
  );
  await audit.about({ tenantId: approval.tenantId, principalId: approval.personId }).recordIn(tx, 'oauth.approve', [], {
    grant_id: grantId,
    client_id: approval.client.clientId,
    agent_id: approval.agentId,
    scopes: approval.scopes,
    audience: approval.resource,
  });
  return code;
}

/** Revokes a grant and every access token issued under it; its refresh tokens die with it. */
async function revokeGrant(tx: Transaction, tenantId: string, grantId: string, reason: string, audit: AuditTrail): Promise<void> {
  await tx.query('UPDATE oauth_grants SET revoked_at = coalesce(revoked_at, now()) WHERE tenant_id = $1 AND id = $2', [tenantId, grantId]);
  await tx.query('UPDATE tokens SET revoked_at = coalesce(revoked_at, now()) WHERE tenant_id = $1 AND family_id = $2', [tenantId, grantId]);
  // This process's token cache forgets at commit; other processes hear the store's trigger.
  await tx.signal(AUTH_CHANNEL);
  await audit.about({ tenantId }).recordIn(tx, 'oauth.revoke', [], { grant_id: grantId, reason });
}

export interface TokenResponse {
  readonly access_token: string;
  readonly token_type: 'Bearer';
  readonly expires_in: number;
  readonly refresh_token?: string;
  readonly scope: string;
}

interface GrantRow {
  tenant_id: string;
  grant_id: string;
  client_id: string;
  principal_id: string;
  scopes: Scope[];
  audience: string;
  revoked: boolean;
  expired: boolean;
  used: boolean;
}

async function issueTokens(tx: Transaction, grant: GrantRow, client: OAuthClient, scopes: readonly Scope[]): Promise<TokenResponse> {
  const access = await insertToken(tx, {
    tenantId: grant.tenant_id,
    principalId: grant.principal_id,
    scopes,
    ttlMs: ACCESS_TOKEN_TTL_MS,
    label: `oauth: ${client.clientName ?? client.clientId}`.slice(0, 200),
    source: 'oauth',
    audience: grant.audience,
    clientId: client.clientId,
    familyId: grant.grant_id,
  });
  const response: TokenResponse = { access_token: access.token, token_type: 'Bearer', expires_in: ACCESS_TOKEN_TTL_MS / 1000, scope: scopes.join(' ') };
  if (!client.grantTypes.includes('refresh_token')) return response;
  const refresh = newSecret('kgwr_');
  await tx.query('INSERT INTO oauth_refresh_tokens (tenant_id, id, secret_hash, grant_id, expires_at) VALUES ($1, $2, $3, $4, $5)', [
    grant.tenant_id,
    randomUUID(),
    sha256(refresh),
    grant.grant_id,
    new Date(Date.now() + REFRESH_TOKEN_TTL_MS),
  ]);
  return { ...response, refresh_token: refresh };
}

/**
 * Runs `work` in a transaction that commits even when the request is refused, so that using a
 * code and revoking a family stick; the refusal is thrown after the commit.
 */
async function committed(db: Db, work: (tx: Transaction) => Promise<TokenResponse | OAuthError>): Promise<TokenResponse> {
  const outcome = await db.tx(work);
  if (outcome instanceof OAuthError) throw outcome;
  return outcome;
}

const GRANT_COLUMNS = `g.tenant_id, g.id AS grant_id, g.client_id, g.principal_id, g.scopes, g.audience, g.revoked_at IS NOT NULL AS revoked`;

/** The authorization_code grant with PKCE. A code works once; presenting it again revokes its family. */
export async function exchangeCode(
  db: Db,
  input: { client: OAuthClient; code: string; verifier: string; redirectUri: string; resource: string | undefined },
  audit: AuditTrail,
): Promise<TokenResponse> {
  return committed(db, async (tx) => {
    const [row] = await tx.query<GrantRow & { id: string; redirect_uri: string; code_challenge: string }>(
      `SELECT c.id, c.redirect_uri, c.code_challenge, c.expires_at <= now() AS expired, c.used_at IS NOT NULL AS used, ${GRANT_COLUMNS}
         FROM oauth_codes c JOIN oauth_grants g ON g.tenant_id = c.tenant_id AND g.id = c.grant_id
        WHERE c.secret_hash = $1 FOR UPDATE OF c`,
      [sha256(input.code)],
    );
    if (!row || row.client_id !== input.client.clientId) return oauthError('invalid_grant', 'the authorization code is not valid for this client');
    if (row.used) {
      await revokeGrant(tx, row.tenant_id, row.grant_id, 'authorization code reused', audit);
      return oauthError('invalid_grant', 'the authorization code was already used; every token issued from it is revoked');
    }
    // One attempt per code: a wrong verifier or redirect URI uses it up too.
    await tx.query('UPDATE oauth_codes SET used_at = now() WHERE tenant_id = $1 AND id = $2', [row.tenant_id, row.id]);
    if (row.expired) return oauthError('invalid_grant', 'the authorization code has expired');
    if (row.revoked) return oauthError('invalid_grant', 'the authorization was revoked');
    if (row.redirect_uri !== input.redirectUri) return oauthError('invalid_grant', 'redirect_uri does not match the authorization request');
    if (!pkceMatches(input.verifier, row.code_challenge)) return oauthError('invalid_grant', 'code_verifier does not match the code challenge');
    if (input.resource !== undefined && input.resource !== row.audience)
      return oauthError('invalid_target', `the code was issued for the resource ${row.audience}`);
    return issueTokens(tx, row, input.client, row.scopes);
  });
}

/** The refresh_token grant: rotates the refresh token; may narrow the scopes, never widen them. */
export async function refresh(
  db: Db,
  input: { client: OAuthClient; refreshToken: string; scope: string | undefined; resource: string | undefined; catalogue: ScopeCatalogue },
  audit: AuditTrail,
): Promise<TokenResponse> {
  return committed(db, async (tx) => {
    const [row] = await tx.query<GrantRow & { id: string; still_owned: boolean }>(
      `SELECT r.id, r.expires_at <= now() AS expired, r.used_at IS NOT NULL AS used, coalesce(p.owner_id = g.approved_by, false) AS still_owned, ${GRANT_COLUMNS}
         FROM oauth_refresh_tokens r
         JOIN oauth_grants g ON g.tenant_id = r.tenant_id AND g.id = r.grant_id
         JOIN principals p ON p.tenant_id = g.tenant_id AND p.id = g.principal_id
        WHERE r.secret_hash = $1 FOR UPDATE OF r`,
      [sha256(input.refreshToken)],
    );
    if (!row || row.client_id !== input.client.clientId) return oauthError('invalid_grant', 'the refresh token is not valid for this client');
    if (row.revoked) return oauthError('invalid_grant', 'the authorization was revoked');
    if (row.used) {
      await revokeGrant(tx, row.tenant_id, row.grant_id, 'refresh token replayed', audit);
      return oauthError('invalid_grant', 'the refresh token was already used; every token of this authorization is revoked');
    }
    if (row.expired) return oauthError('invalid_grant', 'the refresh token has expired');
    if (!row.still_owned) {
      await revokeGrant(tx, row.tenant_id, row.grant_id, 'agent changed owner', audit);
      return oauthError('invalid_grant', 'the agent no longer belongs to the person who approved this connection');
    }
    if (input.resource !== undefined && input.resource !== row.audience)
      return oauthError('invalid_target', `the refresh token was issued for the resource ${row.audience}`);
    let scopes: Scope[] = row.scopes;
    if (input.scope !== undefined && input.scope.trim() !== '') {
      try {
        scopes = input.catalogue.normalize(input.scope);
      } catch (error) {
        return oauthError('invalid_scope', (error as Error).message);
      }
      const beyond = scopes.filter((scope) => !row.scopes.includes(scope));
      if (beyond.length > 0) return oauthError('invalid_scope', `the authorization does not include ${beyond.join(', ')}`);
    }
    await tx.query('UPDATE oauth_refresh_tokens SET used_at = now() WHERE tenant_id = $1 AND id = $2', [row.tenant_id, row.id]);
    // Housekeeping for this family only: long-expired access and refresh tokens go.
    await tx.query("DELETE FROM tokens WHERE tenant_id = $1 AND family_id = $2 AND expires_at < now() - interval '1 day'", [row.tenant_id, row.grant_id]);
    await tx.query('DELETE FROM oauth_refresh_tokens WHERE tenant_id = $1 AND grant_id = $2 AND expires_at < now()', [row.tenant_id, row.grant_id]);
    return issueTokens(tx, row, input.client, scopes);
  });
}
