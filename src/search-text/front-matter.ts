/*
 * Where a Markdown document's YAML front matter ends: a `---` line as its first line up to the
 * next `---` or `...` line (trailing spaces and tabs allowed on both, a leading byte order mark
 * ignored). Snippets leave the block out (shown-text.ts); a product that reads the block's keys
 * (Atmina's KB files) splits a file on these same lines.
 */

/** The line that opens front matter. */
export const OPENING = /^---[ \t]*$/;
/** The line that closes it. */
export const CLOSING = /^(?:---|\.\.\.)[ \t]*$/;

/**
 * How many UTF-16 units at the start of `markdown` its front matter takes, as a reader of the
 * block finds it (a leading byte order mark, the block, its closing line and that line's end): 0 when
 * it has none (`absent`, or `unterminated`, whose first line is body). What follows is the body.
 */
export function frontMatterLength(markdown: string): number {
  const start = markdown.charCodeAt(0) === 0xfeff ? 1 : 0;
  const line = /([^\r\n]*)(?:\r\n|\r|\n|$)/y;
  line.lastIndex = start;
  let opened = false;
  while (line.lastIndex < markdown.length) {
    const at = line.lastIndex;
    const text = line.exec(markdown)?.[1] ?? '';
    if (line.lastIndex === at) break;
    if (!opened) {
      if (!OPENING.test(text)) return 0;
      opened = true;
    } else if (CLOSING.test(text)) return line.lastIndex;
  }
  return 0;
}
