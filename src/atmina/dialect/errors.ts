import type { KbAccess } from '../access/team-roles.ts';
import type { KgwError } from '../../kernel/errors.ts';
import type { CallerStanding, ToolRole } from '../kb/standing.ts';
import { isToolRole } from '../kb/standing.ts';
import type { DialectErrors } from '../../mcp/errors.ts';
import type { ToolDef, ToolReply } from '../../mcp/tool.ts';
import type { RetryReasons } from '../../mcp/retry-advice.ts';
import { retryAdvice } from '../../mcp/retry-advice.ts';

/** An error as Atmina words it, `code: message`: also each failed item of write_files. */
export function atminaText(error: KgwError): string {
  return `${atminaCode(error)}: ${error.message}`;
}

/** The code an agent branches on: Atmina has no `unauthenticated` of its own. */
export function atminaCode(error: KgwError): string {
  return error.code === 'unauthenticated' ? 'permission_denied' : error.code;
}

const ROLE_NAMES: Readonly<Record<KbAccess, string>> = { none: 'no role', search: 'search access', viewer: 'Viewer', editor: 'Editor', admin: 'Admin' };

function roleNeeded(needed: ToolRole): string {
  if (needed === 'finder') return 'search access on a Knowledge Base, or read access to some Knowledge, Memory or Artifact';
  return needed === 'team_admin' ? 'the Admin role in a team' : `the ${ROLE_NAMES[needed]} role on a Knowledge Base`;
}

function heldRole(needed: ToolRole, standing: CallerStanding): string {
  // A share may give Admin on a team's KBs, but only a member Admin manages the team.
  if (needed === 'team_admin') return 'you are Admin of no team as its member';
  if (needed === 'finder') return 'you have neither';
  return standing.highest === 'none' ? 'you have no role on any Knowledge Base or team' : `you have ${ROLE_NAMES[standing.highest]} at most`;
}

/**
 * The refusals waiting can resolve: a write that lost a race (a stale if_match, an append or
 * patch whose file kept changing under it) and an upload batch another call is confirming.
 */
const RETRY: RetryReasons = {
  lostRace: new Set(['stale_if_match', 'write_contended']),
  busy: new Set(['upload_batch_busy']),
};

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
    // The advice to back off only where waiting helps (a lost race, a busy batch): src/mcp/retry-advice.ts.
    const advice = retryAdvice(error, RETRY);
    return advice === undefined ? { text } : { text, notes: [advice] };
  },
  internal: (_tool, requestId) => ({ text: `unavailable: internal error; request id ${requestId}` }),
};

/** The refusal of a tool whose minimum role the caller holds nowhere (Atmina's access gate: access-gate.ts). */
export function outOfRole(tool: ToolDef, needed: string, standing: CallerStanding): ToolReply {
  if (!isToolRole(needed)) return atminaErrors.forbidden(tool, []);
  return { text: `permission_denied: ${tool.name} needs ${roleNeeded(needed)}; ${heldRole(needed, standing)}` };
}
