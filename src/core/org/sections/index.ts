import type { OrgSection } from '../section.ts';
import { agentsSection } from './agents.ts';
import { groupsSection } from './groups.ts';
import { peopleSection } from './people.ts';
import { teamsSection } from './teams.ts';

/**
 * Every section of the org file, in the order they are planned and applied: a section may
 * refer to what an earlier one declares (agents name their owners among the people, groups
 * and teams name both). A new section is one module added here.
 */
export const ORG_SECTIONS: readonly OrgSection[] = [peopleSection, agentsSection, groupsSection, teamsSection];
