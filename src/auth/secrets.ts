import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A fresh 256-bit secret, URL-safe, with a prefix that tells what it is when it leaks. */
export const newSecret = (prefix: string): string => prefix + randomBytes(32).toString('base64url');

/** Secrets are high-entropy, so one SHA-256 is a sound at-rest hash (as for bearer tokens). */
export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

export const base64urlSha256 = (text: string): string => createHash('sha256').update(text).digest('base64url');

/** Compares two strings in time independent of where they differ. */
export function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** RFC 7636: 43 to 128 characters from the unreserved set. */
const PKCE_VALUE = /^[A-Za-z0-9._~-]{43,128}$/;

export const isPkceValue = (value: string): boolean => PKCE_VALUE.test(value);

/** RFC 7636 S256: BASE64URL(SHA256(verifier)) must equal the challenge. */
export function pkceMatches(verifier: string, challenge: string): boolean {
  return isPkceValue(verifier) && sameText(base64urlSha256(verifier), challenge);
}
