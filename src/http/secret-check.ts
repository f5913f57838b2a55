import { timingSafeEqual } from 'node:crypto';
import { hashSecret } from '../kernel/tokens/tokens.ts';

/** A connection's own address on this machine's loopback interface, as Node gives it. */
export const LOOPBACK_ADDRESSES: ReadonlySet<string> = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

/** Whether a presented secret is the one whose hash is kept, in constant time (hashes of equal length). */
export function sameSecret(presented: string, expectedHash: string): boolean {
  return timingSafeEqual(Buffer.from(hashSecret(presented), 'hex'), Buffer.from(expectedHash, 'hex'));
}

/** The secret of an `Authorization: Bearer …` header, or undefined. */
export const bearerSecret = (header: string | undefined): string | undefined => /^Bearer (\S+)$/.exec(header ?? '')?.[1];
