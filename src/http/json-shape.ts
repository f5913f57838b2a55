/**
 * A look at a JSON text's shape before JSON.parse builds it. Parsing is one uninterruptible
 * call: a 16 MiB body of `0,0,0,…` or of half a million small keys held the event loop (and so
 * `/healthz` and every other client) for seconds, and a million nested `[` for most of one.
 * One pass over the characters, about a millisecond per MiB, counts the values and the nesting
 * outside strings, so such a body is refused before it is parsed.
 */

/** Values (items, members) one MCP POST may hold in all: a batch of 100 calls of ordinary size fits many times over. */
export const BODY_MAX_VALUES = 200_000;
/** Nesting one MCP POST may have: the JSON-RPC envelope, a batch and the tools' 32 levels of arguments. */
export const BODY_MAX_DEPTH = 40;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;
const COMMA = 0x2c;

/** Why the text is too large a shape to parse, or undefined. It does not check that the text is JSON. */
export function jsonShapeProblem(
  text: string,
  limits: { maxValues: number; maxDepth: number } = { maxValues: BODY_MAX_VALUES, maxDepth: BODY_MAX_DEPTH },
): string | undefined {
  let values = 0;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i += 1;
      else if (c === QUOTE) inString = false;
      continue;
    }
    if (c === QUOTE) inString = true;
    else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      depth += 1;
      values += 1;
      if (depth > limits.maxDepth) return `is nested more than ${limits.maxDepth} levels deep`;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth -= 1;
    else if (c === COMMA) {
      values += 1;
      if (values > limits.maxValues) return `holds more than ${limits.maxValues} values`;
    }
  }
  return undefined;
}
