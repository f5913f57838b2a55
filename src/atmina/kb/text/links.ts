import { isPunctuation } from './chars.ts';
import { scanBlocks } from './blocks.ts';
import { LABEL_MAX, scanDestination, scanLabel, scanTitle } from './link-syntax.ts';
import { splitLines, withoutBom } from './clean.ts';
import { frontMatterOf } from './front-matter.ts';
import { resolveMarkdownTarget, resolveWikiTarget } from './paths.ts';
import type { LinkTarget } from './paths.ts';

/**
 * The links of a Knowledge-Base Markdown file, for the graph and `related`: inline links and
 * images `[text](target)`, reference links `[text][label]`, `[label][]` and `[label]` (when the
 * file defines the label), autolinks `<https://...>`, and wiki links `[[target]]`,
 * `[[target|label]]` and embeds `![[target]]`. Links in code spans, code blocks, HTML blocks and
 * comments and front matter are not links. Each target is resolved (paths.ts) and reported once,
 * in the order of its first occurrence, with the line and syntax of that occurrence; at most
 * LINKS_MAX. Bare URLs in text (GFM's extended autolinks) and links in raw HTML are not read.
 *
 * Pure, never throws, and linear: every scan that could be repeated over the same text (a
 * destination after each `](`, a closing backtick run, a comment's end) is either memoised or
 * paid from a budget proportional to the file's length.
 */

export const LINKS_MAX = 1000;

export type LinkSyntax = 'inline' | 'reference' | 'autolink' | 'wiki';

export type Link = LinkTarget & {
  /** 1-based line of the first occurrence. */
  readonly line: number;
  readonly syntax: LinkSyntax;
  /** The target as written in the first occurrence (a wiki link's inside); only with `keepWritten`. */
  readonly written?: string;
};

export interface Links {
  readonly links: readonly Link[];
  /** Whether the file has more distinct targets than were reported. */
  readonly truncated: boolean;
}

export interface LinkOptions {
  /** At most this many links (default LINKS_MAX). */
  readonly maxLinks?: number;
  /** Report each link's target as written too (`related` resolves wiki names from it). */
  readonly keepWritten?: boolean;
}

/** The links of `markdown`, the file at KB path `path`. */
export function linksOf(markdown: string, path: string, options: LinkOptions = {}): Links {
  const max = options.maxLinks ?? LINKS_MAX;
  const lines = splitLines(withoutBom(markdown));
  const from = frontMatterOf(lines).bodyLine - 1;

  // Definitions apply to the whole file, uses before them included: collected first.
  const definitions = new Map<string, string>();
  scanBlocks(lines, from, {
    definition(label, destination) {
      const key = normaliseLabel(label);
      if (!definitions.has(key)) definitions.set(key, destination);
    },
  });

  const found = new Map<string, Link>();
  let truncated = false;
  // Files repeat their links: each written target is resolved once (up to a bound of them).
  const resolved = new Map<string, LinkTarget | undefined>();
  const resolve = (written: string, wiki: boolean): LinkTarget | undefined => {
    const key = `${wiki ? 'w' : 'm'}${written}`;
    if (resolved.has(key)) return resolved.get(key);
    const target = wiki ? resolveWikiTarget(written, path) : resolveMarkdownTarget(written, path);
    if (resolved.size < RESOLVED_MEMO_MAX) resolved.set(key, target);
    return target;
  };
  const report = (written: string, wiki: boolean, line: number, syntax: LinkSyntax): void => {
    const target = resolve(written, wiki);
    if (target === undefined) return;
    const plain = target.kind === 'file' ? `f:${target.path}` : target.kind === 'external' ? `e:${target.url}` : `u:${target.target}`;
    // Kept as written, a wiki link and a Markdown link to one target are two references (of two types).
    const key = options.keepWritten === true ? `${wiki ? 'w' : 'm'}${plain}` : plain;
    if (found.has(key)) return;
    if (found.size >= max) {
      truncated = true;
      return;
    }
    found.set(key, options.keepWritten === true ? { ...target, line, syntax, written } : { ...target, line, syntax });
  };
  // Attempts at destinations, titles and labels after `]` share one budget of characters.
  const budget = { left: 4 * markdown.length + 100_000 };
  scanBlocks(lines, from, {
    inline(text, line) {
      scanInline(text, line, definitions, budget, report, () => truncated);
    },
    done: () => truncated,
  });
  return { links: [...found.values()], truncated };
}

/** CommonMark's label matching: case-insensitive, inner whitespace runs as one space. */
const normaliseLabel = (label: string): string => label.replace(/\s+/g, ' ').trim().toLowerCase();

/** Reports a target as written (a wiki link's inside, or a Markdown destination). */
type Report = (written: string, wiki: boolean, line: number, syntax: LinkSyntax) => void;

const RESOLVED_MEMO_MAX = 10_000;

interface Opener {
  readonly at: number;
  readonly image: boolean;
}

/** `[` openers beyond this many unclosed are read as text. */
const MAX_OPENERS = 10_000;
const WIKI_MAX = 1000;
const AUTOLINK_MAX = 2048;
const SPECIAL = /[\\`<![\]]/g;

function scanInline(
  text: string,
  firstLine: number,
  definitions: ReadonlyMap<string, string>,
  budget: { left: number },
  report: Report,
  done: () => boolean,
): void {
  const lineAt = lineCounter(text, firstLine);
  const backticks = new BacktickRuns(text);
  const openers: Opener[] = [];
  // Links cannot contain links: once one closes, the `[` openers before it are text.
  let inactiveBefore = -1;
  let commentsClose = true;
  const special = new RegExp(SPECIAL.source, 'g');
  let at = 0;
  while (at < text.length && !done()) {
    special.lastIndex = at;
    const match = special.exec(text);
    if (match === null) break;
    at = match.index;
    const code = text.charCodeAt(at);
    if (code === 0x5c) {
      at += at + 1 < text.length && isPunctuation(text.charCodeAt(at + 1)) ? 2 : 1;
    } else if (code === 0x60) {
      const length = backticks.runAt(at);
      const close = backticks.closing(at + length, length);
      at = close === undefined ? at + length : close + length;
    } else if (code === 0x3c) {
      if (text.startsWith('<!--', at)) {
        const end = commentsClose ? text.indexOf('-->', at + 4) : -1;
        if (end < 0) commentsClose = false;
        at = end < 0 ? at + 4 : end + 3;
        continue;
      }
      const autolink = scanAutolink(text, at);
      if (autolink !== undefined) {
        report(autolink.url, false, lineAt(at), 'autolink');
        at = autolink.end;
      } else at += 1;
    } else if (code === 0x21 || code === 0x5b) {
      const image = code === 0x21;
      const bracket = image ? at + 1 : at;
      if (text.charCodeAt(bracket) !== 0x5b) {
        at += 1;
        continue;
      }
      if (text.charCodeAt(bracket + 1) === 0x5b) {
        const wiki = scanWiki(text, bracket + 2);
        if (wiki !== undefined) {
          report(wiki.inner, true, lineAt(at), 'wiki');
          at = wiki.end;
          continue;
        }
      }
      if (openers.length < MAX_OPENERS) openers.push({ at: bracket, image });
      at = bracket + 1;
    } else {
      // `]`: does it close a link with the nearest opener?
      const opener = openers.pop();
      at += 1;
      if (opener === undefined || (!opener.image && opener.at < inactiveBefore)) continue;
      const link = closeLink(text, opener, at, definitions, budget);
      if (link === undefined) continue;
      if (link.target !== undefined) report(link.target, false, lineAt(opener.at), link.syntax);
      if (!opener.image) inactiveBefore = opener.at;
      at = link.end;
    }
  }
}

/**
 * After the `]` at `after - 1`: an inline destination `(...)`, a full `[label]` or collapsed
 * `[]` reference, or a shortcut reference to a defined label. `target` is undefined for an
 * inline link with an empty destination (a link to nothing).
 */
function closeLink(
  text: string,
  opener: Opener,
  after: number,
  definitions: ReadonlyMap<string, string>,
  budget: { left: number },
): { target: string | undefined; end: number; syntax: LinkSyntax } | undefined {
  if (budget.left <= 0) return undefined;
  const next = text.charCodeAt(after);
  if (next === 0x28) {
    const inline = scanInlineTail(text, after + 1, budget);
    if (inline !== undefined) return { target: inline.destination === '' ? undefined : inline.destination, end: inline.end, syntax: 'inline' };
  }
  const ownText = after - 1 - (opener.at + 1) <= LABEL_MAX ? text.slice(opener.at + 1, after - 1) : undefined;
  if (next === 0x5b) {
    const label = scanLabel(text, after);
    budget.left -= label === undefined ? Math.min(LABEL_MAX, text.length - after) : label.end - after;
    if (label !== undefined) {
      const destination = definitions.get(normaliseLabel(label.value));
      return destination === undefined ? undefined : { target: destination, end: label.end, syntax: 'reference' };
    }
    if (text.charCodeAt(after + 1) === 0x5d && ownText !== undefined) {
      const destination = definitions.get(normaliseLabel(ownText));
      return destination === undefined ? undefined : { target: destination, end: after + 2, syntax: 'reference' };
    }
  }
  if (ownText === undefined || ownText.trim() === '') return undefined;
  budget.left -= ownText.length;
  const destination = definitions.get(normaliseLabel(ownText));
  return destination === undefined ? undefined : { target: destination, end: after, syntax: 'reference' };
}

/** `destination "title")` after `(`, with optional whitespace (one line break at most) around. */
function scanInlineTail(text: string, start: number, budget: { left: number }): { destination: string; end: number } | undefined {
  let at = skipSpace(text, start);
  let destination = '';
  if (text.charCodeAt(at) !== 0x29) {
    const scanned = scanDestination(text, at, true);
    budget.left -= (scanned?.end ?? nextSpace(text, at)) - start + 1;
    if (scanned === undefined) return undefined;
    destination = scanned.value;
    const afterDestination = scanned.end;
    at = skipSpace(text, afterDestination);
    if (at > afterDestination && text.charCodeAt(at) !== 0x29) {
      const title = scanTitle(text, at);
      budget.left -= (title ?? text.length) - at;
      if (title === undefined) return undefined;
      at = skipSpace(text, title);
    }
  }
  return text.charCodeAt(at) === 0x29 ? { destination, end: at + 1 } : undefined;
}

function skipSpace(text: string, start: number): number {
  let at = start;
  let breaks = 0;
  for (; at < text.length; at += 1) {
    const code = text.charCodeAt(at);
    if (code === 0x0a) {
      breaks += 1;
      if (breaks > 1) break;
    } else if (code !== 0x20 && code !== 0x09) break;
  }
  return at;
}

function nextSpace(text: string, start: number): number {
  let at = start;
  while (at < text.length && text.charCodeAt(at) > 0x20) at += 1;
  return at;
}

/**
 * `<scheme:...>` at `start`: a scheme of 2 to 32 characters and no spaces, controls or `<>` up to
 * the `>`. An email autolink (`<a@b.example>`) is a mailto: link, which is left out, so it is
 * not looked for. Each scan ends at the next `<`, so scans never overlap.
 */
function scanAutolink(text: string, start: number): { url: string; end: number } | undefined {
  const limit = Math.min(text.length, start + 1 + AUTOLINK_MAX);
  let at = start + 1;
  const letter = text.charCodeAt(at);
  if (!((letter >= 0x41 && letter <= 0x5a) || (letter >= 0x61 && letter <= 0x7a))) return undefined;
  for (; at < limit; at += 1) {
    const code = text.charCodeAt(at);
    if (code === 0x3e) {
      const url = text.slice(start + 1, at);
      return /^[A-Za-z][A-Za-z0-9+.-]{1,31}:/.test(url) ? { url, end: at + 1 } : undefined;
    }
    if (code <= 0x20 || code === 0x3c || code === 0x7f) return undefined;
  }
  return undefined;
}

/** The inside of `[[...]]` from `start` (after `[[`): one line, no brackets, at most WIKI_MAX characters. */
function scanWiki(text: string, start: number): { inner: string; end: number } | undefined {
  const limit = Math.min(text.length, start + WIKI_MAX + 1);
  for (let at = start; at < limit; at += 1) {
    const code = text.charCodeAt(at);
    if (code === 0x5d) return text.charCodeAt(at + 1) === 0x5d ? { inner: text.slice(start, at), end: at + 2 } : undefined;
    if (code === 0x5b || code === 0x0a) return undefined;
  }
  return undefined;
}

/** The 1-based line of an offset in a paragraph that starts on `firstLine`. */
function lineCounter(text: string, firstLine: number): (offset: number) => number {
  let breaks: number[] | undefined;
  return (offset) => {
    if (breaks === undefined) {
      breaks = [];
      for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) breaks.push(at);
    }
    let low = 0;
    let high = breaks.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if ((breaks[middle] ?? 0) < offset) low = middle + 1;
      else high = middle;
    }
    return firstLine + low;
  };
}

/**
 * The backtick runs of a paragraph, found once: a code span opened by a run of n backticks closes
 * at the next run of exactly n. Openers are met left to right, so one cursor per length finds
 * every closing run in a single pass over the runs of that length.
 */
class BacktickRuns {
  private readonly text: string;
  private runs: Map<number, number[]> | undefined;
  private readonly cursors = new Map<number, number>();

  constructor(text: string) {
    this.text = text;
  }

  runAt(start: number): number {
    let at = start;
    while (at < this.text.length && this.text.charCodeAt(at) === 0x60) at += 1;
    return at - start;
  }

  /** The start of the first run of exactly `length` backticks at or after `from`. */
  closing(from: number, length: number): number | undefined {
    const starts = this.byLength().get(length);
    if (starts === undefined) return undefined;
    let index = this.cursors.get(length) ?? 0;
    while (index < starts.length && (starts[index] ?? 0) < from) index += 1;
    this.cursors.set(length, index);
    return starts[index];
  }

  private byLength(): Map<number, number[]> {
    if (this.runs !== undefined) return this.runs;
    const runs = new Map<number, number[]>();
    for (let at = this.text.indexOf('`'); at >= 0;) {
      const length = this.runAt(at);
      const list = runs.get(length);
      if (list === undefined) runs.set(length, [at]);
      else list.push(at);
      at = this.text.indexOf('`', at + length);
    }
    this.runs = runs;
    return runs;
  }
}
