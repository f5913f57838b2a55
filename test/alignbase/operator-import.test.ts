import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runOp } from '../../src/admin/ops.ts';
import type { Services } from '../../src/kernel/services.ts';
import { isKgwError } from '../../src/kernel/errors.ts';
import type { SeededGateway } from '../support/gateway.ts';
import { ACME_ORG, startSeededGateway } from '../support/gateway.ts';
import { storeBackends } from '../support/stores.ts';

/**
 * The operations behind kgw import mcp, called as the CLI calls them (runOp, the same path the
 * admin endpoint takes): context.import refuses what the tools would, and a source's hostile
 * provenance, in the spec's words, writing nothing; several imports of one item at once make one
 * resource; kb.move refuses an unknown file, a taken path and a bad one.
 */

const ORG = `${ACME_ORG}grants:
  - { to: alice@acme.test, on: all_knowledge, role: owner }
  - { to: alice@acme.test, on: all_memories, role: owner }
kbs:
  - { slug: moves, name: Moves, team: docs }
`;
const SOURCE = 'https://alignbase.example/mcp';

for (const backend of storeBackends()) {
  describe(`context.import and kb.move on ${backend.name}`, () => {
    let seeded: SeededGateway;
    let services: Services;
    const knowledgeCount = async (): Promise<number> =>
      Number((await services.db.query<{ n: number }>("SELECT count(*)::int AS n FROM context_resources WHERE type = 'knowledge'"))[0]?.n);
    const importing = (extra: Record<string, unknown>, versions: unknown[] = [{ version: 1, content: '# One\n' }]) =>
      runOp(services, 'context.import', {
        tenant: 'acme',
        as: 'alice@acme.test',
        source: SOURCE,
        type: 'knowledge',
        source_id: 'k1',
        name: 'One',
        versions,
        ...extra,
      });
    const refused = async (promise: Promise<unknown>, code: string, pattern: RegExp): Promise<void> => {
      await assert.rejects(promise, (error: unknown) => isKgwError(error) && error.code === code && pattern.test(error.message));
    };

    before(async () => {
      seeded = await startSeededGateway(backend, ORG);
      services = seeded.running.gateway.services;
    });
    after(async () => {
      await seeded?.close();
    });

    it('refuses bad versions, hostile provenance and a person without the role, writing nothing', async () => {
      const before = await knowledgeCount();
      await refused(importing({}, []), 'validation', /versions must hold 1 to 100 versions/);
      await refused(
        importing({}, [
          { version: 2, content: 'b' },
          { version: 1, content: 'a' },
        ]),
        'validation',
        /in the source’s order/,
      );
      await refused(importing({}, [{ version: 0, content: 'a' }]), 'validation', /bad arguments for context.import/);
      await refused(importing({ source_id: 'k\u202e1' }), 'validation', /provenance source_id must not contain bidirectional formatting characters/);
      await refused(importing({ source_id: 'k\u00001' }), 'validation', /NUL/);
      await refused(importing({ source_id: 'x'.repeat(513) }), 'validation', /provenance source_id must be 1 to 512 bytes/);
      await refused(importing({}, [{ version: 1, content: 'a', at: 'yesterday' }]), 'validation', /provenance at must be an ISO 8601 instant/);
      await refused(importing({}, [{ version: 1, content: 'a', author: 'Eve\u202e' }]), 'validation', /provenance author must not contain/);
      await refused(importing({ name: 'x'.repeat(201) }), 'validation', /title too long/);
      await refused(importing({ as: 'nobody@acme.test' }), 'not_found', /nobody@acme\.test/);
      await refused(importing({ as: 'release-bot' }), 'validation', /--as must name a person by email/);
      await refused(importing({ as: 'bob@acme.test' }), 'permission_denied', /./);
      await refused(importing({ type: 'skill', name: 'x' }, [{ version: 1, content: 'no front matter' }]), 'validation', /./);
      assert.equal(await knowledgeCount(), before);
      assert.equal(Number((await services.db.query<{ n: number }>('SELECT count(*)::int AS n FROM imported_items'))[0]?.n), 0);
    });

    it('makes one resource of one source item however many imports run at once', async () => {
      const before = await knowledgeCount();
      const versions = [
        { version: 1, content: '# Same\n', at: '2026-06-23T16:00:00Z', author: 'Ann' },
        { version: 2, content: '# Same, later\n' },
      ];
      const results = await Promise.all(Array.from({ length: 5 }, () => importing({ source_id: 'race', name: 'Race' }, versions)));
      assert.equal(await knowledgeCount(), before + 1);
      assert.equal(new Set(results.map((r) => r.resource_id)).size, 1);
      assert.equal(results.filter((r) => r.outcome === 'created').length, 1);
      const [row] = await services.db.query<{ n: number }>('SELECT count(*)::int AS n FROM context_versions WHERE resource_id = $1', [results[0]?.resource_id]);
      assert.equal(Number(row?.n), 2, 'each version once');
      const again = await importing({ source_id: 'race', name: 'Race' }, versions);
      assert.deepEqual([again.outcome, again.saved], ['unchanged', 0]);
    });

    it('proposes an imported draft once, on the local version of its base, and refuses what it cannot place, writing nothing', async () => {
      const drafts = async (): Promise<number> => Number((await services.db.query<{ n: number }>('SELECT count(*)::int AS n FROM context_drafts'))[0]?.n);
      const draft = (extra: Record<string, unknown>) =>
        runOp(services, 'context.import-draft', {
          tenant: 'acme',
          as: 'alice@acme.test',
          source: SOURCE,
          type: 'knowledge',
          source_id: 'race',
          draft_id: 'd1',
          base_version: 1,
          content: '# Same, proposed\n',
          ...extra,
        });
      const before = await drafts();
      await refused(draft({ source_id: 'never-imported' }), 'validation', /its Knowledge was not imported from this source/);
      await refused(draft({ base_version: 9 }), 'validation', /its base version 9 was not carried here/);
      await refused(draft({ base_version: 0 }), 'validation', /bad arguments for context.import-draft/);
      await refused(draft({ draft_id: 'd\u202e1' }), 'validation', /provenance source_id must not contain bidirectional formatting characters/);
      await refused(draft({ draft_id: 'd\u00001' }), 'validation', /NUL/);
      await refused(draft({ author: 'x'.repeat(801) }), 'validation', /provenance author must be 1 to 800 bytes/);
      await refused(draft({ rationale: 'r'.repeat(2001) }), 'validation', /rationale/);
      await refused(draft({ content: 'x'.repeat(1_048_577) }), 'validation', /1 MB or smaller/);
      // Bob may not even read the Knowledge: the tools' own answer, which says nothing of it.
      await refused(draft({ as: 'bob@acme.test' }), 'not_found', /Knowledge not found/);
      await refused(draft({ as: 'release-bot' }), 'validation', /--as must name a person by email/);
      await refused(draft({ tenant: 'nope' }), 'not_found', /nope/);
      assert.equal(await drafts(), before, 'nothing written');
      // A dry run of a draft whose resource the same dry run would create says created.
      assert.deepEqual(await draft({ source_id: 'never-imported', dry_run: true }), { draft_id: null, outcome: 'created' });

      // Five imports of one draft at once: one draft, on the local version that holds source version 1.
      const results = await Promise.all(Array.from({ length: 5 }, () => draft({ author: 'Ann', at: '2026-06-24T09:00:00Z', rationale: 'Why' })));
      assert.equal(await drafts(), before + 1);
      assert.equal(results.filter((r) => r.outcome === 'created').length, 1);
      assert.equal(new Set(results.map((r) => r.draft_id)).size, 1);
      const [row] = await services.db.query<{ base_version: number; provenance: unknown }>(
        'SELECT base_version, provenance FROM context_drafts WHERE id = $1',
        [results[0]?.draft_id],
      );
      assert.equal(Number(row?.base_version), 1);
      assert.deepEqual(typeof row?.provenance === 'string' ? JSON.parse(row.provenance) : row?.provenance, {
        source: SOURCE,
        source_id: 'd1',
        source_version: 1,
        author: 'Ann',
        at: '2026-06-24T09:00:00.000Z',
      });
      assert.deepEqual(await draft({}), { draft_id: results[0]?.draft_id, outcome: 'unchanged' });
    });

    it('moves a KB file only to a free, valid path, and only a file of the KB', async () => {
      await runOp(services, 'kb.import', {
        tenant: 'acme',
        kb: 'moves',
        as: 'alice@acme.test',
        files: [
          { path: 'a.md', data_base64: Buffer.from('a\n').toString('base64') },
          { path: 'b.md', data_base64: Buffer.from('b\n').toString('base64') },
        ],
      });
      const files = await runOp(services, 'kb.files', { tenant: 'acme', kb: 'moves' });
      const a = files.files.find((f) => f.path === 'a.md')!;
      const move = (fileId: string, to: string) =>
        runOp(services, 'kb.move', { tenant: 'acme', kb: 'moves', as: 'alice@acme.test', file_id: fileId, to_path: to });
      await refused(move(a.file_id, 'b.md'), 'conflict', /b\.md/);
      await refused(move(a.file_id, '../x.md'), 'validation', /to_path/);
      await refused(move('00000000-0000-0000-0000-000000000000', 'c.md'), 'not_found', /./);
      await refused(
        runOp(services, 'kb.move', { tenant: 'acme', kb: 'moves', as: 'bob@acme.test', file_id: a.file_id, to_path: 'c.md' }),
        'permission_denied',
        /./,
      );
      assert.deepEqual((await move(a.file_id, 'c.md')).path, 'c.md');
    });
  });
}
