import { randomUUID } from 'node:crypto';
import { verifyPassword } from '../core/access/passwords.ts';
import { agentNameRule } from '../core/org/rules.ts';
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
  const [row] = askable
    ? await q.query<{ tenant_id: string; id: string; password_hash: string | null }>(
        `SELECT p.tenant_id, p.id, p.password_hash
           FROM principals p JOIN tenants n ON n.id = p.tenant_id
          WHERE n.slug = $1 AND p.kind = 'person' AND p.email = $2`,
        [tenantSlug.trim().toLowerCase(), email.trim().toLowerCase()],
      )
    : [];
  const matches = await verifyPassword(row?.password_hash ?? NO_PASSWORD, password);
  return matches && row?.password_hash ? { tenantId: row.tenant_id, personId: row.id } : undefined;
}

export interface OwnedAgent {
  readonly id: string;
  readonly name: string;
}

/** The agents a person owns: the identities a connection approved by them may act as. */
export async function agentsOwnedBy(q: Queryable, tenantId: string, personId: string): Promise<OwnedAgent[]> {
  return q.query<OwnedAgent>("SELECT id, name FROM principals WHERE tenant_id = $1 AND kind = 'agent' AND owner_id = $2 ORDER BY name, id", [
    tenantId,
    personId,
  ]);
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
    const owned = /^[0-9a-f-]{36}$/i.test(choice.agentId)
      ? await tx.query<OwnedAgent>("SELECT id, name FROM principals WHERE tenant_id = $1 AND id = $2 AND kind = 'agent' AND owner_id = $3", [
          tenantId,
          choice.agentId,
          personId,
        ])
      : [];
    if (!owned[0]) throw oauthError('invalid_request', 'Choose one of your own agents.');
    return { ...owned[0], created: false };
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
