import { BACKTICK, DASH, EQUALS, GT, HASH, LT, PLUS, SPACE, STAR, TAB, TILDE, UNDERSCORE, isBlank, restIsBlank } from './chars.ts';
import { parseDefinition, scanLabel } from './link-syntax.ts';

/**
 * The block structure of Markdown, as far as the outline and the links need it: which lines are
 * headings, which are paragraph text (where links live), and which are code, HTML or front
 * matter (where neither is looked for). It follows CommonMark's block rules for containers (block
 * quotes and list items, with lazy continuation lines), fenced and indented code, ATX and Setext
 * headings, thematic breaks, link reference definitions and HTML blocks of kinds 1, 2, 6 and 7
 * (`<pre>`/`<script>`/`<style>`/`<textarea>`, comments, the block-level tags, and any other
 * whole tag alone on its line). It does not follow HTML blocks of kinds 3, 4 and 5 (`<?`, `<!X`,
 * `<![CDATA[`), whose lines are read as paragraph text.
 *
 * One pass over the lines, each examined a bounded number of times: containers nest at most
 * MAX_NESTING deep (deeper markers are paragraph text), so hostile input costs linear time.
 */

/** Block quotes and list items nest at most this deep; further markers are read as text. */
export const MAX_NESTING = 64;

export interface BlockHeading {
  readonly level: 1 | 2 | 3 | 4 | 5 | 6;
  /** The heading's inline source, as written (closing #s of an ATX heading removed). */
  readonly text: string;
  /** 1-based. */
  readonly line: number;
}

export interface BlockVisitor {
  heading?(heading: BlockHeading): void;
  /** A paragraph's or a heading's inline source (lines joined with \n) and its first line. */
  inline?(text: string, line: number): void;
  /** A link reference definition: its label as written and its destination, unescaped. */
  definition?(label: string, destination: string, line: number): void;
  /** Asked before each line: true ends the scan (what is open is not reported). */
  done?(): boolean;
}

type Container = { readonly kind: 'quote' } | { readonly kind: 'item'; readonly width: number };

type HtmlEnd = 'comment' | 'raw' | 'blank';

type Leaf =
  | { readonly kind: 'paragraph'; readonly line: number; readonly lines: string[] }
  | { readonly kind: 'fence'; readonly marker: number; readonly length: number }
  | { readonly kind: 'html'; readonly end: HtmlEnd }
  | { readonly kind: 'code' };

/**
 * A position in one line that knows its column: tabs advance to the next multiple of 4, and a tab
 * may be consumed in part (a list item's content can start in the middle of one).
 */
class Cursor {
  readonly text: string;
  pos = 0;
  col = 0;
  /** Columns of the tab at `pos` already consumed. */
  partial = 0;
  private scannedFrom = -1;
  private firstNonBlank = -1;

  constructor(text: string) {
    this.text = text;
  }

  /** The columns of whitespace ahead, counted up to `limit` (and a tab's worth beyond). */
  indent(limit: number): number {
    let columns = 0;
    let col = this.col - this.partial;
    for (let at = this.pos; at < this.text.length && columns < limit; at += 1) {
      const code = this.text.charCodeAt(at);
      if (code === SPACE) {
        columns += 1;
        col += 1;
      } else if (code === TAB) {
        const width = 4 - (col % 4);
        columns += at === this.pos ? width - this.partial : width;
        col += width;
      } else break;
    }
    return columns;
  }

  /** Consumes up to `columns` columns of whitespace. */
  skipColumns(columns: number): void {
    let left = columns;
    while (left > 0 && this.pos < this.text.length) {
      const code = this.text.charCodeAt(this.pos);
      if (code === SPACE) {
        this.pos += 1;
        this.col += 1;
        left -= 1;
      } else if (code === TAB) {
        const width = 4 - ((this.col - this.partial) % 4);
        const rest = width - this.partial;
        if (rest <= left) {
          this.pos += 1;
          this.col += rest;
          this.partial = 0;
          left -= rest;
        } else {
          this.partial += left;
          this.col += left;
          left = 0;
        }
      } else break;
    }
  }

  /** Consumes `count` characters that are not whitespace. */
  skipChars(count: number): void {
    this.pos += count;
    this.col += count;
    this.partial = 0;
  }

  /** The index of the first character at or after `pos` that is not a space or tab. */
  nonBlank(): number {
    if (this.scannedFrom < 0 || this.pos < this.scannedFrom || this.pos > this.firstNonBlank) {
      let at = this.pos;
      while (at < this.text.length && isBlank(this.text.charCodeAt(at))) at += 1;
      this.scannedFrom = this.pos;
      this.firstNonBlank = at;
    }
    return this.firstNonBlank;
  }

  blankRest(): boolean {
    return this.nonBlank() >= this.text.length;
  }

  /** The code of the character after up to 3 columns of indentation, or -1 past the end. */
  codeAfterIndent(): number {
    const at = this.nonBlank();
    return at < this.text.length ? this.text.charCodeAt(at) : -1;
  }
}

/** Scans `lines` from index `from` (0-based) and reports to `visitor`. */
export function scanBlocks(lines: readonly string[], from: number, visitor: BlockVisitor): void {
  const containers: Container[] = [];
  let leaf: Leaf | undefined;

  const closeLeaf = (): void => {
    const closing = leaf;
    leaf = undefined;
    if (closing?.kind === 'paragraph') finishParagraph(closing.lines, closing.line, visitor);
  };

  for (let index = from; index < lines.length; index += 1) {
    if (visitor.done?.() === true) return;
    const lineNumber = index + 1;
    const cursor = new Cursor(lines[index] ?? '');

    // 1. Which open containers does this line continue?
    let matched = 0;
    for (; matched < containers.length; matched += 1) {
      const container = containers[matched];
      if (container === undefined) break;
      if (container.kind === 'quote') {
        const indent = cursor.indent(4);
        if (indent > 3 || cursor.codeAfterIndent() !== GT) break;
        cursor.skipColumns(indent);
        cursor.skipChars(1);
        if (isBlank(cursor.text.charCodeAt(cursor.pos))) cursor.skipColumns(1);
      } else if (cursor.blankRest()) {
        // A blank line belongs to the list item it is in.
      } else if (cursor.indent(container.width) >= container.width) {
        cursor.skipColumns(container.width);
      } else break;
    }
    const allMatched = matched === containers.length;

    // Closes the containers this line did not continue, once: those it opens itself stay.
    let unmatchedOpen = !allMatched;
    const closeUnmatched = (): void => {
      if (!unmatchedOpen) return;
      unmatchedOpen = false;
      closeLeaf();
      containers.length = matched;
    };

    // 2. Inside a fence, HTML block or indented code: only its end matters.
    if (allMatched && leaf !== undefined && leaf.kind !== 'paragraph') {
      if (leaf.kind === 'fence') {
        if (closesFence(cursor, leaf.marker, leaf.length)) leaf = undefined;
        continue;
      }
      if (leaf.kind === 'html') {
        if (leaf.end === 'blank' ? cursor.blankRest() : endsHtml(cursor.text.slice(cursor.pos), leaf.end)) leaf = undefined;
        continue;
      }
      if (cursor.blankRest() || cursor.indent(4) >= 4) continue;
      leaf = undefined;
    }

    // 3. Block starts, containers first (each may be followed by another on the same line).
    let opened = false;
    let handled = false;
    const breakMemo: BreakMemo = { code: -1, failsAt: -1 };
    const paragraphHere = (): boolean => leaf?.kind === 'paragraph' && allMatched && !opened;
    for (;;) {
      if (cursor.blankRest()) break;
      const indent = cursor.indent(4);
      if (indent >= 4) {
        // Indented code cannot interrupt a paragraph: such a line continues it, lazily or not.
        if (leaf?.kind === 'paragraph' && !opened) break;
        closeUnmatched();
        closeLeaf();
        leaf = { kind: 'code' };
        handled = true;
        break;
      }
      const code = cursor.codeAfterIndent();
      const start = cursor.nonBlank();
      const text = cursor.text;
      // Unmatched containers close when a block starts here, so they do not count toward the depth.
      const nestable = (opened ? containers.length : matched) < MAX_NESTING;
      if (code === GT && nestable) {
        closeUnmatched();
        closeLeaf();
        cursor.skipColumns(indent);
        cursor.skipChars(1);
        if (isBlank(text.charCodeAt(cursor.pos))) cursor.skipColumns(1);
        containers.push({ kind: 'quote' });
        opened = true;
        continue;
      }
      if (code === HASH) {
        const heading = atxHeading(text, start, lineNumber);
        if (heading !== undefined) {
          closeUnmatched();
          closeLeaf();
          visitor.heading?.(heading);
          visitor.inline?.(heading.text, lineNumber);
          handled = true;
          break;
        }
      }
      if (code === BACKTICK || code === TILDE) {
        const fence = openingFence(text, start, code);
        if (fence !== undefined) {
          closeUnmatched();
          closeLeaf();
          leaf = { kind: 'fence', marker: code, length: fence };
          handled = true;
          break;
        }
      }
      if (code === LT) {
        const end = htmlStart(text, start, paragraphHere());
        if (end !== undefined) {
          closeUnmatched();
          closeLeaf();
          leaf = end === 'blank' || !endsHtml(text.slice(start), end) ? { kind: 'html', end } : undefined;
          handled = true;
          break;
        }
      }
      if ((code === EQUALS || code === DASH) && paragraphHere() && isSetextUnderline(text, start, code) && leaf?.kind === 'paragraph') {
        const paragraph = leaf;
        leaf = undefined;
        const rest = finishSetext(paragraph.lines, paragraph.line, code === EQUALS ? 1 : 2, visitor);
        if (rest === 'paragraph') leaf = { kind: 'paragraph', line: lineNumber, lines: [text.slice(start)] };
        handled = true;
        break;
      }
      if ((code === STAR || code === DASH || code === UNDERSCORE) && isThematicBreak(text, start, code, breakMemo)) {
        closeUnmatched();
        closeLeaf();
        handled = true;
        break;
      }
      if (nestable) {
        const item = listItem(cursor, start, paragraphHere());
        if (item !== undefined) {
          closeUnmatched();
          closeLeaf();
          cursor.skipColumns(indent);
          cursor.skipChars(item.marker);
          // The content starts after the spaces that follow the marker; after one when there are
          // five or more (the content is then indented code) or none (an empty first line).
          const spaces = cursor.blankRest() ? 1 : cursor.indent(5);
          const gap = spaces >= 5 ? 1 : spaces;
          cursor.skipColumns(gap);
          containers.push({ kind: 'item', width: indent + item.marker + gap });
          opened = true;
          continue;
        }
      }
      break;
    }
    if (handled) continue;

    // 4. What is left is blank or paragraph text.
    if (cursor.blankRest()) {
      closeUnmatched();
      if (leaf?.kind === 'paragraph' || leaf?.kind === 'html') closeLeaf();
      continue;
    }
    const content = cursor.text.slice(cursor.nonBlank());
    if (leaf?.kind === 'paragraph' && !opened) {
      // A continuation line; when containers did not match it is a lazy one and they stay open.
      leaf.lines.push(content);
      continue;
    }
    closeUnmatched();
    closeLeaf();
    leaf = { kind: 'paragraph', line: lineNumber, lines: [content] };
  }
  if (visitor.done?.() === true) return;
  closeLeaf();
}

function atxHeading(text: string, start: number, line: number): BlockHeading | undefined {
  let at = start;
  while (at < text.length && text.charCodeAt(at) === HASH && at - start < 7) at += 1;
  const level = at - start;
  if (level > 6 || (at < text.length && !isBlank(text.charCodeAt(at)))) return undefined;
  // The closing sequence: #s at the end, preceded by a space or tab (or nothing but them).
  let end = text.length;
  while (end > at && isBlank(text.charCodeAt(end - 1))) end -= 1;
  let hashes = end;
  while (hashes > at && text.charCodeAt(hashes - 1) === HASH) hashes -= 1;
  if (hashes < end && (hashes === at || isBlank(text.charCodeAt(hashes - 1)))) end = hashes;
  return { level: level as BlockHeading['level'], text: text.slice(at, end).trim(), line };
}

function runLength(text: string, start: number, code: number): number {
  let at = start;
  while (at < text.length && text.charCodeAt(at) === code) at += 1;
  return at - start;
}

function openingFence(text: string, start: number, code: number): number | undefined {
  const length = runLength(text, start, code);
  if (length < 3) return undefined;
  // A backtick fence's info string cannot hold a backtick (it would be an inline code span).
  if (code === BACKTICK && text.includes('`', start + length)) return undefined;
  return length;
}

function closesFence(cursor: Cursor, marker: number, length: number): boolean {
  if (cursor.indent(4) > 3) return false;
  const start = cursor.nonBlank();
  const run = runLength(cursor.text, start, marker);
  return run >= length && restIsBlank(cursor.text, start + run);
}

function isSetextUnderline(text: string, start: number, code: number): boolean {
  return restIsBlank(text, start + runLength(text, start, code));
}

/**
 * Where a thematic break of `code` was last refused in this line. A line of nested list markers
 * (`- - - … x`) asks again after each one; every later ask before that point fails there too.
 */
interface BreakMemo {
  code: number;
  failsAt: number;
}

function isThematicBreak(text: string, start: number, code: number, memo: BreakMemo): boolean {
  if (memo.code === code && start < memo.failsAt) return false;
  let count = 0;
  for (let at = start; at < text.length; at += 1) {
    const here = text.charCodeAt(at);
    if (here === code) count += 1;
    else if (!isBlank(here)) {
      memo.code = code;
      memo.failsAt = at;
      return false;
    }
  }
  return count >= 3;
}

function listItem(cursor: Cursor, start: number, interrupting: boolean): { marker: number } | undefined {
  const text = cursor.text;
  const code = text.charCodeAt(start);
  let marker: number;
  let ordinal: number | undefined;
  if (code === DASH || code === PLUS || code === STAR) marker = 1;
  else {
    let at = start;
    while (at < text.length && at - start < 10 && isDigit(text.charCodeAt(at))) at += 1;
    const digits = at - start;
    if (digits === 0 || digits > 9) return undefined;
    const delimiter = text.charCodeAt(at);
    if (delimiter !== 0x2e && delimiter !== 0x29) return undefined;
    ordinal = Number(text.slice(start, at));
    marker = digits + 1;
  }
  const after = start + marker;
  if (after < text.length && !isBlank(text.charCodeAt(after))) return undefined;
  // A list item interrupts a paragraph only if it has content and, when ordered, starts at 1.
  if (interrupting && (restIsBlank(text, after) || (ordinal !== undefined && ordinal !== 1))) return undefined;
  return { marker };
}

const isDigit = (code: number): boolean => code >= 0x30 && code <= 0x39;

const RAW_TAGS = /^<(?:pre|script|style|textarea)(?:[\s>]|$)/i;
const RAW_END = /<\/(?:pre|script|style|textarea)>/i;
const BLOCK_TAG = /^<\/?([A-Za-z][A-Za-z0-9]{0,15})(?:[\s>]|\/>|$)/;
const BLOCK_TAGS = new Set(
  (
    'address article aside base basefont blockquote body caption center col colgroup dd details dialog dir div dl dt fieldset figcaption ' +
    'figure footer form frame frameset h1 h2 h3 h4 h5 h6 head header hr html iframe legend li link main menu menuitem nav noframes ol ' +
    'optgroup option p param search section summary table tbody td tfoot th thead title tr track ul'
  ).split(' '),
);

/**
 * One whole open or closing tag (CommonMark's kind 7), alone on its line. No two of its parts can
 * match the same text, so it runs in linear time; it is tried on at most TAG_LINE_MAX characters.
 */
const WHOLE_TAG =
  /^(?:<[A-Za-z][A-Za-z0-9-]*(?:[ \t]+[A-Za-z_:][A-Za-z0-9_.:-]*(?:[ \t]*=[ \t]*(?:[^ \t"'=<>`]+|'[^']*'|"[^"]*"))?)*[ \t]*\/?>|<\/[A-Za-z][A-Za-z0-9-]*[ \t]*>)[ \t]*$/;
const TAG_LINE_MAX = 4096;

/** The kind of HTML block `text` starts at `start`, if any; only kind 7 cannot interrupt a paragraph. */
function htmlStart(text: string, start: number, interrupting: boolean): HtmlEnd | undefined {
  const head = text.slice(start, start + 32);
  if (head.startsWith('<!--')) return 'comment';
  if (RAW_TAGS.test(head)) return 'raw';
  const tag = BLOCK_TAG.exec(head)?.[1];
  if (tag !== undefined && BLOCK_TAGS.has(tag.toLowerCase())) return 'blank';
  if (!interrupting && text.length - start <= TAG_LINE_MAX && WHOLE_TAG.test(text.slice(start))) return 'blank';
  return undefined;
}

function endsHtml(text: string, end: HtmlEnd): boolean {
  if (end === 'comment') return text.includes('-->');
  if (end === 'raw') return RAW_END.test(text);
  return false;
}

/** Emits a closed paragraph: its leading link reference definitions, then its text. */
function finishParagraph(lines: readonly string[], line: number, visitor: BlockVisitor): void {
  const first = peelDefinitions(lines, line, visitor);
  if (first < lines.length) visitor.inline?.(lines.slice(first).join('\n'), line + first);
}

/** A paragraph closed by a Setext underline; 'paragraph' when definitions left no text for a heading. */
function finishSetext(lines: readonly string[], line: number, level: 1 | 2, visitor: BlockVisitor): 'heading' | 'paragraph' | 'break' {
  const first = peelDefinitions(lines, line, visitor);
  if (first >= lines.length) return level === 1 ? 'paragraph' : 'break';
  const text = lines
    .slice(first)
    .map((part) => part.trim())
    .join('\n');
  visitor.heading?.({ level, text, line: line + first });
  visitor.inline?.(text, line + first);
  return 'heading';
}

/** Reports the definitions a paragraph starts with; answers the index of its first other line. */
function peelDefinitions(lines: readonly string[], line: number, visitor: BlockVisitor): number {
  let at = 0;
  while (at < lines.length) {
    const current = lines[at] ?? '';
    if (current.charCodeAt(0) !== 0x5b) break;
    const single = parseDefinition(current);
    if (single !== undefined) {
      visitor.definition?.(single.label, single.destination, line + at);
      at += 1;
      continue;
    }
    // `[label]:` alone on its line, the destination on the next.
    const label = scanLabel(current, 0);
    const next = lines[at + 1];
    if (label === undefined || current.charCodeAt(label.end) !== 0x3a || !restIsBlank(current, label.end + 1) || next === undefined) break;
    const split = parseDefinition(`${current} ${next.trim()}`);
    if (split === undefined) break;
    visitor.definition?.(split.label, split.destination, line + at);
    at += 2;
  }
  return at;
}
