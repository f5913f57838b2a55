import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import type { PackageKind } from '../versions/refusals.ts';
import { PACKAGE_PREFIX, refuse } from '../versions/refusals.ts';
import { unsafeName } from '../../kernel/text.ts';
import type { DigestEncoding } from './media-types.ts';
import { detectMediaType } from './media-types.ts';
import type { ParsedSkillMd } from './skill-md.ts';
import { codePoints, parseSkillMd, quote } from './skill-md.ts';

/**
 * Validation of a Skill package (SKILL.md plus attachments) and of v1 attachment lists, per the
 * Alignbase `create_skill` rules. Pure: no I/O, no store; callers decide what to do with the result.
 * SKILL.md itself is parsed by skill-md.ts, and each file typed by media-types.ts.
 *
 * Every failure is a `validation` KgwError with reason `invalid_package`: the rule set it was
 * checked against (`skill`, `attachments`, `artifact`) and one specific problem naming the field
 * or path; its message is the rule set's prefix (`invalid skill package: `) and the problem.
 *
 * Decisions the spec leaves open (also listed in docs/decisions.md):
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

export const FILE_MAX_BYTES = 2 * 1024 * 1024;
export const PACKAGE_MAX_BYTES = 3 * 1024 * 1024;
export const PACKAGE_MAX_FILES = 500;
export const PATH_MAX = 512;

export const SKILL_PACKAGE_ERROR_PREFIX = PACKAGE_PREFIX.skill;

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
