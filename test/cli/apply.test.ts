import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { OrgApplyResult } from '../../src/kernel/org/apply.ts';
import type { CliStore } from './support.ts';
import { ORG, cliEnv, cliStoreBackends, kgw, lines, tempDir, writeIn } from './support.ts';

/** ORG for another tenant, so that tests sharing a store do not meet. */
const orgFor = (tenant: string, source = ORG): string => source.replace('tenant: acme\n', `tenant: ${tenant}\n`);

const CREATE_LINES = [
  '+ create person alice@acme.test',
  '+ create person bob@acme.test',
  '+ create agent release-bot (owner alice@acme.test)',
  '+ create group eng',
  '+ add group member release-bot (group eng)',
  '+ add group member alice@acme.test (group eng)',
  '+ create team docs',
  '+ add team member alice@acme.test (team docs as admin)',
  '+ add team member release-bot (team docs as editor)',
];

/** A file whose line 3 has an unknown key and whose line 7 names an undeclared owner. */
const BAD_ORG = (tenant: string) => `tenant: ${tenant}
name: Broken
langauge: en
people:
  - { email: carol@acme.test, name: Carol }
agents:
  - { name: bot, owner: dave@acme.test }
`;

for (const backend of cliStoreBackends()) {
  describe(`kgw apply on ${backend.name}`, () => {
    let store: CliStore;
    const apply = async (source: string, ...flags: string[]) => kgw(['apply', await writeIn(store.workDir, 'org.yaml', source), ...flags], store.env);

    before(async () => {
      store = await backend.open();
    });
    after(() => store.dispose());

    it('creates what the file declares, then finds it up to date', async () => {
      const first = await apply(orgFor('t-create'));
      assert.equal(first.code, 0, first.stderr);
      assert.equal(first.stderr, '');
      assert.deepEqual(lines(first.stdout), ['+ create tenant t-create', ...CREATE_LINES, 'applied 10 changes to tenant t-create']);
      const again = await apply(orgFor('t-create'));
      assert.equal(again.code, 0, again.stderr);
      assert.equal(again.stdout, 'tenant t-create is up to date\n');
    });

    it('updates what changed in the file', async () => {
      assert.equal((await apply(orgFor('t-update'))).code, 0);
      const edited = orgFor('t-update')
        .replace('name: Alice\n', 'name: Alice Smith\n')
        .replace('[release-bot, alice@acme.test]', '[release-bot]')
        .replace('release-bot: editor', 'release-bot: viewer');
      const run = await apply(edited);
      assert.equal(run.code, 0, run.stderr);
      assert.deepEqual(lines(run.stdout), [
        '~ update person alice@acme.test (name "Alice" → "Alice Smith")',
        '- remove group member alice@acme.test (group eng)',
        '~ update team member release-bot (team docs: role editor → viewer)',
        'applied 3 changes to tenant t-update',
      ]);
    });

    it('--dry-run prints the plan and changes nothing', async () => {
      const dry = await apply(orgFor('t-dry'), '--dry-run');
      assert.equal(dry.code, 0, dry.stderr);
      assert.deepEqual(lines(dry.stdout), ['+ create tenant t-dry', ...CREATE_LINES, 'dry run: 10 changes planned for tenant t-dry, nothing applied']);
      const real = await apply(orgFor('t-dry'));
      assert.equal(real.code, 0, real.stderr);
      assert.deepEqual(
        lines(real.stdout),
        ['+ create tenant t-dry', ...CREATE_LINES, 'applied 10 changes to tenant t-dry'],
        'the dry run left everything to do',
      );
    });

    it('--json prints the result as JSON', async () => {
      const run = await apply(orgFor('t-json'), '--json');
      assert.equal(run.code, 0, run.stderr);
      const result = JSON.parse(run.stdout) as OrgApplyResult;
      assert.equal(result.tenant, 't-json');
      assert.equal(result.dryRun, false);
      assert.equal(result.changes.length, 10);
      assert.deepEqual(result.changes[0], { action: 'create', kind: 'tenant', name: 't-json' });
      assert.deepEqual(result.changes[3], { action: 'create', kind: 'agent', name: 'release-bot', detail: 'owner alice@acme.test' });
      const dry = await apply(orgFor('t-json'), '--dry-run', '--json');
      assert.equal(dry.code, 0, dry.stderr);
      assert.deepEqual(JSON.parse(dry.stdout), { tenant: 't-json', dryRun: true, changes: [] });
    });

    it('refuses a bad file with each error and its line, and applies nothing', async () => {
      const run = await apply(BAD_ORG('t-bad'));
      assert.equal(run.code, 1, run.stderr);
      assert.equal(run.stdout, '');
      assert.deepEqual(lines(run.stderr), [
        'kgw: org.yaml:3: unknown key "langauge" at the top level (expected tenant, name, language, people, agents, groups, teams, kbs, knowledge, skills, memories, grants, routes, brain)',
        'org.yaml:7: agents[0].owner: no person "dave@acme.test" is declared in the file or exists in tenant "t-bad"',
      ]);
      const fixed = await apply(BAD_ORG('t-bad').replace('langauge', 'language').replace('dave@', 'carol@'));
      assert.equal(fixed.code, 0, fixed.stderr);
      assert.deepEqual(lines(fixed.stdout), [
        '+ create tenant t-bad',
        '+ create person carol@acme.test',
        '+ create agent bot (owner carol@acme.test)',
        'applied 3 changes to tenant t-bad',
      ]);
    });

    it('names the file by its own name in errors', async () => {
      const file = await writeIn(store.workDir, 'acme-org.yml', 'tenant: t-named\nname: Named\npeople: 3\n');
      const run = await kgw(['apply', file], store.env);
      assert.equal(run.code, 1);
      assert.deepEqual(lines(run.stderr), ['kgw: acme-org.yml:3: people must be a list, not a number']);
    });
  });
}

describe('kgw apply with a file it cannot read', () => {
  let dir: string;
  before(async () => {
    dir = await tempDir();
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('a missing file exits non-zero with one line and opens no store', async () => {
    const missing = path.join(dir, 'missing.yaml');
    const run = await kgw(['apply', missing], cliEnv({ KGW_DATA_DIR: path.join(dir, 'data') }));
    assert.notEqual(run.code, 0);
    assert.equal(run.code, 2);
    assert.equal(run.stdout, '');
    assert.deepEqual(lines(run.stderr), [`kgw: cannot read ${missing}: ENOENT (see "kgw apply --help")`]);
    assert.equal(existsSync(path.join(dir, 'data')), false);
  });

  it('a folder is not a file', async () => {
    const run = await kgw(['apply', dir], cliEnv({ KGW_DATA_DIR: path.join(dir, 'data') }));
    assert.equal(run.code, 2);
    assert.deepEqual(lines(run.stderr), [`kgw: cannot read ${dir}: EISDIR (see "kgw apply --help")`]);
  });
});
