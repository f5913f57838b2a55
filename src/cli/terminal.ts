import { UNSEEN, visibleText } from '../kernel/text.ts';
/**
 * Everything the CLI writes goes through this module, because much of it is text that agents
 * wrote (titles, names, messages, drafts, rationales, error texts naming them) and a terminal
 * obeys control sequences inside text: ESC [2J clears the screen, OSC 0 sets the window title,
 * OSC 8 makes a link whose target the reader never sees, U+009B (C1 CSI) does what ESC [ does
 * in a terminal that reads 8-bit controls, a carriage return overwrites the start of a line,
 * and the bidi overrides and isolates show a line in another order than it is stored.
 *
 * Replaced: the C0 controls except tab and line feed, DEL, the C1 controls, the format
 * characters (Unicode category Cf: bidi marks, embeddings, overrides and isolates, zero-width
 * space, word joiner, byte order mark, soft hyphen, tag characters) and the line and paragraph
 * separators U+2028/U+2029. Kept: zero-width non-joiner and joiner (U+200C/U+200D), which emoji
 * sequences and several scripts need and which cannot move or hide other text.
 *
 * The visible form is that of a JavaScript string escape in lower-case hex: `\x1b` for a code
 * point below U+0100, `\u202e` for one up to U+FFFF, `\u{e0041}` above. A backslash is left as
 * it is: this output is for reading, not for parsing back (`--json` gives the exact text), and
 * doubling every backslash would garble paths and regular expressions in ordinary text.
 */

/**
 * `text` with every control and format character the terminal would act on replaced by its
 * visible form. Line feeds and tabs stay unless `inline` (a table cell or a name inside a
 * sentence, where an agent's line break would forge a line of the CLI's own); a multi-line
 * body (a diff, a proposal's content, a rationale) keeps its lines.
 */
export function visible(text: string, options: { inline?: boolean } = {}): string {
  return visibleText(text, options);
}

/**
 * `value` as indented JSON for `--json`. JSON.stringify escapes the C0 controls but writes DEL,
 * the C1 controls, the format characters and U+2028/U+2029 as they are, and a terminal still
 * acts on a raw U+009B; those are written as \u escapes here (UTF-16 units, as JSON has it), so
 * the output stays valid JSON that parses to exactly the same value.
 */
export function jsonText(value: unknown): string {
  return (JSON.stringify(value, null, 2) ?? 'null').replace(UNSEEN, (char) =>
    Array.from({ length: char.length }, (_, i) => `\\u${char.charCodeAt(i).toString(16).padStart(4, '0')}`).join(''),
  );
}

/** Writes one line (or several) to standard output, made visible. */
export function print(text: string): void {
  process.stdout.write(`${visible(text)}\n`);
}

/** Writes a failure's reason to standard error, made visible; it keeps its lines (one per problem of an org file). */
export function printError(text: string): void {
  process.stderr.write(`${visible(text)}\n`);
}

/** Writes a line about what a command did to standard error, made visible, so standard output keeps only its result. */
export function printNotice(text: string): void {
  process.stderr.write(`${visible(text)}\n`);
}

/** How a long command reports progress: lines on standard error when it is a terminal and the command is not quiet (--json); nothing otherwise. */
export function progressReporter(quiet: boolean): (line: string) => void {
  return quiet || process.stderr.isTTY !== true ? () => undefined : printNotice;
}

/**
 * Writes a file's bytes to standard output as they are, resolving once they are handed on; on a
 * terminal, which would act on escapes in the file, as visible text instead.
 */
export async function writeBytes(bytes: Buffer): Promise<void> {
  if (process.stdout.isTTY) {
    process.stdout.write(visible(bytes.toString('utf8')));
    return;
  }
  await new Promise<void>((resolve, reject) => process.stdout.write(bytes, (error) => (error ? reject(error) : resolve())));
}
