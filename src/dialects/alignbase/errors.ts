import type { DialectErrors } from '../../mcp/errors.ts';

/**
 * Alignbase answers with the bare error texts of its spec's "Common Errors" table; the core's
 * messages for this dialect are those texts, so they pass through unchanged.
 */
export const alignbaseErrors: DialectErrors = {
  forbidden: () => ({ text: 'forbidden' }),
  invalidArguments: (_tool, problems) => ({ text: `invalid arguments: ${problems.join('; ')}` }),
  fromError: (_tool, error) => ({ text: error.code === 'permission_denied' ? 'forbidden' : error.message }),
  internal: (_tool, requestId) => ({ text: `internal error; request id ${requestId}` }),
};
