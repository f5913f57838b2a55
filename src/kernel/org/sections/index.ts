import type { OrgSection } from '../section.ts';
import { agentsSection } from './agents.ts';
import { groupsSection } from './groups.ts';
import { peopleSection } from './people.ts';

/**
 * The directory's sections of the org file, in the order they are planned: agents name their
 * owners among the people, groups name both. They come first: every product's sections may
 * name what they declare (src/org-sections.ts puts the products' sections after them).
 */
export const DIRECTORY_SECTIONS: readonly OrgSection[] = [peopleSection, agentsSection, groupsSection];
