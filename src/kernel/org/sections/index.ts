import type { OrgSection } from '../section.ts';
import { agentsSection } from './agents.ts';
import { brainSection } from '../../../brain/org-section.ts';
import { grantsSection } from '../../../alignbase/org/grants.ts';
import { groupsSection } from './groups.ts';
import { kbsSection } from '../../../atmina/org/kbs.ts';
import { knowledgeSection } from '../../../alignbase/org/knowledge.ts';
import { memoriesSection } from '../../../alignbase/org/memories.ts';
import { peopleSection } from './people.ts';
import { routesSection } from '../../../alignbase/org/routes.ts';
import { skillsSection } from '../../../alignbase/org/skills.ts';
import { teamsSection } from '../../../atmina/org/teams.ts';

/**
 * Every section of the org file, in the order they are planned and applied: a section may
 * refer to what an earlier one declares (agents name their owners among the people, groups
 * and teams name both, grants and routes name principals, groups and context resources).
 * A new section is one module added here; sections that declare context resources
 * (knowledge, skills, memories) go before grants and routes.
 */
export const ORG_SECTIONS: readonly OrgSection[] = [
  peopleSection,
  agentsSection,
  groupsSection,
  teamsSection,
  // Knowledge Bases name their owning team.
  kbsSection,
  knowledgeSection,
  skillsSection,
  memoriesSection,
  grantsSection,
  routesSection,
  // The brain's relations name people, agents, departments and projects.
  brainSection,
];
