import { randomUUID } from 'node:crypto';
import { verifyPassword } from '../kernel/access/passwords.ts';
import { ownedAgent, personSignIn } from '../kernel/directory/principals.ts';
import { agentNameRule } from '../kernel/org/rules.ts';
import type { Queryable, Transaction } from '../store/db.ts';
import { isUniqueViolation } from '../store/db.ts';
import { oauthError } from './oauth-error.ts';

// A well-formed hash that matches no password: unknown people cost as much time as known ones.
const NO_PASSWORD = `scrypt$32768$8$1$${'A'.repeat(22)}$${'A'.repeat(43)}`;

/** Checks an organisation slug, email and password; undefined for any mismatch, alike. */
export async function checkPassword(
  q: Queryable,
  tenantSlug: string,
  email: string,
  password: string,
): Promise<{ tenantId: string; personId: string } | undefined> {
  // No slug or address holds a NUL, and the store answers one in a parameter with an error, not
  // "no rows": such a sign-in matches nobody without asking (and still costs the scrypt time).
  const askable = !tenantSlug.includes('\0') && !email.includes('\0');
  const person = askable ? await personSignIn(q, tenantSlug.trim().toLowerCase(), email.trim().toLowerCase()) : undefined;
  const matches = await verifyPassword(person?.passwordHash ?? NO_PASSWORD, password);
  return matches && person?.passwordHash ? { tenantId: person.tenantId, personId: person.personId } : undefined;
}

export type AgentChoice = { readonly agentId: string } | { readonly newName: string };

/**
 * Resolves the consent page's choice to an agent of this person in this tenant, creating a
 * new agent when asked. Anything else (another person's or tenant's agent) is refused.
 */
export async function chooseAgent(
  tx: Transaction,
  tenantId: string,
  personId: string,
  choice: AgentChoice,
): Promise<{ id: string; name: string; created: boolean }> {
  if ('agentId' in choice) {
    const owned = /^[0-9a-f-]{36}$/i.test(choice.agentId) ? await ownedAgent(tx, tenantId, choice.agentId, personId) : undefined;
    if (!owned) throw oauthError('invalid_request', 'Choose one of your own agents.');
    return { id: owned.id, name: owned.name, created: false };
  }
  const name = choice.newName.trim();
  if (!agentNameRule.valid(name)) throw oauthError('invalid_request', `The new agent needs ${agentNameRule.expected}.`);
  const id = randomUUID();
  try {
    await tx.query("INSERT INTO principals (tenant_id, id, kind, name, owner_id) VALUES ($1, $2, 'agent', $3, $4)", [tenantId, id, name, personId]);
  } catch (error) {
    // The transaction is lost either way; the refusal rolls it back.
    if (!isUniqueViolation(error)) throw error;
    throw oauthError('invalid_request', `An agent named "${name}" already exists in this organisation; choose another name.`);
  }
  return { id, name, created: true };
}
