import { hashPassword, verifyPassword } from '../../access/passwords.ts';
import type { Queryable } from '../../../store/db.ts';
import { envNameRule } from '../rules.ts';
import type { ReadContext } from '../section.ts';
import type { Slot } from '../yaml-reader.ts';

/**
 * A person's password, named by `password_env` so that it is never written in the file: the
 * apply reads it from that environment variable and stores only its scrypt hash.
 *
 * - `password_env` left out: the stored password (or its absence) stays as it is, so a file
 *   applied where the secrets are not at hand cannot lock anyone out.
 * - `password_env: NAME`: the password is the variable's value; unset or empty is an error.
 * - `password_env:` with no value (YAML null): the person has no password any more.
 */
export type PasswordSpec = { readonly set: string } | { readonly remove: true } | undefined;

/** Reads `password_env`; returns false when it is wrong (the problem is reported). */
export function readPassword(slot: Slot | undefined, context: ReadContext): PasswordSpec | false {
  const { reader, env } = context;
  if (!slot) return undefined;
  if (reader.isEmpty(slot)) return { remove: true };
  const name = reader.string(slot, envNameRule);
  if (!name) return false;
  // Own keys only: `password_env: constructor` must not find Object.prototype's.
  const value = Object.hasOwn(env, name.value) ? env[name.value] : undefined;
  if (value === undefined || value === '') {
    reader.fail(slot, `${slot.path}: the environment variable ${name.value} ${value === undefined ? 'is not set' : 'is empty'}`);
    return false;
  }
  return { set: value };
}

/** The password change a plan makes: the hash to store (null removes it) and how to say so. */
export interface PasswordChange {
  readonly hash: string | null;
  readonly detail: 'password set' | 'password changed' | 'password removed';
}

/**
 * Compares the file's password with the stored hash. The same password is no change: a hash
 * is salted, so it is checked with verifyPassword rather than by hashing again.
 */
export async function planPassword(spec: PasswordSpec, storedHash: string | null): Promise<PasswordChange | undefined> {
  if (spec === undefined) return undefined;
  if ('remove' in spec) return storedHash === null ? undefined : { hash: null, detail: 'password removed' };
  if (storedHash !== null && (await verifyPassword(storedHash, spec.set))) return undefined;
  return { hash: await hashPassword(spec.set), detail: storedHash === null ? 'password set' : 'password changed' };
}

/** The stored password hashes of the tenant's people who have one, by principal id. */
export async function loadPasswordHashes(q: Queryable, tenantId: string): Promise<Map<string, string>> {
  const rows = await q.query<{ id: string; password_hash: string }>(
    "SELECT id, password_hash FROM principals WHERE tenant_id = $1 AND kind = 'person' AND password_hash IS NOT NULL",
    [tenantId],
  );
  return new Map(rows.map((row) => [row.id, row.password_hash]));
}
