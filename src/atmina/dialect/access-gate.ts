import type { AccessGate } from '../../mcp/access-gate.ts';
import { callerStanding, isToolRole, standingAllows } from '../kb/standing.ts';
import { outOfRole } from './errors.ts';

/**
 * Atmina's access gate: a tool's minimum role (ToolDef.minimumRole) against the caller's
 * standing across the organisation (src/atmina/kb/standing.ts), so tools/list shows only the
 * tools the caller can use somewhere and tools/call refuses the others in Atmina's words.
 * `readableContext` is the SQL condition that the caller may read some content of another
 * product that search finds (`finder`), handed in by the composition root.
 */
export function atminaGate(readableContext: string): AccessGate {
  const standingOf = callerStanding(readableContext);
  return {
    knows: isToolRole,
    async standing(services, caller) {
      const standing = await standingOf(services.db, caller);
      return {
        key: `${standing.highest}${standing.teamAdmin ? '+team_admin' : ''}${standing.contextReader === true ? '+context' : ''}`,
        allows: (needed) => standingAllows(standing, needed),
        refusal: (tool, needed) => outOfRole(tool, needed, standing),
      };
    },
  };
}
