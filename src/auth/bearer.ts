import type { Caller } from '../kernel/access/caller.ts';
import type { AuthenticatedToken } from '../kernel/tokens/tokens.ts';

/** What checks a secret: the gateway's token cache (src/kernel/tokens/token-cache.ts). */
export interface TokenChecker {
  authenticate(secret: string): Promise<AuthenticatedToken | undefined>;
}

export type BearerResult = { readonly caller: Caller } | { readonly failure: 'missing' | 'invalid' };

/**
 * Reads `Authorization: Bearer …` and resolves the caller; never throws for bad input.
 * `resource` is the URL of the MCP endpoint asked: an OAuth access token is valid only on the
 * endpoint it was issued for (its audience), a CLI token on every endpoint.
 */
export async function authenticateBearer(tokens: TokenChecker, header: string | undefined, resource?: string): Promise<BearerResult> {
  if (header === undefined || header.trim() === '') return { failure: 'missing' };
  const match = /^Bearer[ ]+([A-Za-z0-9._~+/=-]+)\s*$/i.exec(header);
  if (!match?.[1]) return { failure: 'invalid' };
  const found = await tokens.authenticate(match[1]);
  if (!found) return { failure: 'invalid' };
  if (found.audience !== null && found.audience !== resource) return { failure: 'invalid' };
  return { caller: found.caller };
}
