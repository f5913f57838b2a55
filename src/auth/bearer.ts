import type { Caller } from '../core/access/caller.ts';
import { authenticate } from '../core/tokens/tokens.ts';
import type { Queryable } from '../store/db.ts';

export type BearerResult = { readonly caller: Caller } | { readonly failure: 'missing' | 'invalid' };

/** Reads `Authorization: Bearer …` and resolves the caller; never throws for bad input. */
export async function authenticateBearer(db: Queryable, header: string | undefined): Promise<BearerResult> {
  if (header === undefined || header.trim() === '') return { failure: 'missing' };
  const match = /^Bearer[ ]+([A-Za-z0-9._~+/=-]+)\s*$/i.exec(header);
  if (!match?.[1]) return { failure: 'invalid' };
  const caller = await authenticate(db, match[1]);
  return caller ? { caller } : { failure: 'invalid' };
}
