import type { DialectErrors } from '../../mcp/errors.ts';

/**
 * Alignbase answers with the bare error texts of its spec's "Common Errors" table; the core's
 * messages for this dialect are those texts, so they pass through unchanged.
 */
export const alignbaseErrors: DialectErrors = {
  forbidden: () => ({ text: 'forbidden' }),
  invalidArguments: (_tool, problems) => ({ text: `invalid arguments: ${problems.join('; ')}` }),
  // A refusal is `forbidden`, except the one the spec words itself (memory_write_forbidden: ...).
  fromError: (_tool, error) => ({ text: error.code === 'permission_denied' && !error.message.startsWith('memory_write_forbidden') ? 'forbidden' : error.message }),
  internal: (_tool, requestId) => ({ text: `internal error; request id ${requestId}` }),
};
