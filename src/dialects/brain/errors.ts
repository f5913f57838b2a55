import type { DialectErrors } from '../../mcp/errors.ts';

/** Company Brain refuses a missing scope as "Forbidden" and otherwise answers with its verbatim texts. */
export const brainErrors: DialectErrors = {
  forbidden: () => ({ text: 'Forbidden' }),
  invalidArguments: (_tool, problems) => ({ text: `Invalid input: ${problems.join('; ')}` }),
  fromError: (_tool, error) => ({ text: error.code === 'permission_denied' ? 'Forbidden' : error.message }),
  internal: (_tool, requestId) => ({ text: `Internal error; request id ${requestId}` }),
};
