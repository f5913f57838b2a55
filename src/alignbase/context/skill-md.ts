import { Buffer } from 'node:buffer';
import { isMap, isScalar, LineCounter, parseDocument, visit } from 'yaml';
import type { YAMLError } from 'yaml';
import type { PackageKind } from '../versions/refusals.ts';
import { refuse } from '../versions/refusals.ts';
import { findUnstorable } from '../../kernel/text.ts';

/**
 * Parsing and checking of SKILL.md, the first file of a Skill package, per the Alignbase
 * `create_skill` rules. Pure, like the package validation it is part of (skill-package.ts); a
 * failure is refused the same way (`invalid skill package: ` and one problem).
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
 */

export const SKILL_MD_MAX_BYTES = 1024 * 1024;
export const NAME_MAX = 64;
export const DESCRIPTION_MAX = 1024;
export const COMPATIBILITY_MAX = 500;

export interface ParsedSkillMd {
  readonly name: string;
  readonly description: string;
  readonly frontmatter: Record<string, unknown>;
}

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

/** The number of code points of `text`, counted only when its UTF-16 length could exceed `limit` (package paths are counted so too). */
export function codePoints(text: string, limit: number): number {
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

/** `text` as a refusal quotes it: a JSON string, cut at `max` characters. */
export function quote(text: string, max = 80): string {
  return JSON.stringify(text.length > max ? `${text.slice(0, max)}…` : text);
}
