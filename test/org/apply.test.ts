import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyOrgFile } from '../../src/org-sections.ts';
import type { OrgChange } from '../../src/kernel/org/apply.ts';
import { isKgwError } from '../../src/kernel/errors.ts';
import { cliTrail } from '../support/audit.ts';
import { storeBackends } from '../support/stores.ts';
import { ACME, directoryOf, snapshot } from './support.ts';

const ACME_CHANGED = `tenant: acme
name: Acme Corporation
language: de
people:
  - email: alice@acme.test
    name: Alice Smith
  - email: bob@acme.test
    name: Bob
agents:
  - name: release-bot
    owner: bob@acme.test
groups:
  - name: eng
    members: [release-bot]
teams:
  - slug: docs
    name: Docs team
    members: { alice@acme.test: admin, release-bot: viewer, bob@acme.test: editor }
`;

const EXPECTED_UPDATES: OrgChange[] = [
  { action: 'update', kind: 'tenant', name: 'acme', detail: 'name "Acme Inc." → "Acme Corporation"; language en → de' },
  { action: 'update', kind: 'person', name: 'alice@acme.test', detail: 'name "Alice" → "Alice Smith"' },
  { action: 'create', kind: 'person', name: 'bob@acme.test' },
  { action: 'update', kind: 'agent', name: 'release-bot', detail: 'owner alice@acme.test → bob@acme.test' },
  { action: 'remove', kind: 'group member', name: 'alice@acme.test', detail: 'group eng' },
  { action: 'update', kind: 'team member', name: 'release-bot', detail: 'team docs: role editor → viewer' },
  { action: 'add', kind: 'team member', name: 'bob@acme.test', detail: 'team docs as editor' },
];

for (const backend of storeBackends()) {
  describe(`org file apply on ${backend.name}`, () => {
    it('creates everything on the first apply, then finds nothing to change', async () => {
      const store = await backend.open({ migrated: true });
      try {
        const first = await applyOrgFile(store.db, { source: ACME }, cliTrail(store.db));
        assert.deepEqual(first, {
          tenant: 'acme',
          dryRun: false,
          changes: [
            { action: 'create', kind: 'tenant', name: 'acme' },
            { action: 'create', kind: 'person', name: 'alice@acme.test' },
            { action: 'create', kind: 'agent', name: 'release-bot', detail: 'owner alice@acme.test' },
            { action: 'create', kind: 'group', name: 'eng' },
            { action: 'add', kind: 'group member', name: 'release-bot', detail: 'group eng' },
            { action: 'add', kind: 'group member', name: 'alice@acme.test', detail: 'group eng' },
            { action: 'create', kind: 'team', name: 'docs' },
            { action: 'add', kind: 'team member', name: 'alice@acme.test', detail: 'team docs as admin' },
            { action: 'add', kind: 'team member', name: 'release-bot', detail: 'team docs as editor' },
          ],
        });
        assert.deepEqual(await directoryOf(store.db, 'acme'), {
          tenant: { name: 'Acme Inc.', language: 'en' },
          people: { 'alice@acme.test': 'Alice' },
          agents: { 'release-bot': 'alice@acme.test' },
          groups: { eng: ['alice@acme.test', 'release-bot'] },
          teams: { docs: { name: 'Docs team', members: { 'alice@acme.test': 'admin', 'release-bot': 'editor' } } },
        });

        const before = await snapshot(store.db);
        const again = await applyOrgFile(store.db, { source: ACME }, cliTrail(store.db));
        assert.deepEqual(again.changes, []);
        assert.deepEqual(await snapshot(store.db), before, 'an unchanged file writes nothing, not even updated_at');
      } finally {
        await store.dispose();
      }
    });

    it('applies exactly the differences of a changed file', async () => {
      const store = await backend.open({ migrated: true });
      try {
        await applyOrgFile(store.db, { source: ACME }, cliTrail(store.db));
        const stamp = async (sql: string): Promise<number> => ((await store.db.query<{ at: Date }>(sql))[0]?.at ?? new Date(0)).getTime();
        const aliceBefore = await stamp("SELECT updated_at AS at FROM principals WHERE email = 'alice@acme.test'");
        const teamBefore = await stamp("SELECT updated_at AS at FROM teams WHERE slug = 'docs'");

        const result = await applyOrgFile(store.db, { source: ACME_CHANGED }, cliTrail(store.db));
        assert.deepEqual(result.changes, EXPECTED_UPDATES);
        assert.deepEqual(await directoryOf(store.db, 'acme'), {
          tenant: { name: 'Acme Corporation', language: 'de' },
          people: { 'alice@acme.test': 'Alice Smith', 'bob@acme.test': 'Bob' },
          agents: { 'release-bot': 'bob@acme.test' },
          groups: { eng: ['release-bot'] },
          teams: { docs: { name: 'Docs team', members: { 'alice@acme.test': 'admin', 'release-bot': 'viewer', 'bob@acme.test': 'editor' } } },
        });
        assert.ok(
          (await stamp("SELECT updated_at AS at FROM principals WHERE email = 'alice@acme.test'")) > aliceBefore,
          'a renamed person has a new updated_at',
        );
        assert.equal(await stamp("SELECT updated_at AS at FROM teams WHERE slug = 'docs'"), teamBefore, 'a team whose name is unchanged keeps its updated_at');
        assert.deepEqual((await applyOrgFile(store.db, { source: ACME_CHANGED }, cliTrail(store.db))).changes, []);

        // The file is the whole truth about the tenant: leaving the language out means "en".
        const withoutLanguage = ACME_CHANGED.replace('language: de\n', '');
        assert.deepEqual((await applyOrgFile(store.db, { source: withoutLanguage }, cliTrail(store.db))).changes, [
          { action: 'update', kind: 'tenant', name: 'acme', detail: 'language de → en' },
        ]);
      } finally {
        await store.dispose();
      }
    });

    it('reports the same plan on a dry run and writes nothing', async () => {
      const store = await backend.open({ migrated: true });
      try {
        const empty = await snapshot(store.db);
        const firstDry = await applyOrgFile(store.db, { source: ACME, dryRun: true }, cliTrail(store.db));
        assert.equal(firstDry.dryRun, true);
        assert.equal(firstDry.changes.length, 9);
        assert.deepEqual(await snapshot(store.db), empty, 'a dry run does not even create the tenant');

        await applyOrgFile(store.db, { source: ACME }, cliTrail(store.db));
        const before = await snapshot(store.db);
        const dry = await applyOrgFile(store.db, { source: ACME_CHANGED, dryRun: true }, cliTrail(store.db));
        assert.deepEqual(dry, { tenant: 'acme', dryRun: true, changes: EXPECTED_UPDATES });
        assert.deepEqual(await snapshot(store.db), before);
        const real = await applyOrgFile(store.db, { source: ACME_CHANGED }, cliTrail(store.db));
        assert.deepEqual(real.changes, dry.changes);
        assert.deepEqual((await applyOrgFile(store.db, { source: ACME_CHANGED, dryRun: true }, cliTrail(store.db))).changes, []);
      } finally {
        await store.dispose();
      }
    });

    it('accepts references to principals already in the tenant and leaves unlisted ones alone', async () => {
      const store = await backend.open({ migrated: true });
      try {
        await applyOrgFile(store.db, { source: ACME }, cliTrail(store.db));
        const later = `tenant: acme
name: Acme Inc.
agents:
  - name: deploy-bot
    owner: ALICE@acme.test
groups:
  - name: ops
    members: [alice@acme.test, release-bot, deploy-bot]
teams:
  - slug: ops
    name: Ops
    members: { release-bot: viewer }
`;
        const result = await applyOrgFile(store.db, { source: later }, cliTrail(store.db));
        assert.deepEqual(result.changes, [
          { action: 'create', kind: 'agent', name: 'deploy-bot', detail: 'owner alice@acme.test' },
          { action: 'create', kind: 'group', name: 'ops' },
          { action: 'add', kind: 'group member', name: 'alice@acme.test', detail: 'group ops' },
          { action: 'add', kind: 'group member', name: 'release-bot', detail: 'group ops' },
          { action: 'add', kind: 'group member', name: 'deploy-bot', detail: 'group ops' },
          { action: 'create', kind: 'team', name: 'ops' },
          { action: 'add', kind: 'team member', name: 'release-bot', detail: 'team ops as viewer' },
        ]);
        const directory = await directoryOf(store.db, 'acme');
        assert.deepEqual(directory.people, { 'alice@acme.test': 'Alice' });
        assert.deepEqual(directory.agents, { 'release-bot': 'alice@acme.test', 'deploy-bot': 'alice@acme.test' });
        assert.deepEqual(directory.groups, { eng: ['alice@acme.test', 'release-bot'], ops: ['alice@acme.test', 'deploy-bot', 'release-bot'] });
        assert.deepEqual(Object.keys(directory.teams).sort(), ['docs', 'ops']);
        assert.deepEqual(directory.teams.docs?.members, { 'alice@acme.test': 'admin', 'release-bot': 'editor' });
      } finally {
        await store.dispose();
      }
    });

    it('reads an alias as the node its anchor names', async () => {
      const store = await backend.open({ migrated: true });
      try {
        const source = ACME.replace(
          '[release-bot, alice@acme.test]',
          '&engineers [release-bot, alice@acme.test]\n  - name: reviewers\n    members: *engineers',
        );
        await applyOrgFile(store.db, { source }, cliTrail(store.db));
        assert.deepEqual((await directoryOf(store.db, 'acme')).groups, {
          eng: ['alice@acme.test', 'release-bot'],
          reviewers: ['alice@acme.test', 'release-bot'],
        });
      } finally {
        await store.dispose();
      }
    });

    it('keeps two tenants apart', async () => {
      const store = await backend.open({ migrated: true });
      try {
        const globex = ACME.replace('tenant: acme', 'tenant: globex').replace('Acme Inc.', 'Globex').replace('name: Alice', 'name: Alice of Globex');
        await applyOrgFile(store.db, { source: ACME }, cliTrail(store.db));
        const created = await applyOrgFile(store.db, { source: globex }, cliTrail(store.db));
        assert.equal(created.changes.length, 9, 'the same emails and names in another tenant are new principals');
        const globexBefore = await directoryOf(store.db, 'globex');
        assert.equal(globexBefore.people['alice@acme.test'], 'Alice of Globex');

        await applyOrgFile(store.db, { source: ACME_CHANGED }, cliTrail(store.db));
        assert.deepEqual(await directoryOf(store.db, 'globex'), globexBefore);
        assert.equal((await directoryOf(store.db, 'acme')).people['alice@acme.test'], 'Alice Smith');

        // bob exists in acme only, so globex cannot name him.
        const crossing = globex.replace('owner: alice@acme.test', 'owner: bob@acme.test');
        await assert.rejects(applyOrgFile(store.db, { source: crossing }, cliTrail(store.db)), (error) => {
          assert.ok(isKgwError(error, 'validation'));
          assert.equal(error.message, 'org.yaml:9: agents[0].owner: no person "bob@acme.test" is declared in the file or exists in tenant "globex"');
          return true;
        });
        assert.deepEqual(await directoryOf(store.db, 'globex'), globexBefore);
      } finally {
        await store.dispose();
      }
    });
  });
}
