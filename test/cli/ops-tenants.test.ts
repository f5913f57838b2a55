import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { OpRunner } from '../../src/cli/session.ts';
import { withOps } from '../../src/cli/session.ts';
import { loadConfig } from '../../src/config.ts';
import type { ErrorCode } from '../../src/kernel/errors.ts';
import { isKgwError } from '../../src/kernel/errors.ts';
import type { CliStore, RunResult } from './support.ts';
import { ORG, cliStoreBackends, kgw, serve, writeIn } from './support.ts';

/**
 * The operations kgw import mcp runs (kb.move, context.import, imports.carried) given another
 * tenant's ids: a file, a KB or a person of globex named while working in acme (and the other
 * way round) is refused as not found, in the tools' words, and nothing changes in either tenant;
 * an item globex imported before is, imported into acme, a new resource of acme's, globex's left
 * as it was; and what earlier imports carried is told to their own tenant alone. Through the
 * CLI's runner on each store, and on the embedded one also through a running gateway's admin
 * endpoint, where a refusal crosses as JSON.
 */

const ACME = `${ORG}grants:
  - { to: alice@acme.test, on: all_knowledge, role: owner }
  - { to: alice@acme.test, on: all_skills, role: owner }
kbs:
  - { slug: moves, name: Moves, team: docs }
`;

// Globex has a KB of the same slug as acme's and a public one acme has no slug for.
const GLOBEX = `tenant: globex
name: Globex
language: en
people:
  - email: hank@globex.test
    name: Hank
teams:
  - slug: docs
    name: Docs
    members: { hank@globex.test: admin }
kbs:
  - { slug: moves, name: Moves, team: docs }
  - { slug: vault, name: Vault, team: docs, visibility: public }
grants:
  - { to: hank@globex.test, on: all_knowledge, role: owner }
  - { to: hank@globex.test, on: all_skills, role: owner }
`;

const SOURCE = 'https://alignbase.example/mcp';
const SKILL_MD = '---\nname: release-check\ndescription: Checks a release.\n---\n# Release check\n';
const TENANTS = ['acme', 'globex'] as const;
const KBS = [
  ['acme', 'moves'],
  ['globex', 'moves'],
  ['globex', 'vault'],
] as const;
const SOURCE_IDS = { knowledge: ['k1', 'k2'], skill: ['s1', 's2'] } as const;

const b64 = (text: string): string => Buffer.from(text).toString('base64');

const ok = (result: RunResult, what: string): void => assert.equal(result.code, 0, `${what}: ${result.stderr}${result.stdout}`);

/** Rejects with a KgwError of `code` whose message matches: a refusal in the tool's words, never an internal error. */
async function refused(promise: Promise<unknown>, code: ErrorCode, pattern: RegExp): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(isKgwError(error), `not a refusal: ${String(error)}`);
    assert.equal(error.code, code, error.message);
    assert.match(error.message, pattern);
    return true;
  });
}

/** Everything of both tenants these operations could change: each KB's files with their versions, each resource with its versions, and what imports carried. */
async function state(run: OpRunner) {
  const files = await Promise.all(KBS.map(async ([tenant, kb]) => (await run('kb.files', { tenant, kb })).files));
  const resources = await Promise.all(TENANTS.map(async (tenant) => (await run('context.resources', { tenant })).resources));
  const carried = await Promise.all(
    TENANTS.flatMap((tenant) =>
      (['knowledge', 'skill'] as const).map((kind) => run('imports.carried', { tenant, source: SOURCE, kind, source_ids: [...SOURCE_IDS[kind]] })),
    ),
  );
  return { files, resources, carried };
}

for (const backend of cliStoreBackends()) {
  describe(`kb.move, context.import and imports.carried given another tenant's ids on ${backend.name}`, () => {
    let store: CliStore;
    /** Globex's ids, as acme's callers must not reach them. */
    const theirs = { kbId: '', vaultId: '', fileId: '', vaultFileId: '', knowledgeId: '', skillId: '' };
    const ops = <T>(work: (run: OpRunner) => Promise<T>): Promise<T> => withOps(loadConfig(store.env), work);

    before(async () => {
      store = await backend.open();
      ok(await kgw(['apply', await writeIn(store.workDir, 'acme.yaml', ACME)], store.env), 'apply acme');
      ok(await kgw(['apply', await writeIn(store.workDir, 'globex.yaml', GLOBEX)], store.env), 'apply globex');
      await ops(async (run) => {
        await run('kb.import', { tenant: 'acme', kb: 'moves', as: 'alice@acme.test', files: [{ path: 'a.md', data_base64: b64('# Acme\n') }] });
        const files = [{ path: 'a.md', data_base64: b64('# Globex\n') }];
        await run('kb.import', { tenant: 'globex', kb: 'moves', as: 'hank@globex.test', files });
        await run('kb.import', { tenant: 'globex', kb: 'vault', as: 'hank@globex.test', files: [{ path: 'secret.md', data_base64: b64('# Secret\n') }] });
        const moves = await run('kb.files', { tenant: 'globex', kb: 'moves' });
        const vault = await run('kb.files', { tenant: 'globex', kb: 'vault' });
        theirs.kbId = moves.kb_id;
        theirs.vaultId = vault.kb_id;
        theirs.fileId = moves.files[0]!.file_id;
        theirs.vaultFileId = vault.files[0]!.file_id;
        const globex = { tenant: 'globex', as: 'hank@globex.test', source: SOURCE };
        const knowledge = await run('context.import', {
          ...globex,
          type: 'knowledge',
          source_id: 'k1',
          name: 'Theirs',
          versions: [{ version: 1, content: '# Globex only\n' }],
        });
        const skill = await run('context.import', {
          ...globex,
          type: 'skill',
          source_id: 's1',
          name: 'release-check',
          versions: [{ version: 1, content: SKILL_MD }],
        });
        assert.deepEqual([knowledge.outcome, skill.outcome], ['created', 'created']);
        theirs.knowledgeId = knowledge.resource_id!;
        theirs.skillId = skill.resource_id!;
      });
    });
    after(async () => {
      await store?.dispose();
    });

    // The same refusals through the CLI's own runner and, where a gateway holds the data folder, through its admin endpoint.
    const runners = backend.name === 'embedded' ? (['the store', 'a running gateway'] as const) : (['the store'] as const);
    for (const via of runners) {
      const within = async (work: (run: OpRunner) => Promise<void>): Promise<void> => {
        if (via === 'the store') return ops(work);
        const gateway = await serve(store.env);
        try {
          await ops(work);
        } finally {
          await gateway.stop();
        }
      };

      it(`kb.move refuses another tenant's file, KB and person as not found, moving nothing in either tenant (through ${via})`, async () => {
        await within(async (run) => {
          const before = await state(run);
          const [own] = before.files[0]!;
          const move = (args: { tenant?: string; kb: string; as?: string; file_id: string }) =>
            run('kb.move', { tenant: 'acme', as: 'alice@acme.test', to_path: 'moved.md', ...args });
          // Their file in acme's KB of the same slug.
          await refused(move({ kb: 'moves', file_id: theirs.fileId }), 'not_found', new RegExp(`^no file "${theirs.fileId}" in this Knowledge Base`));
          // Their KB, by id, by their qualified slug, and by a slug only they have (a public KB among them).
          for (const kb of [theirs.kbId, theirs.vaultId, 'globex/moves', 'globex/vault', 'vault'])
            await refused(move({ kb, file_id: theirs.fileId }), 'not_found', new RegExp(`^no Knowledge Base "${kb}" is available to you`));
          await refused(move({ kb: theirs.vaultId, file_id: theirs.vaultFileId }), 'not_found', /^no Knowledge Base/);
          // Their person in acme, and acme's person in globex, even on the person's own tenant's file.
          await refused(
            move({ kb: 'moves', as: 'hank@globex.test', file_id: own!.file_id }),
            'not_found',
            /^no person or agent "hank@globex\.test" in tenant "acme"/,
          );
          await refused(
            move({ tenant: 'globex', kb: 'moves', as: 'alice@acme.test', file_id: theirs.fileId }),
            'not_found',
            /^no person or agent "alice@acme\.test" in tenant "globex"/,
          );
          // Acme's file in globex's KB of the same slug, as globex's own person.
          await refused(
            move({ tenant: 'globex', kb: 'moves', as: 'hank@globex.test', file_id: own!.file_id }),
            'not_found',
            new RegExp(`^no file "${own!.file_id}" in this Knowledge Base`),
          );
          assert.deepEqual(await state(run), before);
        });
      });

      it(`context.import refuses a person of another tenant as not found, writing nothing in either tenant (through ${via})`, async () => {
        await within(async (run) => {
          const before = await state(run);
          const item = { source: SOURCE, type: 'knowledge', source_id: 'k2', name: 'Two', versions: [{ version: 1, content: '# Two\n' }] } as const;
          await refused(
            run('context.import', { ...item, tenant: 'acme', as: 'hank@globex.test' }),
            'not_found',
            /^no person or agent "hank@globex\.test" in tenant "acme"/,
          );
          await refused(
            run('context.import', { ...item, tenant: 'globex', as: 'alice@acme.test' }),
            'not_found',
            /^no person or agent "alice@acme\.test" in tenant "globex"/,
          );
          // Nor as a dry run, which would otherwise say what is there.
          await refused(
            run('context.import', { ...item, source_id: 'k1', tenant: 'acme', as: 'hank@globex.test', dry_run: true }),
            'not_found',
            /^no person or agent "hank@globex\.test" in tenant "acme"/,
          );
          await refused(run('imports.carried', { tenant: 'initech', source: SOURCE, kind: 'knowledge', source_ids: ['k1'] }), 'not_found', /initech/);
          assert.deepEqual(await state(run), before);
        });
      });
    }

    it('imports an item another tenant imported as a new resource of its own, leaving theirs as it was, and tells each tenant only its own imports', async () => {
      await ops(async (run) => {
        const before = await state(run);
        const carried = (tenant: string, kind: 'knowledge' | 'skill') =>
          run('imports.carried', { tenant, source: SOURCE, kind, source_ids: [...SOURCE_IDS[kind]] });
        // What globex carried is not acme's to see.
        assert.deepEqual(await carried('acme', 'knowledge'), {});
        assert.deepEqual(await carried('acme', 'skill'), {});
        assert.deepEqual(await carried('globex', 'knowledge'), { k1: { local_id: theirs.knowledgeId, source_version: 1 } });

        const acme = { tenant: 'acme', as: 'alice@acme.test', source: SOURCE };
        const knowledge = (versions: { version: number; content: string }[], dryRun = false) =>
          run('context.import', { ...acme, type: 'knowledge', source_id: 'k1', name: 'Ours', versions, dry_run: dryRun });
        // A dry run sees nothing of globex's: it would create, and names no resource.
        assert.deepEqual(await knowledge([{ version: 1, content: '# Acme\n' }], true), { resource_id: null, outcome: 'created', saved: 0, published: false });
        const created = await knowledge([{ version: 1, content: '# Acme\n' }]);
        assert.deepEqual([created.outcome, created.saved], ['created', 1]);
        assert.notEqual(created.resource_id, theirs.knowledgeId);
        const updated = await knowledge([
          { version: 1, content: '# Acme\n' },
          { version: 2, content: '# Acme, later\n' },
        ]);
        assert.deepEqual([updated.resource_id, updated.outcome, updated.saved], [created.resource_id, 'updated', 1]);
        // A Skill of the name globex has is acme's own new one, not an update of theirs.
        const skill = await run('context.import', {
          ...acme,
          type: 'skill',
          source_id: 's2',
          name: 'release-check',
          versions: [{ version: 1, content: SKILL_MD }],
        });
        assert.equal(skill.outcome, 'created');
        assert.notEqual(skill.resource_id, theirs.skillId);

        const after = await state(run);
        // Globex: its files, resources and mappings as they were.
        assert.deepEqual(
          [after.files[1], after.files[2], after.resources[1], after.carried[2], after.carried[3]],
          [before.files[1], before.files[2], before.resources[1], before.carried[2], before.carried[3]],
        );
        const ours = after.resources[0]!.filter((r) => r.id === created.resource_id || r.id === skill.resource_id);
        assert.deepEqual(ours.map((r) => [r.type, r.name, r.latest_version]).sort(), [
          ['knowledge', 'Ours', 2],
          ['skill', 'release-check', 1],
        ]);
        assert.equal(after.resources[0]!.length, before.resources[0]!.length + 2);
        // Each tenant is told its own local ids.
        assert.deepEqual(await carried('acme', 'knowledge'), { k1: { local_id: created.resource_id, source_version: 2 } });
        assert.deepEqual(await carried('acme', 'skill'), { s2: { local_id: skill.resource_id, source_version: 1 } });
        assert.deepEqual(await carried('globex', 'knowledge'), { k1: { local_id: theirs.knowledgeId, source_version: 1 } });
        assert.deepEqual(await carried('globex', 'skill'), { s1: { local_id: theirs.skillId, source_version: 1 } });
      });
    });
  });
}
