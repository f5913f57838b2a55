import { refuseKb } from './refusals.ts';

/**
 * Paths of Knowledge-Base files: what a caller may name a file, checked once here for every
 * tool that takes one (docs/atmina.md, "Paths"). A path is NFC-normalised, relative and
 * `/`-separated; it is compared byte for byte (case-sensitive), so `Notes.md` and `notes.md`
 * are two files. Anything that could escape the KB, hide or reorder what a person reads, or
 * mean different things to different file systems is refused; other Unicode is fine.
 */

/** One segment's UTF-8 length, as most file systems bound a name. */
export const SEGMENT_MAX_BYTES = 255;
/** A whole path's UTF-8 length. */
export const PATH_MAX_BYTES = 1024;
/** Segments in a path. */
export const PATH_MAX_DEPTH = 32;

// Characters refused anywhere in a path, with the reason each gives:
// - C0 and C1 controls and DEL: terminals obey some of them, and none belongs in a name;
// - format characters (Unicode category Cf: bidi marks, embeddings, overrides and isolates,
//   zero-width spaces and joiners, the byte-order mark, soft hyphens): invisible, so two paths
//   that look the same could differ, and bidi controls reorder what is shown
//   (`invoice\u202Etxt.md` reads as `invoicedm.txt`);
// - line and paragraph separators: a path is one line.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/u;
const FORMAT = /\p{Cf}/u;
const SEPARATOR = /[\u2028\u2029]/u;
const EDGE_SPACE = /^\s|\s$/u;

/**
 * A UTF-16 string longer than this cannot normalise into PATH_MAX_BYTES: NFC composes at most a
 * few code points into one. Checked first, so a huge input is refused without normalising it.
 */
const RAW_MAX_LENGTH = PATH_MAX_BYTES * 8;

/**
 * Why a raw (not yet normalised) path or prefix is refused before its segments are looked at, or
 * undefined: also what a link target may not hold (text/paths.ts).
 */
export function characterProblem(raw: string): string | undefined {
  if (raw.length > RAW_MAX_LENGTH) return `must be at most ${PATH_MAX_BYTES} bytes of UTF-8`;
  if (!raw.isWellFormed()) return 'must be well-formed Unicode (it has a lone surrogate)';
  if (CONTROL.test(raw)) return 'must not contain control characters';
  if (FORMAT.test(raw)) return 'must not contain invisible format characters (bidirectional controls, zero-width characters, byte-order marks)';
  if (SEPARATOR.test(raw)) return 'must not contain line or paragraph separators';
  if (raw.includes('\\')) return 'must use / between folders, not \\';
  return undefined;
}

function segmentProblem(segment: string): string | undefined {
  if (segment === '') return 'must not have empty segments (a leading, trailing or doubled /)';
  if (segment === '.' || segment === '..') return 'must not have . or .. segments';
  if (Buffer.byteLength(segment, 'utf8') > SEGMENT_MAX_BYTES) return `must have segments of at most ${SEGMENT_MAX_BYTES} bytes of UTF-8`;
  // A trailing space or a leading one makes two names that read the same.
  if (EDGE_SPACE.test(segment)) return 'must not have segments that start or end with a space';
  return undefined;
}

/** Why a normalised path is refused, or undefined when it is a valid file path. */
export function pathProblem(raw: string): string | undefined {
  if (raw === '') return 'must not be empty';
  const early = characterProblem(raw);
  if (early !== undefined) return early;
  const path = raw.normalize('NFC');
  if (path.startsWith('/')) return 'must be relative (no leading /)';
  if (Buffer.byteLength(path, 'utf8') > PATH_MAX_BYTES) return `must be at most ${PATH_MAX_BYTES} bytes of UTF-8`;
  const segments = path.split('/');
  if (segments.length > PATH_MAX_DEPTH) return `must be at most ${PATH_MAX_DEPTH} segments deep`;
  for (const segment of segments) {
    const problem = segmentProblem(segment);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/** The normalised form of a file path; `validation` naming `field` when the path is refused. */
export function parseKbPath(raw: string, field = 'path'): string {
  const problem = pathProblem(raw);
  if (problem !== undefined) throw refuseKb.invalidPath(field, problem);
  return raw.normalize('NFC');
}

/**
 * The normalised form of a path prefix (list_files): empty for every file, otherwise the start
 * of a path, e.g. `policies/` (the files in that folder and below) or `policies/re` (also
 * `policies/retention.md`). Its segments follow the path rules; only the last may be empty,
 * after a trailing `/`.
 */
export function parseKbPathPrefix(raw: string, field = 'path_prefix'): string {
  if (raw === '') return '';
  const early = characterProblem(raw);
  if (early !== undefined) throw refuseKb.invalidPath(field, early);
  const prefix = raw.normalize('NFC');
  const body = prefix.endsWith('/') ? prefix.slice(0, -1) : prefix;
  const problem = body === '' ? 'must be relative (no leading /)' : pathProblem(body);
  if (problem !== undefined) throw refuseKb.invalidPath(field, problem);
  return prefix;
}

/** What a file of this path holds, by its extension: the media type its reads report. */
export function mediaTypeOf(path: string): string {
  const dot = path.lastIndexOf('.');
  const extension = dot > path.lastIndexOf('/') ? path.slice(dot + 1).toLowerCase() : '';
  return TEXT_MEDIA_TYPES[extension] ?? 'text/plain';
}

// The text formats a KB usually holds; anything else written as text is text/plain.
const TEXT_MEDIA_TYPES: Readonly<Record<string, string>> = {
  md: 'text/markdown',
  markdown: 'text/markdown',
  txt: 'text/plain',
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  html: 'text/html',
  htm: 'text/html',
  css: 'text/css',
  json: 'application/json',
  yaml: 'application/yaml',
  yml: 'application/yaml',
  xml: 'application/xml',
  toml: 'application/toml',
};
