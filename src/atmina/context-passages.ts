import { scanBlocks } from './kb/text/blocks.ts';
import { clip, displayText, splitLines } from './kb/text/clean.ts';
import { frontMatterOf } from './kb/text/front-matter.ts';
import { HEADING_MAX_CHARS } from './kb/text/outline.ts';

/*
 * get_context's passages of one text (context-package.ts): a file's head cut by headings and
 * paragraphs into passages it can cite by line, each with its heading path.
 */

/** A passage grows by whole paragraphs until it holds this many characters… */
export const PASSAGE_MIN_CHARS = 200;
/** …and never beyond this many (or the budget, when smaller): a longer paragraph is cut on a sentence or word boundary. */
export const PASSAGE_MAX_CHARS = 1_500;
/** A passage's heading path ("Guide > Setup > Linux") is cut to this many characters. */
export const HEADING_PATH_MAX_CHARS = 600;

/** A passage of a text: UTF-16 offsets [start, end) into it, its 1-based lines and its heading path. */
export interface Passage {
  readonly start: number;
  readonly end: number;
  readonly startLine: number;
  readonly endLine: number;
  readonly heading: string;
}

const BLANK = /^[ \t]*$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const ATX = /^ {0,3}#{1,6}(?:[ \t]|$)/;
// A sentence ends at . ! ? (and their closing quotes or brackets) before whitespace.
const SENTENCE_END = /[.!?…。！？]["'”’)\]]*(?=\s)/g;

/** Code points in a string (what the budget counts). */
export function charCount(text: string): number {
  let count = 0;
  for (let at = 0; at < text.length; at++) {
    const unit = text.charCodeAt(at);
    if (unit >= 0xd800 && unit <= 0xdbff && at + 1 < text.length) {
      const next = text.charCodeAt(at + 1);
      if (next >= 0xdc00 && next <= 0xdfff) at++;
    }
    count++;
  }
  return count;
}

/** The start offset of each line of `text` (CRLF, CR and LF end a line). */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (const match of text.matchAll(/\r\n|\r|\n/g)) starts.push(match.index + match[0].length);
  return starts;
}

/** The 1-based line holding offset `at`. */
function lineAt(starts: readonly number[], at: number): number {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if ((starts[mid] ?? 0) <= at) low = mid;
    else high = mid - 1;
  }
  return low + 1;
}

/** Where to end a piece of `text` that starts at `from` and may reach `limit`: a sentence end, else whitespace, else the limit. */
function cutPoint(text: string, from: number, limit: number): number {
  const window = text.slice(from, limit);
  let sentence = -1;
  for (const match of window.matchAll(SENTENCE_END)) if (match.index + match[0].length > window.length / 3) sentence = match.index + match[0].length;
  if (sentence > 0) return from + sentence;
  const space = window.search(/\s\S*$/);
  if (space > 0) return from + space;
  // Never between the halves of a surrogate pair.
  const unit = text.charCodeAt(limit - 1);
  return unit >= 0xd800 && unit <= 0xdbff && limit - 1 > from ? limit - 1 : limit;
}

interface Block {
  start: number;
  end: number;
  heading: string;
  isHeading: boolean;
}

/**
 * The passages of `text`, in order, covering all of it but blank lines (and, for Markdown, the
 * front matter): a heading starts a passage (headings in a row share one); paragraphs join the
 * passage before them while it holds fewer than PASSAGE_MIN_CHARS and the two fit `maxChars`; a
 * paragraph longer than `maxChars` is cut on sentence ends, else on whitespace, its first piece
 * kept with the heading before it. Blank lines inside fenced code do not end a paragraph. Linear
 * in the text's length.
 */
export function splitPassages(text: string, options: { markdown: boolean; maxChars: number }): Passage[] {
  const max = Math.max(1, options.maxChars);
  const starts = lineStarts(text);
  const lines = splitLines(text);
  const headings = new Map<number, { level: number; text: string }>();
  let bodyLine = 1;
  if (options.markdown) {
    bodyLine = frontMatterOf(lines).bodyLine;
    scanBlocks(lines, bodyLine - 1, { heading: (h) => headings.set(h.line, { level: h.level, text: displayText(h.text, HEADING_MAX_CHARS) }) });
  }
  const lineEnd = (index: number): number => (index + 1 < starts.length ? (starts[index + 1] ?? text.length) : text.length);
  const trimmedEnd = (from: number, to: number): number => {
    let end = to;
    while (end > from && /\s/.test(text[end - 1] ?? '')) end--;
    return end;
  };

  // Blocks: runs of non-blank lines, a heading alone, fenced code whole.
  const blocks: Block[] = [];
  const path: { level: number; text: string }[] = [];
  let current: Block | undefined;
  let fence: string | undefined;
  const close = (): void => {
    if (current !== undefined) {
      current.end = trimmedEnd(current.start, current.end);
      if (current.end > current.start) blocks.push(current);
    }
    current = undefined;
  };
  const headingPath = (): string =>
    clip(
      path
        .map((h) => h.text)
        .filter((t) => t !== '')
        .join(' > '),
      HEADING_PATH_MAX_CHARS,
    );
  for (let index = bodyLine - 1; index < lines.length; index++) {
    const line = lines[index] ?? '';
    const heading = fence === undefined ? headings.get(index + 1) : undefined;
    if (heading !== undefined) {
      close();
      while (path.length > 0 && (path[path.length - 1]?.level ?? 0) >= heading.level) path.pop();
      path.push(heading);
      current = { start: starts[index] ?? 0, end: lineEnd(index), heading: headingPath(), isHeading: true };
      // An ATX heading is one line; a Setext heading runs to its underline, which follows.
      if (ATX.test(line)) close();
      continue;
    }
    const marker = FENCE.exec(line)?.[1];
    if (fence !== undefined) {
      if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
    } else if (marker !== undefined) fence = marker;
    if (BLANK.test(line) && fence === undefined) {
      close();
      continue;
    }
    if (current === undefined) current = { start: starts[index] ?? 0, end: lineEnd(index), heading: headingPath(), isHeading: false };
    else current.end = lineEnd(index);
  }
  close();

  // Passages: a heading opens one (unless the open one holds only headings); small paragraphs
  // join the one before; a long paragraph is cut, its first piece kept with a heading before it.
  const passages: Passage[] = [];
  let open: { start: number; end: number; heading: string; onlyHeadings: boolean } | undefined;
  const flush = (): void => {
    if (open !== undefined)
      passages.push({ start: open.start, end: open.end, startLine: lineAt(starts, open.start), endLine: lineAt(starts, open.end - 1), heading: open.heading });
    open = undefined;
  };
  const skipSpace = (from: number, to: number): number => {
    let at = from;
    while (at < to && /\s/.test(text[at] ?? '')) at++;
    return at;
  };
  for (const block of blocks) {
    let from = block.start;
    while (from < block.end) {
      const joinable =
        open !== undefined && (block.isHeading && from === block.start ? open.onlyHeadings : open.onlyHeadings || open.end - open.start < PASSAGE_MIN_CHARS);
      const room = open !== undefined && joinable ? max - (from - open.start) : 0;
      if (open !== undefined && joinable && block.end - from <= room) {
        open.end = block.end;
        if (block.isHeading) open.heading = block.heading;
        else open.onlyHeadings = false;
        break;
      }
      if (open !== undefined && open.onlyHeadings && !block.isHeading && room >= PASSAGE_MIN_CHARS) {
        const cut = cutPoint(text, from, from + room);
        open.end = trimmedEnd(from, cut);
        open.onlyHeadings = false;
        flush();
        from = skipSpace(cut, block.end);
        continue;
      }
      flush();
      const cut = block.end - from <= max ? block.end : cutPoint(text, from, from + max);
      open = { start: from, end: trimmedEnd(from, cut), heading: block.heading, onlyHeadings: block.isHeading && from === block.start };
      from = skipSpace(cut, block.end);
    }
  }
  flush();
  return passages;
}
