import { TEAM_ROLES } from '../directory/team-roles.ts';
import { BRAIN_ROLES, TIERS } from '../directory/tiers.ts';
import { isCalendarDay } from '../instants.ts';

/**
 * The value rules of the org file's directory and the generic ones products build on; they mirror
 * the CHECK constraints of the schema. A product's own rules live with its sections.
 */
export interface ValueRule {
  /** What a valid value looks like, for messages: `"x" is not <expected>`. */
  readonly expected: string;
  valid(value: string): boolean;
  /** The stored form of a valid value (emails are kept lower-case). */
  normalize?(value: string): string;
}

const SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;
const LANGUAGE = /^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;
// Deliberately loose: something@domain.tld without spaces; the mail system is the real judge.
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const AGENT_NAME = /^[A-Za-z0-9][A-Za-z0-9 ._-]{0,99}$/;

// Postgres length() counts characters, not UTF-16 units.
export const characters = (value: string): number => [...value].length;
const isName = (value: string): boolean => value.trim() !== '' && characters(value) <= 200;

export const slugRule: ValueRule = {
  expected: 'a slug (1 to 63 lower-case letters, digits and "-", not starting with "-")',
  valid: (value) => SLUG.test(value),
};

export const displayNameRule: ValueRule = {
  expected: 'a name of 1 to 200 characters',
  valid: isName,
};

export const languageRule: ValueRule = {
  expected: 'a language tag such as "en" or "pt-BR"',
  valid: (value) => LANGUAGE.test(value),
};

export const emailRule: ValueRule = {
  expected: 'an email address',
  valid: (value) => value.length <= 254 && EMAIL.test(value),
  normalize: (value) => value.toLowerCase(),
};

export const agentNameRule: ValueRule = {
  expected: 'an agent name (1 to 100 letters, digits, spaces, ".", "_" and "-", starting with a letter or digit)',
  valid: (value) => AGENT_NAME.test(value),
};

export const groupNameRule: ValueRule = {
  expected: 'a group name (1 to 200 characters, no ":")',
  valid: (value) => isName(value) && !value.includes(':'),
};

/** A value out of a fixed list, such as a role or a tier. */
export function oneOf(what: string, values: readonly string[]): ValueRule {
  return { expected: `${what}: ${values.join(', ')}`, valid: (value) => values.includes(value) };
}

export const teamRoleRule = oneOf('a role', TEAM_ROLES);
export const tierRule = oneOf('a tier', TIERS);
export const brainRoleRule = oneOf('a brain role', BRAIN_ROLES);

/** A department or project name: 1 to 200 characters, compared exactly. */
export const labelRule: ValueRule = {
  expected: 'a name of 1 to 200 characters',
  valid: isName,
};

/** The name of an environment variable, as POSIX shells write them. */
export const envNameRule: ValueRule = {
  expected: 'an environment variable name (letters, digits and "_", not starting with a digit)',
  valid: (value) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(value),
};

/** A member or owner reference: a person by email (it holds "@"), an agent by name. */
export const principalReferenceRule: ValueRule = {
  expected: "a person's email or an agent's name",
  valid: (value) => (value.includes('@') ? emailRule.valid(value) : agentNameRule.valid(value)),
  normalize: (value) => (value.includes('@') ? value.toLowerCase() : value),
};

/** A review or expiry date: a real calendar date written YYYY-MM-DD. */
export const dateRule: ValueRule = {
  expected: 'a date written YYYY-MM-DD',
  valid: isCalendarDay,
};
