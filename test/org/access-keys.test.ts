import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { verifyPassword } from '../../src/kernel/access/passwords.ts';
import { applyOrgFile } from '../../src/org-sections.ts';
import { passwordEnvironment } from '../../src/kernel/org/password-env.ts';
import type { Db } from '../../src/store/db.ts';
import { cliTrail } from '../support/audit.ts';
import { storeBackends } from '../support/stores.ts';
import { snapshot } from './support.ts';

const FILE = `tenant: acme
name: Acme Inc.
people:
  - email: alice@acme.test
    name: Alice
    tier: hr
    departments: [People, Finance]
    projects: [Apollo]
    brain_role: manager
    password_env: ALICE_PASSWORD
  - email: bob@acme.test
    name: Bob
agents:
  - name: release-bot
    owner: alice@acme.test
    tier: project
    projects: [Apollo]
    policy: { max_team_role: viewer }
`;

interface AccessRow {
  ref: string;
  tier: string;
  brain_role: string;
  departments: string[];
  projects: string[];
  policy_max_team_role: string | null;
  password_hash: string | null;
}

async function accessOf(db: Db): Promise<Record<string, Omit<AccessRow, 'ref'>>> {
  const rows = await db.query<AccessRow>(
    'SELECT coalesce(email, name) AS ref, tier, brain_role, departments, projects, policy_max_team_role, password_hash FROM principals ORDER BY 1',
  );
  return Object.fromEntries(rows.map(({ ref, ...rest }) => [ref, rest]));
}

for (const backend of storeBackends()) {
  describe(`org file access keys on ${backend.name}`, () => {
    it('sets tiers, memberships, brain roles, policies and a password, then finds nothing to change', async () => {
      const store = await backend.open({ migrated: true });
      try {
        const env = { ALICE_PASSWORD: 'correct horse battery staple' };
        const first = await applyOrgFile(store.db, { source: FILE, env }, cliTrail(store.db));
        assert.deepEqual(first.changes.slice(1), [
          {
            action: 'create',
            kind: 'person',
            name: 'alice@acme.test',
            detail: 'tier hr; departments [Finance, People]; projects [Apollo]; brain_role manager; password set',
          },
          { action: 'create', kind: 'person', name: 'bob@acme.test' },
          {
            action: 'create',
            kind: 'agent',
            name: 'release-bot',
            detail: 'owner alice@acme.test; tier project; projects [Apollo]; policy max_team_role viewer',
          },
        ]);
        const access = await accessOf(store.db);
        const { password_hash: hash, ...alice } = access['alice@acme.test']!;
        assert.deepEqual(alice, { tier: 'hr', brain_role: 'manager', departments: ['Finance', 'People'], projects: ['Apollo'], policy_max_team_role: null });
        assert.ok(hash !== null && (await verifyPassword(hash, env.ALICE_PASSWORD)));
        assert.ok(!hash.includes(env.ALICE_PASSWORD));
        assert.deepEqual(access['bob@acme.test'], {
          tier: 'public',
          brain_role: 'viewer',
          departments: [],
          projects: [],
          policy_max_team_role: null,
          password_hash: null,
        });
        assert.deepEqual(access['release-bot'], {
          tier: 'project',
          brain_role: 'viewer',
          departments: [],
          projects: ['Apollo'],
          policy_max_team_role: 'viewer',
          password_hash: null,
        });

        // The same password is no change although a fresh hash would differ; reordering a list is none either.
        const before = await snapshot(store.db);
        const again = await applyOrgFile(store.db, { source: FILE.replace('[People, Finance]', '[Finance, People]'), env }, cliTrail(store.db));
        assert.deepEqual(again.changes, []);
        assert.deepEqual(await snapshot(store.db), before);
      } finally {
        await store.dispose();
      }
    });

    it('updates what differs, resets left-out keys to their defaults and keeps a password unless told', async () => {
      const store = await backend.open({ migrated: true });
      try {
        await applyOrgFile(store.db, { source: FILE, env: { ALICE_PASSWORD: 'one' } }, cliTrail(store.db));
        const [{ password_hash: oldHash } = { password_hash: null }] = await store.db.query<{ password_hash: string | null }>(
          "SELECT password_hash FROM principals WHERE email = 'alice@acme.test'",
        );
        const changed = FILE.replace('    tier: hr\n', '')
          .replace('    brain_role: manager\n', '    brain_role: admin\n')
          .replace('    password_env: ALICE_PASSWORD\n', '')
          .replace('    policy: { max_team_role: viewer }\n', '    policy: { max_team_role: editor }\n')
          .replace('    name: Bob\n', '    name: Bob\n    tier: restricted\n    password_env: BOB_SECRET\n');
        const result = await applyOrgFile(store.db, { source: changed, env: { BOB_SECRET: 'two' } }, cliTrail(store.db));
        assert.deepEqual(result.changes, [
          { action: 'update', kind: 'person', name: 'alice@acme.test', detail: 'tier hr → public; brain_role manager → admin' },
          { action: 'update', kind: 'person', name: 'bob@acme.test', detail: 'tier public → restricted; password set' },
          { action: 'update', kind: 'agent', name: 'release-bot', detail: 'policy max_team_role viewer → editor' },
        ]);
        const access = await accessOf(store.db);
        assert.equal(access['alice@acme.test']?.password_hash, oldHash, 'password_env left out keeps the password');

        const newPassword = await applyOrgFile(store.db, { source: FILE, env: { ALICE_PASSWORD: 'three' } }, cliTrail(store.db));
        assert.deepEqual(
          newPassword.changes.find((c) => c.name === 'alice@acme.test')?.detail,
          'tier public → hr; brain_role admin → manager; password changed',
        );
        const removed = await applyOrgFile(
          store.db,
          {
            source: FILE.replace('password_env: ALICE_PASSWORD', 'password_env:').replace('    policy: { max_team_role: viewer }\n', ''),
          },
          cliTrail(store.db),
        );
        assert.deepEqual(removed.changes, [
          { action: 'update', kind: 'person', name: 'alice@acme.test', detail: 'password removed' },
          { action: 'update', kind: 'agent', name: 'release-bot', detail: 'policy max_team_role viewer → none' },
        ]);
        assert.equal((await accessOf(store.db))['alice@acme.test']?.password_hash, null);
      } finally {
        await store.dispose();
      }
    });

    it('makes a person a tenant administrator with admin: true, says so in the plan, and takes it away when left out', async () => {
      const store = await backend.open({ migrated: true });
      try {
        const adminFile = FILE.replace('    name: Bob\n', '    name: Bob\n    admin: true\n');
        const admins = async () =>
          (await store.db.query<{ email: string }>('SELECT email FROM principals WHERE tenant_admin ORDER BY email')).map((row) => row.email);
        const first = await applyOrgFile(store.db, { source: adminFile, env: { ALICE_PASSWORD: 'x' } }, cliTrail(store.db));
        assert.deepEqual(
          first.changes.find((c) => c.name === 'bob@acme.test'),
          { action: 'create', kind: 'person', name: 'bob@acme.test', detail: 'admin true' },
        );
        assert.deepEqual(await admins(), ['bob@acme.test']);
        assert.deepEqual((await applyOrgFile(store.db, { source: adminFile, env: { ALICE_PASSWORD: 'x' } }, cliTrail(store.db))).changes, []);
        const dropped = await applyOrgFile(store.db, { source: FILE, env: { ALICE_PASSWORD: 'x' } }, cliTrail(store.db));
        assert.deepEqual(dropped.changes, [{ action: 'update', kind: 'person', name: 'bob@acme.test', detail: 'admin true → false' }]);
        assert.deepEqual(await admins(), []);
      } finally {
        await store.dispose();
      }
    });

    it('plans the same in a dry run and writes nothing', async () => {
      const store = await backend.open({ migrated: true });
      try {
        const before = await snapshot(store.db);
        const dry = await applyOrgFile(store.db, { source: FILE, env: { ALICE_PASSWORD: 'x' }, dryRun: true }, cliTrail(store.db));
        assert.equal(dry.dryRun, true);
        assert.equal(dry.changes.length, 4);
        assert.deepEqual(await snapshot(store.db), before);
      } finally {
        await store.dispose();
      }
    });
  });
}

describe('passwordEnvironment', () => {
  it('picks only the variables the file names', () => {
    const env = { ALICE_PASSWORD: 'secret', HOME: '/root', OTHER: 'x' };
    assert.deepEqual(passwordEnvironment(FILE, env), { ALICE_PASSWORD: 'secret' });
    assert.deepEqual(passwordEnvironment('people: [', env), {});
    assert.deepEqual(passwordEnvironment('people:\n  - password_env: MISSING\n', env), {});
  });
});
