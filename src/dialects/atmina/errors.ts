import type { KgwError } from '../../core/errors.ts';
import type { DialectErrors } from '../../mcp/errors.ts';
import { CONFLICT_ADVICE } from '../../mcp/errors.ts';

/** An error as Atmina words it, `code: message`: also each failed item of write_files. */
export function atminaText(error: KgwError): string {
  return `${atminaCode(error)}: ${error.message}`;
}

/** The code an agent branches on: Atmina has no `unauthenticated` of its own. */
export function atminaCode(error: KgwError): string {
  return error.code === 'unauthenticated' ? 'permission_denied' : error.code;
}

/**
 * Atmina names each failure by its code (validation, permission_denied, not_found, conflict,
 * content_integrity, payload_too_large, rate_limited, unavailable) so that agents can branch on
 * it; the text is `code: message`.
 */
export const atminaErrors: DialectErrors = {
  forbidden: (tool, missing) => ({ text: `permission_denied: ${tool.name} needs the ${missing.join(' and ')} scope` }),
  invalidArguments: (_tool, problems) => ({ text: `validation: ${problems.join('; ')}` }),
  fromError: (_tool, error) => {
    const text = atminaText(error);
    return error.code === 'conflict' ? { text, notes: [CONFLICT_ADVICE] } : { text };
  },
  internal: (_tool, requestId) => ({ text: `unavailable: internal error; request id ${requestId}` }),
};
