import { after, before, describe } from 'node:test';
import type { TestStore } from '../../support/stores.ts';
import { storeBackends } from '../../support/stores.ts';
import { BASE, prepare } from './access-support.ts';
import type { RefusalCase } from '../../org/support.ts';
import { itRefuses } from '../../org/support.ts';

// BASE has 9 lines, so the first line appended is line 10.
const RESOURCE = 'a resource: all_knowledge, all_skills, all_memories, all_artifacts, or knowledge:TITLE, skill:NAME, memory:NAME, artifact:NAME';
const ROUTABLE = 'a resource to route: knowledge:TITLE, skill:NAME or memory:NAME';
const AGENT_KEYS = 'name, owner, tier, departments, projects, brain_role, policy';
const PERSON_KEYS = 'email, name, tier, departments, projects, brain_role, password_env, mailbox, admin';

// A file of people and agents only: the person's extra keys start on line 6, the agent's on line 9.
const person = (...keys: string[]): string =>
  `tenant: acme\nname: Acme Inc.\npeople:\n  - email: bob@acme.test\n    name: Bob\n${keys.map((k) => `    ${k}\n`).join('')}`;
const agent = (...keys: string[]): string => `${person()}agents:\n  - name: bot\n    owner: bob@acme.test\n${keys.map((k) => `    ${k}\n`).join('')}`;

const CASES: RefusalCase[] = [
  {
    title: 'a bad tier',
    source: person('tier: secret'),
    errors: [[6, 'people[0].tier: "secret" is not a tier: public, department, project, manager, hr, executive, restricted']],
  },
  { title: 'a bad brain role', source: person('brain_role: boss'), errors: [[6, 'people[0].brain_role: "boss" is not a brain role: viewer, manager, admin']] },
  { title: 'departments that are not a list', source: person('departments: Sales'), errors: [[6, 'people[0].departments must be a list, not text']] },
  {
    title: 'a repeated or empty project',
    source: person('projects: [Apollo, Apollo, ""]'),
    errors: [
      [6, 'people[0].projects[1]: duplicate project "Apollo" (already listed at line 6)'],
      [6, 'people[0].projects[2]: "" is not a name of 1 to 200 characters'],
    ],
  },
  {
    title: 'a bad variable name',
    source: person('password_env: 1PASSWORD'),
    errors: [[6, 'people[0].password_env: "1PASSWORD" is not an environment variable name (letters, digits and "_", not starting with a digit)']],
  },
  {
    title: 'an unset password variable',
    source: person('password_env: BOB_PASSWORD'),
    errors: [[6, 'people[0].password_env: the environment variable BOB_PASSWORD is not set']],
  },
  {
    title: 'a variable that only the prototype has',
    source: person('password_env: constructor'),
    errors: [[6, 'people[0].password_env: the environment variable constructor is not set']],
  },
  {
    title: 'an empty password variable',
    source: person('password_env: EMPTY_PASSWORD'),
    errors: [[6, 'people[0].password_env: the environment variable EMPTY_PASSWORD is empty']],
  },
  {
    title: 'a policy on a person',
    source: person('policy: { max_team_role: viewer }'),
    errors: [[6, `unknown key "policy" in people[0] (expected ${PERSON_KEYS})`]],
  },
  { title: 'a password for an agent', source: agent('password_env: X'), errors: [[9, `unknown key "password_env" in agents[0] (expected ${AGENT_KEYS})`]] },
  {
    title: 'a bad policy role',
    source: agent('policy: { max_team_role: owner }'),
    errors: [[9, 'agents[0].policy.max_team_role: "owner" is not a role: viewer, editor, admin']],
  },
  {
    title: 'a policy with a wrong key',
    source: agent('policy: { max_role: viewer }'),
    errors: [
      [9, 'unknown key "max_role" in agents[0].policy (expected max_team_role)'],
      [9, 'agents[0].policy is missing the required key "max_team_role"'],
    ],
  },
  {
    title: 'an unknown grant key',
    source: `${BASE}grants:\n  - { to: release-bot, on: all_knowledge, role: viewer, until: x }\n`,
    errors: [[11, 'unknown key "until" in grants[0] (expected to, on, role)']],
  },
  {
    title: 'a grant without a role',
    source: `${BASE}grants:\n  - { to: release-bot, on: all_knowledge }\n`,
    errors: [[11, 'grants[0] is missing the required key "role"']],
  },
  {
    title: 'a bad grant role',
    source: `${BASE}grants:\n  - { to: release-bot, on: all_knowledge, role: admin }\n`,
    errors: [[11, 'grants[0].role: "admin" is not a role: viewer, proposer, editor, publisher, owner']],
  },
  {
    title: 'bad grant targets',
    source: `${BASE}grants:\n  - { to: release-bot, on: everything, role: viewer }\n  - { to: release-bot, on: "document:Handbook", role: viewer }\n  - { to: release-bot, on: "knowledge:", role: viewer }\n  - { to: release-bot, on: constructor, role: viewer }\n`,
    errors: [
      [11, `grants[0].on: "everything" is not ${RESOURCE}`],
      [12, `grants[1].on: "document:Handbook" is not ${RESOURCE}`],
      [13, `grants[2].on: "knowledge:" is not ${RESOURCE}`],
      [14, `grants[3].on: "constructor" is not ${RESOURCE}`],
    ],
  },
  {
    title: 'a bad grantee',
    source: `${BASE}grants:\n  - { to: "bad name!", on: all_knowledge, role: viewer }\n`,
    errors: [[11, 'grants[0].to: "bad name!" is not an agent\'s name, a person\'s email or group:NAME']],
  },
  {
    title: 'dangling grant references',
    source: `${BASE}grants:\n  - { to: ghost-bot, on: all_knowledge, role: viewer }\n  - { to: group:nobody, on: all_skills, role: viewer }\n  - { to: carol@acme.test, on: all_skills, role: viewer }\n  - { to: release-bot, on: knowledge:Nope, role: viewer }\n`,
    errors: [
      [11, 'grants[0].to: no agent "ghost-bot" is declared in the file or exists in tenant "acme"'],
      [12, 'grants[1].to: no group "nobody" is declared in the file or exists in tenant "acme"'],
      [13, 'grants[2].to: no person "carol@acme.test" is declared in the file or exists in tenant "acme"'],
      [14, 'grants[3].on: no knowledge "Nope" is declared in the file or exists in tenant "acme"'],
    ],
  },
  {
    title: 'a duplicate grant',
    source: `${BASE}grants:\n  - { to: release-bot, on: all_knowledge, role: viewer }\n  - { to: release-bot, on: all_knowledge, role: editor }\n`,
    errors: [[12, 'grants[1]: duplicate grant "release-bot on all_knowledge" (already listed at line 11)']],
  },
  {
    title: 'a route to a person',
    source: `${BASE}routes:\n  - { deliver: knowledge:Handbook, to: alice@acme.test }\n`,
    errors: [[11, 'routes[0].to: "alice@acme.test" is a person; routes deliver to agents and groups only']],
  },
  {
    title: 'routes of an Artifact and a whole type',
    source: `${BASE}routes:\n  - { deliver: artifact:Q3 report, to: release-bot }\n  - { deliver: all_knowledge, to: release-bot }\n`,
    errors: [
      [11, `routes[0].deliver: "artifact:Q3 report" is not ${ROUTABLE}`],
      [12, `routes[1].deliver: "all_knowledge" is not ${ROUTABLE}`],
    ],
  },
  {
    title: 'dangling and duplicate routes',
    source: `${BASE}routes:\n  - { deliver: skill:nope, to: release-bot }\n  - { deliver: knowledge:Handbook, to: group:ghosts }\n  - { deliver: knowledge:Handbook, to: release-bot }\n  - { deliver: knowledge:Handbook, to: release-bot }\n  - { deliver: knowledge:Handbook }\n`,
    errors: [
      [11, 'routes[0].deliver: no skill "nope" is declared in the file or exists in tenant "acme"'],
      [12, 'routes[1].to: no group "ghosts" is declared in the file or exists in tenant "acme"'],
      [14, 'routes[3]: duplicate route "knowledge:Handbook to release-bot" (already listed at line 13)'],
      [15, 'routes[4] is missing the required key "to"'],
    ],
  },
];

for (const backend of storeBackends()) {
  describe(`org file access errors on ${backend.name}`, () => {
    let store: TestStore;
    before(async () => {
      store = await backend.open({ migrated: true });
      await prepare(store.db);
    });
    after(async () => {
      await store.dispose();
    });

    itRefuses(() => store.db, CASES, { EMPTY_PASSWORD: '' });
  });
}
