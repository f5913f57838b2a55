import { brainErrors } from './dialect/errors.ts';
import { BRAIN_GUIDANCE } from './dialect/guidance.ts';
import { brainProposalTools } from './dialect/inbox-tools.ts';
import { brainOnboardingTools } from './dialect/onboarding-tools.ts';
import { brainOutreachTools } from './dialect/outreach-tools.ts';
import { brainReadTools } from './dialect/read-tools.ts';
import type { Product } from '../mcp/product.ts';

declare module '../mcp/tool.ts' {
  interface Dialects {
    brain: true;
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
  scopes: { used: ['brain:read', 'brain:propose', 'outreach:propose'], defaults: ['brain:read'] },
};
