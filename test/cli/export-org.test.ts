import assert from 'node:assert/strict';
import { mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { withOps } from '../../src/cli/session.ts';
import type { CliStore, ExportManifest, RunResult } from './support.ts';
import { cliStoreBackends, comparableExport, kgw, lines, serve, writeIn } from './support.ts';

/**
 * kgw export folder's brain and org kinds, through the real CLI on each store: a tenant with
 * people, agents, groups, teams, a KB, Knowledge, a Skill, a Memory, grants, routes and a brain
 * of every tier is exported; org.yaml applied, the export imported and the brain file imported
 * into an empty store recreate it, so that exporting that store (through its running gateway)
 * gives the same org.yaml, brain file and texts byte for byte and the same SHA-256 for every KB
 * file and resource. Names hold what YAML reads specially (`: #`, a leading `-`, quotes).
 */

const CHECKLIST = '---\nowner: alice\n---\n# Release checklist\n\n1. Tag: #1.\n';
const SKILL_MD = '---\nname: release-check\ndescription: Checks a release.\n---\n# Release check\n';

const ORG_FILE = `tenant: acme
name: "- Acme: #1 \\"Inc.\\""
language: de
people:
  - email: alice@acme.test
    name: "- Alice: #1 'A.'"
    tier: executive
    departments: [Finance, "Ops: #2"]
    brain_role: admin
    admin: true
    password_env: ALICE_PASSWORD
    mailbox: { password_env: ALICE_IMAP_PASSWORD, user: alice, url: "imaps://mail.acme.test", folder: Drafts }
  - email: bob@acme.test
    name: Bob
    tier: project
    projects: [Apollo]
agents:
  - name: release-bot
    owner: alice@acme.test
    tier: department
    departments: [Finance]
    policy: { max_team_role: editor }
groups:
  - name: "- eng #1"
    members: [release-bot, alice@acme.test]
  - name: nobody
    members: []
teams:
  - slug: docs
    name: "Docs: #team"
    members: { alice@acme.test: admin, release-bot: editor, bob@acme.test: viewer }
    shares:
      - { with: team:support, role: editor }
      - { with: bob@acme.test, role: admin }
  - slug: support
    name: Support
    members: { bob@acme.test: admin }
kbs:
  - slug: handbook
    name: "- Handbook: #1"
    team: docs
    visibility: public
    description: "Read me: # not a comment"
knowledge:
  - title: "- Release: #1 checklist"
    file: knowledge/checklist.md
    authority: must_follow
    publish: true
    review_by: 2030-06-30
    expires_at: 2031-01-01
  - title: Draft ideas
    content: "Not published.\\n"
skills:
  - dir: skills/release-check
    publish: true
    review_by: 2030-06-30
memories:
  - name: "- State: #1"
    content: "No release in progress.\\u0007\\n"
grants:
  - { to: "group:- eng #1", on: all_knowledge, role: viewer }
  - { to: alice@acme.test, on: all_memories, role: owner }
  - { to: release-bot, on: "knowledge:- Release: #1 checklist", role: publisher }
  - { to: release-bot, on: skill:release-check, role: editor }
  - { to: release-bot, on: "memory:- State: #1", role: editor }
routes:
  - { deliver: "knowledge:- Release: #1 checklist", to: "group:- eng #1" }
  - { deliver: skill:release-check, to: release-bot }
  - { deliver: "memory:- State: #1", to: release-bot }
brain:
  nodes:
    - { id: handbook-policy, type: policy, title: Handbook policy, access: public }
  relations:
    - { from: "person:bob@acme.test", verb: owns, to: handbook-policy }
`;

// A node of every access tier, kept by an import (the org file above keeps one more).
const BRAIN_FILE = `nodes:
  - id: erp
    type: tool
    title: "- ERP: #1"
    summary: "Line one.\\nLine two: # yes"
    access: public
    metadata: { Owner: "- Alice: #1", Score: 4, Approval threshold: "5,000 EUR" }
    tags: ["a: b", "#c", "- d"]
    freshness: { verified: 2026-05-01, review_by: "2026-11-01T09:30:00+02:00" }
  - { id: finance-close, type: SOP / process, title: Month-end close, access: department, department: Finance, mark: inferred }
  - { id: apollo-plan, type: strategy, title: Apollo plan, access: project, project: Apollo }
  - { id: budget, type: policy, title: Budget, access: manager }
  - { id: salaries, type: data source, title: Salaries, access: hr }
  - { id: board, type: strategy, title: Board, access: executive, mark: unresolved }
  - { id: vault, type: data source, title: Vault, access: restricted }
relations:
  - { from: finance-close, verb: uses, to: erp }
  - { from: "person:alice@acme.test", verb: owns, to: finance-close }
  - { from: "agent:release-bot", verb: supports, to: finance-close, mark: inferred }
  - { from: finance-close, verb: belongs to, to: "department:Finance" }
  - { from: apollo-plan, verb: targets, to: "project:Apollo" }
  - { from: board, verb: governs, to: org }
`;

interface Report {
  org?: { path: string | null; people: number; agents: number; grants: number; routes: number; written: number; unchanged: number; left_out: unknown[] };
  brain?: {
    path: string | null;
    nodes: number;
    relations: number;
    written: number;
    unchanged: number;
    removed: number;
    left_out: { relation: string; reason: string }[];
  };
}

const ok = (result: RunResult, what: string): string => {
  assert.equal(result.code, 0, `${what}: ${result.stderr}${result.stdout}`);
  return result.stdout;
};

for (const backend of cliStoreBackends()) {
  describe(`kgw export folder's org file and brain on ${backend.name}`, () => {
    let from: CliStore;
    let to: CliStore;
    const exportOf = async (store: CliStore, folder: string, tenant = 'acme', ...args: string[]): Promise<Report> =>
      JSON.parse(ok(await kgw(['export', 'folder', folder, '--tenant', tenant, ...args, '--json'], store.env), `export ${tenant}`)) as Report;
    const manifestOf = async (folder: string): Promise<ExportManifest> =>
      JSON.parse(await readFile(path.join(folder, 'manifest.json'), 'utf8')) as ExportManifest;

    before(async () => {
      from = await backend.open();
      to = await backend.open();
      await mkdir(path.join(from.workDir, 'knowledge'));
      await writeFile(path.join(from.workDir, 'knowledge', 'checklist.md'), CHECKLIST);
      await mkdir(path.join(from.workDir, 'skills', 'release-check', 'scripts'), { recursive: true });
      await writeFile(path.join(from.workDir, 'skills', 'release-check', 'SKILL.md'), SKILL_MD);
      await writeFile(path.join(from.workDir, 'skills', 'release-check', 'scripts', 'check.sh'), '#!/bin/sh\n');
      const applied = await kgw(['apply', await writeIn(from.workDir, 'org.yaml', ORG_FILE)], { ...from.env, ALICE_PASSWORD: 'a secret of 16+ chars' });
      ok(applied, 'apply');
      await mkdir(path.join(from.workDir, 'vault', 'ops'), { recursive: true });
      await writeFile(path.join(from.workDir, 'vault', 'README.md'), '# Handbook\n\nSee [[ops/deploy]].\n');
      await writeFile(path.join(from.workDir, 'vault', 'ops', 'deploy.md'), '# Deploy\n');
      ok(
        await kgw(['import', 'folder', path.join(from.workDir, 'vault'), '--tenant', 'acme', '--kb', 'handbook', '--as', 'alice@acme.test'], from.env),
        'import folder',
      );
      ok(await kgw(['brain', 'import', await writeIn(from.workDir, 'brain.yaml', BRAIN_FILE), '--tenant', 'acme'], from.env), 'brain import');
    });
    after(async () => {
      await from?.dispose();
      await to?.dispose();
    });

    it('recreates the tenant on an empty store: the same org.yaml, brain file and texts byte for byte, the same hashes', async () => {
      const out = path.join(from.workDir, 'out');
      const report = await exportOf(from, out);
      assert.deepEqual(
        [report.org?.path, report.org?.people, report.org?.agents, report.org?.grants, report.org?.routes, report.org?.left_out],
        ['org.yaml', 2, 1, 5, 3, []],
      );
      assert.deepEqual([report.brain?.path, report.brain?.nodes, report.brain?.relations, report.brain?.left_out], ['brain/brain.yaml', 8, 7, []]);
      const org = await readFile(path.join(out, 'org.yaml'), 'utf8');
      // Never a password, nor the variable that set it; a mailbox names only the variable read when a draft is approved.
      assert.doesNotMatch(org, /ALICE_PASSWORD"|a secret/);
      assert.match(org, /\n {4}mailbox:\n {6}password_env: "ALICE_IMAP_PASSWORD"\n/);
      // A tenant administrator stays one; bob, who is none, says nothing about it.
      assert.match(org, /\n {4}brain_role: "admin"\n {4}admin: true\n/);
      assert.equal(org.match(/admin: true/g)?.length, 1);
      assert.match(org, /\nname: "- Acme: #1 \\"Inc\.\\""\nlanguage: "de"\n/);
      assert.match(
        org,
        /\n {2}- title: "- Release: #1 checklist"\n {4}file: "org\/knowledge\/- Release- #1 checklist\.md"\n {4}authority: "must_follow"\n {4}publish: true\n/,
      );
      assert.match(org, /\n {2}- dir: "alignbase\/skills\/release-check"\n {4}publish: true\n {4}review_by: "2030-06-30"\n/);
      assert.equal(await readFile(path.join(out, 'org', 'knowledge', '- Release- #1 checklist.md'), 'utf8'), CHECKLIST);
      assert.equal(await readFile(path.join(out, 'org', 'memories', '- State- #1.md'), 'utf8'), 'No release in progress.\u0007\n');
      assert.equal((await stat(path.join(out, 'org.yaml'))).mode & 0o777, 0o600);
      const brain = await readFile(path.join(out, 'brain', 'brain.yaml'), 'utf8');
      for (const tier of ['public', 'department', 'project', 'manager', 'hr', 'executive', 'restricted'])
        assert.match(brain, new RegExp(`\n {4}access: "${tier}"\n`));
      assert.match(brain, /\n {2}- \{ from: "person:alice@acme\.test", verb: "owns", to: "finance-close" \}\n/);
      assert.match(brain, /\n {4}freshness:\n {6}verified: "2026-05-01"\n {6}review_by: "2026-11-01T07:30:00\.000Z"\n/);

      // Applied to the tenant it came from, the org file changes nothing: it says what is there.
      assert.equal(ok(await kgw(['apply', path.join(out, 'org.yaml')], from.env), 'apply to the source'), 'tenant acme is up to date\n');

      // On an empty store, as org.yaml's own comment says.
      ok(await kgw(['apply', path.join(out, 'org.yaml')], to.env), 'apply');
      const imported = JSON.parse(
        ok(await kgw(['import', 'export', out, '--tenant', 'acme', '--as', 'alice@acme.test', '--json'], to.env), 'import export'),
      ) as {
        kbs: { created: number }[];
        alignbase: { created: string[]; unchanged: string[]; failed: unknown[] };
      };
      assert.deepEqual([imported.kbs.map((kb) => kb.created), imported.alignbase.created, imported.alignbase.failed], [[2], [], []]);
      // kgw import export keeps what the org file set (a Skill's dates among it): applying again changes nothing.
      assert.equal(ok(await kgw(['apply', path.join(out, 'org.yaml')], to.env), 'apply again'), 'tenant acme is up to date\n');
      // Before its brain arrives, the tenant has none: no brain file, and the manifest says so.
      const bare = path.join(to.workDir, 'no-brain');
      const none = await exportOf(to, bare);
      assert.deepEqual([none.brain?.path, none.brain?.nodes], [null, 0]);
      await assert.rejects(stat(path.join(bare, 'brain')), { code: 'ENOENT' });
      assert.equal((await manifestOf(bare)).brain, null);
      ok(await kgw(['brain', 'import', path.join(out, 'brain', 'brain.yaml'), '--tenant', 'acme'], to.env), 'brain import');

      // Exported again through the new store's running gateway (its admin endpoint).
      const gateway = await serve(to.env);
      const again = path.join(to.workDir, 'out');
      try {
        await exportOf(to, again);
      } finally {
        await gateway.stop();
      }
      assert.equal(await readFile(path.join(again, 'org.yaml'), 'utf8'), org);
      assert.equal(await readFile(path.join(again, 'brain', 'brain.yaml'), 'utf8'), brain);
      const whole = { reviewBy: true, brainAndOrg: true };
      assert.deepEqual(comparableExport(await manifestOf(again), whole), comparableExport(await manifestOf(out), whole));
      assert.deepEqual((await readdir(path.join(again, 'org', 'knowledge'))).sort(), ['- Release- #1 checklist.md', 'Draft ideas.md']);

      // A second export of the same tenant writes nothing and gives the same bytes.
      const second = await exportOf(from, out);
      assert.deepEqual([second.org?.written, second.brain?.written, second.brain?.unchanged], [0, 0, 1]);
      assert.equal(await readFile(path.join(out, 'org.yaml'), 'utf8'), org);
    });

    it('pages the new operations by their keys: small pages give what one page gives, and a bad cursor is refused', async () => {
      await withOps(loadConfig(from.env), async (run) => {
        /** Every item of a paged operation, `limit` at a time, and how many pages it took. */
        const walk = async (
          op: 'directory.principals' | 'directory.groups' | 'team.list' | 'brain.nodes' | 'brain.relations',
          key: string,
          limit: number,
        ): Promise<{ items: unknown[]; pages: number }> => {
          const items: unknown[] = [];
          let pages = 0;
          let after: string | undefined;
          do {
            const page: Record<string, unknown> = await run(op, { tenant: 'acme', limit, ...(after === undefined ? {} : { after }) });
            items.push(...(page[key] as unknown[]));
            pages += 1;
            after = (page.next as string | null) ?? undefined;
          } while (after !== undefined);
          return { items, pages };
        };
        for (const [op, key, count] of [
          ['directory.principals', 'principals', 3],
          ['directory.groups', 'groups', 2],
          ['team.list', 'teams', 2],
          ['brain.nodes', 'nodes', 8],
          ['brain.relations', 'relations', 7],
        ] as const) {
          const whole = await walk(op, key, 100);
          const small = await walk(op, key, 2);
          assert.deepEqual([whole.items.length, whole.pages, small.pages], [count, 1, Math.ceil(count / 2)], op);
          assert.deepEqual(small.items, whole.items, op);
        }
        const nodes = (await walk('brain.nodes', 'nodes', 3)).items.map((node) => (node as { id: string }).id);
        assert.deepEqual(nodes, [...nodes].sort());
        await assert.rejects(run('brain.relations', { tenant: 'acme', after: '["only one"]' }), /after must be the next of the page before/);
        await assert.rejects(run('directory.principals', { tenant: 'acme', after: 'alice@acme.test' }), /after must be an id of the page before/);
        await assert.rejects(run('team.list', { tenant: 'acme', limit: 201 }), /limit/);
        assert.deepEqual((await run('context.type-grants', { tenant: 'acme' })).grants, [
          { to: 'alice@acme.test', on: 'all_memories', role: 'owner' },
          { to: 'group:- eng #1', on: 'all_knowledge', role: 'viewer' },
        ]);
      });
    });

    it('leaves out a relation whose department lost its members, saying so, and the file still imports', async () => {
      const org = (departments: string): string =>
        `tenant: solo\nname: Solo\npeople:\n  - { email: counsel@example.test, name: Counsel, departments: ${departments} }\n`;
      ok(await kgw(['apply', await writeIn(from.workDir, 'solo.yaml', org('[Legal]'))], from.env), 'apply solo');
      const brain =
        'nodes:\n  - { id: contract, type: policy, title: Contract, access: public }\nrelations:\n  - { from: contract, verb: belongs to, to: "department:Legal" }\n';
      ok(await kgw(['brain', 'import', await writeIn(from.workDir, 'solo-brain.yaml', brain), '--tenant', 'solo'], from.env), 'brain import solo');
      ok(await kgw(['apply', await writeIn(from.workDir, 'solo.yaml', org('[]'))], from.env), 'apply solo again');
      const out = path.join(from.workDir, 'solo-out');
      const result = await kgw(['export', 'folder', out, '--tenant', 'solo', '--kinds', 'brain'], from.env);
      ok(result, 'export solo');
      assert.ok(lines(result.stdout).includes('  left out contract belongs to department:Legal: no department "Legal" with members'), result.stdout);
      const file = await readFile(path.join(out, 'brain', 'brain.yaml'), 'utf8');
      assert.match(file, /\n# {3}"contract belongs to department:Legal": "no department \\"Legal\\" with members"\nnodes:\n/);
      assert.match(file, /\nrelations: \[\]\n$/);
      assert.equal(
        ok(await kgw(['brain', 'import', path.join(out, 'brain', 'brain.yaml'), '--tenant', 'solo'], from.env), 'reimport'),
        'tenant solo is up to date\n',
      );
    });

    it('removes the brain file of an earlier export once the tenant has no brain', async () => {
      const org = (brain: string): string => `tenant: bare\nname: Bare\nbrain:${brain}\n`;
      ok(
        await kgw(
          ['apply', await writeIn(from.workDir, 'bare.yaml', org('\n  nodes:\n    - { id: only, type: tool, title: Only, access: public }'))],
          from.env,
        ),
        'apply',
      );
      const out = path.join(from.workDir, 'bare-out');
      const first = await exportOf(from, out, 'bare');
      assert.deepEqual([first.brain?.path, first.brain?.written, first.org?.path], ['brain/brain.yaml', 1, 'org.yaml']);
      ok(await kgw(['apply', await writeIn(from.workDir, 'bare.yaml', org(''))], from.env), 'apply without nodes');
      const gone = await exportOf(from, out, 'bare');
      assert.deepEqual([gone.brain?.path, gone.brain?.removed], [null, 1]);
      await assert.rejects(stat(path.join(out, 'brain', 'brain.yaml')), { code: 'ENOENT' });
      assert.equal((await manifestOf(out)).brain, null);
      // Another kind exported alone keeps the manifest's org entry as it was.
      const org1 = (await manifestOf(out)).org;
      await exportOf(from, out, 'bare', '--kinds', 'brain');
      assert.deepEqual((await manifestOf(out)).org, org1);
    });

    it('refuses kinds it does not know, org without alignbase, and --kb with another kind', async () => {
      const out = path.join(from.workDir, 'refused');
      const run = (...args: string[]) => kgw(['export', 'folder', out, '--tenant', 'acme', ...args], from.env);
      const unknown = await run('--kinds', 'kbs,brains');
      assert.deepEqual([unknown.code, unknown.stderr], [2, 'kgw: --kinds takes kbs, alignbase, brain and org, not "brains" (see "kgw export --help")\n']);
      const alone = await run('--kinds', 'org');
      assert.deepEqual(
        [alone.code, alone.stderr],
        [2, 'kgw: --kinds org needs alignbase too: org.yaml names the files under alignbase/ (see "kgw export --help")\n'],
      );
      const kb = await run('--kb', 'handbook', '--kinds', 'kbs,brain');
      assert.deepEqual([kb.code, kb.stderr], [2, 'kgw: --kb exports one Knowledge Base; leave out --kinds brain with it (see "kgw export --help")\n']);
      await assert.rejects(stat(out), { code: 'ENOENT' });
    });
  });
}
