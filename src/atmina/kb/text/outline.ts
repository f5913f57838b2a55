import { scanBlocks } from './blocks.ts';
import type { BlockHeading } from './blocks.ts';
import { displayText, splitLines, withoutBom } from './clean.ts';
import { frontMatterOf, TITLE_MAX_CHARS } from './front-matter.ts';
import type { FrontMatterStatus } from './front-matter.ts';

/**
 * The outline of a Knowledge-Base Markdown file, for `get_file_outline`: its headings (ATX and
 * Setext, wherever a CommonMark renderer would make them, block quotes and list items included,
 * never inside code, HTML blocks or front matter) and the keys of its front matter. Pure, linear
 * in the file's length, never throws; the output is bounded whatever the file holds.
 */

export const OUTLINE_MAX_HEADINGS = 1000;
export const HEADING_MAX_CHARS = 300;

export interface OutlineHeading {
  readonly level: 1 | 2 | 3 | 4 | 5 | 6;
  /** The heading's source text, as one displayable line of at most HEADING_MAX_CHARS. */
  readonly text: string;
  /** 1-based; a Setext heading's is the line its text starts on. */
  readonly line: number;
}

export interface OutlineFrontMatter {
  readonly status: FrontMatterStatus;
  /** Its top-level keys, in document order; empty unless the status is `parsed`. */
  readonly keys: readonly string[];
  /** The 1-based line of its closing `---`/`...`, when it is closed. */
  readonly endLine?: number;
}

export interface Outline {
  readonly frontMatter: OutlineFrontMatter;
  readonly headings: readonly OutlineHeading[];
  /** Whether the file has more headings than were reported. */
  readonly truncated: boolean;
}

export interface OutlineOptions {
  /** At most this many headings (default OUTLINE_MAX_HEADINGS). */
  readonly maxHeadings?: number;
}

export function outlineOf(markdown: string, options: OutlineOptions = {}): Outline {
  const max = options.maxHeadings ?? OUTLINE_MAX_HEADINGS;
  const lines = splitLines(withoutBom(markdown));
  const front = frontMatterOf(lines);
  const headings: OutlineHeading[] = [];
  let truncated = false;
  scanBlocks(lines, front.bodyLine - 1, {
    heading(heading) {
      if (headings.length < max) headings.push(outlineHeading(heading));
      else truncated = true;
    },
    // Once one heading beyond the bound is seen, nothing further changes the answer.
    done: () => truncated,
  });
  return {
    frontMatter: { status: front.status, keys: front.keys, ...(front.endLine === undefined ? {} : { endLine: front.endLine }) },
    headings,
    truncated,
  };
}

const outlineHeading = (heading: BlockHeading): OutlineHeading => ({
  level: heading.level,
  text: displayText(heading.text, HEADING_MAX_CHARS),
  line: heading.line,
});

export interface PageSummary {
  readonly title?: string;
  readonly description?: string;
}

/**
 * What a hub index or the navigation shows for a page: the front matter's title, else the text of
 * the file's first heading with text; the front matter's description. Reads no further than that heading.
 */
export function summarisePage(markdown: string): PageSummary {
  const lines = splitLines(withoutBom(markdown));
  const front = frontMatterOf(lines);
  let title = front.title;
  if (title === undefined) {
    scanBlocks(lines, front.bodyLine - 1, {
      heading(heading) {
        const text = displayText(heading.text, TITLE_MAX_CHARS);
        if (title === undefined && text !== '') title = text;
      },
      done: () => title !== undefined,
    });
  }
  return { ...(title === undefined ? {} : { title }), ...(front.description === undefined ? {} : { description: front.description }) };
}
