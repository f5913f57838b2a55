import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PostgresGraphStore } from '../../connectors/graph/postgres.ts';
import { graphProjection } from '../../connectors/graph/projection.ts';
import { importBrain } from '../../src/brain/import.ts';
import { BRAIN_BOUNDS } from '../../src/brain/model.ts';
import { parseInstant } from '../../src/brain/content.ts';
import { orgGraph } from '../../src/brain/org-graph.ts';
import { applyOrgFile } from '../../src/org-sections.ts';
import { OutboxWorker } from '../../src/kernel/outbox/worker.ts';
import type { Db } from '../../src/store/db.ts';
import { cliTrail } from '../support/audit.ts';
import { assertKgwError, rejectsWithKgwError } from '../support/fixtures.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';

/*
 * Company Brain content from the org file's `brain:` section and from `kgw brain import`:
 * validated with lines, all or nothing, idempotent, kept by its origin, and projected into the
 * graph store with its tier, memberships and marks.
 */

const people = (slug: string) => `tenant: ${slug}
name: ${slug} Ltd
people:
  - email: ana@${slug}.test
    name: Ana
    departments: [Finance]
  - email: ben@${slug}.test
    name: Ben
    tier: manager
`;

const BRAIN = `brain:
  nodes:
    - id: invoice-approval
      type: SOP / process
      title: Invoice approval
      summary: Invoices above the threshold need a second signature.
      access: department
      department: Finance
      metadata: { Owner: Ana, Approval threshold: "5,000 EUR", Score: 4 }
      tags: [finance, approvals]
      freshness: { verified: 2026-05-01, review_by: "2026-11-01T09:00:00+02:00" }
    - id: erp
      type: tool
      title: ERP
      access: public
    - id: pricing
      type: strategy
      title: Pricing strategy
      access: executive
      mark: inferred
  relations:
    - { from: invoice-approval, verb: uses, to: erp }
    - { from: invoice-approval, verb: belongs to, to: "department:Finance" }
    - { from: "person:ANA@{slug}.test", verb: owns, to: invoice-approval, mark: unresolved }
    - { from: pricing, verb: needs clarification with, to: "person:ben@{slug}.test" }
`;

const brainOf = (slug: string, text = BRAIN) => text.replaceAll('{slug}', slug);

async function tenantId(db: Db, slug: string): Promise<string> {
  const [row] = await db.query<{ id: string }>('SELECT id FROM tenants WHERE slug = $1', [slug]);
  assert.ok(row, `tenant ${slug}`);
  return row.id;
}

const lines = (changes: readonly { action: string; kind: string; name: string }[]) => changes.map((c) => `${c.action} ${c.kind} ${c.name}`);

for (const backend of storeBackends()) {
  describe(`Company Brain content on ${backend.name}`, () => {
    let store: TestStore;
    let db: Db;
    const run = Math.random().toString(36).slice(2, 8);
    const slug = (name: string) => `${name}-${run}`;

    before(async () => {
      store = await backend.open({ migrated: true });
      db = store.db;
    });
    after(async () => {
      await store.dispose();
    });

    const apply = (source: string, dryRun = false) => applyOrgFile(db, { source, dryRun }, cliTrail(db));
    const brainRows = async (tenant: string) =>
      db.query<{ id: string; origin: string }>('SELECT id, origin FROM brain_nodes WHERE tenant_id = $1 ORDER BY id', [await tenantId(db, tenant)]);

    it('applies the brain section: nodes, then relations naming the directory by email and label', async () => {
      const t = slug('apply');
      const result = await apply(people(t) + brainOf(t));
      assert.deepEqual(
        lines(result.changes).filter((l) => l.includes('brain')),
        [
          'create brain node invoice-approval',
          'create brain node erp',
          'create brain node pricing',
          'add brain relation invoice-approval uses erp',
          'add brain relation invoice-approval belongs to department:Finance',
          `add brain relation person:ANA@${t}.test owns invoice-approval`,
          `add brain relation pricing needs clarification with person:ben@${t}.test`,
        ],
      );
      const graph = await orgGraph(db, await tenantId(db, t));
      const node = graph.nodes.find((n) => n.id === 'invoice-approval');
      assert.deepEqual(node, {
        tenantId: await tenantId(db, t),
        id: 'invoice-approval',
        type: 'SOP / process',
        properties: {
          title: 'Invoice approval',
          summary: 'Invoices above the threshold need a second signature.',
          metadata: { Owner: 'Ana', 'Approval threshold': '5,000 EUR', Score: 4 },
          tags: ['finance', 'approvals'],
          verifiedAt: '2026-05-01T00:00:00.000Z',
          reviewBy: '2026-11-01T07:00:00.000Z',
        },
        access: 'department',
        department: 'Finance',
        project: undefined,
        status: 'verified',
      });
      assert.equal(graph.nodes.find((n) => n.id === 'pricing')?.status, 'inferred');
      const [ana] = await db.query<{ id: string }>('SELECT id FROM principals WHERE email = $1', [`ana@${t}.test`]);
      assert.ok(graph.relations.some((r) => r.id === `person:${ana?.id}|owns|invoice-approval` && r.status === 'unresolved'));
    });

    it('projects tiers, memberships and marks: the graph store hides a department node from the public and shows it to the department', async () => {
      const t = slug('tiers');
      await apply(people(t) + brainOf(t));
      const id = await tenantId(db, t);
      const graph = new PostgresGraphStore(db);
      await new OutboxWorker(db, [graphProjection(graph)], { backoff: { baseMs: 1, maxMs: 5 } }).drainAll();
      const seen = async (visible: { tier: 'public' | 'department' | 'executive'; departments: string[] }) =>
        (await graph.neighbours({ tenantId: id, id: 'erp', depth: 1, direction: 'both', visible: { ...visible, projects: [] } })).nodes.map((n) => n.node.id);
      assert.deepEqual(
        {
          public: await seen({ tier: 'public', departments: [] }),
          sales: await seen({ tier: 'department', departments: ['Sales'] }),
          finance: await seen({ tier: 'department', departments: ['Finance'] }),
          executive: await seen({ tier: 'executive', departments: [] }),
        },
        { public: [], sales: [], finance: ['invoice-approval'], executive: ['invoice-approval'] },
      );
    });

    it('applies the same file again without a change, and a dry run writes nothing', async () => {
      const t = slug('again');
      await apply(people(t) + brainOf(t));
      const again = await apply(people(t) + brainOf(t));
      assert.deepEqual(again.changes, []);
      const dry = await apply(people(t) + brainOf(t).replace('title: ERP', 'title: ERP system'), true);
      assert.deepEqual(lines(dry.changes), ['update brain node erp']);
      const [erp] = await db.query<{ title: string }>("SELECT title FROM brain_nodes WHERE id = 'erp' AND tenant_id = $1", [await tenantId(db, t)]);
      assert.equal(erp?.title, 'ERP');
    });

    it('removes what the section no longer lists, with its relations, and keeps imported nodes', async () => {
      const t = slug('remove');
      await apply(people(t) + brainOf(t));
      await importBrain(
        db,
        { tenant: t, source: 'nodes:\n  - { id: crm, type: tool, title: CRM, access: public }\nrelations:\n  - { from: crm, verb: supports, to: erp }\n' },
        cliTrail(db),
      );
      const shorter = brainOf(t)
        .replace(/ {4}- id: erp\n.*\n.*\n.*\n/, '')
        .replace(/.*to: erp \}\n/, '');
      const result = await apply(people(t) + shorter);
      assert.deepEqual(lines(result.changes), ['remove brain node erp']);
      assert.deepEqual(
        (await brainRows(t)).map((r) => `${r.id}:${r.origin}`),
        ['crm:import', 'invoice-approval:org', 'pricing:org'],
      );
      const relations = await db.query<{ from_id: string }>("SELECT from_id FROM brain_relations WHERE tenant_id = $1 AND (from_id = 'erp' OR to_id = 'erp')", [
        await tenantId(db, t),
      ]);
      assert.deepEqual(relations, []);
    });

    it('leaves the brain alone when the file has no brain section', async () => {
      const t = slug('without');
      await apply(people(t) + brainOf(t));
      assert.deepEqual((await apply(people(t))).changes, []);
      assert.equal((await brainRows(t)).length, 3);
    });

    it('refuses a wrong section with every problem and its line, writing nothing', async () => {
      const t = slug('wrong');
      await apply(people(t));
      const bad = `brain:
  nodes:
    - { id: Bad Id, type: tool, title: X, access: public }
    - { id: a, type: robot, title: X, access: public }
    - { id: b, type: tool, title: X, access: secret }
    - { id: c, type: tool, title: X, access: department }
    - { id: d, type: tool, title: "x\\u202Eexe", access: public }
    - { id: e, type: tool, title: "x\\0", access: public }
    - { id: f, type: tool, title: F, access: public, freshness: { verified: 2026-02-30 } }
    - { id: g, type: tool, title: G, access: public, metadata: { Colour: red } }
    - { id: i, type: tool, title: I, access: public, mark: guessed }
    - { id: h, type: tool, title: H, access: public }
    - { id: h, type: tool, title: H, access: public }
  relations:
    - { from: h, verb: likes, to: h }
    - { from: h, verb: uses, to: nowhere }
    - { from: h, verb: uses, to: "person:nobody@example.test" }
    - { from: h, verb: uses, to: "department:Nowhere" }
`;
      const error = await apply(people(t) + bad).then(
        () => assert.fail('applied a wrong brain section'),
        (e: unknown) => e,
      );
      assertKgwError(error, 'validation');
      {
        const message = error.message;
        const expected = [
          /^org\.yaml:12: brain\.nodes\[0\]\.id: "Bad Id" is not a node id/,
          /org\.yaml:13: brain\.nodes\[1\]\.type: "robot" is not a node type: organization, person/,
          /org\.yaml:14: brain\.nodes\[2\]\.access: "secret" is not an access tier/,
          /org\.yaml:15: brain\.nodes\[3\]: "department" is given exactly when access is department/,
          /org\.yaml:16: brain\.nodes\[4\]\.title: .* is not a title of 1 to 200 characters without control or bidirectional/,
          /org\.yaml:17: brain\.nodes\[5\]\.title must not contain NUL/,
          /org\.yaml:18: brain\.nodes\[6\]\.freshness\.verified: "2026-02-30" is not a date/,
          /org\.yaml:19: unknown key "Colour" in brain\.nodes\[7\]\.metadata/,
          /org\.yaml:20: brain\.nodes\[8\]\.mark: "guessed" is not a mark: inferred, unresolved/,
          /org\.yaml:22: brain\.nodes\[10\]\.id: duplicate node "h" \(already listed at line 21\)/,
          /org\.yaml:24: brain\.relations\[0\]\.verb: "likes" is not a relation verb/,
          /org\.yaml:25: brain\.relations\[1\]\.to: no node "nowhere"/,
          /org\.yaml:26: brain\.relations\[2\]\.to: no person in the directory named "nobody@example\.test"/,
          /org\.yaml:27: brain\.relations\[3\]\.to: no department with members named "Nowhere"/,
        ];
        for (const pattern of expected) assert.match(message, pattern);
        assert.equal(message.split('\n').length, expected.length);
      }
      assert.deepEqual(await brainRows(t), []);
    });

    it('parses days and instants with offsets, and refuses dates that do not exist', () => {
      assert.deepEqual(
        ['2026-05-01', '2026-05-01T09:30:00+02:00', '2026-05-01T09:30Z', '2026-02-30', '2026-13-01', '1 May 2026', '2026-05-01T25:00:00Z'].map(parseInstant),
        ['2026-05-01T00:00:00.000Z', '2026-05-01T07:30:00.000Z', '2026-05-01T09:30:00.000Z', undefined, undefined, undefined, undefined],
      );
    });

    it('refuses an import past 16 MiB before reading it, and takes one just within', async () => {
      const t = slug('big');
      await apply(people(t));
      const node = (i: number) => `  - { id: n${i}, type: tool, title: Tool ${i}, access: public }\n`;
      // Padding in a YAML comment: the bound is on the file's bytes, whatever they hold.
      const head = `nodes:\n${node(1)}#`;
      const within = `${head}${'x'.repeat(BRAIN_BOUNDS.importBytes - Buffer.byteLength(head) - 1)}\n`;
      assert.equal(Buffer.byteLength(within), BRAIN_BOUNDS.importBytes);
      assert.deepEqual(lines((await importBrain(db, { tenant: t, source: within }, cliTrail(db))).changes), ['create brain node n1']);
      await rejectsWithKgwError(
        importBrain(db, { tenant: t, source: `nodes:\n${node(2)}#${'é'.repeat(BRAIN_BOUNDS.importBytes / 2)}\n` }, cliTrail(db)),
        'validation',
        `brain.yaml is larger than ${BRAIN_BOUNDS.importBytes} bytes`,
      );
      assert.deepEqual(
        (await brainRows(t)).map((r) => r.id),
        ['n1'],
      );
    });

    it('imports YAML and JSON all or nothing, audits it, and a dry run writes nothing', async () => {
      const t = slug('import');
      await apply(people(t));
      const json = JSON.stringify({
        nodes: [{ id: 'crm', type: 'tool', title: 'CRM', access: 'public', tags: ['sales'] }],
        relations: [{ from: 'crm', verb: 'is part of', to: 'org' }],
      });
      const dry = await importBrain(db, { tenant: t, source: json, fileName: 'brain.json', dryRun: true }, cliTrail(db));
      assert.deepEqual(
        { dryRun: dry.dryRun, changes: lines(dry.changes), stored: await brainRows(t) },
        { dryRun: true, changes: ['create brain node crm', 'add brain relation crm is part of org'], stored: [] },
      );
      await importBrain(db, { tenant: t, source: json, fileName: 'brain.json' }, cliTrail(db));
      assert.deepEqual((await importBrain(db, { tenant: t, source: json }, cliTrail(db))).changes, []);
      const events = await db.query<{ action: string }>("SELECT action FROM audit_events WHERE tenant_id = $1 AND action = 'brain.import'", [
        await tenantId(db, t),
      ]);
      assert.equal(events.length, 1);
      // One bad node refuses the whole file, with the line JSON puts it on.
      const broken =
        '{\n "nodes": [\n  {"id": "ok", "type": "tool", "title": "OK", "access": "public"},\n  {"id": "no", "type": "tool", "title": "", "access": "public"}\n ]\n}';
      await rejectsWithKgwError(
        importBrain(db, { tenant: t, source: broken, fileName: 'b.json' }, cliTrail(db)),
        'validation',
        /^b\.json:4: nodes\[1\]\.title/,
      );
      assert.deepEqual(
        (await brainRows(t)).map((r) => r.id),
        ['crm'],
      );
      await rejectsWithKgwError(importBrain(db, { tenant: 'no-such-tenant', source: json }, cliTrail(db)), 'not_found', 'tenant "no-such-tenant" not found');
      await rejectsWithKgwError(importBrain(db, { tenant: t, source: 'nodes: [' }, cliTrail(db)), 'validation', /brain\.yaml:1: invalid YAML/);
    });

    it('serialises concurrent imports: each change is made once and the graph store ends as the truth', async () => {
      const t = slug('concurrent');
      await apply(people(t));
      const id = await tenantId(db, t);
      const files = Array.from(
        { length: 6 },
        (_, i) =>
          `nodes:\n  - { id: n${i % 3}, type: tool, title: "Tool ${i}", access: public }\nrelations:\n  - { from: n${i % 3}, verb: is part of, to: org }\n`,
      );
      const results = await Promise.all(files.map((source) => importBrain(db, { tenant: t, source }, cliTrail(db))));
      assert.equal(results.flatMap((r) => r.changes).filter((c) => c.kind === 'brain relation').length, 3);
      const graph = new PostgresGraphStore(db);
      await new OutboxWorker(db, [graphProjection(graph)], { backoff: { baseMs: 1, maxMs: 5 } }).drainAll();
      const truth = await orgGraph(db, id);
      const around = await graph.neighbours({ tenantId: id, id: 'org', depth: 1, direction: 'in', visible: { tier: 'public', departments: [], projects: [] } });
      const titles = Object.fromEntries(around.nodes.filter((n) => n.node.type === 'tool').map((n) => [n.node.id, n.node.properties.title]));
      assert.deepEqual(titles, Object.fromEntries(truth.nodes.filter((n) => n.type === 'tool').map((n) => [n.id, n.properties.title])));
    });
  });
}
