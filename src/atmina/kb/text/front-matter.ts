import { isMap, isScalar, parseDocument } from 'yaml';
import { findUnstorable } from '../../../kernel/text.ts';
import { CLOSING, OPENING } from '../../../search-text/front-matter.ts';
import { displayText, withoutBom } from './clean.ts';

/**
 * YAML front matter of a Knowledge-Base Markdown file: a `---` line as the file's first line up
 * to the next `---` or `...` line (trailing spaces and tabs allowed on both, a leading byte order
 * mark ignored). The outline reports its keys and the search projection its tags, title and
 * description. Pure, and never throws: whatever the block holds, the answer is a status.
 *
 *  - `absent`: the file does not start with `---`.
 *  - `unterminated`: it does, but no closing line follows; the first line is then an ordinary
 *    Markdown line (a thematic break) and the whole file is body.
 *  - `too_large`: the block is longer than FRONT_MATTER_MAX_CHARS and is not parsed.
 *  - `malformed`: the block is not YAML, has an error (a duplicate key among them), is not a
 *    mapping (a scalar or a list), or holds text the store cannot keep (YAML escapes can spell
 *    NUL or a lone surrogate).
 *  - `parsed`: a mapping (an empty block is an empty one).
 *
 * Only `parsed` has data, keys, tags, title and description; the others have none. In every case
 * but `absent` and `unterminated`, the block's lines are not body.
 */

/** Front matter beyond this many characters is not parsed: a file's metadata is short. */
export const FRONT_MATTER_MAX_CHARS = 64 * 1024;
/** At most this many keys are reported, in document order. */
export const FRONT_MATTER_MAX_KEYS = 100;
export const KEY_MAX_CHARS = 100;
export const TAGS_MAX = 50;
export const TAG_MAX_CHARS = 64;
export const TITLE_MAX_CHARS = 200;
export const DESCRIPTION_MAX_CHARS = 500;

export const FRONT_MATTER_STATUSES = ['absent', 'unterminated', 'too_large', 'malformed', 'parsed'] as const;
export type FrontMatterStatus = (typeof FRONT_MATTER_STATUSES)[number];

export interface FrontMatter {
  readonly status: FrontMatterStatus;
  /** The parsed mapping, as YAML 1.2 gives it; empty unless `parsed`. */
  readonly data: Readonly<Record<string, unknown>>;
  /** Its top-level keys in document order, made displayable and bounded. */
  readonly keys: readonly string[];
  /** From `tags:`, a list or a comma-separated string: see normaliseTags. */
  readonly tags: readonly string[];
  /** From `title:` when it is a string with something to show, made displayable and bounded. */
  readonly title?: string;
  readonly description?: string;
  /** The 1-based line of the closing `---`/`...`, when the block is closed. */
  readonly endLine?: number;
  /** The 1-based line the Markdown body starts on. */
  readonly bodyLine: number;
}

/** The front matter of `markdown`, read no further than its closing line. */
export function parseFrontMatter(markdown: string): FrontMatter {
  const text = withoutBom(markdown);
  if (!text.startsWith('---')) return empty('absent', 1);
  const head: string[] = [];
  const line = /([^\r\n]*)(?:\r\n|\r|\n|$)/y;
  while (line.lastIndex < text.length || head.length === 0) {
    const at = line.lastIndex;
    const match = line.exec(text);
    if (match === null) break;
    head.push(match[1] ?? '');
    if (head.length > 1 && CLOSING.test(match[1] ?? '')) break;
    if (line.lastIndex === at) break;
  }
  return frontMatterOf(head);
}

/** The front matter of a file already split into lines (splitLines, without the byte order mark). */
export function frontMatterOf(lines: readonly string[]): FrontMatter {
  const first = lines[0];
  if (first === undefined || !OPENING.test(first)) return empty('absent', 1);
  let size = 0;
  for (let at = 1; at < lines.length; at += 1) {
    const line = lines[at] ?? '';
    if (CLOSING.test(line)) {
      const endLine = at + 1;
      if (size > FRONT_MATTER_MAX_CHARS) return { ...empty('too_large', endLine + 1), endLine };
      return { ...fromSource(lines.slice(1, at).join('\n'), endLine + 1), endLine };
    }
    size += line.length + 1;
  }
  return empty('unterminated', 1);
}

function empty(status: FrontMatterStatus, bodyLine: number): FrontMatter {
  return { status, data: {}, keys: [], tags: [], bodyLine };
}

function fromSource(source: string, bodyLine: number): FrontMatter {
  const data = parseMapping(source);
  if (data === undefined) return empty('malformed', bodyLine);
  const keys: string[] = [];
  for (const key of Object.keys(data)) {
    if (keys.length === FRONT_MATTER_MAX_KEYS) break;
    keys.push(displayText(key, KEY_MAX_CHARS));
  }
  const title = textField(data.title, TITLE_MAX_CHARS);
  const description = textField(data.description, DESCRIPTION_MAX_CHARS);
  return {
    status: 'parsed',
    data,
    keys,
    tags: normaliseTags(data.tags),
    ...(title === undefined ? {} : { title }),
    ...(description === undefined ? {} : { description }),
    bodyLine,
  };
}

/** The block as a plain object, or undefined when it is not a storable YAML mapping. */
function parseMapping(source: string): Record<string, unknown> | undefined {
  try {
    // logLevel error: the parser would otherwise print warnings (a collection used as a key).
    const doc = parseDocument(source, { prettyErrors: false, uniqueKeys: true, version: '1.2', logLevel: 'error' });
    if (doc.errors.length > 0) return undefined;
    const contents = doc.contents;
    if (contents === null || (isScalar(contents) && contents.value === null)) return {};
    if (!isMap(contents)) return undefined;
    const value: unknown = doc.toJS({ maxAliasCount: 100 });
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    if (findUnstorable(value) !== undefined) return undefined;
    return value as Record<string, unknown>;
  } catch {
    // Alias bombs, nesting deep enough to exhaust the parser's stack: not front matter we can use.
    return undefined;
  }
}

function textField(value: unknown, max: number): string | undefined {
  if (typeof value !== 'string') return undefined;
  const text = displayText(value, max);
  return text === '' ? undefined : text;
}

/**
 * Tags as the search projection keeps them: from a list (string items only; numbers, nested
 * lists and maps are skipped) or from one string split at commas. Each is NFC-normalised,
 * trimmed, its inner whitespace runs made one space; empty ones, ones longer than TAG_MAX_CHARS
 * (not cut: a cut tag would be another tag) and ones holding control or bidirectional formatting
 * characters are dropped. Duplicates, compared case-insensitively, keep their first spelling.
 * At most TAGS_MAX, in document order.
 */
export function normaliseTags(value: unknown): string[] {
  const candidates: unknown[] = typeof value === 'string' ? value.split(',') : Array.isArray(value) ? value : [];
  const tags: string[] = [];
  const seen = new Set<string>();
  for (const candidate of candidates) {
    if (tags.length === TAGS_MAX) break;
    if (typeof candidate !== 'string') continue;
    const tag = normaliseTag(candidate);
    if (tag === undefined) continue;
    const key = tag.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    tags.push(tag);
  }
  return tags;
}

// eslint-disable-next-line no-control-regex
const UNSHOWABLE = /[\u0000-\u0008\u000e-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

function normaliseTag(raw: string): string | undefined {
  // Long candidates are dropped before any work on them: one tag of a megabyte costs nothing.
  if (raw.length > TAG_MAX_CHARS * 4) return undefined;
  if (!raw.isWellFormed() || UNSHOWABLE.test(raw)) return undefined;
  const tag = raw.normalize('NFC').replace(/\s+/g, ' ').trim();
  if (tag === '' || [...tag].length > TAG_MAX_CHARS) return undefined;
  return tag;
}
