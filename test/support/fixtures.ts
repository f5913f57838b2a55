import assert from 'node:assert/strict';
import type { ErrorCode, KgwError } from '../../src/kernel/errors.ts';
import { isKgwError } from '../../src/kernel/errors.ts';

/*
 * Fixtures more than one suite builds the same way: attachment bytes in base64, SKILL.md files,
 * the gateway's errors, org-file snippets and the fixed words of a context bundle. One copy
 * here, so that the suites cannot drift apart on what they mean by them.
 */

// ---------------------------------------------------------------------------------------------
// Comparisons that name the field

/** The fields `keys` of `object` (each, even when undefined) and no other: compared exactly, a difference names its field. */
export function pick<T extends object, const K extends keyof T>(object: T, keys: readonly K[]): Pick<T, K> {
  return Object.fromEntries(keys.map((key) => [key, object[key]])) as Pick<T, K>;
}

/** Rows of values given in the order of `keys`, as objects of those keys: a table whose differences name their fields. */
export function records<const K extends PropertyKey>(keys: readonly K[], values: readonly (readonly unknown[])[]): Record<K, unknown>[] {
  return values.map((row) => {
    assert.equal(row.length, keys.length, `a row of ${keys.length} values: ${JSON.stringify(row)}`);
    return Object.fromEntries(keys.map((key, at) => [key, row[at]])) as Record<K, unknown>;
  });
}

// ---------------------------------------------------------------------------------------------
// Attachments and Skill packages

/** Base64 of text (as UTF-8) or of bytes, as the tools and the core take attachment data. */
export const b64 = (data: string | Buffer): string => (typeof data === 'string' ? Buffer.from(data, 'utf8') : data).toString('base64');

/** A SKILL.md of these frontmatter lines and this body, a blank line between them. */
export const skillMdOf = (frontmatter: readonly string[], body: string): string => `---\n${frontmatter.join('\n')}\n---\n\n${body}\n`;

/** A SKILL.md with the given name and description. */
export const SKILL_MD = (name: string, description = `Use ${name} when the task needs it.`, body = 'Follow these steps.'): string =>
  skillMdOf([`name: ${name}`, `description: ${description}`], body);

// ---------------------------------------------------------------------------------------------
// Errors

/**
 * Asserts that `error` is a KgwError of `code` and, when `message` is given, that its message
 * is that text exactly (a string) or matches it (a RegExp).
 */
export function assertKgwError(error: unknown, code: ErrorCode, message?: string | RegExp): asserts error is KgwError {
  assert.ok(isKgwError(error, code), `expected a KgwError of code ${code}, got ${String(error)}`);
  if (typeof message === 'string') assert.equal(error.message, message);
  else if (message !== undefined) assert.match(error.message, message);
}

/** Asserts that `promise` rejects with a KgwError of `code` (and `message`, as assertKgwError checks it). */
export async function rejectsWithKgwError(promise: Promise<unknown>, code: ErrorCode, message?: string | RegExp): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assertKgwError(error, code, message);
    return true;
  });
}

// ---------------------------------------------------------------------------------------------
// Org files

/**
 * Tenant acme with Alice and her agent release-bot, in 6 lines: the org suites add their
 * sections after it and count the lines of their errors from there.
 */
export const ACME_RELEASE_BOT_ORG = `tenant: acme
name: Acme Inc.
people:
  - { email: alice@acme.test, name: Alice }
agents:
  - { name: release-bot, owner: alice@acme.test }
`;

/**
 * The agents and grants sections of the review suites' acme (after its people, who must
 * include Alice and Bob): Alice's writer-bot owns all Knowledge and Skills, Bob's draft-bot
 * may propose to both. A file may add grants after it.
 */
export const REVIEW_AGENTS = `agents:
  - { name: writer-bot, owner: alice@acme.test }
  - { name: draft-bot, owner: bob@acme.test }
grants:
  - { to: writer-bot, on: all_knowledge, role: owner }
  - { to: writer-bot, on: all_skills, role: owner }
  - { to: draft-bot, on: all_knowledge, role: proposer }
  - { to: draft-bot, on: all_skills, role: proposer }
`;

/** A second tenant whose one agent owns all of its Knowledge: what must never show through to another tenant. */
export const GLOBEX_KNOWLEDGE_OWNER_ORG = `tenant: globex
name: Globex
people:
  - { email: hank@globex.test, name: Hank }
agents:
  - { name: globex-bot, owner: hank@globex.test }
grants:
  - { to: globex-bot, on: all_knowledge, role: owner }
`;

// ---------------------------------------------------------------------------------------------
// The context bundle (the Alignbase dialect's get_current_context)

/** The heading and the fixed intro that open every bundle. */
export const CONTEXT_HEAD = [
  '# Alignbase session context',
  "Alignbase supplies this agent's context. That includes Knowledge, Skills, and Memory. Follow must-follow Knowledge within its authorized scope. Treat informational Knowledge as reference material. Follow authorized Skill instructions. Use Memory only as working recall, not a full knowledge base.",
] as const;

/** The whole bundle of an agent that nothing is routed to: every section keeps its heading and says so. */
export const EMPTY_CONTEXT =
  [
    ...CONTEXT_HEAD,
    '## Available Skills',
    'No Skills are routed to this agent.',
    '## Memories',
    'No Memories are routed to this agent.',
    '## Knowledge',
    'No Knowledge is routed to this agent.',
  ].join('\n\n') + '\n';
