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

/** Where in a JSON value a problem is: object keys and array indexes from the top. */
export type JsonPath = (string | number)[];

/**
 * The first string (key or value) in a JSON value that cannot be stored, with its path, or a
 * value nested deeper than MAX_JSON_DEPTH. Iterative, so no input can exhaust the stack.
 */
export function findUnstorable(value: unknown): { path: JsonPath; message: string } | undefined {
  const stack: { value: unknown; path: JsonPath }[] = [{ value, path: [] }];
  while (stack.length > 0) {
    const item = stack.pop();
    if (item === undefined) break;
    if (typeof item.value === 'string') {
      const problem = unstorableText(item.value);
      if (problem !== undefined) return { path: item.path, message: problem };
    } else if (item.value !== null && typeof item.value === 'object') {
      if (item.path.length >= MAX_JSON_DEPTH) return { path: item.path, message: `must not be nested more than ${MAX_JSON_DEPTH} levels deep` };
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
