import type { OrgSection } from '../../kernel/org/section.ts';
import { grantsSection } from './grants.ts';
import { knowledgeSection } from './knowledge.ts';
import { memoriesSection } from './memories.ts';
import { routesSection } from './routes.ts';
import { skillsSection } from './skills.ts';

/**
 * Alignbase's sections of the org file, in the order they are planned: the sections that declare
 * context resources (knowledge, skills, memories) before the grants and routes that name them.
 * They name people, agents and groups, so they come after the directory's sections.
 */
export const ALIGNBASE_ORG_SECTIONS: readonly OrgSection[] = [knowledgeSection, skillsSection, memoriesSection, grantsSection, routesSection];
