/**
 * What text the gateway refuses, wherever it comes from. PostgreSQL cannot store U+0000 in text
 * at all, and a lone surrogate cannot be encoded as UTF-8 (the drivers silently turn it into
 * U+FFFD, so a rewrite of the same text would save a new version): both are refused as
 * validation errors before anything is written. Names that are shown as file names or paths
 * refuse control and bidirectional formatting characters too, which can hide or reorder what a
 * person reads (`invoice\u202Etxt.exe` shows as `invoiceexe.txt`).
 */

/** C0 controls, DEL and C1 controls (U+0080–U+009F, which some terminals obey like ESC sequences). */
// eslint-disable-next-line no-control-regex
export const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;

/** The bidirectional formatting characters: marks, embeddings, overrides and isolates. */
export const BIDI_CONTROL = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/** Why a string cannot be stored as text, or undefined when it can. */
export function unstorableText(value: string): string | undefined {
  if (value.includes('\0')) return 'must not contain NUL (U+0000)';
  if (!value.isWellFormed()) return 'must be well-formed Unicode (it has a lone surrogate)';
  return undefined;
}

/** Why a string cannot be a path or file name shown to people, beyond unstorableText, or undefined. */
export function unsafeName(value: string): string | undefined {
  if (CONTROL_CHARACTER.test(value)) return 'must not contain control characters';
  if (BIDI_CONTROL.test(value)) return 'must not contain bidirectional formatting characters (they can disguise a name)';
  return undefined;
}

/** The nesting of JSON values a tool accepts; no tool's schema comes near it. */
export const MAX_JSON_DEPTH = 32;

/**
 * The number of values (strings, numbers, items, keys) a tool's arguments may hold. The
 * largest real input, an Artifact of 500 files, needs a few thousand; a 16 MiB body of `0,`
 * could hold eight million, and walking them would hold the event loop for everyone.
 */
export const MAX_JSON_VALUES = 100_000;

/** Where in a JSON value a problem is: object keys and array indexes from the top. */
export type JsonPath = (string | number)[];

/**
 * The first string (key or value) in a JSON value that cannot be stored, with its path, or a
 * value nested deeper than MAX_JSON_DEPTH or holding more than MAX_JSON_VALUES. Iterative, so no
 * input can exhaust the stack.
 */
export function findUnstorable(value: unknown): { path: JsonPath; message: string } | undefined {
  const stack: { value: unknown; path: JsonPath }[] = [{ value, path: [] }];
  let seen = 0;
  while (stack.length > 0) {
    const item = stack.pop();
    if (item === undefined) break;
    seen += 1;
    if (typeof item.value === 'string') {
      const problem = unstorableText(item.value);
      if (problem !== undefined) return { path: item.path, message: problem };
    } else if (item.value !== null && typeof item.value === 'object') {
      if (item.path.length >= MAX_JSON_DEPTH) return { path: item.path, message: `must not be nested more than ${MAX_JSON_DEPTH} levels deep` };
      // Counted before they are queued, so one huge array is refused without walking it.
      const size = Array.isArray(item.value) ? item.value.length : Object.keys(item.value).length;
      if (seen + stack.length + size > MAX_JSON_VALUES) return { path: [], message: `must not hold more than ${MAX_JSON_VALUES} values` };
      if (Array.isArray(item.value)) {
        for (let i = item.value.length - 1; i >= 0; i -= 1) stack.push({ value: item.value[i], path: [...item.path, i] });
      } else {
        const entries = Object.entries(item.value);
        for (let i = entries.length - 1; i >= 0; i -= 1) {
          const [key, child] = entries[i] as [string, unknown];
          const problem = unstorableText(key);
          if (problem !== undefined) return { path: item.path, message: `has a key that ${problem}` };
          stack.push({ value: child, path: [...item.path, key] });
        }
      }
    }
  }
  return undefined;
}

/**
 * Whether a JSON value holds more than `limit` values, found without walking more than that:
 * cheap enough to run before any schema parses a request (a schema over a record of 600,000
 * keys takes seconds of the event loop).
 */
export function holdsMoreValues(value: unknown, limit: number = MAX_JSON_VALUES): boolean {
  const stack: unknown[] = [value];
  let seen = 0;
  while (stack.length > 0) {
    const item = stack.pop();
    seen += 1;
    if (item !== null && typeof item === 'object') {
      const children = Array.isArray(item) ? (item as unknown[]) : Object.values(item);
      if (seen + stack.length + children.length > limit) return true;
      for (const child of children) stack.push(child);
    }
  }
  return false;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a value is a UUID (any case), the form of every id the gateway hands out. */
export const isUuid = (value: string): boolean => UUID.test(value);

/**
 * `text` with every control and format character a reader's screen would act on replaced by
 * its visible form, for text that agents wrote shown to people (the CLI, the console): the C0
 * controls except tab and line feed, DEL, the C1 controls, the format characters (Unicode Cf:
 * bidi marks, embeddings, overrides and isolates, zero-width space, word joiner, byte order
 * mark, soft hyphen, tag characters) and U+2028/U+2029. Kept: zero-width non-joiner and joiner
 * (U+200C/U+200D), which emoji sequences and several scripts need and which cannot move or hide
 * other text. With `inline` (a name in a sentence or a table cell) line feeds and tabs too, so
 * an agent's line break cannot forge a line of its own.
 *
 * The visible form is that of a JavaScript string escape in lower-case hex: `\x1b` below
 * U+0100, `\u202e` up to U+FFFF, `\u{e0041}` above. A backslash stays as it is: the text is
 * for reading, not parsing back, and doubling it would garble paths in ordinary text.
 */
export function visibleText(text: string, options: { readonly inline?: boolean } = {}): string {
  return text.replace(options.inline === true ? UNSEEN_INLINE : UNSEEN, escapedChar);
}

/** What visibleText replaces (without `inline`); JSON output escapes the same characters. */
export const UNSEEN = /(?![\n\t\u200c\u200d])[\p{Cc}\p{Cf}\u2028\u2029]/gu;
const UNSEEN_INLINE = /(?![\u200c\u200d])[\p{Cc}\p{Cf}\u2028\u2029]/gu;

function escapedChar(char: string): string {
  const code = char.codePointAt(0) ?? 0;
  const hex = code.toString(16);
  if (code < 0x100) return `\\x${hex.padStart(2, '0')}`;
  return code <= 0xffff ? `\\u${hex.padStart(4, '0')}` : `\\u{${hex}}`;
}
