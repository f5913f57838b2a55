import { auditLogTool, getAuditEventTool } from './dialect/audit.ts';
import { atminaErrors } from './dialect/errors.ts';
import {
  deleteFileTool,
  fileHistoryTool,
  listFilesTool,
  moveFileTool,
  readFileTool,
  restoreVersionTool,
  writeFileTool,
  writeFilesTool,
} from './dialect/files.ts';
import { health } from './dialect/health.ts';
import { generateHubIndexTool, generateNavTool, getFileOutlineTool } from './dialect/pages.ts';
import { createKbTool, deleteKbTool, listKbsTool, updateKbTool } from './dialect/kbs.ts';
import { relatedTool } from './dialect/related.ts';
import { searchTool } from './dialect/search.ts';
import { getContextTool } from './dialect/context.ts';
import { inviteToKbTool, revokeShareTool, shareKbTool } from './dialect/sharing.ts';
import { getTeamSettingsTool, updateTeamSettingsTool } from './dialect/team-settings.ts';
import { confirmUploadsTool, requestUploadsTool, updateFileTool, uploadFileTool } from './dialect/uploads.ts';
import { atminaResources } from './dialect/resources.ts';
import { whoami } from './dialect/whoami.ts';
import { atminaGate } from './dialect/access-gate.ts';
import { anonymousSearchTool } from './dialect/anonymous-search.ts';
import { ANONYMOUS_INSTRUCTIONS, ATMINA_GUIDANCE } from './dialect/guidance.ts';
import { kbWritesLimiter } from './dialect/rate-limiters.ts';
import { acceptKbInvitations } from './kb/sharing.ts';
import { kbsSection } from './console/section.ts';
import type { Product } from '../mcp/product.ts';
import type { SearchedContent } from './searched-content.ts';

declare module '../mcp/tool.ts' {
  interface Dialects {
    atmina: true;
  }
}

// The scopes Alignbase reads and writes with too: one scope each, whichever product is served.
declare module '../kernel/access/scopes.ts' {
  interface ScopeNames {
    'context.read': true;
    'context.write': true;
  }
}

/** What the composition root hands Atmina from other products. */
export interface AtminaWiring {
  /**
   * The SQL condition (on $1 tenant, $2 principal) that the caller may read some content of
   * another product that `search` finds: who passes it may use `search` without a KB role.
   */
  readonly readableContext: string;
  /** What `search` finds beside KB files: the other products' content and its scopes. */
  readonly searchedContent: SearchedContent;
}

/**
 * What Atmina offers the gateway (src/mcp/product.ts): its endpoint, its tools and resources, its
 * access gate (minimum roles on some KB or team), its write rate, the KB invitations a sign-in
 * accepts, and anonymous search of public KBs.
 */
export function atmina(wiring: AtminaWiring): Product {
  const search = searchTool(wiring.searchedContent);
  return {
    dialect: 'atmina',
    endpoint: { path: '/atmina/mcp', name: 'atmina', title: 'Atmina' },
    guidance: ATMINA_GUIDANCE,
    guidanceHeading: 'Atmina (Knowledge Bases and their files: search, read_file, write_file, …)',
    tools: [
      whoami,
      health,
      listKbsTool,
      search,
      getContextTool,
      createKbTool,
      updateKbTool,
      deleteKbTool,
      listFilesTool,
      readFileTool,
      writeFileTool,
      writeFilesTool,
      fileHistoryTool,
      restoreVersionTool,
      moveFileTool,
      deleteFileTool,
      auditLogTool,
      getAuditEventTool,
      getTeamSettingsTool,
      updateTeamSettingsTool,
      shareKbTool,
      inviteToKbTool,
      revokeShareTool,
      getFileOutlineTool,
      generateHubIndexTool,
      generateNavTool,
      relatedTool,
      requestUploadsTool,
      confirmUploadsTool,
      uploadFileTool,
      updateFileTool,
    ],
    resources: atminaResources,
    errors: atminaErrors,
    gate: atminaGate(wiring.readableContext),
    limiters: [kbWritesLimiter],
    scopes: {
      declared: [
        { name: 'context.read', description: 'read the Knowledge Bases and files the agent may read' },
        { name: 'context.write', description: 'write files in the Knowledge Bases where the agent may write', implies: ['context.read'] },
      ],
      defaults: ['context.read', 'context.write'],
    },
    onSignIn: [
      async (tx, tenantId, personId, audit) => {
        await acceptKbInvitations(tx, tenantId, personId, audit);
      },
    ],
    anonymous: { tool: anonymousSearchTool(search), path: '/atmina/public/:tenant/mcp', instructions: ANONYMOUS_INSTRUCTIONS },
    // The web console's Knowledge Bases: browse, read, history and restore, search, upload (docs/console.md).
    console: { sections: [kbsSection(wiring.searchedContent)] },
  };
}

// What the composition root wires beside the tools: the org file's `teams` and `kbs`, search and
// the graph of KB files, the HTTP routes of file bytes and uploads, and the operator's KB commands.
export type { SearchedContent } from './searched-content.ts';
export { ATMINA_ORG_SECTIONS } from './org/index.ts';
export { KB_FILE_KEY_PREFIX, kbFileRebuilders } from './kb/projection.ts';
export { kbFileSearchSource } from './search-source.ts';
export { kbFileGraphSource } from './kb/link-source.ts';
export { registerKbFileRoutes } from './http/kb-file-routes.ts';
export { registerUploadRoutes } from './http/upload-routes.ts';
export { publicKbs } from './kb/public-kbs.ts';
export type { OperatorKbListing } from './kb/operator.ts';
export type { ImportedFile } from './kb/import.ts';
export { IMPORT_BATCH_FILES_MAX, importKbFiles } from './kb/import.ts';
export { parseKbPath, pathProblem } from './kb/paths.ts';
export { KB_TEXT_MAX_BYTES } from './kb/files.ts';
export type { VaultFile } from './kb/text/vault-links.ts';
export { VaultIndex, aliasesOf, relativeWikiTarget, relinkNote } from './kb/text/vault-links.ts';
export {
  OPERATOR_FILES_PAGE_DEFAULT,
  OPERATOR_FILES_PAGE_MAX,
  operatorFileBytes,
  operatorKb,
  operatorKbFiles,
  operatorKbs,
  operatorRestoreKb,
} from './kb/operator.ts';
export type { Kb } from './kb/queries.ts';
export { OPERATOR_TEAMS_PAGE_DEFAULT, OPERATOR_TEAMS_PAGE_MAX, operatorTeams } from './org/operator-teams.ts';
export { moveFile } from './kb/files.ts';
// Team settings for kgw import mcp (team.settings): the core, and the values it admits, which the import checks a source's against.
export type { TeamSettings } from './kb/queries.ts';
export { AUDIT_QUERY_TEXT, KB_VISIBILITIES } from './kb/queries.ts';
export { CONTRIBUTION_NOTE_DAYS, getTeamSettings, updateTeamSettings } from './kb/settings.ts';
