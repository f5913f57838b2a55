import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { applyOrgFile } from '../../src/org-sections.ts';
import { cliTrail } from '../support/audit.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';
import type { RefusalCase } from './support.ts';
import { ACME, itRefuses, snapshot } from './support.ts';

/** ACME with one or more pieces replaced; line numbers below refer to ACME's lines. */
function acmeWith(...edits: [string, string][]): string {
  let source = ACME;
  for (const [from, to] of edits) {
    assert.ok(source.includes(from), `the example holds ${JSON.stringify(from)}`);
    source = source.replace(from, to);
  }
  return source;
}

const TOP_KEYS = 'tenant, name, language, people, agents, groups, teams, kbs, knowledge, skills, memories, grants, routes, brain';
const PERSON_KEYS = 'email, name, tier, departments, projects, brain_role, password_env, mailbox, admin';

const CASES: RefusalCase[] = [
  {
    title: 'a YAML syntax error',
    source: 'tenant: acme\nname: Acme: Inc.\n',
    errors: [[2, 'invalid YAML: Nested mappings are not allowed in compact mappings']],
  },
  { title: 'a duplicate YAML key', source: `${ACME}tenant: acme\n`, errors: [[17, 'duplicate key "tenant"']] },
  { title: 'a custom tag', source: acmeWith(['name: Acme Inc.', 'name: !secret Acme Inc.']), errors: [[2, 'invalid YAML: Unresolved tag: !secret']] },
  {
    title: 'an alias without its anchor',
    source: acmeWith(['[release-bot, alice@acme.test]', '*engineers']),
    errors: [[12, 'groups[0].members must be a list, not *engineers, an alias with no anchor of that name']],
  },
  { title: 'an empty file', source: '', errors: [[1, 'the file must be a map, not empty']] },
  { title: 'an unknown top-level key', source: acmeWith(['people:', 'peple:']), errors: [[4, `unknown key "peple" at the top level (expected ${TOP_KEYS})`]] },
  {
    title: 'an unknown nested key',
    source: acmeWith(['    name: Alice\n', '    name: Alice\n    mail: alice@acme.test\n']),
    errors: [[7, `unknown key "mail" in people[0] (expected ${PERSON_KEYS})`]],
  },
  {
    title: 'an unknown key in a team',
    source: acmeWith(['    name: Docs team\n', '    name: Docs team\n    role: admin\n']),
    errors: [[16, 'unknown key "role" in teams[0] (expected slug, name, members, shares)']],
  },
  {
    title: 'a missing required key',
    source: acmeWith(['name: Acme Inc.\n', ''], ['    name: Alice\n', '']),
    errors: [
      [1, 'the file is missing the required key "name"'],
      [4, 'people[0] is missing the required key "name"'],
    ],
  },
  {
    title: 'a list where a map belongs',
    source: acmeWith(['  - email: Alice@Acme.test\n    name: Alice\n', '  email: alice@acme.test\n']),
    errors: [[5, 'people must be a list, not a map']],
  },
  {
    title: 'a number where text belongs',
    source: acmeWith(['name: Acme Inc.', 'name: 42']),
    errors: [[2, 'name must be a name of 1 to 200 characters, not a number; put it in quotes to make it text']],
  },
  { title: 'a NUL in text', source: acmeWith(['name: Acme Inc.', 'name: "Acme\\0Inc."']), errors: [[2, 'name must not contain NUL (U+0000)']] },
  {
    title: 'a lone surrogate in text',
    source: acmeWith(['    name: Alice\n', '    name: "Al\\uD800ice"\n']),
    errors: [[6, 'people[0].name must be well-formed Unicode (it has a lone surrogate)']],
  },
  {
    title: 'a bad tenant slug',
    source: acmeWith(['tenant: acme', 'tenant: Acme_Inc']),
    errors: [[1, 'tenant: "Acme_Inc" is not a slug (1 to 63 lower-case letters, digits and "-", not starting with "-")']],
  },
  {
    title: 'a bad team slug',
    source: acmeWith(['slug: docs', 'slug: -docs']),
    errors: [[14, 'teams[0].slug: "-docs" is not a slug (1 to 63 lower-case letters, digits and "-", not starting with "-")']],
  },
  {
    title: 'a bad language',
    source: acmeWith(['language: en', 'language: English']),
    errors: [[3, 'language: "English" is not a language tag such as "en" or "pt-BR"']],
  },
  {
    title: 'a bad email',
    source: acmeWith(['email: Alice@Acme.test', 'email: alice.acme.test']),
    errors: [[5, 'people[0].email: "alice.acme.test" is not an email address']],
  },
  {
    title: 'a bad agent name',
    source: acmeWith(['  - name: release-bot', '  - name: "bot: release"']),
    errors: [[8, 'agents[0].name: "bot: release" is not an agent name (1 to 100 letters, digits, spaces, ".", "_" and "-", starting with a letter or digit)']],
  },
  {
    title: 'an agent as owner',
    source: acmeWith(['owner: alice@acme.test', 'owner: release-bot']),
    errors: [[9, 'agents[0].owner: "release-bot" is not a person\'s email address']],
  },
  {
    title: 'a bad role',
    source: acmeWith(['release-bot: editor', 'release-bot: owner']),
    errors: [[16, 'teams[0].members["release-bot"]: "owner" is not a role: viewer, editor, admin']],
  },
  {
    title: 'an admin that is not a YAML boolean',
    source: acmeWith(['    name: Alice\n', '    name: Alice\n    admin: "yes"\n']),
    errors: [[7, 'people[0].admin must be true or false, not text']],
  },
  {
    title: 'duplicate entries',
    source: `tenant: acme
name: Acme Inc.
people:
  - { email: bob@acme.test, name: Bob }
  - { email: BOB@acme.test, name: Bobby }
agents:
  - { name: bot, owner: bob@acme.test }
  - { name: bot, owner: bob@acme.test }
groups:
  - { name: eng, members: [bot, bot] }
  - { name: eng, members: [] }
teams:
  - { slug: docs, name: Docs, members: { bob@acme.test: admin, Bob@Acme.test: viewer } }
  - { slug: docs, name: Docs, members: {} }
`,
    errors: [
      [5, 'people[1].email: duplicate person "bob@acme.test" (already listed at line 4)'],
      [8, 'agents[1].name: duplicate agent "bot" (already listed at line 7)'],
      [10, 'groups[0].members[1]: duplicate member "bot" (already listed at line 10)'],
      [11, 'groups[1].name: duplicate group "eng" (already listed at line 10)'],
      [13, 'teams[0].members["Bob@Acme.test"]: duplicate member "bob@acme.test" (already listed at line 13)'],
      [14, 'teams[1].slug: duplicate team "docs" (already listed at line 13)'],
    ],
  },
  {
    title: 'a dangling owner',
    source: acmeWith(['owner: alice@acme.test', 'owner: carol@acme.test']),
    errors: [[9, 'agents[0].owner: no person "carol@acme.test" is declared in the file or exists in tenant "acme"']],
  },
  {
    title: 'dangling members',
    source: acmeWith(['[release-bot, alice@acme.test]', '[release-bot, ghost-bot]'], ['release-bot: editor', 'carol@acme.test: editor']),
    errors: [
      [12, 'groups[0].members[1]: no agent "ghost-bot" is declared in the file or exists in tenant "acme"'],
      [16, 'teams[0].members["carol@acme.test"]: no person "carol@acme.test" is declared in the file or exists in tenant "acme"'],
    ],
  },
  {
    title: 'problems of every kind at once, in file order',
    source: acmeWith(
      ['language: en', 'language: 7'],
      ['    name: Alice\n', '    name: Alice\n    x: 1\n'],
      ['owner: alice@acme.test', 'owner: carol@acme.test'],
      ['admin', 'boss'],
    ),
    errors: [
      [3, 'language must be a language tag such as "en" or "pt-BR", not a number; put it in quotes to make it text'],
      [7, `unknown key "x" in people[0] (expected ${PERSON_KEYS})`],
      [10, 'agents[0].owner: no person "carol@acme.test" is declared in the file or exists in tenant "acme"'],
      [17, 'teams[0].members["alice@acme.test"]: "boss" is not a role: viewer, editor, admin'],
    ],
  },
];

for (const backend of storeBackends()) {
  describe(`org file errors on ${backend.name}`, () => {
    let store: TestStore;
    before(async () => {
      store = await backend.open({ migrated: true });
      await applyOrgFile(store.db, { source: ACME }, cliTrail(store.db));
    });
    after(async () => {
      await store.dispose();
    });

    itRefuses(() => store.db, CASES);

    it('names the given file in messages and creates no tenant when a reference dangles', async () => {
      const rows = await snapshot(store.db);
      const source = acmeWith(['tenant: acme', 'tenant: initech'], ['owner: alice@acme.test', 'owner: carol@acme.test']);
      await assert.rejects(applyOrgFile(store.db, { source, fileName: 'config/initech.yaml' }, cliTrail(store.db)), {
        code: 'validation',
        message: 'config/initech.yaml:9: agents[0].owner: no person "carol@acme.test" is declared in the file or exists in tenant "initech"',
      });
      assert.deepEqual(await snapshot(store.db), rows);
    });
  });
}
