import type { KgwError } from '../../kernel/errors.ts';
import { reasonOf } from '../../kernel/errors.ts';
import type { DialectErrors } from '../../mcp/errors.ts';
import type { RetryReasons } from '../../mcp/retry-advice.ts';
import { retryAdvice } from '../../mcp/retry-advice.ts';
import { TEXTS } from './texts.ts';

/** An error in the dialect's words: its reason worded by the table, else the core's message. */
export function alignbaseText(error: KgwError): string {
  const why = reasonOf(error);
  if (why === undefined) return error.message;
  // TypeScript cannot correlate the reason with its facts across the union; reasonOf pairs them.
  // A reason of another dialect's area (Knowledge Bases) has no Alignbase words: its message is the text.
  const word = (TEXTS as Partial<Record<string, (facts: unknown) => string>>)[why.reason];
  return word === undefined ? error.message : word(why.facts);
}

/** A stale expected_version: its spec says read latest, merge, write again; the advice adds the wait. */
const RETRY: RetryReasons = { lostRace: new Set(['version_conflict']) };

/**
 * Alignbase answers with the bare error texts of its spec's "Common Errors" table: the core
 * refuses by reason and facts, and texts.ts words each reason as the spec does (`forbidden`, or
 * the spec's own text where it has one, such as memory_write_forbidden: ...).
 */
export const alignbaseErrors: DialectErrors = {
  forbidden: () => ({ text: 'forbidden' }),
  invalidArguments: (_tool, problems) => ({ text: `invalid arguments: ${problems.join('; ')}` }),
  fromError: (_tool, error) => {
    const text = alignbaseText(error);
    // The advice to back off only where waiting helps (a lost race, a busy batch): src/mcp/retry-advice.ts.
    const advice = retryAdvice(error, RETRY);
    return advice === undefined ? { text } : { text, notes: [advice] };
  },
  internal: (_tool, requestId) => ({ text: `internal error; request id ${requestId}` }),
};
