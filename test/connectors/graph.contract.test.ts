import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { GraphEndpointMissing } from '../../connectors/graph/contract.ts';
import type { GraphStore, GraphVisibility, UpsertNodeInput } from '../../connectors/graph/contract.ts';
import { PostgresGraphStore } from '../../connectors/graph/postgres.ts';
import { TIERS, visibleAtTier } from '../../src/kernel/directory/tiers.ts';
import { storeBackends } from '../support/stores.ts';
import type { Harness } from '../support/graph-backends.ts';
import { graphBackends } from '../support/graph-backends.ts';

const ALL: GraphVisibility = { tier: 'restricted', departments: [], projects: [] };

function node(tenantId: string, id: string, extra: Partial<UpsertNodeInput> = {}): UpsertNodeInput {
  return { tenantId, id, type: 'concept', properties: { name: id }, access: 'public', ...extra };
}

async function chain(store: GraphStore, tenantId: string, ids: readonly string[], relations: readonly [string, string, string, string][]): Promise<void> {
  for (const id of ids) await store.upsertNode(node(tenantId, id));
  for (const [id, from, to, verb] of relations) await store.upsertRelation({ tenantId, id, from, to, verb, properties: {} });
}

for (const backend of graphBackends()) {
  describe(`graph store contract: ${backend.name}`, () => {
    let h: Harness;
    before(async () => {
      h = await backend.open();
    });
    after(async () => {
      await h.dispose();
    });

    it('answers health', async () => {
      assert.deepEqual(await h.store.health(), { backend: h.store.backend, ok: true });
    });

    it('upserts, updates and deletes nodes and relations', async () => {
      const t = await h.tenant();
      await h.store.upsertNode(node(t, 'a', { properties: { name: 'A', tags: ['x', 'y'], nested: { n: 1.5, flag: true } } }));
      await h.store.upsertNode(node(t, 'b', { status: 'inferred' }));
      await h.store.upsertRelation({ tenantId: t, id: 'r1', from: 'a', to: 'b', verb: 'relates_to', properties: { weight: 2 } });
      assert.deepEqual(await h.store.counts(t), { nodes: 2, relations: 1 });

      let around = await h.store.neighbours({ tenantId: t, id: 'a', depth: 1, direction: 'out', visible: ALL });
      assert.deepEqual(around.nodes, [
        {
          node: { id: 'b', type: 'concept', properties: { name: 'b' }, access: 'public', department: undefined, project: undefined, status: 'inferred' },
          depth: 1,
        },
      ]);
      assert.deepEqual(around.relations, [{ id: 'r1', from: 'a', to: 'b', verb: 'relates_to', status: 'verified', properties: { weight: 2 } }]);

      // Update: every field replaced, last write wins.
      await h.store.upsertNode(node(t, 'b', { type: 'person', properties: { name: 'B2' }, access: 'department', department: 'Sales', status: 'unresolved' }));
      await h.store.upsertRelation({ tenantId: t, id: 'r1', from: 'a', to: 'b', verb: 'owns', status: 'inferred', properties: {} });
      around = await h.store.neighbours({ tenantId: t, id: 'a', depth: 1, direction: 'out', visible: ALL });
      assert.deepEqual(around.nodes[0]?.node, {
        id: 'b',
        type: 'person',
        properties: { name: 'B2' },
        access: 'department',
        department: 'Sales',
        project: undefined,
        status: 'unresolved',
      });
      assert.deepEqual(around.relations, [{ id: 'r1', from: 'a', to: 'b', verb: 'owns', status: 'inferred', properties: {} }]);
      const a = await h.store.neighbours({ tenantId: t, id: 'b', depth: 1, direction: 'in', visible: ALL });
      assert.deepEqual(a.nodes[0]?.node.properties, { name: 'A', tags: ['x', 'y'], nested: { n: 1.5, flag: true } });

      // A relation may move to other nodes; it stays one relation.
      await h.store.upsertNode(node(t, 'c'));
      await h.store.upsertRelation({ tenantId: t, id: 'r1', from: 'c', to: 'a', verb: 'owns', properties: {} });
      assert.deepEqual(await h.store.counts(t), { nodes: 3, relations: 1 });
      assert.deepEqual(
        (await h.store.neighbours({ tenantId: t, id: 'a', depth: 1, direction: 'both', visible: ALL })).nodes.map((n) => n.node.id),
        ['c'],
      );

      await assert.rejects(h.store.upsertRelation({ tenantId: t, id: 'r2', from: 'a', to: 'missing', verb: 'owns', properties: {} }), GraphEndpointMissing);
      assert.equal((await h.store.counts(t)).relations, 1);

      assert.equal(await h.store.deleteRelation({ tenantId: t, id: 'r1' }), true);
      assert.equal(await h.store.deleteRelation({ tenantId: t, id: 'r1' }), false);
      await h.store.upsertRelation({ tenantId: t, id: 'r3', from: 'a', to: 'b', verb: 'owns', properties: {} });
      // Deleting a node deletes its relations.
      assert.equal(await h.store.deleteNode({ tenantId: t, id: 'b' }), true);
      assert.equal(await h.store.deleteNode({ tenantId: t, id: 'b' }), false);
      assert.deepEqual(await h.store.counts(t), { nodes: 2, relations: 0 });
    });

    it('writes a batch in order and all or nothing', async () => {
      const t = await h.tenant();
      await h.store.write([
        { op: 'upsertNode', node: node(t, 'a') },
        { op: 'upsertNode', node: node(t, 'b') },
        { op: 'upsertRelation', relation: { tenantId: t, id: 'r', from: 'a', to: 'b', verb: 'owns', properties: {} } },
        { op: 'upsertNode', node: node(t, 'a', { properties: { name: 'A2' } }) },
        { op: 'deleteRelation', tenantId: t, id: 'absent' },
        { op: 'deleteNode', tenantId: t, id: 'absent' },
      ]);
      assert.deepEqual(await h.store.counts(t), { nodes: 2, relations: 1 });
      const around = await h.store.neighbours({ tenantId: t, id: 'b', depth: 1, direction: 'in', visible: ALL });
      assert.deepEqual(
        around.nodes.map((n) => n.node.properties),
        [{ name: 'A2' }],
      );
      // A relation to a missing node fails the whole batch: the node written before it is not kept.
      await assert.rejects(
        h.store.write([
          { op: 'upsertNode', node: node(t, 'c') },
          { op: 'upsertRelation', relation: { tenantId: t, id: 'r2', from: 'c', to: 'missing', verb: 'owns', properties: {} } },
        ]),
        GraphEndpointMissing,
      );
      assert.deepEqual(await h.store.counts(t), { nodes: 2, relations: 1 });
      // Deletes in order: the relation, then a node; applying the same batch again changes nothing.
      const removal = [
        { op: 'deleteRelation', tenantId: t, id: 'r' },
        { op: 'deleteNode', tenantId: t, id: 'b' },
      ] as const;
      await h.store.write(removal);
      await h.store.write(removal);
      assert.deepEqual(await h.store.counts(t), { nodes: 1, relations: 0 });
      await h.store.write([]);
    });

    it('walks depth 1 and 2 by direction and verb', async () => {
      const t = await h.tenant();
      // a -x-> b -x-> c ; d -y-> a ; b -y-> e ; e -x-> a (cycle) ; f isolated
      await chain(
        h.store,
        t,
        ['a', 'b', 'c', 'd', 'e', 'f'],
        [
          ['ab', 'a', 'b', 'x'],
          ['bc', 'b', 'c', 'x'],
          ['da', 'd', 'a', 'y'],
          ['be', 'b', 'e', 'y'],
          ['ea', 'e', 'a', 'x'],
        ],
      );
      const walk = async (direction: 'out' | 'in' | 'both', depth: 1 | 2, verbs?: string[]) => {
        const result = await h.store.neighbours({ tenantId: t, id: 'a', depth, direction, verbs, visible: ALL });
        return { nodes: result.nodes.map((n) => `${n.node.id}${n.depth}`), relations: result.relations.map((r) => r.id) };
      };
      assert.deepEqual(await walk('out', 1), { nodes: ['b1'], relations: ['ab'] });
      assert.deepEqual(await walk('out', 2), { nodes: ['b1', 'c2', 'e2'], relations: ['ab', 'bc', 'be'] });
      assert.deepEqual(await walk('in', 1), { nodes: ['d1', 'e1'], relations: ['da', 'ea'] });
      assert.deepEqual(await walk('in', 2), { nodes: ['d1', 'e1', 'b2'], relations: ['be', 'da', 'ea'] });
      assert.deepEqual(await walk('both', 1), { nodes: ['b1', 'd1', 'e1'], relations: ['ab', 'da', 'ea'] });
      assert.deepEqual(await walk('both', 2), { nodes: ['b1', 'd1', 'e1', 'c2'], relations: ['ab', 'bc', 'be', 'da', 'ea'] });
      assert.deepEqual(await walk('out', 2, ['x']), { nodes: ['b1', 'c2'], relations: ['ab', 'bc'] });
      assert.deepEqual(await walk('both', 2, ['y']), { nodes: ['d1'], relations: ['da'] });
      assert.deepEqual(await walk('both', 2, []), { nodes: [], relations: [] });
      assert.deepEqual(await h.store.neighbours({ tenantId: t, id: 'f', depth: 2, direction: 'both', visible: ALL }), { nodes: [], relations: [] });
      assert.deepEqual(await h.store.neighbours({ tenantId: t, id: 'nope', depth: 2, direction: 'both', visible: ALL }), { nodes: [], relations: [] });
    });

    it('applies exactly the visibleAtTier rule to every node and viewer', async () => {
      const t = await h.tenant();
      const scopes: { department?: string; project?: string }[] = [
        {},
        { department: 'Sales' },
        { department: 'Ops' },
        { project: 'Apollo' },
        { project: 'Zeus' },
        { department: 'Sales', project: 'Apollo' },
      ];
      const nodes: UpsertNodeInput[] = [];
      for (const access of TIERS) scopes.forEach((scope, i) => nodes.push(node(t, `${access}-${i}`, { access, ...scope })));
      await h.store.upsertNode(node(t, 'hub'));
      for (const n of nodes) {
        await h.store.upsertNode(n);
        await h.store.upsertRelation({ tenantId: t, id: `hub-${n.id}`, from: 'hub', to: n.id, verb: 'relates_to', properties: {} });
      }
      const memberships: { departments: string[]; projects: string[] }[] = [
        { departments: [], projects: [] },
        { departments: ['Sales'], projects: [] },
        { departments: ['Sales', 'Ops'], projects: ['Apollo'] },
        { departments: [], projects: ['Apollo', 'Zeus'] },
      ];
      for (const tier of TIERS) {
        for (const membership of memberships) {
          const viewer: GraphVisibility = { tier, ...membership };
          const expected = nodes
            .filter((n) => visibleAtTier(viewer, n))
            .map((n) => n.id)
            .sort();
          const weak = await h.store.weaklyLinked({ tenantId: t, maxDegree: 1_000, visible: viewer });
          assert.deepEqual(
            weak
              .map((w) => w.node.id)
              .filter((id) => id !== 'hub')
              .sort(),
            expected,
            `weaklyLinked for ${JSON.stringify(viewer)}`,
          );
          const around = await h.store.neighbours({ tenantId: t, id: 'hub', depth: 1, direction: 'out', visible: viewer });
          assert.deepEqual(around.nodes.map((n) => n.node.id).sort(), expected, `neighbours for ${JSON.stringify(viewer)}`);
          assert.equal(around.relations.length, expected.length);
          const hubDegree = weak.find((w) => w.node.id === 'hub')?.degree;
          assert.equal(hubDegree, expected.length);
        }
      }
    });

    it('never walks through a hidden node and hides a hidden start', async () => {
      const t = await h.tenant();
      await h.store.upsertNode(node(t, 'a'));
      await h.store.upsertNode(node(t, 'secret', { access: 'hr' }));
      await h.store.upsertNode(node(t, 'b'));
      await h.store.upsertRelation({ tenantId: t, id: 'r1', from: 'a', to: 'secret', verb: 'x', properties: {} });
      await h.store.upsertRelation({ tenantId: t, id: 'r2', from: 'secret', to: 'b', verb: 'x', properties: {} });
      const exec: GraphVisibility = { tier: 'executive', departments: [], projects: [] };
      assert.deepEqual(await h.store.neighbours({ tenantId: t, id: 'a', depth: 2, direction: 'out', visible: exec }), { nodes: [], relations: [] });
      assert.deepEqual(await h.store.neighbours({ tenantId: t, id: 'secret', depth: 1, direction: 'both', visible: exec }), { nodes: [], relations: [] });
      const hr: GraphVisibility = { tier: 'hr', departments: [], projects: [] };
      const seen = await h.store.neighbours({ tenantId: t, id: 'a', depth: 2, direction: 'out', visible: hr });
      assert.deepEqual(
        seen.nodes.map((n) => `${n.node.id}${n.depth}`),
        ['secret1', 'b2'],
      );
      assert.deepEqual(await h.store.components({ tenantId: t, visible: exec }), [['a'], ['b']]);
      assert.deepEqual(await h.store.components({ tenantId: t, visible: hr }), [['a', 'b', 'secret']]);
    });

    it('finds weakly linked nodes by visible degree', async () => {
      const t = await h.tenant();
      await chain(
        h.store,
        t,
        ['a', 'b', 'c', 'd'],
        [
          ['ab', 'a', 'b', 'x'],
          ['ac', 'a', 'c', 'x'],
          ['ca', 'c', 'a', 'y'],
          ['dd', 'd', 'd', 'x'],
        ],
      );
      await h.store.upsertNode(node(t, 'e'));
      await h.store.upsertNode(node(t, 'hidden', { access: 'manager' }));
      await h.store.upsertRelation({ tenantId: t, id: 'bh', from: 'b', to: 'hidden', verb: 'x', properties: {} });
      const pub: GraphVisibility = { tier: 'public', departments: [], projects: [] };
      const weak = async (maxDegree: number, visible: GraphVisibility) =>
        (await h.store.weaklyLinked({ tenantId: t, maxDegree, visible })).map((w) => `${w.node.id}:${w.degree}`);
      assert.deepEqual(await weak(1, pub), ['e:0', 'b:1', 'd:1']);
      assert.deepEqual(await weak(0, pub), ['e:0']);
      assert.deepEqual(await weak(1, ALL), ['e:0', 'd:1', 'hidden:1']);
      assert.deepEqual(await weak(3, ALL), ['e:0', 'd:1', 'hidden:1', 'b:2', 'c:2', 'a:3']);
    });

    it('finds components and bridges (a pair held by a single relation)', async () => {
      const t = await h.tenant();
      // Triangle a-b-c; c-d the only link to d; d=e held twice (parallel, either way round); e-f bridge;
      // g-h separate pair; i alone; j-k linked only through a project node.
      await chain(
        h.store,
        t,
        ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k'],
        [
          ['ab', 'a', 'b', 'x'],
          ['bc', 'b', 'c', 'x'],
          ['ca', 'c', 'a', 'x'],
          ['cd', 'c', 'd', 'x'],
          ['de1', 'd', 'e', 'x'],
          ['de2', 'e', 'd', 'y'],
          ['ef', 'e', 'f', 'x'],
          ['gh', 'g', 'h', 'x'],
          ['ii', 'i', 'i', 'x'],
        ],
      );
      await h.store.upsertNode(node(t, 'p', { access: 'project', project: 'Apollo' }));
      await h.store.upsertRelation({ tenantId: t, id: 'jp', from: 'j', to: 'p', verb: 'x', properties: {} });
      await h.store.upsertRelation({ tenantId: t, id: 'pk', from: 'p', to: 'k', verb: 'x', properties: {} });
      const member: GraphVisibility = { tier: 'project', departments: [], projects: ['Apollo'] };
      const outsider: GraphVisibility = { tier: 'project', departments: [], projects: ['Zeus'] };
      assert.deepEqual(await h.store.components({ tenantId: t, visible: member }), [['a', 'b', 'c', 'd', 'e', 'f'], ['j', 'k', 'p'], ['g', 'h'], ['i']]);
      assert.deepEqual(await h.store.components({ tenantId: t, visible: outsider }), [['a', 'b', 'c', 'd', 'e', 'f'], ['g', 'h'], ['i'], ['j'], ['k']]);
      const bridges = await h.store.bridges({ tenantId: t, visible: member });
      assert.deepEqual(
        bridges.map((b) => b.id),
        ['cd', 'ef', 'gh', 'jp', 'pk'],
      );
      assert.deepEqual(bridges[0], { id: 'cd', from: 'c', to: 'd', verb: 'x', status: 'verified', properties: {} });
      assert.deepEqual(
        (await h.store.bridges({ tenantId: t, visible: outsider })).map((b) => b.id),
        ['cd', 'ef', 'gh'],
      );
      // Removing one of the parallel relations makes the other a bridge.
      await h.store.deleteRelation({ tenantId: t, id: 'de2' });
      assert.deepEqual(
        (await h.store.bridges({ tenantId: t, visible: outsider })).map((b) => b.id),
        ['cd', 'de1', 'ef', 'gh'],
      );
    });

    it('reads one node whatever its access, with the relations touching it counted', async () => {
      const t = await h.tenant();
      await chain(
        h.store,
        t,
        ['a', 'b', 'c'],
        [
          ['ab', 'a', 'b', 'uses'],
          ['ca', 'c', 'a', 'owns'],
        ],
      );
      await h.store.upsertNode(node(t, 'secret', { access: 'restricted', properties: { name: 'S' } }));
      await h.store.upsertRelation({ tenantId: t, id: 'as', from: 'a', to: 'secret', verb: 'uses', properties: {} });
      assert.deepEqual(await h.store.node({ tenantId: t, id: 'a' }), {
        node: { id: 'a', type: 'concept', properties: { name: 'a' }, access: 'public', department: undefined, project: undefined, status: 'verified' },
        degree: 3,
      });
      assert.equal((await h.store.node({ tenantId: t, id: 'secret' }))?.node.access, 'restricted');
      assert.equal(await h.store.node({ tenantId: t, id: 'nobody' }), undefined);
      assert.equal(await h.store.node({ tenantId: await h.tenant(), id: 'a' }), undefined);
    });

    it('gives the visible graph whole: visible nodes and the relations between them, by id', async () => {
      const t = await h.tenant();
      await chain(h.store, t, ['b', 'a'], [['ab', 'a', 'b', 'uses']]);
      await h.store.upsertNode(node(t, 'fin', { access: 'department', department: 'Finance' }));
      await h.store.upsertNode(node(t, 'exec', { access: 'executive' }));
      await h.store.upsertRelation({ tenantId: t, id: 'fa', from: 'fin', to: 'a', verb: 'uses', properties: {} });
      await h.store.upsertRelation({ tenantId: t, id: 'ea', from: 'exec', to: 'a', verb: 'uses', properties: {} });
      const seen = async (visible: GraphVisibility) => {
        const graph = await h.store.visibleGraph({ tenantId: t, visible });
        return { nodes: graph.nodes.map((n) => n.id), relations: graph.relations.map((r) => r.id) };
      };
      assert.deepEqual(
        {
          public: await seen({ tier: 'public', departments: [], projects: [] }),
          finance: await seen({ tier: 'department', departments: ['Finance'], projects: [] }),
          executive: await seen({ tier: 'executive', departments: [], projects: [] }),
        },
        {
          public: { nodes: ['a', 'b'], relations: ['ab'] },
          finance: { nodes: ['a', 'b', 'fin'], relations: ['ab', 'fa'] },
          executive: { nodes: ['a', 'b', 'exec', 'fin'], relations: ['ab', 'ea', 'fa'] },
        },
      );
    });

    it('keeps tenants apart', async () => {
      const t1 = await h.tenant();
      const t2 = await h.tenant();
      await chain(h.store, t1, ['a', 'b'], [['ab', 'a', 'b', 'x']]);
      await chain(h.store, t2, ['a', 'b', 'c'], [['ab', 'a', 'c', 'y']]);
      assert.deepEqual(await h.store.counts(t1), { nodes: 2, relations: 1 });
      assert.deepEqual(await h.store.counts(t2), { nodes: 3, relations: 1 });
      assert.deepEqual(
        (await h.store.neighbours({ tenantId: t1, id: 'a', depth: 2, direction: 'both', visible: ALL })).nodes.map((n) => n.node.id),
        ['b'],
      );
      assert.deepEqual(
        (await h.store.neighbours({ tenantId: t2, id: 'a', depth: 2, direction: 'both', visible: ALL })).relations.map((r) => r.verb),
        ['y'],
      );
      // A relation cannot join nodes of another tenant.
      const t3 = await h.tenant();
      await h.store.upsertNode(node(t3, 'z'));
      await assert.rejects(h.store.upsertRelation({ tenantId: t3, id: 'cross', from: 'z', to: 'a', verb: 'x', properties: {} }), GraphEndpointMissing);
      assert.equal(await h.store.deleteNode({ tenantId: t3, id: 'a' }), false);
      assert.equal(await h.store.deleteRelation({ tenantId: t3, id: 'ab' }), false);
      await h.store.clear(t1);
      assert.deepEqual(await h.store.counts(t1), { nodes: 0, relations: 0 });
      assert.deepEqual(await h.store.counts(t2), { nodes: 3, relations: 1 });
      assert.deepEqual(await h.store.components({ tenantId: t2, visible: ALL }), [['a', 'c'], ['b']]);
    });

    it('keeps one node and the last write under concurrent upserts', async () => {
      const t = await h.tenant();
      await Promise.all(Array.from({ length: 16 }, (_, i) => h.store.upsertNode(node(t, 'same', { properties: { n: i } }))));
      assert.deepEqual(await h.store.counts(t), { nodes: 1, relations: 0 });
      await h.store.upsertNode(node(t, 'other'));
      await Promise.all(
        Array.from({ length: 16 }, (_, i) => h.store.upsertRelation({ tenantId: t, id: 'rel', from: 'same', to: 'other', verb: `v${i}`, properties: {} })),
      );
      assert.deepEqual(await h.store.counts(t), { nodes: 2, relations: 1 });
      await h.store.upsertNode(node(t, 'same', { properties: { n: 'final' } }));
      const seen = await h.store.neighbours({ tenantId: t, id: 'other', depth: 1, direction: 'in', visible: ALL });
      assert.deepEqual(
        seen.nodes.map((n) => n.node.properties),
        [{ n: 'final' }],
      );
      assert.equal(seen.relations.length, 1);
    });

    it('stores unicode ids, verbs and properties unchanged', async () => {
      const t = await h.tenant();
      const ids = ['Müller & Söhne', '東京-プロジェクト', '🚀 launch', 'O\'Brien "quoted" \\ back'];
      for (const id of ids)
        await h.store.upsertNode(node(t, id, { properties: { label: `${id} ✓`, emoji: '👩‍💻', rtl: 'שלום' }, access: 'department', department: 'Ventes é' }));
      await h.store.upsertRelation({ tenantId: t, id: 'ключ', from: ids[0] as string, to: ids[1] as string, verb: 'gehört_zu', properties: { note: 'ß' } });
      await h.store.upsertRelation({ tenantId: t, id: '关系', from: ids[1] as string, to: ids[2] as string, verb: 'x', properties: {} });
      const viewer: GraphVisibility = { tier: 'department', departments: ['Ventes é'], projects: [] };
      const seen = await h.store.neighbours({ tenantId: t, id: ids[0] as string, depth: 2, direction: 'out', visible: viewer });
      assert.deepEqual(
        seen.nodes.map((n) => n.node.id),
        [ids[1], ids[2]],
      );
      assert.deepEqual(seen.nodes[0]?.node.properties, { label: `${ids[1]} ✓`, emoji: '👩‍💻', rtl: 'שלום' });
      assert.deepEqual(
        seen.relations.map((r) => ({ id: r.id, verb: r.verb, properties: r.properties })),
        [
          { id: 'ключ', verb: 'gehört_zu', properties: { note: 'ß' } },
          { id: '关系', verb: 'x', properties: {} },
        ].sort((a, b) => (a.id < b.id ? -1 : 1)),
      );
      const other: GraphVisibility = { tier: 'department', departments: ['Ventes e'], projects: [] };
      assert.deepEqual(await h.store.weaklyLinked({ tenantId: t, maxDegree: 5, visible: other }), []);
      assert.deepEqual((await h.store.bridges({ tenantId: t, visible: viewer })).map((b) => b.id).sort(), ['ключ', '关系'].sort());
    });
  });
}

// clearAll empties every tenant, so it runs only where the store is the test's own (the shared
// Neo4j server's clearAll runs in the fault suite, on a private server).
for (const backend of storeBackends()) {
  describe(`graph store clearAll: postgres graph tables on ${backend.name}`, () => {
    it('removes every tenant', async () => {
      const test = await backend.open({ migrated: true });
      try {
        const store = new PostgresGraphStore(test.db);
        const tenants = [randomUUID(), randomUUID()];
        for (const id of tenants) {
          await test.db.tx((tx) => tx.query('INSERT INTO tenants (id, slug, name) VALUES ($1, $2, $3)', [id, `t-${id.slice(0, 8)}`, 'Graph test']));
          await chain(store, id, ['a', 'b'], [['r', 'a', 'b', 'owns']]);
        }
        await store.clearAll();
        for (const id of tenants) assert.deepEqual(await store.counts(id), { nodes: 0, relations: 0 });
      } finally {
        await test.dispose();
      }
    });
  });
}

// PGlite runs no autovacuum: the graph store analyses its tables as it writes, so the planner
// knows their size (a stale estimate turned the visible-graph read at 5,000 nodes into a cross join).
for (const backend of storeBackends().filter((candidate) => candidate.name === 'pglite')) {
  describe(`graph store on ${backend.name}, which runs no autovacuum`, () => {
    it('analyses its tables once a thousand changes were written', async () => {
      const test = await backend.open({ migrated: true });
      try {
        const store = new PostgresGraphStore(test.db);
        const tenantId = randomUUID();
        await test.db.tx((tx) => tx.query('INSERT INTO tenants (id, slug, name) VALUES ($1, $2, $3)', [tenantId, `t-${tenantId.slice(0, 8)}`, 'Graph test']));
        const estimate = async () =>
          Number((await test.db.query<{ n: number }>("SELECT reltuples::float8 AS n FROM pg_class WHERE relname = 'graph_nodes'"))[0]?.n);
        const nodes = Array.from({ length: 1200 }, (_, i) => ({ op: 'upsertNode' as const, node: node(tenantId, `n${i}`) }));
        await store.write(nodes.slice(0, 600));
        assert.ok((await estimate()) < 600, 'not analysed before the threshold');
        await store.write(nodes.slice(600));
        assert.equal(await estimate(), 1200);
      } finally {
        await test.dispose();
      }
    });
  });
}
