import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Caller } from '../../src/kernel/access/caller.ts';
import { grantContextRole } from '../../src/alignbase/access/grants.ts';
import { addRoute } from '../../src/alignbase/access/routes.ts';
import { KgwError } from '../../src/kernel/errors.ts';
import { CONTEXT_SCOPES_MAX, readableContextScopes } from '../../src/alignbase/search-source.ts';
import type { SearchedContextType } from '../../src/alignbase/search-source.ts';
import type { Db } from '../../src/store/db.ts';
import { seedOrg } from '../support/gateway.ts';
import { storeBackends } from '../support/stores.ts';
import type { TestStore } from '../support/stores.ts';

/*
 * What a search may find of Alignbase resources, as engine scopes (readableContextScopes): a
 * grant on a whole type is one scope prefix however many resources it reaches, a resource read
 * singly is one scope, a Knowledge in one form only, and the scopes named singly are bounded.
 */

const ORG = `tenant: cs
name: Scopes Co
people:
  - { email: ann@cs.test, name: Ann }
agents:
  - { name: whole, owner: ann@cs.test }
  - { name: single, owner: ann@cs.test }
  - { name: routed, owner: ann@cs.test }
  - { name: many, owner: ann@cs.test }
grants:
  - { to: whole, on: all_knowledge, role: viewer }
  - { to: whole, on: all_memories, role: viewer }
`;

const OTHER = `tenant: cs-other
name: Other
people:
  - { email: oz@other.test, name: Oz }
agents:
  - { name: whole, owner: oz@other.test }
`;

/** Active resources of one type with a first version (the scopes' query reads the heads only); their ids. */
async function addResources(db: Db, tenantId: string, type: SearchedContextType, count: number, published: boolean): Promise<string[]> {
  const rows = await db.tx((tx) =>
    tx.query<{ id: string }>(
      `INSERT INTO context_resources (tenant_id, id, type, name, latest_version, published_version)
       SELECT $1, gen_random_uuid(), $2, $3 || '-' || n, 1, CASE WHEN $5::boolean THEN 1 END FROM generate_series(1, $4::int) AS n
       RETURNING id`,
      [tenantId, type, `${type}-${randomUUID()}`, count, published],
    ),
  );
  return rows.map((r) => r.id);
}

for (const backend of storeBackends()) {
  describe(`readable Alignbase scopes on ${backend.name}`, () => {
    let store: TestStore;
    let tenantId: string;
    let knowledge: string[];
    const callerOf = async (name: string, slug = 'cs'): Promise<Caller> => {
      const [row] = await store.db.query<{ tenant_id: string; slug: string; tenant_name: string; language: string; id: string; kind: 'agent' }>(
        `SELECT t.id AS tenant_id, t.slug, t.name AS tenant_name, t.language, p.id, p.kind
           FROM principals p JOIN tenants t ON t.id = p.tenant_id WHERE t.slug = $1 AND p.name = $2 AND p.kind = 'agent'`,
        [slug, name],
      );
      assert.ok(row, `no agent ${name}`);
      return {
        tenant: { id: row.tenant_id, slug: row.slug, name: row.tenant_name, language: row.language },
        principal: { id: row.id, kind: row.kind, name, email: undefined, ownerId: undefined },
        scopes: new Set(['context.read']),
        tokenId: randomUUID(),
      };
    };

    before(async () => {
      store = await backend.open({ migrated: true });
      await seedOrg(store.db, ORG);
      await seedOrg(store.db, OTHER);
      const [tenant] = await store.db.query<{ id: string }>("SELECT id FROM tenants WHERE slug = 'cs'");
      assert.ok(tenant);
      tenantId = tenant.id;
      knowledge = await addResources(store.db, tenantId, 'knowledge', 50, true);
      await addResources(store.db, tenantId, 'memory', 20, false);
      const [first, second] = knowledge;
      assert.ok(first !== undefined && second !== undefined);
      const single = (await callerOf('single')).principal.id;
      const routed = (await callerOf('routed')).principal.id;
      const whole = (await callerOf('whole')).principal.id;
      await store.db.tx(async (tx) => {
        await grantContextRole(tx, { tenantId, grantee: { principalId: single }, type: 'knowledge', resourceId: first, role: 'viewer' });
        // A route to a Knowledge its reader may also view: search shows it one way only.
        await addRoute(tx, { tenantId, resourceId: first, target: { agentId: single } });
        await addRoute(tx, { tenantId, resourceId: second, target: { agentId: routed } });
        await addRoute(tx, { tenantId, resourceId: second, target: { agentId: whole } });
      });
    });
    after(async () => {
      await store?.dispose();
    });

    it('makes a grant on all Knowledge one prefix of latest versions, naming none of the 50 Knowledge', async () => {
      const reach = await readableContextScopes(store.db, await callerOf('whole'), ['knowledge']);
      assert.deepEqual(reach, { scopes: [], prefixes: ['knowledge.latest:'] });
    });

    it('makes a grant on all Memories the prefix of every Memory', async () => {
      const reach = await readableContextScopes(store.db, await callerOf('whole'), ['memory']);
      assert.deepEqual(reach, { scopes: [], prefixes: ['memory:'] });
    });

    it('gives a Viewer of one Knowledge the scope of its latest version only, though a route delivers it too', async () => {
      const reach = await readableContextScopes(store.db, await callerOf('single'), ['knowledge', 'memory', 'artifact']);
      assert.deepEqual(reach, { scopes: [`knowledge.latest:${knowledge[0]}`], prefixes: [] });
    });

    it('gives an agent a route delivers a published Knowledge to the scope of the published version', async () => {
      const reach = await readableContextScopes(store.db, await callerOf('routed'), ['knowledge']);
      assert.deepEqual(reach, { scopes: [`knowledge:${knowledge[1]}`], prefixes: [] });
    });

    it('gives an agent of another tenant, without grants there, nothing', async () => {
      const reach = await readableContextScopes(store.db, await callerOf('whole', 'cs-other'), ['knowledge', 'memory', 'artifact']);
      assert.deepEqual(reach, { scopes: [], prefixes: [] });
    });

    it(`names up to ${CONTEXT_SCOPES_MAX} resources granted one by one, and refuses a search past them`, async () => {
      const many = await callerOf('many');
      const ids = await addResources(store.db, tenantId, 'artifact', CONTEXT_SCOPES_MAX, false);
      await store.db.tx((tx) =>
        tx.query(
          `INSERT INTO context_grants (tenant_id, id, principal_id, resource_type, resource_id, role)
           SELECT $1, gen_random_uuid(), $2, 'artifact', r, 'viewer' FROM unnest($3::uuid[]) AS r`,
          [tenantId, many.principal.id, ids],
        ),
      );
      const atBound = await readableContextScopes(store.db, many, ['artifact']);
      const [extra] = await addResources(store.db, tenantId, 'artifact', 1, false);
      await store.db.tx((tx) =>
        grantContextRole(tx, { tenantId, grantee: { principalId: many.principal.id }, type: 'artifact', resourceId: extra, role: 'viewer' }),
      );
      const past = await readableContextScopes(store.db, many, ['artifact']).then(
        () => undefined,
        (error: unknown) => error,
      );
      assert.equal(atBound.scopes.length, CONTEXT_SCOPES_MAX);
      assert.ok(past instanceof KgwError, 'refused');
      assert.equal(past.code, 'validation');
      assert.match(past.message, /search covers at most 10,000 Knowledge, Memories and Artifacts granted one by one/);
    });
  });
}
