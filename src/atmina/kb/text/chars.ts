/**
 * The characters CommonMark's block and link syntax is read by: their codes, blanks (space and
 * tab), ASCII punctuation and its backslash escapes. Shared by the block scanner (blocks.ts) and
 * the link syntax (link-syntax.ts, links.ts).
 */

export const SPACE = 0x20;
export const TAB = 0x09;
export const GT = 0x3e;
export const HASH = 0x23;
export const BACKTICK = 0x60;
export const TILDE = 0x7e;
export const LT = 0x3c;
export const EQUALS = 0x3d;
export const DASH = 0x2d;
export const STAR = 0x2a;
export const UNDERSCORE = 0x5f;
export const PLUS = 0x2b;

export const isBlank = (code: number): boolean => code === SPACE || code === TAB;

/** Nothing but spaces and tabs from `from` to the end of `text`. */
export function restIsBlank(text: string, from: number): boolean {
  for (let at = from; at < text.length; at += 1) if (!isBlank(text.charCodeAt(at))) return false;
  return true;
}

const ESCAPED = /\\([!-/:-@[-`{-~])/g;

/** Removes backslash escapes of ASCII punctuation. */
export const unescape = (text: string): string => (text.includes('\\') ? text.replace(ESCAPED, '$1') : text);

export const isPunctuation = (code: number): boolean =>
  (code >= 0x21 && code <= 0x2f) || (code >= 0x3a && code <= 0x40) || (code >= 0x5b && code <= 0x60) || (code >= 0x7b && code <= 0x7e);
