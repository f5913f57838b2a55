import type { AccessGate } from './mcp/access-gate.ts';
import type { DialectErrors } from './mcp/errors.ts';
import type { RateLimiterDef } from './mcp/rates.ts';
import type { Endpoint } from './mcp/registry.ts';
import type { ResourceDef } from './mcp/resource.ts';
import type { Dialect, ToolDef } from './mcp/tool.ts';
import {
  recordActivityEventTool,
  recordHookActivityEventTool,
  reportInstallationCapabilitiesTool,
  startHookSessionTool,
} from './alignbase/dialect/activity.ts';
import { listArtifactsTool, readArtifactTool, writeArtifactTool } from './alignbase/dialect/artifacts.ts';
import { getCurrentContextTool, readContextAttachmentTool } from './alignbase/dialect/context.ts';
import { alignbaseErrors } from './alignbase/dialect/errors.ts';
import {
  createKnowledgeDraftTool,
  listKnowledgeDraftsTool,
  listKnowledgeTool,
  proposeKnowledgeTool,
  publishKnowledgeTool,
  readKnowledgeDraftTool,
  readKnowledgeTool,
  writeKnowledgeTool,
} from './alignbase/dialect/knowledge.ts';
import { createMemoryTool, listMemoriesTool, readMemoryTool, writeMemoryTool } from './alignbase/dialect/memory.ts';
import { listContextRecipientsTool, readInboxTool, sendContextTool } from './alignbase/dialect/messages.ts';
import {
  createSkillDraftTool,
  createSkillTool,
  listSkillDraftsTool,
  listSkillsTool,
  publishSkillTool,
  readSkillDraftTool,
  readSkillTool,
  writeSkillTool,
} from './alignbase/dialect/skills.ts';
import { auditLogTool, getAuditEventTool } from './atmina/dialect/audit.ts';
import { atminaGate } from './atmina/dialect/access-gate.ts';
import { atminaErrors } from './atmina/dialect/errors.ts';
import { kbWritesLimiter } from './atmina/dialect/rate-limiters.ts';
import { acceptKbInvitations } from './atmina/kb/sharing.ts';
import type { SignInHook } from './auth/sessions.ts';
import { READABLE_CONTEXT_EXISTS } from './alignbase/search-source.ts';
import {
  deleteFileTool,
  fileHistoryTool,
  listFilesTool,
  moveFileTool,
  readFileTool,
  restoreVersionTool,
  writeFileTool,
  writeFilesTool,
} from './atmina/dialect/files.ts';
import { health } from './atmina/dialect/health.ts';
import { generateHubIndexTool, generateNavTool, getFileOutlineTool } from './atmina/dialect/pages.ts';
import { createKbTool, deleteKbTool, listKbsTool, updateKbTool } from './atmina/dialect/kbs.ts';
import { relatedTool } from './atmina/dialect/related.ts';
import { searchTool } from './atmina/dialect/search.ts';
import { getContextTool } from './atmina/dialect/context.ts';
import { inviteToKbTool, revokeShareTool, shareKbTool } from './atmina/dialect/sharing.ts';
import { getTeamSettingsTool, updateTeamSettingsTool } from './atmina/dialect/team-settings.ts';
import { confirmUploadsTool, requestUploadsTool, updateFileTool, uploadFileTool } from './atmina/dialect/uploads.ts';
import { atminaResources } from './atmina/dialect/resources.ts';
import { whoami } from './atmina/dialect/whoami.ts';
import { brainErrors } from './brain/dialect/errors.ts';
import { brainProposalTools } from './brain/dialect/inbox-tools.ts';
import { brainOnboardingTools } from './brain/dialect/onboarding-tools.ts';
import { brainOutreachTools } from './brain/dialect/outreach-tools.ts';
import { brainReadTools } from './brain/dialect/read-tools.ts';
import { ALIGNBASE_GUIDANCE, ATMINA_GUIDANCE, BRAIN_GUIDANCE, COMBINED_GUIDANCE } from './guidance.ts';

/** Every tool of every dialect; each endpoint serves the ones of its dialects. */
export const allTools: readonly ToolDef[] = [
  ...brainReadTools,
  ...brainProposalTools,
  ...brainOnboardingTools,
  ...brainOutreachTools,
  getCurrentContextTool,
  listKnowledgeTool,
  readKnowledgeTool,
  writeKnowledgeTool,
  publishKnowledgeTool,
  createKnowledgeDraftTool,
  proposeKnowledgeTool,
  listKnowledgeDraftsTool,
  readKnowledgeDraftTool,
  listSkillsTool,
  readSkillTool,
  createSkillTool,
  writeSkillTool,
  publishSkillTool,
  createSkillDraftTool,
  listSkillDraftsTool,
  readSkillDraftTool,
  readContextAttachmentTool,
  listMemoriesTool,
  readMemoryTool,
  createMemoryTool,
  writeMemoryTool,
  listArtifactsTool,
  readArtifactTool,
  writeArtifactTool,
  listContextRecipientsTool,
  sendContextTool,
  readInboxTool,
  reportInstallationCapabilitiesTool,
  recordActivityEventTool,
  startHookSessionTool,
  recordHookActivityEventTool,
  whoami,
  health,
  listKbsTool,
  searchTool,
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
];

/** Every resource of every dialect; each endpoint serves the ones of its dialects. */
export const allResources: readonly ResourceDef[] = [...atminaResources];

export const dialectErrors: Readonly<Record<Dialect, DialectErrors>> = {
  alignbase: alignbaseErrors,
  atmina: atminaErrors,
  brain: brainErrors,
};

/**
 * The access gates of the dialects whose tools declare a minimum role. Atmina's `finder` (its
 * search, which finds Alignbase content too) reaches a caller who may read some Alignbase
 * resource: that crossing is wired here.
 */
export const accessGates: Readonly<Partial<Record<Dialect, AccessGate>>> = { atmina: atminaGate(READABLE_CONTEXT_EXISTS) };

/** The rate limiters the tools name (ToolDef.rateLimit). */
export const rateLimiters: readonly RateLimiterDef[] = [kbWritesLimiter];

/** What the products do when a person signs in: Atmina accepts the KB invitations waiting for the person's email. */
export const signInHooks: readonly SignInHook[] = [
  async (tx, tenantId, personId, audit) => {
    await acceptKbInvitations(tx, tenantId, personId, audit);
  },
];

/** The MCP endpoints: one per dialect, as its original service names itself and with its spec's guidance (guidance.ts), and one for all. */
export function mcpEndpoints(version: string): Endpoint[] {
  return [
    {
      path: '/mcp',
      dialects: ['alignbase', 'atmina', 'brain'],
      serverInfo: { name: 'knowledge-gateway', title: 'Knowledge Gateway', version },
      instructions: COMBINED_GUIDANCE,
    },
    {
      path: '/alignbase/mcp',
      dialects: ['alignbase'],
      serverInfo: { name: 'alignbase', title: 'Alignbase', version: '0.1.0' },
      instructions: ALIGNBASE_GUIDANCE,
    },
    { path: '/atmina/mcp', dialects: ['atmina'], serverInfo: { name: 'atmina', title: 'Atmina', version }, instructions: ATMINA_GUIDANCE },
    { path: '/brain/mcp', dialects: ['brain'], serverInfo: { name: 'company-brain', title: 'Company Brain', version }, instructions: BRAIN_GUIDANCE },
  ];
}
