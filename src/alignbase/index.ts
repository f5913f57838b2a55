import { recordActivityEventTool, recordHookActivityEventTool, reportInstallationCapabilitiesTool, startHookSessionTool } from './dialect/activity.ts';
import { listArtifactsTool, readArtifactTool, writeArtifactTool } from './dialect/artifacts.ts';
import { getCurrentContextTool, readContextAttachmentTool } from './dialect/context.ts';
import { alignbaseErrors } from './dialect/errors.ts';
import { ALIGNBASE_GUIDANCE } from './dialect/guidance.ts';
import {
  createKnowledgeDraftTool,
  listKnowledgeDraftsTool,
  listKnowledgeTool,
  proposeKnowledgeTool,
  publishKnowledgeTool,
  readKnowledgeDraftTool,
  readKnowledgeTool,
  writeKnowledgeTool,
} from './dialect/knowledge.ts';
import { createMemoryTool, listMemoriesTool, readMemoryTool, writeMemoryTool } from './dialect/memory.ts';
import { listContextRecipientsTool, readInboxTool, sendContextTool } from './dialect/messages.ts';
import {
  createSkillDraftTool,
  createSkillTool,
  listSkillDraftsTool,
  listSkillsTool,
  publishSkillTool,
  readSkillDraftTool,
  readSkillTool,
  writeSkillTool,
} from './dialect/skills.ts';
import { alignbaseActivity } from './console/activity.ts';
import { alignbaseInbox } from './console/inbox.ts';
import type { Product } from '../mcp/product.ts';

declare module '../mcp/tool.ts' {
  interface Dialects {
    alignbase: true;
  }
}

declare module '../kernel/access/scopes.ts' {
  interface ScopeNames {
    'context.read': true;
    'context.write': true;
    'activity.write': true;
  }
}

/**
 * What Alignbase offers the gateway (src/mcp/product.ts): its endpoint, named as the original
 * service names itself, its tools in the order tools/list has always given them, and its wording.
 */
export const alignbase: Product = {
  dialect: 'alignbase',
  endpoint: { path: '/alignbase/mcp', name: 'alignbase', title: 'Alignbase', version: '0.1.0' },
  guidance: ALIGNBASE_GUIDANCE,
  guidanceHeading: 'Alignbase (get_current_context; Knowledge, Skills, Memory, Artifacts, messages, Activity)',
  tools: [
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
  ],
  errors: alignbaseErrors,
  scopes: {
    declared: [
      // documents.*: the names Alignbase's clients used before context.*, still accepted.
      { name: 'context.read', description: 'read the knowledge, skills and memories the agent may read', aliases: ['documents.read'] },
      {
        name: 'context.write',
        description: 'write knowledge, skills and memories where the agent may write',
        aliases: ['documents.write'],
        implies: ['context.read'],
      },
      { name: 'activity.write', description: 'report installations and activity events' },
    ],
    defaults: ['context.read', 'context.write'],
  },
  console: { inbox: alignbaseInbox, sections: [alignbaseActivity] },
};

/** Whether the caller may read some Knowledge, Memory or Artifact that search shows: an SQL condition on $1 tenant and $2 principal. */
export { READABLE_CONTEXT_EXISTS } from './search-source.ts';

// What the composition root wires beside the tools: the org file's sections, search, the one
// review inbox of `kgw review` and the admin operations of `kgw activity` and `kgw inbox`.
export { ALIGNBASE_ORG_SECTIONS } from './org/index.ts';
export { CONTEXT_KEY_PREFIXES, contextSearchRebuilder, contextSearchSource, hitResource, readableContextScopes } from './search-source.ts';
export { acceptReview, listReviews, rejectReview, showReview } from './context/review.ts';
export type { AcceptResultJson, RejectResultJson, ReviewDetailJson, ReviewItemJson } from './context/review-json.ts';
export { acceptResultJson, rejectResultJson, reviewDetailJson, reviewItemJson } from './context/review-json.ts';
export type { ActivityListing, EventListing } from './activity/activity.ts';
export { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT, eventDetail, listActivity, setActivityEnabled } from './activity/activity.ts';
export { adminInbox } from './messages/admin.ts';
export type { InboxListing, InboxMessageWire } from './dialect/messages.ts';
export { inboxListing } from './dialect/messages.ts';
export type { OperatorContextResource, OperatorContextVersion } from './context/operator-export.ts';
export { OPERATOR_CONTEXT_PAGE_DEFAULT, OPERATOR_CONTEXT_PAGE_MAX, operatorContext, operatorContextFile } from './context/operator-export.ts';
export { IMPORT_VERSIONS_MAX, importContextDraft, importContextResource } from './context/operator-import.ts';
export { operatorAccess, operatorTypeGrants } from './org/operator-grants.ts';
