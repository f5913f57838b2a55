import { randomUUID } from 'node:crypto';
import { iso } from '../kernel/instants.ts';
import type { AuditTrail } from '../kernel/audit/trail.ts';
import type { Config } from '../config.ts';
import { requireTenant } from '../kernel/directory/directory.ts';
import { personByEmail } from '../kernel/directory/principals.ts';
import { notFound } from '../kernel/errors.ts';
import type { Db, Queryable } from '../store/db.ts';
import { newSecret, sha256 } from './secrets.ts';
import type { SignInHook } from './sessions.ts';
import { startSession } from './sessions.ts';

/** A one-time sign-in link lives this long, and works once. */
export const LOGIN_LINK_TTL_MS = 15 * 60_000;

const LINK_SECRET = /^kgwl_[A-Za-z0-9_-]{43}$/;

export interface LoginLink {
  readonly url: string;
  readonly tenant: string;
  readonly email: string;
  readonly expiresAt: string;
}

/** Creates a link for a person (`kgw login-link`); only its hash is stored. Audited through `audit` (the CLI's trail). */
export async function createLoginLink(db: Db, config: Config, tenantSlug: string, email: string, audit: AuditTrail): Promise<LoginLink> {
  const address = email.trim().toLowerCase();
  return db.tx(async (tx) => {
    const tenant = await requireTenant(tx, tenantSlug);
    const person = await personByEmail(tx, tenant.id, address);
    if (!person) throw notFound(`no person "${address}" in tenant "${tenant.slug}"`);
    await tx.query("DELETE FROM oauth_login_links WHERE expires_at < now() - interval '1 day'");
    const secret = newSecret('kgwl_');
    const expiresAt = new Date(Date.now() + LOGIN_LINK_TTL_MS);
    const id = randomUUID();
    await tx.query('INSERT INTO oauth_login_links (tenant_id, id, secret_hash, person_id, expires_at) VALUES ($1, $2, $3, $4, $5)', [
      tenant.id,
      id,
      sha256(secret),
      person.id,
      expiresAt,
    ]);
    await audit
      .about({ tenantId: tenant.id })
      .recordIn(tx, 'oauth.login_link', [{ type: 'login_link', id }], { person_id: person.id, expires_at: iso(expiresAt) });
    return { url: `${config.publicUrl}/oauth/login/${secret}`, tenant: tenant.slug, email: address, expiresAt: iso(expiresAt) };
  });
}

export interface LinkHolder {
  readonly tenantName: string;
  readonly email: string;
}

/** Who an unused, unexpired link signs in, without using it (the confirmation page). */
export async function peekLoginLink(q: Queryable, secret: string): Promise<LinkHolder | undefined> {
  if (!LINK_SECRET.test(secret)) return undefined;
  const [row] = await q.query<{ tenant_name: string; email: string }>(
    `SELECT n.name AS tenant_name, p.email
       FROM oauth_login_links l JOIN tenants n ON n.id = l.tenant_id JOIN principals p ON p.tenant_id = l.tenant_id AND p.id = l.person_id
      WHERE l.secret_hash = $1 AND l.used_at IS NULL AND l.expires_at > now()`,
    [sha256(secret)],
  );
  return row ? { tenantName: row.tenant_name, email: row.email } : undefined;
}

/**
 * Uses a link once and starts a session, running `onSignIn` (startSession); undefined when
 * unknown, used or expired. `audit`: the sign-in's trail (startSession's writes).
 */
export async function redeemLoginLink(db: Db, secret: string, audit: AuditTrail, onSignIn: readonly SignInHook[] = []): Promise<string | undefined> {
  if (!LINK_SECRET.test(secret)) return undefined;
  return db.tx(async (tx) => {
    const [link] = await tx.query<{ tenant_id: string; person_id: string }>(
      'UPDATE oauth_login_links SET used_at = now() WHERE secret_hash = $1 AND used_at IS NULL AND expires_at > now() RETURNING tenant_id, person_id',
      [sha256(secret)],
    );
    return link ? startSession(tx, link.tenant_id, link.person_id, audit, onSignIn) : undefined;
  });
}
