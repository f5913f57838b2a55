import { characterProblem, pathProblem } from '../paths.ts';
import { displayText } from './clean.ts';

/**
 * Where a link in a Knowledge-Base file points. Paths are POSIX and relative to the KB's root
 * (`guides/setup.md`, never a leading `/`); a link is resolved against the folder of the file it
 * is in, and a leading `/` means the root. A target that climbs above the root with `..` is
 * unresolved: a KB's links never name anything outside it. What a file path may be is decided in
 * one place, kb/paths.ts (NFC, characters, 1024 bytes of UTF-8, 255 per segment, 32
 * segments): a link resolves to a path only when a file could have that path, in the normal form
 * files are stored under, and is `invalid_path` otherwise.
 */

export const URL_MAX_CHARS = 2048;
const TARGET_MAX_CHARS = 300;

export type UnresolvedReason = 'outside_kb' | 'folder' | 'invalid_path';

export type LinkTarget =
  | { readonly kind: 'file'; readonly path: string }
  | { readonly kind: 'external'; readonly url: string }
  /** `target` is the link as written, made displayable and bounded. */
  | { readonly kind: 'unresolved'; readonly target: string; readonly reason: UnresolvedReason };

/**
 * Schemes that name no document a reader could follow (mail, telephone, inline data, script):
 * such links are no references at all, so they are left out rather than reported as external.
 */
const IGNORED_SCHEMES = new Set(['mailto', 'tel', 'sms', 'data', 'javascript', 'vbscript', 'file', 'blob', 'about', 'cid']);

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]{1,31}):/;
// eslint-disable-next-line no-control-regex
const URL_UNSAFE = /[\u0000-\u0020\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/**
 * A Markdown link's destination (inline, reference or autolink) from the file at `from`, or
 * undefined when it names nothing to report: empty, only a `#fragment` or `?query` (the file
 * itself), an ignored scheme, or a URL that does not parse or is longer than URL_MAX_CHARS.
 * The path part loses its `?query` and `#fragment` and is percent-decoded before it is
 * resolved, so that an encoded `%2e%2e` is confined like a written `..`.
 */
export function resolveMarkdownTarget(destination: string, from: string): LinkTarget | undefined {
  const raw = destination.trim();
  if (raw === '') return undefined;
  const scheme = SCHEME.exec(raw)?.[1];
  if (scheme !== undefined || raw.startsWith('//')) {
    if (scheme !== undefined && IGNORED_SCHEMES.has(scheme.toLowerCase())) return undefined;
    if (raw.length > URL_MAX_CHARS || URL_UNSAFE.test(raw) || !raw.isWellFormed()) return undefined;
    // A network-path reference (`//host/x`) parses against any scheme's base.
    if (!URL.canParse(raw, 'https://example.invalid/')) return undefined;
    return { kind: 'external', url: raw };
  }
  const end = firstOf(raw, '?', '#');
  const path = raw.slice(0, end);
  if (path === '') return undefined;
  return resolvePath(percentDecode(path), from, raw);
}

/**
 * A wiki link's target (`[[target]]`, `[[target|label]]`, `[[target#heading]]`) from the file at
 * `from`: resolved like a relative link but not percent-decoded (wiki targets are names as
 * written), and a last segment without an extension gets `.md` (`[[Setup]]` is `Setup.md`).
 */
export function resolveWikiTarget(inner: string, from: string): LinkTarget | undefined {
  const target = inner.slice(0, firstOf(inner, '|', '#')).trim();
  if (target === '') return undefined;
  const named = target.endsWith('/') || hasExtension(target) ? target : `${target}.md`;
  return resolvePath(named, from, inner);
}

/** The folder of a KB path (`a/b/c.md` → `a/b`, `c.md` → ``). */
export function folderOf(path: string): string {
  const at = path.lastIndexOf('/');
  return at < 0 ? '' : path.slice(0, at);
}

/**
 * A KB path in normal form: a path a file can have (kb/paths.ts), already NFC; undefined
 * otherwise.
 */
export function normalKbPath(path: string): string | undefined {
  return pathProblem(path) === undefined && path.normalize('NFC') === path ? path : undefined;
}

function resolvePath(path: string, from: string, written: string): LinkTarget {
  const unresolved = (reason: UnresolvedReason): LinkTarget => ({ kind: 'unresolved', target: displayText(written, TARGET_MAX_CHARS), reason });
  // Characters no file path may hold can be refused before resolving; the bounds need the result.
  if (characterProblem(path) !== undefined) return unresolved('invalid_path');
  const base = path.startsWith('/')
    ? []
    : folderOf(from)
        .split('/')
        .filter((segment) => segment !== '' && segment !== '.');
  const segments = [...base];
  const parts = path.split('/');
  for (const part of parts) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (segments.length === 0) return unresolved('outside_kb');
      segments.pop();
    } else segments.push(part);
  }
  const last = parts[parts.length - 1];
  if (segments.length === 0 || last === '' || last === '.' || last === '..') return unresolved('folder');
  const resolved = segments.join('/').normalize('NFC');
  if (pathProblem(resolved) !== undefined) return unresolved('invalid_path');
  return { kind: 'file', path: resolved };
}

const PERCENT_RUN = /(?:%[0-9A-Fa-f]{2})+/g;

/** Decodes %XX sequences that spell UTF-8; ones that do not are kept as written. */
function percentDecode(text: string): string {
  if (!text.includes('%')) return text;
  return text.replace(PERCENT_RUN, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });
}

function firstOf(text: string, a: string, b: string): number {
  const first = text.indexOf(a);
  const second = text.indexOf(b);
  if (first < 0) return second < 0 ? text.length : second;
  return second < 0 ? first : Math.min(first, second);
}

/** Whether the last segment ends in `.ext`, ext being 1 to 8 letters or digits. */
export function hasExtension(path: string): boolean {
  const name = path.slice(path.lastIndexOf('/') + 1);
  return /\.[A-Za-z0-9]{1,8}$/.test(name) && !name.startsWith('.');
}
