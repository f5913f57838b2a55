/** The value rules of Alignbase's sections of the org file: its tools check the same values. */
import { CONTEXT_ROLES } from '../access/context-roles.ts';
import { TITLE_MAX } from '../context/knowledge.ts';
import type { ValueRule } from '../../kernel/org/rules.ts';
import { displayNameRule, oneOf } from '../../kernel/org/rules.ts';

export const contextRoleRule = oneOf('a role', CONTEXT_ROLES);

/** A title or name as the tools take it (`what`: "a title"): trimmed, 1 to 200 characters. */
function trimmedNameRule(what: string): ValueRule {
  return {
    expected: `${what} of 1 to ${TITLE_MAX} characters`,
    valid: (value) => displayNameRule.valid(value.trim()),
    normalize: (value) => value.trim(),
  };
}

/** A Knowledge title, as write_knowledge takes it: trimmed, 1 to 200 characters. */
export const knowledgeTitleRule = trimmedNameRule('a title');

/** A Memory name, as create_memory takes it: trimmed, 1 to 200 characters. */
export const memoryNameRule = trimmedNameRule('a name');

/** Knowledge or Memory content written in the file: any text but the empty one. */
export const contentRule: ValueRule = {
  expected: 'text (markdown) of at least one character',
  valid: (value) => value !== '',
};

export const authorityRule = oneOf('an authority', ['informational', 'must_follow']);
