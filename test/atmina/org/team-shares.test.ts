import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { kbRoleFor } from '../../../src/atmina/access/team-shares.ts';
import { isKgwError } from '../../../src/kernel/errors.ts';
import { applyOrgFile } from '../../../src/org-sections.ts';
import type { OrgChange } from '../../../src/kernel/org/apply.ts';
import type { Db } from '../../../src/store/db.ts';
import { cliTrail } from '../../support/audit.ts';
import type { TestStore } from '../../support/stores.ts';
import { storeBackends } from '../../support/stores.ts';
import type { RefusalCase } from '../../org/support.ts';
import { itRefuses, snapshot } from '../../org/support.ts';

const PEOPLE = `tenant: acme
name: Acme Inc.
people:
  - { email: alice@acme.test, name: Alice }
  - { email: bob@acme.test, name: Bob }
agents:
  - { name: bot, owner: alice@acme.test, policy: { max_team_role: viewer } }
`;

// docs shares with eng, which the file declares after it.
const SHARED = `${PEOPLE}teams:
  - slug: docs
    name: Docs team
    members: { alice@acme.test: admin }
    shares:
      - { with: team:eng, role: viewer }
      - { with: Bob@Acme.test, role: editor }
      - { with: bot, role: admin }
  - slug: eng
    name: Engineering
    members: { bob@acme.test: viewer, bot: editor }
`;

const TEAM_CHANGES: OrgChange[] = [
  { action: 'create', kind: 'team', name: 'docs' },
  { action: 'add', kind: 'team member', name: 'alice@acme.test', detail: 'team docs as admin' },
  { action: 'create', kind: 'team', name: 'eng' },
  { action: 'add', kind: 'team member', name: 'bob@acme.test', detail: 'team eng as viewer' },
  { action: 'add', kind: 'team member', name: 'bot', detail: 'team eng as editor' },
  { action: 'add', kind: 'team share', name: 'team:eng', detail: 'team docs as viewer' },
  { action: 'add', kind: 'team share', name: 'bob@acme.test', detail: 'team docs as editor' },
  { action: 'add', kind: 'team share', name: 'bot', detail: 'team docs as admin' },
];

// eng's role goes up, ops (declared later) is added, bob and bot are no longer listed.
const CHANGED = `${PEOPLE}teams:
  - slug: docs
    name: Docs team
    members: { alice@acme.test: admin }
    shares:
      - { with: team:eng, role: editor }
      - { with: team:ops, role: viewer }
  - slug: eng
    name: Engineering
    members: { bob@acme.test: viewer, bot: editor }
  - slug: ops
    name: Operations
    members: {}
`;

/** Every share of a tenant as `team → grantee: role`, grantees named as the file names them. */
async function sharesOf(db: Db, slug: string): Promise<string[]> {
  const rows = await db.query<{ line: string }>(
    `SELECT t.slug || ' → ' || coalesce('team:' || g.slug, p.email, p.name) || ': ' || s.role AS line
       FROM team_shares s
       JOIN tenants n ON n.id = s.tenant_id
       JOIN teams t ON t.tenant_id = s.tenant_id AND t.id = s.team_id
       LEFT JOIN teams g ON g.tenant_id = s.tenant_id AND g.id = s.grantee_team_id
       LEFT JOIN principals p ON p.tenant_id = s.tenant_id AND p.id = s.principal_id
      WHERE n.slug = $1`,
    [slug],
  );
  return rows.map((row) => row.line).sort();
}

async function roleOn(db: Db, principal: string, team: string): Promise<string> {
  const [row] = await db.query<{ tenant_id: string; principal_id: string; team_id: string }>(
    `SELECT n.id AS tenant_id, p.id AS principal_id, t.id AS team_id
       FROM tenants n JOIN principals p ON p.tenant_id = n.id JOIN teams t ON t.tenant_id = n.id
      WHERE n.slug = 'acme' AND coalesce(p.email, p.name) = $1 AND t.slug = $2`,
    [principal, team],
  );
  assert.ok(row, `${principal} and ${team} exist`);
  return kbRoleFor(db, row.tenant_id, row.principal_id, row.team_id, false);
}

for (const backend of storeBackends()) {
  describe(`org file team shares on ${backend.name}`, () => {
    it('adds the shares after every team exists, which the access core then sees, and finds nothing to change again', async () => {
      const store = await backend.open({ migrated: true });
      try {
        const first = await applyOrgFile(store.db, { source: SHARED }, cliTrail(store.db));
        assert.deepEqual(
          first.changes.filter((c) => c.kind.startsWith('team')),
          TEAM_CHANGES,
        );
        assert.deepEqual(await sharesOf(store.db, 'acme'), ['docs → bob@acme.test: editor', 'docs → bot: admin', 'docs → team:eng: viewer']);
        assert.equal(await roleOn(store.db, 'alice@acme.test', 'docs'), 'admin');
        assert.equal(await roleOn(store.db, 'bob@acme.test', 'docs'), 'editor', 'direct editor beats viewer through eng');
        assert.equal(await roleOn(store.db, 'bot', 'docs'), 'viewer', 'the agent policy caps the admin share');
        assert.equal(await roleOn(store.db, 'alice@acme.test', 'eng'), 'none', 'shares go one way');

        const rows = await snapshot(store.db);
        assert.deepEqual((await applyOrgFile(store.db, { source: SHARED }, cliTrail(store.db))).changes, []);
        assert.deepEqual(await snapshot(store.db), rows);
      } finally {
        await store.dispose();
      }
    });

    it("makes a listed team's shares exact: role updates, additions and removals, the same in a dry run", async () => {
      const store = await backend.open({ migrated: true });
      try {
        await applyOrgFile(store.db, { source: SHARED }, cliTrail(store.db));
        const rows = await snapshot(store.db);
        const dry = await applyOrgFile(store.db, { source: CHANGED, dryRun: true }, cliTrail(store.db));
        assert.deepEqual(await snapshot(store.db), rows, 'a dry run writes nothing');
        const expected: OrgChange[] = [
          { action: 'create', kind: 'team', name: 'ops' },
          { action: 'update', kind: 'team share', name: 'team:eng', detail: 'team docs: role viewer → editor' },
          { action: 'add', kind: 'team share', name: 'team:ops', detail: 'team docs as viewer' },
          { action: 'remove', kind: 'team share', name: 'bob@acme.test', detail: 'team docs' },
          { action: 'remove', kind: 'team share', name: 'bot', detail: 'team docs' },
        ];
        assert.deepEqual(dry.changes, expected);
        const real = await applyOrgFile(store.db, { source: CHANGED }, cliTrail(store.db));
        assert.deepEqual(real.changes, expected);
        assert.deepEqual(await sharesOf(store.db, 'acme'), ['docs → team:eng: editor', 'docs → team:ops: viewer']);
        assert.equal(await roleOn(store.db, 'bob@acme.test', 'docs'), 'editor', 'now through eng');
        assert.equal(await roleOn(store.db, 'bot', 'docs'), 'viewer');
        assert.deepEqual((await applyOrgFile(store.db, { source: CHANGED }, cliTrail(store.db))).changes, []);
      } finally {
        await store.dispose();
      }
    });

    it('keeps the shares of a team listed without the key, or not listed at all', async () => {
      const store = await backend.open({ migrated: true });
      try {
        // eng shares too, so that changing docs' shares is seen not to touch eng's.
        const both = SHARED.replace(
          'members: { bob@acme.test: viewer, bot: editor }\n',
          'members: { bob@acme.test: viewer, bot: editor }\n    shares: [{ with: alice@acme.test, role: viewer }]\n',
        );
        await applyOrgFile(store.db, { source: both }, cliTrail(store.db));
        const rows = await snapshot(store.db);
        const withoutKey = SHARED.replace(/ {4}shares:\n(?: {6}- .*\n)+/, '');
        assert.ok(!withoutKey.includes('shares'));
        assert.deepEqual((await applyOrgFile(store.db, { source: withoutKey }, cliTrail(store.db))).changes, []);
        assert.deepEqual((await applyOrgFile(store.db, { source: PEOPLE }, cliTrail(store.db))).changes, []);
        assert.deepEqual(await snapshot(store.db), rows);

        // `shares:` with nothing under it, like `shares: []`, is the empty list: docs shares nothing.
        const emptied = await applyOrgFile(
          store.db,
          {
            source: withoutKey.replace('members: { alice@acme.test: admin }\n', 'members: { alice@acme.test: admin }\n    shares:\n'),
          },
          cliTrail(store.db),
        );
        assert.deepEqual(emptied.changes, [
          { action: 'remove', kind: 'team share', name: 'bob@acme.test', detail: 'team docs' },
          { action: 'remove', kind: 'team share', name: 'bot', detail: 'team docs' },
          { action: 'remove', kind: 'team share', name: 'team:eng', detail: 'team docs' },
        ]);
        assert.deepEqual(await sharesOf(store.db, 'acme'), ['eng → alice@acme.test: viewer']);
        const none = await applyOrgFile(
          store.db,
          {
            source: `${PEOPLE}teams:\n  - { slug: eng, name: Engineering, members: { bob@acme.test: viewer, bot: editor }, shares: [] }\n`,
          },
          cliTrail(store.db),
        );
        assert.deepEqual(none.changes, [{ action: 'remove', kind: 'team share', name: 'alice@acme.test', detail: 'team eng' }]);
        assert.deepEqual(await sharesOf(store.db, 'acme'), []);
      } finally {
        await store.dispose();
      }
    });

    it('names teams, people and agents that exist only in the tenant, and never those of another tenant', async () => {
      const store = await backend.open({ migrated: true });
      try {
        await applyOrgFile(store.db, { source: SHARED }, cliTrail(store.db));
        const later = `tenant: acme
name: Acme Inc.
teams:
  - slug: support
    name: Support
    members: {}
    shares: [{ with: team:docs, role: admin }, { with: BOT, role: viewer }, { with: bot, role: editor }, { with: alice@acme.test, role: viewer }]
`;
        // "BOT" is not the agent "bot": agent names are exact.
        await assert.rejects(applyOrgFile(store.db, { source: later }, cliTrail(store.db)), (error) => {
          assert.ok(isKgwError(error, 'validation'));
          assert.equal(error.message, 'org.yaml:7: teams[0].shares[1].with: no agent "BOT" is declared in the file or exists in tenant "acme"');
          return true;
        });
        const result = await applyOrgFile(store.db, { source: later.replace('{ with: BOT, role: viewer }, ', '') }, cliTrail(store.db));
        assert.deepEqual(result.changes, [
          { action: 'create', kind: 'team', name: 'support' },
          { action: 'add', kind: 'team share', name: 'team:docs', detail: 'team support as admin' },
          { action: 'add', kind: 'team share', name: 'bot', detail: 'team support as editor' },
          { action: 'add', kind: 'team share', name: 'alice@acme.test', detail: 'team support as viewer' },
        ]);
        assert.equal(await roleOn(store.db, 'alice@acme.test', 'support'), 'admin', 'through docs, where she is a member');

        // globex has neither docs nor alice: acme's do not count.
        const globex = later.replace('tenant: acme', 'tenant: globex').replace('{ with: BOT, role: viewer }, ', '');
        await assert.rejects(applyOrgFile(store.db, { source: globex }, cliTrail(store.db)), (error) => {
          assert.ok(isKgwError(error, 'validation'));
          assert.deepEqual(error.details, {
            errors: [
              { line: 7, message: 'teams[0].shares[0].with: no team "docs" is declared in the file or exists in tenant "globex"' },
              { line: 7, message: 'teams[0].shares[1].with: no agent "bot" is declared in the file or exists in tenant "globex"' },
              { line: 7, message: 'teams[0].shares[2].with: no person "alice@acme.test" is declared in the file or exists in tenant "globex"' },
            ],
          });
          return true;
        });
        assert.deepEqual(await sharesOf(store.db, 'globex'), []);
      } finally {
        await store.dispose();
      }
    });
  });
}

// The file the error cases start from: docs shares with eng already. `shares(...)` gives docs
// these shares: the first on line 12, the next on 13 and so on; eng follows them.
const BASE = `tenant: acme
name: Acme Inc.
people:
  - { email: alice@acme.test, name: Alice }
agents:
  - { name: bot, owner: alice@acme.test }
teams:
  - slug: docs
    name: Docs team
    members: { alice@acme.test: admin }
`;
const ENG = '  - { slug: eng, name: Engineering, members: {} }\n';
const shares = (...entries: string[]): string => `${BASE}    shares:\n${entries.map((entry) => `      - ${entry}\n`).join('')}${ENG}`;
const GRANTEE = `a team (team:SLUG), a person's email or an agent's name`;

const CASES: RefusalCase[] = [
  {
    title: 'a team sharing with itself',
    source: shares('{ with: team:docs, role: viewer }'),
    errors: [[12, 'teams[0].shares[0].with: team "docs" cannot share with itself']],
  },
  {
    title: 'duplicate shares (emails in any case)',
    source: shares(
      '{ with: team:eng, role: viewer }',
      '{ with: team:eng, role: editor }',
      '{ with: alice@acme.test, role: viewer }',
      '{ with: Alice@Acme.test, role: admin }',
    ),
    errors: [
      [13, 'teams[0].shares[1]: duplicate share "team:eng" (already listed at line 12)'],
      [15, 'teams[0].shares[3]: duplicate share "alice@acme.test" (already listed at line 14)'],
    ],
  },
  {
    title: 'a bad share role',
    source: shares('{ with: bot, role: owner }'),
    errors: [[12, 'teams[0].shares[0].role: "owner" is not a role: viewer, editor, admin']],
  },
  {
    title: 'an unknown share key',
    source: shares('{ with: bot, role: viewer, until: tomorrow }'),
    errors: [[12, 'unknown key "until" in teams[0].shares[0] (expected with, role)']],
  },
  {
    title: 'missing share keys',
    source: shares('{ with: bot }', '{ role: viewer }'),
    errors: [
      [12, 'teams[0].shares[0] is missing the required key "role"'],
      [13, 'teams[0].shares[1] is missing the required key "with"'],
    ],
  },
  {
    title: 'bad grantees',
    source: shares(
      '{ with: group:eng, role: viewer }',
      '{ with: team:Eng_Team, role: viewer }',
      '{ with: "team:", role: viewer }',
      '{ with: 42, role: viewer }',
    ),
    errors: [
      [12, `teams[0].shares[0].with: "group:eng" is not ${GRANTEE}`],
      [13, `teams[0].shares[1].with: "team:Eng_Team" is not ${GRANTEE}`],
      [14, `teams[0].shares[2].with: "team:" is not ${GRANTEE}`],
      [15, `teams[0].shares[3].with must be ${GRANTEE}, not a number; put it in quotes to make it text`],
    ],
  },
  {
    title: 'dangling grantees',
    source: shares('{ with: team:ghosts, role: viewer }', '{ with: carol@acme.test, role: viewer }', '{ with: ghost-bot, role: viewer }'),
    errors: [
      [12, 'teams[0].shares[0].with: no team "ghosts" is declared in the file or exists in tenant "acme"'],
      [13, 'teams[0].shares[1].with: no person "carol@acme.test" is declared in the file or exists in tenant "acme"'],
      [14, 'teams[0].shares[2].with: no agent "ghost-bot" is declared in the file or exists in tenant "acme"'],
    ],
  },
  {
    title: 'shares that are not a list',
    source: `${BASE}    shares: { with: bot, role: viewer }\n${ENG}`,
    errors: [[11, 'teams[0].shares must be a list, not a map']],
  },
  {
    title: 'a share with a later team that has a problem of its own, reported once',
    source: shares('{ with: team:ops, role: viewer }').replace(ENG, '  - { slug: ops, name: 42, members: {} }\n'),
    errors: [[13, 'teams[1].name must be a name of 1 to 200 characters, not a number; put it in quotes to make it text']],
  },
  {
    title: 'a good new share next to a bad one',
    source: shares('{ with: bot, role: admin }', '{ with: team:eng, role: boss }'),
    errors: [[13, 'teams[0].shares[1].role: "boss" is not a role: viewer, editor, admin']],
  },
];

for (const backend of storeBackends()) {
  describe(`org file team share errors on ${backend.name}`, () => {
    let store: TestStore;
    before(async () => {
      store = await backend.open({ migrated: true });
      await applyOrgFile(store.db, { source: shares('{ with: team:eng, role: viewer }') }, cliTrail(store.db));
      assert.deepEqual(await sharesOf(store.db, 'acme'), ['docs → team:eng: viewer']);
    });
    after(async () => {
      await store.dispose();
    });

    itRefuses(() => store.db, CASES);
  });
}
