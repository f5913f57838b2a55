import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { proposeOnboardingAction, writeInbox } from '../../src/brain/inbox.ts';
import type { BrainViewer } from '../../src/brain/read.ts';
import { acceptBrainReview, listBrainReviews, rejectBrainReview, showBrainReview } from '../../src/brain/review.ts';
import { orgGraph } from '../../src/brain/org-graph.ts';
import type { Services } from '../../src/kernel/services.ts';
import type { Db } from '../../src/store/db.ts';
import { PostgresGraphStore } from '../../connectors/graph/postgres.ts';
import { graphProjection } from '../../connectors/graph/projection.ts';
import { OutboxWorker } from '../../src/kernel/outbox/worker.ts';
import { cliTrail } from '../support/audit.ts';
import { rejectsWithKgwError } from '../support/fixtures.ts';
import { seedOrg } from '../support/gateway.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';

/*
 * A manager's decisions on the brain inbox: only a manager or admin of the brain decides; an
 * accepted onboarding action is applied to the brain's truth with the decision, and a failing
 * one leaves the item pending and the brain as it was.
 */

const org = (slug: string) => `tenant: ${slug}
name: ${slug} Ltd
people:
  - { email: ana@${slug}.test, name: Ana, brain_role: manager, departments: [Finance] }
  - { email: cy@${slug}.test, name: Cy }
brain:
  nodes:
    - { id: erp, type: tool, title: ERP, access: public, mark: inferred }
`;

for (const backend of storeBackends()) {
  describe(`Company Brain decisions on ${backend.name}`, () => {
    let store: TestStore;
    let db: Db;
    let services: Services;
    let tenantId: string;
    let ana: string;
    const tenant = `dec-${Math.random().toString(36).slice(2, 8)}`;

    const viewer = (): BrainViewer => ({
      tenantId,
      tenantSlug: tenant,
      language: 'en',
      access: { tier: 'manager', departments: [], projects: [], brainRole: 'manager', policyMaxTeamRole: undefined },
      visible: { tier: 'manager', departments: [], projects: [] },
    });
    const propose = async (action: Parameters<typeof proposeOnboardingAction>[3]['action'], details: Record<string, unknown>) =>
      (await proposeOnboardingAction(services, viewer(), ana, { action, summary: `Do ${action}`, details }, cliTrail(db).about({ tenantId }))).id;
    const status = async (id: string) => (await showBrainReview(db, { tenant, id })).status;
    // No onboarding action puts a draft anywhere; an email draft would go to this folder.
    const mail = { dataDir: path.join(os.tmpdir(), `kgw-review-${tenant}`), defaultImapUrl: undefined, env: {} };

    before(async () => {
      store = await backend.open({ migrated: true });
      db = store.db;
      await seedOrg(db, org(tenant));
      tenantId = (await db.query<{ id: string }>('SELECT id FROM tenants WHERE slug = $1', [tenant]))[0]!.id;
      ana = (await db.query<{ id: string }>('SELECT id FROM principals WHERE email = $1', [`ana@${tenant}.test`]))[0]!.id;
      // Only what the inbox and decisions use of the services: the store and a graph store on it.
      services = { db, graph: new PostgresGraphStore(db) } as unknown as Services;
    });
    after(async () => {
      await store.dispose();
    });

    it('applies an accepted action to the brain with the decision, and the graph follows', async () => {
      const id = await propose('add_node', { id: 'wiki', type: 'tool', title: 'Wiki', access: 'public' });
      assert.deepEqual(
        (await listBrainReviews(db, { tenant })).map((i) => [i.id, i.action, i.risk]),
        [[id, 'add_node', 'medium']],
      );
      const decision = await acceptBrainReview(db, cliTrail(db), { tenant, id, as: `ana@${tenant}.test` }, mail);
      assert.deepEqual(
        { status: decision.status, applied: decision.applied, by: decision.decidedBy },
        { status: 'accepted', applied: ['create brain node wiki'], by: `ana@${tenant}.test` },
      );
      const [row] = await db.query<{ origin: string }>("SELECT origin FROM brain_nodes WHERE tenant_id = $1 AND id = 'wiki'", [tenantId]);
      assert.equal(row?.origin, 'inbox');
      assert.ok((await orgGraph(db, tenantId)).nodes.some((n) => n.id === 'wiki'));
      const outbox = await db.query<{ resource_key: string }>("SELECT resource_key FROM outbox WHERE tenant_id = $1 AND resource_key = 'brain_node:wiki'", [
        tenantId,
      ]);
      assert.equal(outbox.length, 1);
      await rejectsWithKgwError(
        acceptBrainReview(db, cliTrail(db), { tenant, id, as: `ana@${tenant}.test` }, mail),
        'conflict',
        `brain inbox item ${id} is already accepted`,
      );
    });

    it('confirms a node, adds and removes relations naming the directory', async () => {
      const confirm = await propose('confirm_node', { id: 'erp', verified: '2026-05-01T00:00:00Z', review_by: '2027-05-01T00:00:00+02:00' });
      const relate = await propose('add_relation', { from: 'erp', verb: 'supports', to: 'department:Finance' });
      for (const id of [confirm, relate]) await acceptBrainReview(db, cliTrail(db), { tenant, id, as: `ana@${tenant}.test` }, mail);
      const [erp] = await db.query<{ mark: string | null; review_by: Date }>("SELECT mark, review_by FROM brain_nodes WHERE tenant_id = $1 AND id = 'erp'", [
        tenantId,
      ]);
      assert.deepEqual({ mark: erp?.mark, reviewBy: erp?.review_by.toISOString() }, { mark: null, reviewBy: '2027-04-30T22:00:00.000Z' });
      const unrelate = await propose('remove_relation', { from: 'erp', verb: 'supports', to: 'department:Finance' });
      await acceptBrainReview(db, cliTrail(db), { tenant, id: unrelate, as: `ana@${tenant}.test` }, mail);
      assert.equal((await db.query("SELECT 1 FROM brain_relations WHERE tenant_id = $1 AND from_id = 'erp'", [tenantId])).length, 0);
    });

    it('leaves the item pending and the brain unchanged when the action cannot be applied', async () => {
      const twice = await propose('add_node', { id: 'erp', type: 'tool', title: 'ERP again', access: 'public' });
      // What a proposal names is checked when it is made, and again when it is decided: the node may be gone by then.
      await acceptBrainReview(
        db,
        cliTrail(db),
        { tenant, id: await propose('add_node', { id: 'fax', type: 'tool', title: 'Fax', access: 'public' }), as: `ana@${tenant}.test` },
        mail,
      );
      const dangling = await propose('add_relation', { from: 'erp', verb: 'uses', to: 'fax' });
      const unconfirmable = await propose('confirm_node', { id: 'fax', verified: '2026-05-01T00:00:00Z', review_by: '2027-05-01T00:00:00Z' });
      await acceptBrainReview(db, cliTrail(db), { tenant, id: await propose('remove_node', { id: 'fax' }), as: `ana@${tenant}.test` }, mail);
      const before = await orgGraph(db, tenantId);
      await rejectsWithKgwError(
        acceptBrainReview(db, cliTrail(db), { tenant, id: twice, as: `ana@${tenant}.test` }, mail),
        'conflict',
        'add_node: the node erp exists already',
      );
      await rejectsWithKgwError(
        acceptBrainReview(db, cliTrail(db), { tenant, id: dangling, as: `ana@${tenant}.test` }, mail),
        'validation',
        'add_relation: to: no node "fax"',
      );
      await rejectsWithKgwError(
        acceptBrainReview(db, cliTrail(db), { tenant, id: unconfirmable, as: `ana@${tenant}.test` }, mail),
        'not_found',
        'confirm_node: no node fax',
      );
      assert.deepEqual(
        { twice: await status(twice), dangling: await status(dangling), unconfirmable: await status(unconfirmable) },
        { twice: 'pending', dangling: 'pending', unconfirmable: 'pending' },
      );
      assert.deepEqual(await orgGraph(db, tenantId), before);
    });

    it('lets only a named manager or admin of the brain decide', async () => {
      const id = await propose('remove_node', { id: 'erp' });
      await rejectsWithKgwError(acceptBrainReview(db, cliTrail(db), { tenant, id }, mail), 'validation', /needs --as EMAIL/);
      await rejectsWithKgwError(
        acceptBrainReview(db, cliTrail(db), { tenant, id, as: `cy@${tenant}.test` }, mail),
        'permission_denied',
        /is not a manager or admin of the brain/,
      );
      await rejectsWithKgwError(
        acceptBrainReview(db, cliTrail(db), { tenant, id, as: 'nobody@example.test' }, mail),
        'validation',
        /no person nobody@example\.test/,
      );
      assert.equal(await status(id), 'pending');
      const rejected = await rejectBrainReview(db, cliTrail(db), { tenant, id, as: `ana@${tenant}.test`, note: 'keep the ERP' });
      assert.deepEqual({ status: rejected.status, applied: rejected.applied }, { status: 'rejected', applied: [] });
      assert.equal((await showBrainReview(db, { tenant, id })).decisionNote, 'keep the ERP');
      assert.equal((await db.query("SELECT 1 FROM brain_nodes WHERE tenant_id = $1 AND id = 'erp'", [tenantId])).length, 1);
    });

    it("finds no item of another tenant: a manager there can neither see nor decide this tenant's item", async () => {
      const other = `${tenant}-b`;
      await seedOrg(db, org(other));
      const id = await propose('remove_node', { id: 'erp' });
      const theirs = { tenant: other, id, as: `ana@${other}.test` };
      const missing = new RegExp(`^no brain inbox item ${id} in tenant ${other}`);
      await rejectsWithKgwError(showBrainReview(db, { tenant: other, id }), 'not_found', missing);
      await rejectsWithKgwError(acceptBrainReview(db, cliTrail(db), theirs, mail), 'not_found', missing);
      await rejectsWithKgwError(rejectBrainReview(db, cliTrail(db), { ...theirs, note: 'not yours' }), 'not_found', missing);
      assert.equal(
        (await listBrainReviews(db, { tenant: other })).some((item) => item.id === id),
        false,
      );
      assert.equal(await status(id), 'pending');
      assert.equal((await db.query("SELECT 1 FROM brain_nodes WHERE tenant_id = $1 AND id = 'erp'", [tenantId])).length, 1);
    });

    it('acknowledges an inbox item without touching the brain, and decides one item once under concurrent decisions', async () => {
      // The related node is looked up in the graph store: it shows what the outbox has applied.
      await new OutboxWorker(db, [graphProjection(services.graph)], { backoff: { baseMs: 1, maxMs: 5 } }).drainAll();
      const { id } = await writeInbox(
        services,
        viewer(),
        ana,
        { kind: 'observation', title: 'ERP is slow', body: 'Invoices take two days.', relatedNodeIds: ['erp'] },
        cliTrail(db).about({ tenantId }),
      );
      const before = await orgGraph(db, tenantId);
      const results = await Promise.allSettled(
        Array.from({ length: 5 }, () => acceptBrainReview(db, cliTrail(db), { tenant, id, as: `ana@${tenant}.test` }, mail)),
      );
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
      assert.deepEqual(await orgGraph(db, tenantId), before);
      assert.equal(await status(id), 'accepted');
    });

    it('applies a brain file with an accepted correction, all or nothing, and only with such an item', async () => {
      await new OutboxWorker(db, [graphProjection(services.graph)], { backoff: { baseMs: 1, maxMs: 5 } }).drainAll();
      const correction = async (title: string) =>
        (
          await writeInbox(
            services,
            viewer(),
            ana,
            { kind: 'correction', title, body: 'The ERP is called Odoo now.', relatedNodeIds: ['erp'] },
            cliTrail(db).about({ tenantId }),
          )
        ).id;
      const broken = await correction('Rename the ERP, badly');
      const before = await orgGraph(db, tenantId);
      const bad = 'nodes:\n  - { id: erp, type: tool, title: Odoo, access: public }\n  - { id: crm, type: tool, title: CRM, access: secret }\n';
      await rejectsWithKgwError(
        acceptBrainReview(db, cliTrail(db), { tenant, id: broken, as: `ana@${tenant}.test`, apply: { source: bad, fileName: 'fix.yaml' } }, mail),
        'validation',
        /^fix\.yaml:3: /,
      );
      assert.deepEqual([await status(broken), await orgGraph(db, tenantId)], ['pending', before]);

      const good = await correction('Rename the ERP');
      const decision = await acceptBrainReview(
        db,
        cliTrail(db),
        { tenant, id: good, as: `ana@${tenant}.test`, apply: { source: 'nodes:\n  - { id: erp, type: tool, title: Odoo, access: public }\n' } },
        mail,
      );
      assert.deepEqual(decision.applied, ['update brain node erp (tool; access public)']);
      const [row] = await db.query<{ title: string; origin: string }>("SELECT title, origin FROM brain_nodes WHERE tenant_id = $1 AND id = 'erp'", [tenantId]);
      assert.deepEqual(row, { title: 'Odoo', origin: 'inbox' });
      assert.ok((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox WHERE tenant_id = $1', [tenantId]))[0]!.n > 0);

      const action = await propose('add_node', { id: 'bi', type: 'tool', title: 'BI', access: 'public' });
      await rejectsWithKgwError(
        acceptBrainReview(db, cliTrail(db), { tenant, id: action, as: `ana@${tenant}.test`, apply: { source: 'nodes: []\n' } }, mail),
        'validation',
        /not with onboarding action/,
      );
      assert.equal(await status(action), 'pending');
    });
  });
}
