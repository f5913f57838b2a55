import { Buffer, isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import { isMap, isScalar, LineCounter, parseDocument, visit } from 'yaml';
import type { YAMLError } from 'yaml';
import type { PackageKind } from '../../kernel/errors.ts';
import { PACKAGE_PREFIX, refuse } from '../versions/refusals.ts';
import { findUnstorable, unsafeName } from '../../kernel/text.ts';

/**
 * Validation of a Skill package (SKILL.md plus attachments) and of v1 attachment lists, per the
 * Alignbase `create_skill` rules. Pure: no I/O, no store; callers decide what to do with the result.
 *
 * Every failure is a `validation` KgwError with reason `invalid_package`: the rule set it was
 * checked against (`skill`, `attachments`, `artifact`) and one specific problem naming the field
 * or path; its message is the rule set's prefix (`invalid skill package: `) and the problem.
 *
 * Decisions the spec leaves open (also listed in docs/decisions.md):
 *  - Unknown top-level frontmatter keys are accepted and kept: agent runtimes define their own
 *    (`model`, `argument-hint`, ...), and rejecting them would refuse real-world skills.
 *  - CRLF line endings are accepted in SKILL.md, fences included; `---` fences may carry trailing
 *    spaces or tabs. skill_md is stored exactly as sent.
 *  - A leading byte order mark is rejected: SKILL.md must start with `---`, and local installers
 *    that look for `---` at byte 0 would not see the frontmatter.
 *  - YAML warnings (an unresolved tag such as `!foo`) are rejected like errors.
 *  - name and description must be YAML strings (`name: 123` is refused, quote it). null for an
 *    optional field (`compatibility:`, `metadata:`, `license:`, `allowed-tools:`) means absent.
 *    license must be a string; allowed-tools a string or a list of strings.
 *  - "Characters" are Unicode code points. description is returned trimmed and its limit is
 *    checked on the trimmed text.
 *  - SKILL.md counts as a package file: at most 499 attachments. Its bytes count toward 3 MiB.
 *  - Paths: besides the spec's rules, control characters and a leading drive letter (`C:`) are
 *    refused, and paths are unique case-insensitively (after NFC), since installs land on
 *    case-insensitive file systems too. For the same reason `skill.md` in any case is reserved at
 *    the root (a nested `docs/SKILL.md` is fine), and a path may not be both a file and a
 *    directory (`a` and `a/b`).
 *  - base64 is strict: standard alphabet, `=` padding to a multiple of 4, no whitespace or line
 *    breaks, and canonical (unused trailing bits zero).
 *  - sha256 is always over the raw decoded bytes; digestEncoding only says whether the bytes were
 *    classified as text.
 */

export const SKILL_MD_MAX_BYTES = 1024 * 1024;
export const FILE_MAX_BYTES = 2 * 1024 * 1024;
export const PACKAGE_MAX_BYTES = 3 * 1024 * 1024;
export const PACKAGE_MAX_FILES = 500;
export const PATH_MAX = 512;
export const NAME_MAX = 64;
export const DESCRIPTION_MAX = 1024;
export const COMPATIBILITY_MAX = 500;

export const SKILL_PACKAGE_ERROR_PREFIX = PACKAGE_PREFIX.skill;

export type DigestEncoding = 'text' | 'binary';

export interface AttachmentInput {
  readonly path: string;
  readonly data_base64: string;
}

export interface PackageFile {
  readonly path: string;
  readonly bytes: Buffer;
  readonly size: number;
  readonly mediaType: string;
  readonly digestEncoding: DigestEncoding;
  /** Lowercase hex SHA-256 of `bytes`. */
  readonly sha256: string;
}

export interface ParsedSkillMd {
  readonly name: string;
  readonly description: string;
  readonly frontmatter: Record<string, unknown>;
}

export interface ValidatedPackage extends ParsedSkillMd {
  readonly skillMd: string;
  /** The attachments (SKILL.md is not among them), sorted by path in code point order. */
  readonly files: readonly PackageFile[];
}

/** A path no attachment may take (compared case-insensitively), with the reason shown to the caller. */
export interface ReservedPath {
  readonly path: string;
  readonly reason: string;
}

export interface AttachmentRules {
  /** The rule set a refusal names for the dialects to word (default: attachments). */
  readonly package?: PackageKind;
  /** Starts every refusal's message (default: the rule set's, e.g. `invalid attachments: `). */
  readonly errorPrefix?: string;
  readonly reservedPaths?: readonly ReservedPath[];
  /** A file of the package that is not in the list but counts toward the file and byte limits. */
  readonly counted?: { readonly label: string; readonly bytes: number };
  readonly maxFiles?: number;
  readonly maxFileBytes?: number;
  readonly maxTotalBytes?: number;
}

// ---------------------------------------------------------------------------------------------
// SKILL.md

const NAME_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const FENCE = /^---[ \t]*$/;

/** Parses and checks SKILL.md; throws `invalid skill package: ...` on the first problem. */
export function parseSkillMd(skillMd: string): ParsedSkillMd {
  return parseSkillMdWith(skillMd, 'skill');
}

function parseSkillMdWith(skillMd: string, kind: PackageKind): ParsedSkillMd {
  const fail: (reason: string) => never = (reason) => {
    throw refuse.invalidPackage(kind, reason);
  };
  if (typeof skillMd !== 'string') fail('skill_md must be a string');
  // UTF-8 never takes fewer bytes than UTF-16 code units, so the length alone can settle it.
  if (skillMd.length > SKILL_MD_MAX_BYTES || Buffer.byteLength(skillMd, 'utf8') > SKILL_MD_MAX_BYTES) {
    fail(`SKILL.md cannot exceed 1 MiB (${SKILL_MD_MAX_BYTES} bytes), got ${Buffer.byteLength(skillMd, 'utf8')} bytes`);
  }
  if (skillMd.charCodeAt(0) === 0xfeff) fail('skill_md must start with --- (remove the byte order mark)');

  const firstEnd = lineEnd(skillMd, 0);
  if (!FENCE.test(stripCr(skillMd.slice(0, firstEnd)))) fail('skill_md must start with YAML frontmatter: the first line must be ---');
  const bodyStart = firstEnd + 1;
  let closeAt = -1;
  for (let at = bodyStart; at <= skillMd.length && firstEnd < skillMd.length;) {
    const end = lineEnd(skillMd, at);
    if (FENCE.test(stripCr(skillMd.slice(at, end)))) {
      closeAt = at;
      break;
    }
    at = end + 1;
  }
  if (closeAt < 0) fail('frontmatter must close with a --- line');
  const source = skillMd.slice(bodyStart, closeAt);
  const frontmatter = parseFrontmatter(source, fail);
  return checkFrontmatter(frontmatter, fail);
}

function lineEnd(text: string, from: number): number {
  const at = text.indexOf('\n', from);
  return at < 0 ? text.length : at;
}

function stripCr(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}

function parseFrontmatter(source: string, fail: (reason: string) => never): Record<string, unknown> {
  const lines = new LineCounter();
  const doc = parseDocument(source, { lineCounter: lines, prettyErrors: false, uniqueKeys: true, version: '1.2' });
  // Line 1 of SKILL.md is the opening fence, so frontmatter line n is SKILL.md line n + 1.
  const lineOf = (offset: number): number => lines.linePos(offset).line + 1;
  const problem: YAMLError | undefined = doc.errors[0] ?? doc.warnings[0];
  if (problem !== undefined) {
    if (problem.code === 'DUPLICATE_KEY') {
      const key = duplicateKeyAt(doc, problem.pos[0]);
      fail(`frontmatter has a duplicate key${key === undefined ? '' : ` ${JSON.stringify(key)}`} (line ${lineOf(problem.pos[0])})`);
    }
    fail(`frontmatter is not valid YAML (line ${lineOf(problem.pos[0])}): ${problem.message}`);
  }
  if (!isMap(doc.contents)) {
    const kind =
      doc.contents === null || (isScalar(doc.contents) && doc.contents.value === null) ? 'empty' : isScalar(doc.contents) ? 'a scalar' : 'a sequence';
    fail(`frontmatter must be a YAML mapping with name and description, but it is ${kind}`);
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    fail(`frontmatter could not be read: ${error instanceof Error ? error.message : String(error)}`);
  }
  // YAML escapes can spell text the store cannot keep ("\0", "\uD800"); the frontmatter is stored.
  const unstorable = findUnstorable(value);
  if (unstorable !== undefined) fail(`frontmatter ${unstorable.path.length === 0 ? '' : `${unstorable.path.join('.')} `}${unstorable.message}`);
  return value as Record<string, unknown>;
}

function duplicateKeyAt(doc: ReturnType<typeof parseDocument>, offset: number): string | undefined {
  let found: string | undefined;
  visit(doc, {
    Pair(_, pair) {
      if (isScalar(pair.key) && pair.key.range?.[0] === offset) {
        found = String(pair.key.value);
        return visit.BREAK;
      }
      return undefined;
    },
  });
  return found;
}

function checkFrontmatter(frontmatter: Record<string, unknown>, fail: (reason: string) => never): ParsedSkillMd {
  const has = (key: string): boolean => Object.hasOwn(frontmatter, key);
  if (!has('name') && !has('description')) fail('frontmatter must include name and description');
  if (!has('name')) fail('frontmatter must include name');
  if (!has('description')) fail('frontmatter must include description');

  const name = frontmatter.name;
  if (typeof name !== 'string') fail(`name must be a string, not ${kindOf(name)}`);
  if (name === '') fail('name cannot be empty');
  if (!NAME_PATTERN.test(name)) {
    if (/^[a-z0-9-]+$/.test(name)) {
      if (name.startsWith('-') || name.endsWith('-')) fail(`name cannot start or end with a hyphen (got ${quote(name)})`);
      fail(`name cannot contain consecutive hyphens (got ${quote(name)})`);
    }
    fail(`name must use lowercase letters, numbers, and single hyphens (got ${quote(name)})`);
  }
  if (name.length > NAME_MAX) fail(`name cannot exceed ${NAME_MAX} characters (got ${name.length})`);

  const description = frontmatter.description;
  if (typeof description !== 'string') fail(`description must be a string, not ${kindOf(description)}`);
  const trimmed = description.trim();
  if (trimmed === '') fail('description cannot be empty');
  const descriptionLength = codePoints(trimmed, DESCRIPTION_MAX);
  if (descriptionLength > DESCRIPTION_MAX) fail(`description cannot exceed ${DESCRIPTION_MAX} characters (got ${descriptionLength})`);

  const compatibility = frontmatter.compatibility;
  if (compatibility !== undefined && compatibility !== null) {
    if (typeof compatibility !== 'string') fail(`compatibility must be a string, not ${kindOf(compatibility)}`);
    const length = codePoints(compatibility, COMPATIBILITY_MAX);
    if (length > COMPATIBILITY_MAX) fail(`compatibility cannot exceed ${COMPATIBILITY_MAX} characters (got ${length})`);
  }
  const metadata = frontmatter.metadata;
  if (metadata !== undefined && metadata !== null && (typeof metadata !== 'object' || Array.isArray(metadata))) {
    fail(`metadata must be a map, not ${kindOf(metadata)}`);
  }
  const license = frontmatter.license;
  if (license !== undefined && license !== null && typeof license !== 'string') fail(`license must be a string, not ${kindOf(license)}`);
  const tools = frontmatter['allowed-tools'];
  if (tools !== undefined && tools !== null && typeof tools !== 'string' && !(Array.isArray(tools) && tools.every((tool) => typeof tool === 'string'))) {
    fail(`allowed-tools must be a string or a list of strings, not ${kindOf(tools)}`);
  }
  return { name, description: trimmed, frontmatter };
}

/** The number of code points of `text`, counted only when its UTF-16 length could exceed `limit`. */
function codePoints(text: string, limit: number): number {
  if (text.length <= limit) return text.length;
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    count++;
  }
  return count;
}

function kindOf(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a map';
  return `a ${typeof value}`;
}

function quote(text: string, max = 80): string {
  return JSON.stringify(text.length > max ? `${text.slice(0, max)}…` : text);
}

// ---------------------------------------------------------------------------------------------
// Packages and attachments

const SKILL_MD_RESERVED: readonly ReservedPath[] = [{ path: 'SKILL.md', reason: 'send SKILL.md as skill_md, not as an attachment' }];

/** Validates a whole Skill package: SKILL.md plus its attachments, decoded and classified. */
export function validatePackage(input: { readonly skillMd: string; readonly attachments: readonly AttachmentInput[] }): ValidatedPackage {
  const parsed = parseSkillMd(input.skillMd);
  const files = validateAttachments(input.attachments, {
    package: 'skill',
    reservedPaths: SKILL_MD_RESERVED,
    counted: { label: 'SKILL.md', bytes: Buffer.byteLength(input.skillMd, 'utf8') },
  });
  return { ...parsed, skillMd: input.skillMd, files };
}

interface Checked {
  readonly index: number;
  readonly path: string;
  readonly key: string;
  readonly data: string;
  readonly size: number;
}

/**
 * The path rule of validateAttachments alone, with its words: the tools run it before the
 * gateway's generic refusal of NUL and lone surrogates, because the spec words a path with a
 * null byte as a package error.
 */
export function checkAttachmentPaths(attachments: readonly unknown[] | undefined, kind: PackageKind): void {
  for (const [index, attachment] of (attachments ?? []).entries()) {
    const path = typeof attachment === 'object' && attachment !== null ? (attachment as { path?: unknown }).path : undefined;
    const problem = typeof path === 'string' ? checkPath(path) : undefined;
    if (problem !== undefined) throw refuse.invalidPackage(kind, `attachments[${index}].path ${quote(String(path))} ${problem}`);
  }
}

/**
 * Checks a v1 attachment list against the file rules and limits and decodes it. Every limit is
 * checked from the base64 lengths before anything is decoded, so an oversized upload costs no
 * allocation. The result is sorted by path.
 */
export function validateAttachments(attachments: readonly AttachmentInput[], rules: AttachmentRules): PackageFile[] {
  const kind = rules.package ?? 'attachments';
  const fail: (reason: string) => never = (reason) => {
    throw refuse.invalidPackage(kind, reason, rules.errorPrefix);
  };
  const maxFiles = rules.maxFiles ?? PACKAGE_MAX_FILES;
  const maxFileBytes = rules.maxFileBytes ?? FILE_MAX_BYTES;
  const maxTotal = rules.maxTotalBytes ?? PACKAGE_MAX_BYTES;
  const counted = rules.counted;
  if (!Array.isArray(attachments)) fail('attachments must be a list');
  const baseFiles = counted === undefined ? 0 : 1;
  if (baseFiles + attachments.length > maxFiles) {
    const parts = counted === undefined ? '' : ` (${counted.label} and ${attachments.length} attachments)`;
    fail(`a package cannot include more than ${maxFiles} files, got ${baseFiles + attachments.length}${parts}`);
  }

  const reserved = new Map<string, ReservedPath>();
  for (const entry of rules.reservedPaths ?? []) reserved.set(collisionKey(entry.path), entry);
  const seen = new Map<string, Checked>();
  const checked: Checked[] = [];
  let total = 0;
  for (let index = 0; index < attachments.length; index++) {
    const attachment = attachments[index] as AttachmentInput | null | undefined;
    const at = `attachments[${index}]`;
    if (typeof attachment !== 'object' || attachment === null) fail(`${at} must be an object with path and data_base64`);
    const { path, data_base64: data } = attachment;
    if (typeof path !== 'string') fail(`${at}.path must be a string`);
    const pathProblem = checkPath(path);
    if (pathProblem !== undefined) fail(`${at}.path ${quote(path)} ${pathProblem}`);
    const key = collisionKey(path);
    const taken = reserved.get(key);
    if (taken !== undefined) {
      const same = taken.path === path ? '' : ` (it would collide with ${taken.path} on case-insensitive file systems)`;
      fail(`${at}.path ${quote(path)} is not allowed${same}: ${taken.reason}`);
    }
    const earlier = seen.get(key);
    if (earlier !== undefined) {
      const how = earlier.path === path ? 'duplicates' : 'differs only in case from';
      fail(`${at}.path ${quote(path)} ${how} attachments[${earlier.index}].path ${quote(earlier.path)}`);
    }
    if (typeof data !== 'string') fail(`${at}.data_base64 must be a string`);
    if (data.length === 0) fail(`${at} (${quote(path)}) must have non-empty data_base64`);
    const size = decodedSize(data);
    if (size > maxFileBytes) fail(`${at} (${quote(path)}) cannot exceed ${mib(maxFileBytes)} decoded, got ${size} bytes`);
    const base64Problem = checkBase64(data);
    if (base64Problem !== undefined) fail(`${at}.data_base64 (${quote(path)}) is not valid base64: ${base64Problem}`);
    total += size;
    const entry = { index, path, key, data, size };
    seen.set(key, entry);
    checked.push(entry);
  }

  // A path cannot be a file and also a directory holding other files (or under a reserved file).
  for (const entry of checked) {
    for (let slash = entry.key.indexOf('/'); slash >= 0; slash = entry.key.indexOf('/', slash + 1)) {
      const parentKey = entry.key.slice(0, slash);
      const reservedParent = reserved.get(parentKey);
      if (reservedParent !== undefined) fail(`attachments[${entry.index}].path ${quote(entry.path)} would make ${reservedParent.path} a directory`);
      const parent = seen.get(parentKey);
      if (parent !== undefined) {
        fail(
          `attachments[${entry.index}].path ${quote(entry.path)} needs ${quote(entry.path.slice(0, slash))} to be a directory, but attachments[${parent.index}].path ${quote(parent.path)} is a file`,
        );
      }
    }
  }

  const base = counted?.bytes ?? 0;
  if (base + total > maxTotal) {
    const parts = counted === undefined ? '' : ` (${counted.label} ${base} bytes and attachments ${total} bytes)`;
    fail(`total decoded package content cannot exceed ${mib(maxTotal)} (${maxTotal} bytes), got ${base + total} bytes${parts}`);
  }

  const files = checked.map((entry): PackageFile & { sortKey: Buffer } => {
    const bytes = Buffer.from(entry.data, 'base64');
    if (bytes.length !== entry.size) fail(`attachments[${entry.index}].data_base64 (${quote(entry.path)}) is not valid base64`);
    const { mediaType, digestEncoding } = detectMediaType(bytes, entry.path);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    return { path: entry.path, bytes, size: bytes.length, mediaType, digestEncoding, sha256, sortKey: Buffer.from(entry.path, 'utf8') };
  });
  // UTF-8 byte order is code point order; it does not depend on the locale.
  files.sort((a, b) => Buffer.compare(a.sortKey, b.sortKey));
  return files.map(({ sortKey: _sortKey, ...file }) => file);
}

function mib(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`;
}

/** Unicode-normalized, lowercased: two paths with the same key would be one file on macOS or Windows. */
function collisionKey(path: string): string {
  return path.normalize('NFC').toLowerCase();
}

/** Why `path` is not an acceptable relative package path, or undefined when it is. */
function checkPath(path: string): string | undefined {
  if (path === '') return 'must not be empty';
  const length = codePoints(path, PATH_MAX);
  if (length > PATH_MAX) return `cannot exceed ${PATH_MAX} characters (got ${length})`;
  if (path.includes('\0')) return 'must not contain null bytes';
  if (!path.isWellFormed()) return 'must be well-formed Unicode (it has a lone surrogate)';
  // C0 and C1 controls and bidi overrides: `\u202Etxt.exe` would install a file whose name reads otherwise.
  const unsafe = unsafeName(path);
  if (unsafe !== undefined) return unsafe;
  if (path.includes('\\')) return 'must not use backslashes (separate directories with /)';
  if (path.startsWith('/')) return 'must be relative to the skill directory, not absolute';
  if (/^[A-Za-z]:/.test(path)) return 'must be relative to the skill directory, not start with a drive letter';
  const segments = path.split('/');
  if (segments.includes('..')) return 'must not contain ..';
  if (segments.includes('.')) return 'needs normalization: remove its . segments';
  if (path.endsWith('/')) return 'needs normalization: it must name a file, not end with /';
  if (segments.includes('')) return 'needs normalization: it contains an empty segment (//)';
  return undefined;
}

/** The exact decoded size of valid padded base64, computed without decoding. */
function decodedSize(data: string): number {
  let padding = 0;
  if (data.endsWith('=')) padding = data.endsWith('==') ? 2 : 1;
  return Math.floor((data.length * 3) / 4) - padding;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Strict standard base64: alphabet, padding, length, canonical trailing bits. Undefined when valid. */
function checkBase64(data: string): string | undefined {
  if (!BASE64.test(data)) return diagnoseBase64(data);
  if (data.length % 4 !== 0) return `its length ${data.length} is not a multiple of 4 (is = padding missing?)`;
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  if (padding > 0) {
    const last = base64Value(data.charCodeAt(data.length - 1 - padding));
    if ((last & (padding === 2 ? 0x0f : 0x03)) !== 0) return 'it is not canonical: the unused bits before the = padding must be zero';
  }
  return undefined;
}

function diagnoseBase64(data: string): string {
  const firstPad = data.indexOf('=');
  for (let i = 0; i < data.length; i++) {
    const code = data.charCodeAt(i);
    if (code === 0x3d || base64Value(code) >= 0) continue;
    const char = data[i] ?? '';
    if (char === '\n' || char === '\r') return `line break at offset ${i}; send base64 without line wrapping`;
    if (char === ' ' || char === '\t') return `whitespace at offset ${i}`;
    if (char === '-' || char === '_') return `character ${JSON.stringify(char)} at offset ${i} is URL-safe base64; use the standard alphabet (+ and /)`;
    return `character ${JSON.stringify(char)} at offset ${i} is outside the base64 alphabet`;
  }
  return `= padding at offset ${firstPad} may only end the data`;
}

function base64Value(code: number): number {
  if (code >= 0x41 && code <= 0x5a) return code - 0x41;
  if (code >= 0x61 && code <= 0x7a) return code - 0x61 + 26;
  if (code >= 0x30 && code <= 0x39) return code - 0x30 + 52;
  if (code === 0x2b) return 62;
  if (code === 0x2f) return 63;
  return -1;
}

// ---------------------------------------------------------------------------------------------
// Media types

const ascii = (text: string): number[] => Array.from(text, (char) => char.charCodeAt(0));

function startsWith(bytes: Buffer, signature: readonly number[], at = 0): boolean {
  if (bytes.length < at + signature.length) return false;
  for (let i = 0; i < signature.length; i++) if (bytes[at + i] !== signature[i]) return false;
  return true;
}

const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const JPEG = [0xff, 0xd8, 0xff];
const GIF87 = ascii('GIF87a');
const GIF89 = ascii('GIF89a');
const RIFF = ascii('RIFF');
const PDF = ascii('%PDF-');
const ZIP = [
  [0x50, 0x4b, 0x03, 0x04],
  [0x50, 0x4b, 0x05, 0x06],
  [0x50, 0x4b, 0x07, 0x08],
];
const GZIP = [0x1f, 0x8b];
const BZIP2_BLOCK = [0x31, 0x41, 0x59, 0x26, 0x53, 0x59];
const XZ = [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00];
const ZSTD = [0x28, 0xb5, 0x2f, 0xfd];
const SEVEN_Z = [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c];
const USTAR = ascii('ustar');
const ICO = [0x00, 0x00, 0x01, 0x00];
const TIFF_LE = [0x49, 0x49, 0x2a, 0x00];
const TIFF_BE = [0x4d, 0x4d, 0x00, 0x2a];
const WASM = [0x00, 0x61, 0x73, 0x6d];
const ID3 = ascii('ID3');
const OGG = [...ascii('OggS'), 0x00];
const FLAC = ascii('fLaC');
const FTYP = ascii('ftyp');
const EBML = [0x1a, 0x45, 0xdf, 0xa3];
const WOFF = ascii('wOFF');
const WOFF2 = ascii('wOF2');
const TTF = [0x00, 0x01, 0x00, 0x00];
const OTF = [...ascii('OTTO'), 0x00];
const SQLITE = [...ascii('SQLite format 3'), 0x00];
const MIDI = [...ascii('MThd'), 0x00, 0x00, 0x00, 0x06];
const BMP_HEADER_SIZES = new Set([12, 40, 52, 56, 64, 108, 124]);

/** The media type of a binary format recognized by its magic number, if any. */
function sniffBinary(bytes: Buffer): string | undefined {
  const b0 = bytes[0];
  if (startsWith(bytes, PNG)) return 'image/png';
  if (startsWith(bytes, JPEG)) return 'image/jpeg';
  if (startsWith(bytes, GIF87) || startsWith(bytes, GIF89)) return 'image/gif';
  if (startsWith(bytes, RIFF) && bytes.length >= 12) {
    const form = bytes.toString('latin1', 8, 12);
    if (form === 'WEBP') return 'image/webp';
    if (form === 'WAVE') return 'audio/wav';
    if (form === 'AVI ') return 'video/x-msvideo';
  }
  if (startsWith(bytes, PDF)) return 'application/pdf';
  if (ZIP.some((signature) => startsWith(bytes, signature))) return 'application/zip';
  if (startsWith(bytes, GZIP)) return 'application/gzip';
  if (bytes.length >= 10 && bytes.toString('latin1', 0, 3) === 'BZh' && bytes[3]! >= 0x31 && bytes[3]! <= 0x39 && startsWith(bytes, BZIP2_BLOCK, 4))
    return 'application/x-bzip2';
  if (startsWith(bytes, XZ)) return 'application/x-xz';
  if (startsWith(bytes, ZSTD)) return 'application/zstd';
  if (startsWith(bytes, SEVEN_Z)) return 'application/x-7z-compressed';
  if (startsWith(bytes, USTAR, 257) && bytes.length > 262 && (bytes[262] === 0x00 || bytes[262] === 0x20)) return 'application/x-tar';
  if (b0 === 0x42 && bytes[1] === 0x4d && bytes.length >= 26 && bytes.readUInt32LE(6) === 0 && BMP_HEADER_SIZES.has(bytes.readUInt32LE(14))) return 'image/bmp';
  if (startsWith(bytes, ICO) && bytes.length >= 22 && bytes.readUInt16LE(4) > 0) return 'image/x-icon';
  if (startsWith(bytes, TIFF_LE) || startsWith(bytes, TIFF_BE)) return 'image/tiff';
  if (startsWith(bytes, WASM)) return 'application/wasm';
  if (startsWith(bytes, ID3) && bytes.length >= 10 && bytes[3]! >= 2 && bytes[3]! <= 4) return 'audio/mpeg';
  if (b0 === 0xff && bytes.length >= 4) {
    // An MPEG audio frame header: sync, a version that is not reserved, layer II or III (layer I
    // would also match a UTF-16LE byte order mark), a valid bitrate and sample rate.
    const b1 = bytes[1]!;
    const b2 = bytes[2]!;
    const layer = b1 & 0x06;
    if ((b1 & 0xe0) === 0xe0 && (b1 & 0x18) !== 0x08 && (layer === 0x02 || layer === 0x04) && b2 >> 4 !== 0x0f && (b2 & 0x0c) !== 0x0c) return 'audio/mpeg';
    if ((b1 & 0xf6) === 0xf0) return 'audio/aac';
  }
  if (startsWith(bytes, OGG)) return 'audio/ogg';
  if (startsWith(bytes, FLAC) && bytes.length >= 8 && (bytes[4]! & 0x7f) === 0) return 'audio/flac';
  if (startsWith(bytes, MIDI)) return 'audio/midi';
  if (startsWith(bytes, FTYP, 4) && bytes.length >= 12 && bytes.readUInt32BE(0) >= 8) return isoMediaType(bytes.toString('latin1', 8, 12));
  if (startsWith(bytes, EBML)) return bytes.subarray(0, 64).includes('webm', 0, 'latin1') ? 'video/webm' : 'video/x-matroska';
  if (startsWith(bytes, WOFF) && bytes.length >= 44) return 'font/woff';
  if (startsWith(bytes, WOFF2) && bytes.length >= 48) return 'font/woff2';
  if (startsWith(bytes, TTF) && bytes.length >= 12) return 'font/ttf';
  if (startsWith(bytes, OTF) && bytes.length >= 12) return 'font/otf';
  if (startsWith(bytes, SQLITE)) return 'application/vnd.sqlite3';
  return undefined;
}

function isoMediaType(brand: string): string {
  if (brand === 'M4A ' || brand === 'M4B ') return 'audio/mp4';
  if (brand === 'qt  ') return 'video/quicktime';
  if (brand === 'avif' || brand === 'avis') return 'image/avif';
  if (['heic', 'heix', 'heim', 'heis', 'mif1', 'msf1'].includes(brand)) return 'image/heic';
  if (brand.startsWith('3g')) return 'video/3gpp';
  return 'video/mp4';
}

const TEXT_TYPES: Readonly<Record<string, string>> = {
  md: 'text/markdown',
  markdown: 'text/markdown',
  txt: 'text/plain',
  text: 'text/plain',
  json: 'application/json',
  yaml: 'application/yaml',
  yml: 'application/yaml',
  toml: 'application/toml',
  py: 'text/x-python',
  sh: 'text/x-shellscript',
  bash: 'text/x-shellscript',
  zsh: 'text/x-shellscript',
  js: 'text/javascript',
  mjs: 'text/javascript',
  cjs: 'text/javascript',
  ts: 'text/x-typescript',
  mts: 'text/x-typescript',
  cts: 'text/x-typescript',
  html: 'text/html',
  htm: 'text/html',
  css: 'text/css',
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  xml: 'application/xml',
  sql: 'application/sql',
};

const SVG_ROOT = /^\uFEFF?\s*(?:<\?xml[^>]*\?>\s*)?(?:(?:<!--[\s\S]*?-->|<!DOCTYPE[^>]*>)\s*)*<svg[\s>/]/i;
const SHEBANG = /^#!\s*(?:\/usr)?(?:\/local)?\/bin\/(?:env\s+(?:-\S+\s+)*)?(\w+)/;
const SHEBANG_TYPES: Readonly<Record<string, string>> = {
  sh: 'text/x-shellscript',
  bash: 'text/x-shellscript',
  zsh: 'text/x-shellscript',
  dash: 'text/x-shellscript',
  python: 'text/x-python',
  python3: 'text/x-python',
  node: 'text/javascript',
};

/**
 * The media type of decoded attachment bytes. Known binary magic numbers win; otherwise bytes that
 * are UTF-8 without NUL and with few control characters are text, typed by the path's extension
 * (default text/plain; `.svg` and unknown extensions with an `<svg` root are image/svg+xml; a
 * shebang types an unknown extension). Anything else is application/octet-stream.
 */
export function detectMediaType(bytes: Buffer, path: string): { mediaType: string; digestEncoding: DigestEncoding } {
  const binary = sniffBinary(bytes);
  if (binary !== undefined) return { mediaType: binary, digestEncoding: 'binary' };
  if (!looksLikeText(bytes)) return { mediaType: 'application/octet-stream', digestEncoding: 'binary' };
  const name = path.slice(path.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  const extension = dot > 0 ? name.slice(dot + 1).toLowerCase() : '';
  const mapped = TEXT_TYPES[extension];
  if (mapped !== undefined) return { mediaType: mapped, digestEncoding: 'text' };
  const head = bytes.toString('utf8', 0, Math.min(bytes.length, 4096));
  if (SVG_ROOT.test(head)) return { mediaType: 'image/svg+xml', digestEncoding: 'text' };
  if (extension === '') {
    const interpreter = SHEBANG.exec(head)?.[1];
    const byShebang = interpreter === undefined ? undefined : SHEBANG_TYPES[interpreter];
    if (byShebang !== undefined) return { mediaType: byShebang, digestEncoding: 'text' };
  }
  return { mediaType: 'text/plain', digestEncoding: 'text' };
}

/**
 * Valid UTF-8, no NUL, and at most 10% other control bytes (tab, line breaks, form feed,
 * backspace and escape are text).
 */
function looksLikeText(bytes: Buffer): boolean {
  if (bytes.includes(0) || !isUtf8(bytes)) return false;
  let controls = 0;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!;
    if ((byte < 0x20 && !(byte >= 0x08 && byte <= 0x0d) && byte !== 0x1b) || byte === 0x7f) controls++;
  }
  return controls * 10 <= bytes.length;
}
