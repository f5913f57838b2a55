import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { GraphStore, KbLinkType } from '../../connectors/graph/contract.ts';
import { relatedFiles } from '../../src/atmina/kb/graph-links.ts';
import type { RelatedFiles } from '../../src/atmina/kb/graph-links.ts';
import { referencesOf } from '../../src/atmina/kb/text/references.ts';
import type { Harness } from '../support/graph-backends.ts';
import { graphBackends } from '../support/graph-backends.ts';

/*
 * KB files and their references in each graph store, and `related` over them: the same answers
 * from the tables and from Neo4j.
 */

interface Kb {
  readonly tenantId: string;
  readonly kbId: string;
  /** The file id of each path put so far. */
  readonly ids: Map<string, string>;
}

/** Records the file at `path` (a new one, or the one of `id`) with the references of `markdown`. */
async function put(store: GraphStore, kb: Kb, path: string, markdown: string, id = kb.ids.get(path) ?? randomUUID()): Promise<string> {
  const links = referencesOf(markdown, path).references.map((r) => ({ type: r.type, key: r.key, target: r.target, paths: r.paths, name: r.name }));
  await store.write([{ op: 'putKbFile', file: { tenantId: kb.tenantId, kbId: kb.kbId, fileId: id, path, kind: 'text', mediaType: 'text/markdown' }, links }]);
  for (const [p, known] of kb.ids) if (known === id) kb.ids.delete(p);
  kb.ids.set(path, id);
  return id;
}

function idOf(kb: Kb, path: string): string {
  const id = kb.ids.get(path);
  assert.ok(id !== undefined, `no file at ${path}`);
  return id;
}

const related = (store: GraphStore, kb: Kb, path: string, depth: 1 | 2 = 1, types?: KbLinkType[]): Promise<RelatedFiles> =>
  relatedFiles(store.kbLinks(), { tenantId: kb.tenantId, kbId: kb.kbId, fileId: idOf(kb, path), depth, ...(types === undefined ? {} : { types }) });

const shown = (entries: RelatedFiles['outgoing']) =>
  entries.map((e) => `${e.depth} ${e.file.path} ${e.type}${e.key === undefined ? '' : `:${e.key}`}${e.via === undefined ? '' : ` via ${e.via}`}`);
const misses = (answer: RelatedFiles) => answer.unresolved.map((u) => `${u.fromPath} -> ${u.path} ${u.type}`);

for (const backend of graphBackends()) {
  describe(`related over the graph store: ${backend.name}`, () => {
    let h: Harness;
    const newKb = async (tenantId?: string): Promise<Kb> => ({ tenantId: tenantId ?? (await h.tenant()), kbId: randomUUID(), ids: new Map() });
    before(async () => {
      h = await backend.open();
    });
    after(async () => {
      await h?.dispose();
    });

    it('lists a file’s outgoing references with their type and front-matter key', async () => {
      const kb = await newKb();
      await put(h.store, kb, 'notes/a.md', '---\nparent: ../index.md\n---\nSee [b](b.md) and [[Setup]].\n');
      await put(h.store, kb, 'notes/b.md', '# B\n');
      await put(h.store, kb, 'notes/Setup.md', '# Setup\n');
      await put(h.store, kb, 'index.md', '# Index\n');
      const answer = await related(h.store, kb, 'notes/a.md');
      assert.deepEqual(shown(answer.outgoing), ['1 index.md front_matter:parent', '1 notes/Setup.md wiki', '1 notes/b.md markdown']);
    });

    it('lists the files referring to a file as incoming', async () => {
      const kb = await newKb();
      await put(h.store, kb, 'a.md', 'See [b](b.md).\n');
      await put(h.store, kb, 'c.md', 'Also [[b]].\n');
      await put(h.store, kb, 'b.md', '# B\n');
      assert.deepEqual(shown((await related(h.store, kb, 'b.md')).incoming), ['1 a.md markdown', '1 c.md wiki']);
    });

    it('walks two steps at depth 2, each file once, never the file itself', async () => {
      const kb = await newKb();
      await put(h.store, kb, 'a.md', '[b](b.md)\n');
      await put(h.store, kb, 'b.md', '[c](c.md) [a](a.md)\n');
      await put(h.store, kb, 'c.md', '[a](a.md) [b](b.md)\n');
      await put(h.store, kb, 'd.md', '[a](a.md)\n');
      await put(h.store, kb, 'e.md', '[d](d.md)\n');
      const answer = await related(h.store, kb, 'a.md', 2);
      assert.deepEqual(
        { outgoing: shown(answer.outgoing), incoming: shown(answer.incoming) },
        {
          outgoing: ['1 b.md markdown', '2 c.md markdown via b.md'],
          incoming: ['1 b.md markdown', '1 c.md markdown', '1 d.md markdown', '2 e.md markdown via d.md'],
        },
      );
    });

    it('stops at depth 1 by default', async () => {
      const kb = await newKb();
      await put(h.store, kb, 'a.md', '[b](b.md)\n');
      await put(h.store, kb, 'b.md', '[c](c.md)\n');
      await put(h.store, kb, 'c.md', '# C\n');
      assert.deepEqual(shown((await related(h.store, kb, 'a.md')).outgoing), ['1 b.md markdown']);
    });

    it('reports a reference to a path no file has as unresolved, and resolves it once the file appears', async () => {
      const kb = await newKb();
      await put(h.store, kb, 'a.md', '[later](later.md) [out](../../x.md)\n');
      const before = await related(h.store, kb, 'a.md');
      await put(h.store, kb, 'later.md', '# Later\n');
      const afterwards = await related(h.store, kb, 'a.md');
      assert.deepEqual(
        { before: misses(before), afterwards: misses(afterwards), resolved: shown(afterwards.outgoing) },
        {
          before: ['a.md -> ../../x.md markdown', 'a.md -> later.md markdown'],
          afterwards: ['a.md -> ../../x.md markdown'],
          resolved: ['1 later.md markdown'],
        },
      );
    });

    it('at depth 2 reports the unresolved references of the files it refers to, with where they are', async () => {
      const kb = await newKb();
      await put(h.store, kb, 'a.md', '[b](b.md)\n');
      await put(h.store, kb, 'b.md', '[gone](gone.md)\n');
      assert.deepEqual(misses(await related(h.store, kb, 'a.md', 2)), ['b.md -> gone.md markdown']);
    });

    it('filters by registered type', async () => {
      const kb = await newKb();
      await put(h.store, kb, 'a.md', '---\nrelated: c.md\n---\n[b](b.md) [[c]]\n');
      await put(h.store, kb, 'b.md', '# B\n');
      await put(h.store, kb, 'c.md', '# C\n');
      assert.deepEqual(shown((await related(h.store, kb, 'a.md', 1, ['wiki', 'front_matter'])).outgoing), ['1 c.md front_matter:related', '1 c.md wiki']);
    });

    it('resolves a moved file’s relative references from its new folder', async () => {
      const kb = await newKb();
      await put(h.store, kb, 'guides/a.md', '[b](b.md)\n');
      await put(h.store, kb, 'guides/b.md', '# B\n');
      await put(h.store, kb, 'archive/b.md', '# Old B\n');
      await put(h.store, kb, 'archive/a.md', '[b](b.md)\n', idOf(kb, 'guides/a.md'));
      assert.deepEqual(shown((await related(h.store, kb, 'archive/a.md')).outgoing), ['1 archive/b.md markdown']);
    });

    it('leaves the references to a moved file’s old path unresolved', async () => {
      const kb = await newKb();
      await put(h.store, kb, 'a.md', '[b](b.md)\n');
      await put(h.store, kb, 'b.md', '# B\n');
      await put(h.store, kb, 'moved/b.md', '# B\n', idOf(kb, 'b.md'));
      const answer = await related(h.store, kb, 'a.md');
      assert.deepEqual({ outgoing: shown(answer.outgoing), unresolved: misses(answer) }, { outgoing: [], unresolved: ['a.md -> b.md markdown'] });
    });

    it('forgets a removed file: its references go, and references to it become unresolved', async () => {
      const kb = await newKb();
      await put(h.store, kb, 'a.md', '[b](b.md)\n');
      await put(h.store, kb, 'b.md', '[a](a.md)\n');
      await h.store.write([{ op: 'removeKbFile', tenantId: kb.tenantId, fileId: idOf(kb, 'b.md') }]);
      const answer = await related(h.store, kb, 'a.md');
      assert.deepEqual({ incoming: shown(answer.incoming), unresolved: misses(answer) }, { incoming: [], unresolved: ['a.md -> b.md markdown'] });
    });

    it('answers nothing for a file it does not know', async () => {
      const kb = await newKb();
      const answer = await relatedFiles(h.store.kbLinks(), { tenantId: kb.tenantId, kbId: kb.kbId, fileId: randomUUID(), depth: 2 });
      assert.equal(answer.file, undefined);
    });

    it('resolves a bare wiki name to the one file of the KB with that name', async () => {
      const kb = await newKb();
      await put(h.store, kb, 'notes/a.md', '[[Setup]]\n');
      await put(h.store, kb, 'guides/deep/Setup.md', '# Setup\n');
      assert.deepEqual(shown((await related(h.store, kb, 'notes/a.md')).outgoing), ['1 guides/deep/Setup.md wiki']);
    });

    it('leaves a bare wiki name that two files have unresolved', async () => {
      const kb = await newKb();
      await put(h.store, kb, 'notes/a.md', '[[Setup]]\n');
      await put(h.store, kb, 'guides/Setup.md', '# Setup\n');
      await put(h.store, kb, 'howto/Setup.md', '# Setup\n');
      assert.deepEqual(misses(await related(h.store, kb, 'notes/a.md')), ['notes/a.md -> notes/Setup.md wiki']);
    });

    it('prefers the wiki path as written to a file with the name elsewhere', async () => {
      const kb = await newKb();
      await put(h.store, kb, 'notes/a.md', '[[Setup]]\n');
      await put(h.store, kb, 'notes/Setup.md', '# Here\n');
      await put(h.store, kb, 'guides/Setup.md', '# There\n');
      assert.deepEqual(shown((await related(h.store, kb, 'notes/a.md')).outgoing), ['1 notes/Setup.md wiki']);
    });

    it('never resolves to, or finds references in, another KB of the tenant', async () => {
      const kb = await newKb();
      const other = await newKb(kb.tenantId);
      await put(h.store, kb, 'a.md', '[b](b.md)\n');
      await put(h.store, other, 'b.md', '[a](a.md)\n');
      const answer = await related(h.store, kb, 'a.md');
      assert.deepEqual(
        { outgoing: answer.outgoing.length, incoming: answer.incoming.length, unresolved: misses(answer) },
        { outgoing: 0, incoming: 0, unresolved: ['a.md -> b.md markdown'] },
      );
    });

    it('never reads another tenant’s files, even with the same KB and file ids', async () => {
      const kb = await newKb();
      const theirs: Kb = { tenantId: await h.tenant(), kbId: kb.kbId, ids: new Map() };
      const id = await put(h.store, kb, 'a.md', '# A\n');
      await put(h.store, theirs, 'a.md', '[b](b.md)\n', id);
      await put(h.store, theirs, 'b.md', '[a](a.md)\n');
      const answer = await related(h.store, kb, 'a.md');
      assert.deepEqual(
        { outgoing: answer.outgoing.length, incoming: answer.incoming.length, unresolved: answer.unresolved.length },
        { outgoing: 0, incoming: 0, unresolved: 0 },
      );
    });

    it('keeps hostile paths and keys as data', async () => {
      const kb = await newKb();
      const hostile = 'x\'}) DETACH DELETE n; MATCH (m) "; DROP TABLE graph_kb_files; --.md';
      await put(h.store, kb, 'a.md', `---\n"k'}) RETURN 1 //": "${hostile.replace(/"/g, '\\"')}"\n---\n[[${hostile}]]\n`);
      await put(h.store, kb, hostile, `[a](a.md)\n`);
      const answer = await related(h.store, kb, 'a.md');
      assert.deepEqual(
        { outgoing: shown(answer.outgoing), incoming: shown(answer.incoming) },
        { outgoing: [`1 ${hostile} front_matter:k'}) RETURN 1 //`, `1 ${hostile} wiki`], incoming: [`1 ${hostile} markdown`] },
      );
    });

    it('forgets a tenant’s files on clear', async () => {
      const kb = await newKb();
      await put(h.store, kb, 'a.md', '[b](b.md)\n');
      await h.store.clear(kb.tenantId);
      assert.equal((await related(h.store, kb, 'a.md')).file, undefined);
    });
  });
}
