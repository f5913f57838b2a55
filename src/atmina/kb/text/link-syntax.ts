import { GT, LT, SPACE, isBlank, isPunctuation, restIsBlank, unescape } from './chars.ts';

/**
 * The pieces of CommonMark link syntax: a `[label]`, a destination, a title, and a link reference
 * definition made of them. The block scanner (blocks.ts) reads definitions with them, the inline
 * links (links.ts) their labels and destinations.
 */

/** Link labels are at most this long (CommonMark). */
export const LABEL_MAX = 999;

/** `[label]: destination "title"` on one line, or undefined. */
export function parseDefinition(text: string): { label: string; destination: string } | undefined {
  const label = scanLabel(text, 0);
  if (label === undefined || text.charCodeAt(label.end) !== 0x3a) return undefined;
  let at = label.end + 1;
  while (at < text.length && isBlank(text.charCodeAt(at))) at += 1;
  const destination = scanDestination(text, at, false);
  if (destination === undefined || (destination.value === '' && !destination.angled)) return undefined;
  at = destination.end;
  const beforeTitle = at;
  while (at < text.length && isBlank(text.charCodeAt(at))) at += 1;
  if (at < text.length) {
    if (at === beforeTitle) return undefined;
    const title = scanTitle(text, at);
    if (title === undefined || !restIsBlank(text, title)) return undefined;
  }
  return { label: label.value, destination: destination.value };
}

/** A `[label]` at `start`: its text and the index after `]`; no unescaped brackets, at most LABEL_MAX characters. */
export function scanLabel(text: string, start: number): { value: string; end: number } | undefined {
  if (text.charCodeAt(start) !== 0x5b) return undefined;
  const limit = Math.min(text.length, start + 1 + LABEL_MAX);
  for (let at = start + 1; at < limit; at += 1) {
    const code = text.charCodeAt(at);
    if (code === 0x5c) at += 1;
    else if (code === 0x5b) return undefined;
    else if (code === 0x5d) {
      const value = text.slice(start + 1, at);
      return value.trim() === '' ? undefined : { value, end: at + 1 };
    }
  }
  return undefined;
}

/**
 * A link destination at `start`: `<...>` (no line break or `<` inside) or a run without spaces or
 * controls whose parentheses balance (nested at most 32 deep); backslash escapes removed. In an
 * inline link (`inline`) a raw destination also ends at an unbalanced `)`.
 */
export function scanDestination(text: string, start: number, inline: boolean): { value: string; end: number; angled: boolean } | undefined {
  if (text.charCodeAt(start) === LT) {
    for (let at = start + 1; at < text.length; at += 1) {
      const code = text.charCodeAt(at);
      if (code === 0x5c) at += 1;
      else if (code === 0x0a || code === LT) return undefined;
      else if (code === GT) return { value: unescape(text.slice(start + 1, at)), end: at + 1, angled: true };
    }
    return undefined;
  }
  let depth = 0;
  let at = start;
  for (; at < text.length; at += 1) {
    const code = text.charCodeAt(at);
    if (code <= SPACE || code === 0x7f) break;
    if (code === 0x5c && at + 1 < text.length && isPunctuation(text.charCodeAt(at + 1))) at += 1;
    else if (code === 0x28) {
      depth += 1;
      if (depth > 32) return undefined;
    } else if (code === 0x29) {
      if (depth === 0) {
        if (inline) break;
        return undefined;
      }
      depth -= 1;
    }
  }
  if (depth !== 0) return undefined;
  return { value: unescape(text.slice(start, at)), end: at, angled: false };
}

/** A link title at `start` ("...", '...' or (...)); answers the index after it. */
export function scanTitle(text: string, start: number): number | undefined {
  const open = text.charCodeAt(start);
  const close = open === 0x22 ? 0x22 : open === 0x27 ? 0x27 : open === 0x28 ? 0x29 : -1;
  if (close < 0) return undefined;
  for (let at = start + 1; at < text.length; at += 1) {
    const code = text.charCodeAt(at);
    if (code === 0x5c) at += 1;
    else if (code === close) return at + 1;
    else if (open === 0x28 && code === 0x28) return undefined;
  }
  return undefined;
}
