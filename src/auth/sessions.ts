import { randomUUID } from 'node:crypto';
import type { Config } from '../config.ts';
import type { TenantRef } from '../kernel/access/caller.ts';
import type { AuditTrail } from '../kernel/audit/trail.ts';
import type { Db, Queryable, Transaction } from '../store/db.ts';
import { base64urlSha256, newSecret, sha256 } from './secrets.ts';

/** How long a sign-in lasts in the browser; it only serves approving connections. */
export const SESSION_TTL_MS = 8 * 3_600_000;

export interface BrowserSession {
  readonly tenant: TenantRef;
  readonly person: { readonly id: string; readonly name: string; readonly email: string };
  /** Bound to the session secret: a page of another site cannot know it. */
  readonly csrf: string;
}

/** `__Host-` pins the cookie to this host over HTTPS (no Domain, Path=/, Secure). */
export const sessionCookieName = (config: Config): string => (config.publicUrl.startsWith('https:') ? '__Host-kgw_session' : 'kgw_session');

export function sessionCookie(config: Config, secret: string | undefined): string {
  const secure = config.publicUrl.startsWith('https:') ? '; Secure' : '';
  const value = secret ?? '';
  const maxAge = secret === undefined ? 0 : Math.floor(SESSION_TTL_MS / 1000);
  return `${sessionCookieName(config)}=${value}; Path=/; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure}`;
}

export function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return rest.join('=');
  }
  return undefined;
}

export const csrfFor = (secret: string): string => base64urlSha256(`csrf\0${secret}`);

/**
 * What a product does when a person signs in, in the sign-in's transaction: signing in is where a
 * person first shows they hold their email, so Atmina accepts the Knowledge-Base invitations
 * waiting for it (src/atmina/kb/sharing.ts). The composition root hands them in.
 */
export type SignInHook = (tx: Transaction, tenantId: string, personId: string, audit: AuditTrail) => Promise<void>;

/** Starts a session for a person inside the caller's transaction, after running `onSignIn` there; returns the cookie secret. */
export async function startSession(
  tx: Transaction,
  tenantId: string,
  personId: string,
  audit: AuditTrail,
  onSignIn: readonly SignInHook[] = [],
): Promise<string> {
  await tx.query('DELETE FROM oauth_sessions WHERE expires_at < now()');
  for (const hook of onSignIn) await hook(tx, tenantId, personId, audit);
  const secret = newSecret('kgws_');
  await tx.query('INSERT INTO oauth_sessions (tenant_id, id, secret_hash, person_id, expires_at) VALUES ($1, $2, $3, $4, $5)', [
    tenantId,
    randomUUID(),
    sha256(secret),
    personId,
    new Date(Date.now() + SESSION_TTL_MS),
  ]);
  return secret;
}

interface SessionRow {
  tenant_id: string;
  slug: string;
  tenant_name: string;
  language: string;
  person_id: string;
  name: string;
  email: string;
}

export async function findSession(q: Queryable, secret: string | undefined): Promise<BrowserSession | undefined> {
  if (secret === undefined || !/^kgws_[A-Za-z0-9_-]{43}$/.test(secret)) return undefined;
  const [row] = await q.query<SessionRow>(
    `SELECT n.id AS tenant_id, n.slug, n.name AS tenant_name, n.language, p.id AS person_id, p.name, p.email
       FROM oauth_sessions s
       JOIN tenants n ON n.id = s.tenant_id
       JOIN principals p ON p.tenant_id = s.tenant_id AND p.id = s.person_id
      WHERE s.secret_hash = $1 AND s.expires_at > now()`,
    [sha256(secret)],
  );
  if (!row) return undefined;
  return {
    tenant: { id: row.tenant_id, slug: row.slug, name: row.tenant_name, language: row.language },
    person: { id: row.person_id, name: row.name, email: row.email },
    csrf: csrfFor(secret),
  };
}

export async function endSession(db: Db, secret: string | undefined): Promise<void> {
  if (secret === undefined) return;
  await db.tx((tx) => tx.query('DELETE FROM oauth_sessions WHERE secret_hash = $1', [sha256(secret)]));
}
