import { isUtf8 } from 'node:buffer';

/**
 * Request bodies are checked as UTF-8 before they are decoded: decoding replaces every invalid
 * byte with U+FFFD, so a body with a stray Latin-1 byte or a cut multi-byte sequence would be
 * stored changed without a word. The check is one linear pass (`isUtf8`); the offset of the
 * first bad byte is looked for only when it fails.
 */

/**
 * The offset of the first byte that does not begin a well-formed UTF-8 sequence (Unicode's
 * table 3-7: no overlong forms, no encoded surrogates, nothing above U+10FFFF, no cut
 * sequences), or undefined when the bytes are all well-formed.
 */
export function invalidUtf8Offset(bytes: Uint8Array): number | undefined {
  if (isUtf8(bytes)) return undefined;
  let at = 0;
  while (at < bytes.length) {
    const length = sequenceLength(bytes, at);
    if (length === 0) return at;
    at += length;
  }
  // isUtf8 and the table disagree: not expected, and the body is refused all the same.
  return 0;
}

/** The length of the well-formed sequence at `at`, or 0 when none begins there. */
function sequenceLength(bytes: Uint8Array, at: number): number {
  const lead = bytes[at] ?? 0;
  if (lead < 0x80) return 1;
  // The allowed range of the second byte depends on the lead; the others are always 80..BF.
  let count: number;
  let low = 0x80;
  let high = 0xbf;
  if (lead >= 0xc2 && lead <= 0xdf) count = 2;
  else if (lead >= 0xe0 && lead <= 0xef) {
    count = 3;
    if (lead === 0xe0) low = 0xa0;
    if (lead === 0xed) high = 0x9f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    count = 4;
    if (lead === 0xf0) low = 0x90;
    if (lead === 0xf4) high = 0x8f;
  } else return 0;
  const second = bytes[at + 1];
  if (second === undefined || second < low || second > high) return 0;
  for (let i = 2; i < count; i++) {
    const next = bytes[at + i];
    if (next === undefined || next < 0x80 || next > 0xbf) return 0;
  }
  return count;
}

/** The sentence a refusal ends with: where the first invalid byte is and what it is. */
export function invalidUtf8Text(bytes: Uint8Array, offset: number): string {
  const value = bytes[offset] ?? 0;
  return `the body is not valid UTF-8: the byte at offset ${offset} (0x${value.toString(16).padStart(2, '0')}) does not begin a well-formed sequence`;
}

/** A body kept as bytes by its scope's parser, as text; or, when it is not UTF-8, the sentence saying where not. */
export function bodyText(body: unknown): { text: string } | { offset: number; problem: string } {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.alloc(0);
  const offset = invalidUtf8Offset(bytes);
  return offset === undefined ? { text: bytes.toString('utf8') } : { offset, problem: invalidUtf8Text(bytes, offset) };
}
