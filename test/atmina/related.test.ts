import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openNeo4jGraphStore } from '../../connectors/graph/neo4j.ts';
import { pngOf } from './assets/fixtures.ts';
import { rebuildProjection } from '../../src/kernel/outbox/rebuild.ts';
import { neo4jUrl } from '../support/graph-backends.ts';
import { storeBackends } from '../support/stores.ts';
import type { KbWire } from './support.ts';
import { KbSuite, assertAtminaError, backendLabel } from './support.ts';

/*
 * Atmina's `related` through the MCP SDK's client on /atmina/mcp, with the gateway's own outbox
 * worker feeding the graph store: the tables in the store, and Neo4j when the suite has one.
 */

interface EntryWire {
  path: string;
  file_id: string;
  type: string;
  key?: string;
  depth: number;
  via?: string;
  asset?: { path: string; file_id?: string; format?: string; state?: string };
}
interface RelatedWire {
  kb_id: string;
  file: { file_id: string; path: string };
  outgoing: EntryWire[];
  incoming: EntryWire[];
  unresolved: { path: string; type: string; key?: string; from_path: string }[];
  truncated: boolean;
  pending: boolean;
}

const shown = (entries: EntryWire[]) => entries.map((e) => `${e.depth} ${e.path} ${e.type}${e.via === undefined ? '' : ` via ${e.via}`}`);
const misses = (answer: RelatedWire) => answer.unresolved.map((u) => `${u.from_path} -> ${u.path} ${u.type}`);

interface GraphChoice {
  readonly name: string;
  readonly env: Record<string, string>;
}

function graphChoices(): GraphChoice[] {
  const url = neo4jUrl();
  const choices: GraphChoice[] = [{ name: 'the graph tables', env: {} }];
  if (url !== undefined) {
    choices.push({
      name: 'Neo4j',
      env: { NEO4J_URL: url, NEO4J_USER: process.env.KGW_TEST_NEO4J_USER ?? 'neo4j', NEO4J_PASSWORD: process.env.KGW_TEST_NEO4J_PASSWORD ?? 'neo4j' },
    });
  }
  return choices;
}

for (const backend of storeBackends()) {
  for (const choice of graphChoices())
    describe(`Atmina related with ${choice.name} on ${backendLabel(backend)}`, () => {
      let suite: KbSuite;
      before(async () => {
        suite = await KbSuite.open(backend, choice.env, { projections: true });
      });
      after(async () => {
        if (suite !== undefined && choice.env.NEO4J_URL !== undefined) {
          // The suite's tenants are its own; what it left in the shared Neo4j goes with them.
          const graph = await openNeo4jGraphStore({ url: choice.env.NEO4J_URL, user: choice.env.NEO4J_USER ?? '', password: choice.env.NEO4J_PASSWORD ?? '' });
          for (const tenant of ['acme', 'globex']) await graph.clear(await suite.tenantIdOf(tenant));
          await graph.close();
        }
        await suite?.close();
      });

      /** A KB holding `files`, once the graph has taken them in. */
      async function kbWith(files: Record<string, string>): Promise<KbWire> {
        const kb = await suite.kb();
        for (const [path, content] of Object.entries(files)) await suite.file(kb.kb_id, path, content);
        await suite.settled();
        return kb;
      }

      const related = async (kb: KbWire, args: Record<string, unknown>, by = 'viewer-bot'): Promise<RelatedWire> =>
        (await suite.agent(by)).ok<RelatedWire>('related', { kb_id: kb.kb_id, ...args });

      it('walks outgoing and incoming references to depth 2', async () => {
        const kb = await kbWith({
          'a.md': '[b](b.md)\n',
          'b.md': '---\nrelated: c.md\n---\n# B\n',
          'c.md': '# C\n',
          'notes/d.md': 'Up: [a](../a.md)\n',
          'e.md': '[[d]]\n',
        });
        const answer = await related(kb, { path: 'a.md', depth: 2 });
        assert.deepEqual(
          { outgoing: shown(answer.outgoing), incoming: shown(answer.incoming) },
          { outgoing: ['1 b.md markdown', '2 c.md front_matter via b.md'], incoming: ['1 notes/d.md markdown', '2 e.md wiki via notes/d.md'] },
        );
      });

      it('answers the same after the graph is rebuilt from the files', async (t) => {
        // A rebuild clears the whole graph store: not a shared Neo4j's.
        if (choice.env.NEO4J_URL !== undefined) return t.skip('the rebuild clears every tenant of the store');
        const kb = await kbWith({ 'a.md': '[b](b.md) [[c]]\n', 'b.md': '# B\n', 'c.md': '[a](a.md)\n' });
        const before = await related(kb, { path: 'a.md' });
        await rebuildProjection(suite.db, suite.running.gateway.services.projections, 'graph');
        await suite.settled();
        const afterwards = await related(kb, { path: 'a.md' });
        assert.deepEqual(
          { outgoing: shown(afterwards.outgoing), incoming: shown(afterwards.incoming) },
          { outgoing: shown(before.outgoing), incoming: shown(before.incoming) },
        );
      });

      it('says nothing is pending once the graph has taken the file in', async () => {
        const kb = await kbWith({ 'a.md': '# A\n' });
        assert.equal((await related(kb, { path: 'a.md' })).pending, false);
      });

      it('names the file by file_id as well as by path', async () => {
        const kb = await kbWith({ 'a.md': '[b](b.md)\n', 'b.md': '# B\n' });
        const byPath = await related(kb, { path: 'a.md' });
        const byId = await related(kb, { file_id: byPath.file.file_id });
        assert.deepEqual(shown(byId.outgoing), ['1 b.md markdown']);
      });

      it('filters by registered type', async () => {
        const kb = await kbWith({ 'a.md': '[b](b.md) [[c]]\n', 'b.md': '# B\n', 'c.md': '# C\n' });
        assert.deepEqual(shown((await related(kb, { path: 'a.md', types: ['wiki'] })).outgoing), ['1 c.md wiki']);
      });

      it('reports a link to a missing file as unresolved until the file is written', async () => {
        const kb = await kbWith({ 'a.md': 'See [the plan](plans/plan.md).\n' });
        const before = await related(kb, { path: 'a.md' });
        await suite.file(kb.kb_id, 'plans/plan.md', '# Plan\n');
        await suite.settled();
        const afterwards = await related(kb, { path: 'a.md' });
        assert.deepEqual(
          { before: misses(before), afterwards: misses(afterwards), outgoing: shown(afterwards.outgoing) },
          { before: ['a.md -> plans/plan.md markdown'], afterwards: [], outgoing: ['1 plans/plan.md markdown'] },
        );
      });

      it('after a move, resolves the moved file’s links from its new folder and leaves links to its old path unresolved', async () => {
        const kb = await kbWith({ 'a.md': '[b](guides/b.md)\n', 'guides/b.md': '[c](c.md)\n', 'guides/c.md': '# old c\n', 'archive/c.md': '# archived c\n' });
        const b = await related(kb, { path: 'guides/b.md' });
        await (await suite.agent('editor-bot')).ok('move_file', { kb_id: kb.kb_id, file_id: b.file.file_id, to_path: 'archive/b.md' });
        await suite.settled();
        const moved = await related(kb, { file_id: b.file.file_id });
        const a = await related(kb, { path: 'a.md' });
        assert.deepEqual(
          { moved: shown(moved.outgoing), a: misses(a), pending: moved.pending },
          { moved: ['1 archive/c.md markdown'], a: ['a.md -> guides/b.md markdown'], pending: false },
        );
      });

      it('after a delete, drops the deleted file’s references and leaves links to it unresolved', async () => {
        const kb = await kbWith({ 'a.md': '[b](b.md)\n', 'b.md': '[a](a.md)\n' });
        await (await suite.agent('admin-bot')).ok('delete_file', { kb_id: kb.kb_id, path: 'b.md', confirm: 'b.md' });
        await suite.settled();
        const answer = await related(kb, { path: 'a.md' });
        assert.deepEqual({ incoming: shown(answer.incoming), unresolved: misses(answer) }, { incoming: [], unresolved: ['a.md -> b.md markdown'] });
      });

      it('gives a picture the asset block', async () => {
        const kb = await kbWith({});
        const uploaded = await (
          await suite.agent('editor-bot')
        ).ok<{ file_id: string }>('upload_file', { kb_id: kb.kb_id, filename: 'pictures/chart.png', content_base64: pngOf(64, 32).toString('base64') });
        await suite.file(kb.kb_id, 'report.md', '![chart](pictures/chart.png)\n');
        await suite.settled();
        const [entry] = (await related(kb, { path: 'report.md' })).outgoing;
        assert.partialDeepStrictEqual(entry?.asset, { path: 'pictures/chart.png', file_id: uploaded.file_id, format: 'png', state: 'ready' });
      });

      it('gives a text file no asset block', async () => {
        const kb = await kbWith({ 'a.md': '[b](b.md)\n', 'b.md': '# B\n' });
        const [entry] = (await related(kb, { path: 'a.md' })).outgoing;
        assert.equal(entry?.asset, undefined);
      });

      it('never resolves a link to a file of another KB', async () => {
        const mine = await kbWith({ 'a.md': '[secret](secret.md)\n' });
        const hidden = await suite.kb({ team: 'support' }, 'support-bot');
        await (await suite.agent('support-bot')).ok('write_file', { kb_id: hidden.kb_id, path: 'secret.md', mode: 'create', content: '[a](a.md)\n' });
        await suite.settled();
        const answer = await related(mine, { path: 'a.md' });
        assert.deepEqual(
          { outgoing: answer.outgoing.length, incoming: answer.incoming.length, unresolved: misses(answer) },
          { outgoing: 0, incoming: 0, unresolved: ['a.md -> secret.md markdown'] },
        );
      });

      it('answers not_found for a KB the caller has no role on', async () => {
        const hidden = await suite.kb({ team: 'support' }, 'support-bot');
        await (await suite.agent('support-bot')).ok('write_file', { kb_id: hidden.kb_id, path: 'secret.md', mode: 'create', content: '# S\n' });
        assertAtminaError(
          await (await suite.agent('viewer-bot')).fail('related', { kb_id: hidden.kb_id, path: 'secret.md' }),
          'not_found',
          'no Knowledge Base',
        );
      });

      it('answers not_found for another organisation’s kb_id', async () => {
        const globex = await suite.agent('globex-bot', 'context.read context.write', 'globex');
        const theirs = await globex.ok<KbWire>('create_kb', { name: suite.unique('Ops'), team: 'ops' });
        await globex.ok('write_file', { kb_id: theirs.kb_id, path: 'run.md', mode: 'create', content: '# Run\n' });
        assertAtminaError(await (await suite.agent('admin-bot')).fail('related', { kb_id: theirs.kb_id, path: 'run.md' }), 'not_found');
      });

      it('answers not_found for a path with no file', async () => {
        const kb = await kbWith({});
        assertAtminaError(await (await suite.agent('viewer-bot')).fail('related', { kb_id: kb.kb_id, path: 'nowhere.md' }), 'not_found');
      });

      it('refuses a depth other than 1 or 2', async () => {
        const kb = await kbWith({ 'a.md': '# A\n' });
        assertAtminaError(
          await (await suite.agent('viewer-bot')).fail('related', { kb_id: kb.kb_id, path: 'a.md', depth: 3 }),
          'validation',
          'depth: must be 1 or 2',
        );
      });

      it('refuses a type that is not registered', async () => {
        const kb = await kbWith({ 'a.md': '# A\n' });
        assertAtminaError(
          await (await suite.agent('viewer-bot')).fail('related', { kb_id: kb.kb_id, path: 'a.md', types: ['html'] }),
          'validation',
          'types.0: must be one of the registered types',
        );
      });

      it('refuses a call naming no file', async () => {
        const kb = await kbWith({});
        assertAtminaError(await (await suite.agent('viewer-bot')).fail('related', { kb_id: kb.kb_id }), 'validation', 'path or file_id');
      });

      it('refuses a path that climbs out of the KB', async () => {
        const kb = await kbWith({});
        assertAtminaError(await (await suite.agent('viewer-bot')).fail('related', { kb_id: kb.kb_id, path: '../etc/passwd' }), 'validation');
      });

      it('keeps hostile link targets as data', async () => {
        const hostile = 'x\'}) DETACH DELETE n; MATCH (m) "; DROP TABLE graph_kb_files; --.md';
        const kb = await kbWith({ 'a.md': `[[${hostile}]] [bidi](\u202eevil.md) [nul](a%00b.md)\n` });
        await suite.file(kb.kb_id, hostile, '[a](a.md)\n');
        await suite.settled();
        const answer = await related(kb, { path: 'a.md' });
        assert.deepEqual(
          { outgoing: shown(answer.outgoing), incoming: shown(answer.incoming), unresolved: answer.unresolved.length },
          { outgoing: [`1 ${hostile} wiki`], incoming: [`1 ${hostile} markdown`], unresolved: 2 },
        );
      });
    });
}
