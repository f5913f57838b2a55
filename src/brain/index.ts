import { brainErrors } from './dialect/errors.ts';
import { BRAIN_GUIDANCE } from './dialect/guidance.ts';
import { brainProposalTools } from './dialect/inbox-tools.ts';
import { brainOnboardingTools } from './dialect/onboarding-tools.ts';
import { brainOutreachTools } from './dialect/outreach-tools.ts';
import { brainReadTools } from './dialect/read-tools.ts';
import { brainGraph } from './console/graph.ts';
import { brainInbox } from './console/inbox.ts';
import type { Product } from '../mcp/product.ts';

declare module '../mcp/tool.ts' {
  interface Dialects {
    brain: true;
  }
}

declare module '../kernel/access/scopes.ts' {
  interface ScopeNames {
    'brain:read': true;
    'brain:propose': true;
    'outreach:propose': true;
  }
}

/** What Company Brain offers the gateway (src/mcp/product.ts): its endpoint, tools and wording. */
export const brain: Product = {
  dialect: 'brain',
  endpoint: {
    path: '/brain/mcp',
    name: 'company-brain',
    title: 'Company Brain',
    unauthorizedText: 'Unauthorized: the request is missing a valid Company Brain token.',
  },
  guidance: BRAIN_GUIDANCE,
  guidanceHeading: 'Company Brain (get_skill_pack, query_index, read_concept, write_inbox, onboarding)',
  tools: [...brainReadTools, ...brainProposalTools, ...brainOnboardingTools, ...brainOutreachTools],
  errors: brainErrors,
  scopes: {
    declared: [
      { name: 'brain:read', description: 'read the Company Brain at the agent’s access tier' },
      { name: 'brain:propose', description: 'propose Company Brain changes for approval' },
      { name: 'outreach:propose', description: 'propose outreach for approval' },
    ],
    defaults: ['brain:read'],
  },
  console: { inbox: brainInbox, sections: [brainGraph] },
};

// What the composition root wires beside the tools: the org file's `brain` section and the graph
// of the directory after every apply, search, the inbox in `kgw review` and `kgw brain import`.
export { brainSection } from './org-section.ts';
export { orgGraphApplyHook, orgGraphRebuilder } from './org-graph.ts';
export { BRAIN_NODE_KEY_PREFIX } from './search-changes.ts';
export { brainSearchRebuilder, brainSearchSource } from './search-source.ts';
export { acceptBrainReview, approverPasswordEnv, isBrainReview, listBrainReviews, rejectBrainReview, showBrainReview } from './review.ts';
export type { BrainDecisionJson, BrainDetailJson, BrainItemJson, NodeTierJson } from './review-json.ts';
export { brainDecisionJson, brainDetailJson, brainItemJson } from './review-json.ts';
export { importBrain } from './import.ts';
export {
  BRAIN_FILE_MAX_BYTES,
  OPERATOR_BRAIN_NODES_PAGE_DEFAULT,
  OPERATOR_BRAIN_NODES_PAGE_MAX,
  OPERATOR_BRAIN_RELATIONS_PAGE_DEFAULT,
  OPERATOR_BRAIN_RELATIONS_PAGE_MAX,
  operatorBrainNodes,
  operatorBrainRelations,
} from './operator-export.ts';
// The dialect's stable vocabulary and verbatim answers, for the reader of another Company Brain (kgw import mcp).
export { MARK_PHRASES, METADATA_KEYS, NODE_TYPES, RELATION_VERBS, WARNING_SIGN } from './model.ts';
export type { Mark, NodeType, RelationVerb } from './model.ts';
export { ABOVE_TIER, EMPTY_BRAIN, UNKNOWN_NODE } from './dialect/texts.ts';
