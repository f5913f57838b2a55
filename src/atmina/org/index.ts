import type { OrgSection } from '../../kernel/org/section.ts';
import { kbsSection } from './kbs.ts';
import { teamsSection } from './teams.ts';

/**
 * Atmina's sections of the org file, in the order they are planned: Knowledge Bases name their
 * owning team. Teams name people and agents, so they come after the directory's sections.
 */
export const ATMINA_ORG_SECTIONS: readonly OrgSection[] = [teamsSection, kbsSection];
