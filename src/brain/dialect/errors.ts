import type { DialectErrors } from '../../mcp/errors.ts';
import { reasonOf } from '../../kernel/errors.ts';
import { ABOVE_TIER, BRAIN_UNAVAILABLE, UNKNOWN_NODE } from './texts.ts';

/**
 * Company Brain refuses a missing scope as "Forbidden" and otherwise answers with its verbatim
 * texts: read_concept's two refusals (docs/company-brain.md) by their reason.
 */
export const brainErrors: DialectErrors = {
  forbidden: () => ({ text: 'Forbidden' }),
  invalidArguments: (_tool, problems) => ({ text: `Invalid input: ${problems.join('; ')}` }),
  fromError: (_tool, error) => {
    if (error.reason === 'node_unknown') return { text: UNKNOWN_NODE };
    if (error.reason === 'node_above_tier') return { text: ABOVE_TIER };
    const why = reasonOf(error);
    if (why?.reason === 'backend_unavailable') return { text: BRAIN_UNAVAILABLE[why.facts.role] };
    if (error.code === 'validation') return { text: `Invalid input: ${error.message}` };
    return { text: error.code === 'permission_denied' ? 'Forbidden' : error.message };
  },
  internal: (_tool, requestId) => ({ text: `Internal error; request id ${requestId}` }),
};
