import type { DialectErrors } from '../../mcp/errors.ts';
import { CONFLICT_ADVICE } from '../../mcp/errors.ts';

/**
 * Alignbase answers with the bare error texts of its spec's "Common Errors" table; the core's
 * messages for this dialect are those texts, so they pass through unchanged.
 */
export const alignbaseErrors: DialectErrors = {
  forbidden: () => ({ text: 'forbidden' }),
  invalidArguments: (_tool, problems) => ({ text: `invalid arguments: ${problems.join('; ')}` }),
  // The core words every Alignbase refusal as the spec does: `forbidden`, or the spec's own
  // text where it has one (memory_write_forbidden: ...).
  fromError: (_tool, error) => (error.code === 'conflict' ? { text: error.message, notes: [CONFLICT_ADVICE] } : { text: error.message }),
  internal: (_tool, requestId) => ({ text: `internal error; request id ${requestId}` }),
};
