import { displayText } from './clean.ts';
import { FRONT_MATTER_MAX_KEYS, KEY_MAX_CHARS, parseFrontMatter } from './front-matter.ts';
import { LINKS_MAX, linksOf } from './links.ts';
import type { LinkTarget } from './paths.ts';
import { hasExtension, resolveMarkdownTarget, resolveWikiTarget } from './paths.ts';

/**
 * The references of a Knowledge-Base Markdown file, as `related` shows them: its Markdown links
 * (`markdown`), its wiki links (`wiki`) and the KB paths named by its front matter
 * (`front_matter`, with the key). A reference names candidate paths, tried in order when it is
 * resolved (at query time, against the KB's live files), and for a bare wiki name a file name
 * that resolves it when exactly one file of the KB has it. Pure; never throws.
 * docs/atmina.md ("related") has the rules.
 */

export const REFERENCE_TYPES = ['markdown', 'wiki', 'front_matter'] as const;
export type ReferenceType = (typeof REFERENCE_TYPES)[number];

/** At most this many references per file (Markdown and wiki links share the link scanner's bound). */
export const REFERENCES_MAX = LINKS_MAX;
/** A front-matter value longer than this many bytes of UTF-8 is no path (paths are at most 1024 bytes). */
export const REFERENCE_TARGET_MAX_BYTES = 1024;
/** Written targets shown for an unresolvable reference are cut to this many characters. */
const SHOWN_TARGET_MAX_CHARS = 300;
/** Front-matter keys that hold no references: the page's own title, description and tags. */
const NON_REFERENCE_KEYS = new Set(['title', 'description', 'tags']);
/** A front-matter list is read up to this many items. */
const FRONT_MATTER_VALUES_MAX = 100;

export interface Reference {
  readonly type: ReferenceType;
  /** The front-matter key, for `front_matter`. */
  readonly key?: string;
  /** The path it points at (its first candidate), or the target as written when it can name no file. */
  readonly target: string;
  /** Candidate KB paths, first live one wins; empty when the target can name no file (outside the KB, a folder). */
  readonly paths: readonly string[];
  /** A bare wiki name's file name: resolves the reference when no candidate path does and exactly one file has it. */
  readonly name?: string;
}

export interface References {
  readonly references: readonly Reference[];
  /** Whether the file has more references than REFERENCES_MAX. */
  readonly truncated: boolean;
}

/** Whether a file's references are read: Markdown text files. */
export function hasReferences(file: { readonly kind: string; readonly path: string; readonly mediaType: string }): boolean {
  return file.kind === 'text' && (file.mediaType === 'text/markdown' || /\.(?:md|markdown)$/i.test(file.path));
}

/** The references of `markdown`, the file at KB path `path`. */
export function referencesOf(markdown: string, path: string): References {
  const links = linksOf(markdown, path, { keepWritten: true });
  const found = new Map<string, Reference>();
  let truncated = links.truncated;
  const add = (reference: Reference | undefined): void => {
    if (reference === undefined) return;
    const id = `${reference.type}\u0000${reference.key ?? ''}\u0000${reference.target}`;
    if (found.has(id)) return;
    if (found.size >= REFERENCES_MAX) {
      truncated = true;
      return;
    }
    found.set(id, reference);
  };

  for (const link of links.links) {
    if (link.syntax === 'wiki') add(wikiReference(link.written ?? '', path, 'wiki'));
    else add(fromTarget(link, 'markdown'));
  }

  const front = parseFrontMatter(markdown);
  for (const [rawKey, value] of Object.entries(front.data).slice(0, FRONT_MATTER_MAX_KEYS)) {
    if (NON_REFERENCE_KEYS.has(rawKey.toLowerCase())) continue;
    const key = displayText(rawKey, KEY_MAX_CHARS);
    const values = typeof value === 'string' ? [value] : Array.isArray(value) ? value.slice(0, FRONT_MATTER_VALUES_MAX) : [];
    for (const item of values) {
      if (typeof item !== 'string') continue;
      add(frontMatterReference(item, path, key));
    }
  }
  return { references: [...found.values()], truncated };
}

function fromTarget(target: LinkTarget, type: ReferenceType, key?: string): Reference | undefined {
  const keyed = key === undefined ? {} : { key };
  if (target.kind === 'external') return undefined;
  if (target.kind === 'unresolved') return { type, ...keyed, target: target.target, paths: [] };
  return { type, ...keyed, target: target.path, paths: [target.path] };
}

const WIKI_VALUE = /^\[\[([^[\]\n]+)\]\]$/;

/**
 * `[[inner]]` from the file at `from`: the path as written (relative to the file's folder, `/`
 * for the KB's root), then that path + `.md` when it has no extension, then, for a bare name
 * without `/`, the unique file of the KB with that file name (+ `.md` likewise).
 */
export function wikiReference(inner: string, from: string, type: ReferenceType, key?: string): Reference | undefined {
  const resolved = resolveWikiTarget(inner, from);
  if (resolved === undefined) return undefined;
  const keyed = key === undefined ? {} : { key };
  if (resolved.kind !== 'file') return fromTarget(resolved, type, key);
  const written = inner.slice(0, firstOf(inner, '|', '#')).trim();
  const appended = !written.endsWith('/') && !hasExtension(written);
  const exact = appended ? resolved.path.slice(0, -'.md'.length) : resolved.path;
  const paths = appended ? [exact, resolved.path] : [resolved.path];
  const bare = !written.includes('/');
  const name = resolved.path.slice(resolved.path.lastIndexOf('/') + 1);
  return { type, ...keyed, target: resolved.path, paths, ...(bare ? { name } : {}) };
}

/**
 * A front-matter value that names a KB path: a wiki link (`"[[Setup]]"`), or a path that ends
 * in a file extension (`../decisions/search.md`), resolved like a Markdown link. Other strings
 * (prose, dates, URLs) are no references.
 */
function frontMatterReference(value: string, from: string, key: string): Reference | undefined {
  const text = value.trim();
  if (text === '' || Buffer.byteLength(text, 'utf8') > REFERENCE_TARGET_MAX_BYTES || /[\r\n]/.test(text)) return undefined;
  const wiki = WIKI_VALUE.exec(text);
  if (wiki !== null) return wikiReference(wiki[1] ?? '', from, 'front_matter', key);
  if (/^[A-Za-z][A-Za-z0-9+.-]{1,31}:/.test(text) || text.startsWith('//') || text.startsWith('#')) return undefined;
  const pathPart = text.slice(0, firstOf(text, '?', '#'));
  if (!/\.[A-Za-z][A-Za-z0-9]{0,7}$/.test(pathPart)) return undefined;
  const target = resolveMarkdownTarget(text, from);
  if (target === undefined) return undefined;
  if (target.kind === 'unresolved') return { type: 'front_matter', key, target: displayText(text, SHOWN_TARGET_MAX_CHARS), paths: [] };
  return fromTarget(target, 'front_matter', key);
}

function firstOf(text: string, a: string, b: string): number {
  const first = text.indexOf(a);
  const second = text.indexOf(b);
  if (first < 0) return second < 0 ? text.length : second;
  return second < 0 ? first : Math.min(first, second);
}
