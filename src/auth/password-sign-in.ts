import type { FastifyBaseLogger } from 'fastify';
import { AuditTrail } from '../kernel/audit/trail.ts';
import type { Services } from '../kernel/services.ts';
import { checkPassword } from './people.ts';
import { RateLimiter } from './rate-limit.ts';
import type { SignInHook } from './sessions.ts';
import { endSession, startSession } from './sessions.ts';

const FIFTEEN_MINUTES = 15 * 60_000;

/** Bounds on what a sign-in form may carry (README, Hardening). */
export const SIGN_IN_BOUNDS = { tenantChars: 63, emailChars: 254, passwordChars: 1024 } as const;

export type SignInOutcome =
  { readonly ok: true; readonly secret: string } | { readonly ok: false; readonly status: 401 | 429; readonly error: string; readonly retryAfter?: number };

/**
 * Sign-in with organisation, email and password, wherever a page offers it (the OAuth consent
 * flow, the console): one set of counters, so that guessing is as slow whichever page is used.
 * Failed passwords per account slow down guessing; attempts per address bound the scrypt work.
 */
export class PasswordSignIns {
  readonly #services: Services;
  readonly #onSignIn: readonly SignInHook[];
  readonly #failedPerAccount = new RateLimiter(10, FIFTEEN_MINUTES);
  readonly #attemptsPerAddress = new RateLimiter(100, FIFTEEN_MINUTES);

  constructor(services: Services, onSignIn: readonly SignInHook[]) {
    this.#services = services;
    this.#onSignIn = onSignIn;
  }

  /** Checks the password and starts a session (ending the browser's previous one); the session's secret, or why not. */
  async attempt(
    form: { readonly tenant: string; readonly email: string; readonly password: string },
    from: { readonly address: string; readonly previousSecret: string | undefined; readonly log: FastifyBaseLogger },
  ): Promise<SignInOutcome> {
    const { db } = this.#services;
    const tenant = form.tenant.trim().toLowerCase().slice(0, SIGN_IN_BOUNDS.tenantChars);
    const email = form.email.trim().toLowerCase().slice(0, SIGN_IN_BOUNDS.emailChars);
    const account = `${tenant}\n${email}`;
    const wait = this.#attemptsPerAddress.wait(from.address) ?? this.#failedPerAccount.wait(account);
    if (wait !== undefined) {
      from.log.warn({ tenant, address: from.address, retryAfter: wait }, 'sign-in refused: too many attempts');
      return { ok: false, status: 429, error: `Too many sign-in attempts. Try again in ${Math.ceil(wait / 60)} minutes.`, retryAfter: wait };
    }
    this.#attemptsPerAddress.hit(from.address);
    const who = await checkPassword(db, tenant, email, form.password.slice(0, SIGN_IN_BOUNDS.passwordChars));
    if (!who) {
      // The tenant and address, never the email or password typed: a mistyped password is often another secret.
      from.log.warn({ tenant, address: from.address }, 'sign-in refused: wrong organisation, email or password');
      this.#services.meter?.authFailure('sign_in');
      this.#failedPerAccount.hit(account);
      return { ok: false, status: 401, error: 'The organisation, email or password is not right.' };
    }
    await endSession(db, from.previousSecret);
    const secret = await db.tx((tx) => startSession(tx, who.tenantId, who.personId, AuditTrail.forSurface(this.#services.audit, 'oauth'), this.#onSignIn));
    return { ok: true, secret };
  }
}
