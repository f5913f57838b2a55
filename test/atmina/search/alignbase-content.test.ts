import assert from 'node:assert/strict';
import { drainedOutbox } from '../../support/gateway.ts';
import { after, before, describe, it } from 'node:test';
import type { SearchQuery } from '../../../connectors/search/contract.ts';
import { grantContextRole } from '../../../src/alignbase/access/grants.ts';
import { addRoute } from '../../../src/alignbase/access/routes.ts';
import { setContextResourceStatus } from '../../../src/alignbase/access/resources.ts';
import { rebuildProjection } from '../../../src/kernel/outbox/rebuild.ts';
import type { Agent } from '../../support/harness.ts';
import { OrgGateway, backendLabel } from '../../support/harness.ts';
import { assertAtminaError } from '../support.ts';
import { storeBackends } from '../../support/stores.ts';
import type { StoreBackend } from '../../support/stores.ts';
import type { SearchEngine } from '../../search/engines.ts';
import { searchEngines } from '../../search/engines.ts';

/*
 * Atmina's `search` over Alignbase Knowledge, Memories and Artifacts, through the MCP SDK's
 * client on /mcp (where the read tools its results name are served too) and /atmina/mcp, with
 * the gateway's outbox worker feeding the engine: a Viewer finds the latest version, an agent
 * an Always route delivers a Knowledge to finds only the published one, and nobody finds what
 * it may not read.
 */

const ORG = `tenant: ab
name: Alignbase Co
people:
  - { email: ann@ab.test, name: Ann }
agents:
  - { name: author, owner: ann@ab.test }
  - { name: reader, owner: ann@ab.test }
  - { name: knower, owner: ann@ab.test }
  - { name: routed, owner: ann@ab.test }
  - { name: outsider, owner: ann@ab.test }
  - { name: single, owner: ann@ab.test }
grants:
  - { to: author, on: all_knowledge, role: owner }
  - { to: author, on: all_memories, role: owner }
  - { to: author, on: all_artifacts, role: owner }
  - { to: reader, on: all_knowledge, role: viewer }
  - { to: reader, on: all_memories, role: viewer }
  - { to: reader, on: all_artifacts, role: viewer }
  - { to: knower, on: all_knowledge, role: viewer }
`;

const OTHER = `tenant: ab-other
name: Other
people:
  - { email: oz@other.test, name: Oz }
agents:
  - { name: spy, owner: oz@other.test }
grants:
  - { to: spy, on: all_knowledge, role: owner }
  - { to: spy, on: all_memories, role: owner }
  - { to: spy, on: all_artifacts, role: owner }
`;

interface Hit {
  kind: string;
  knowledge_id?: string;
  memory_id?: string;
  artifact_id?: string;
  title: string;
  version: number;
  version_id: string;
  is_published_version?: boolean;
  snippets: string[];
  read_ref: { tool: string; arguments: Record<string, unknown> };
}
interface Answer {
  results: Hit[];
  total: number;
}

class SearchGateway extends OrgGateway {
  static async open(backend: StoreBackend, env: Record<string, string>): Promise<SearchGateway> {
    const { store, running } = await OrgGateway.launch(backend, [ORG, OTHER], env, { outboxWorker: { idleMs: 10, backoff: { baseMs: 20, maxMs: 500 } } });
    return new SearchGateway(store, running, 'ab', '/atmina/mcp');
  }

  /** Waits until the outbox worker has applied every row (a minute at most). */
  async settled(): Promise<void> {
    await drainedOutbox(this.db);
  }
}

for (const backend of storeBackends()) {
  for (const choice of searchEngines())
    describe(`Atmina search over Alignbase with the ${choice.name} engine on ${backendLabel(backend)}`, () => {
      let engine: SearchEngine;
      let gw: SearchGateway;
      let author: Agent;
      let knowledgeId: string;
      let memoryId: string;
      let artifactId: string;

      // A client on /mcp, where search and the Alignbase read tools are both served (a fresh token each).
      const agentOn = (name: string, tenant = 'ab') => gw.connect(name, 'context.read context.write', { tenant, path: '/mcp' });
      const find = async (who: Agent, query: string, extra: Record<string, unknown> = {}) => who.ok<Answer>('search', { query, ...extra });

      before(async () => {
        engine = choice.open();
        gw = await SearchGateway.open(backend, engine.env);
        author = await agentOn('author');
        // Knowledge: v1 published (word: albatross), v2 latest (word: zeppelin).
        const created = await author.ok<{ knowledge_id: string }>('write_knowledge', {
          title: 'Flight manual',
          expected_version: 0,
          content: '# Flight manual\n\nThe albatross glides for hours without flapping.',
        });
        knowledgeId = created.knowledge_id;
        await author.ok('publish_knowledge', { knowledge_id: knowledgeId });
        await author.ok('write_knowledge', {
          knowledge_id: knowledgeId,
          expected_version: 1,
          content: '# Flight manual\n\nThe zeppelin drifts with the wind.',
        });
        memoryId = (await author.ok<{ memory_id: string }>('create_memory', { name: 'Hangar state', content: 'The hangar door sticks in frost.' })).memory_id;
        artifactId = (
          await author.ok<{ artifact_id: string }>('write_artifact', {
            expected_version: 0,
            name: 'Runway survey',
            markdown: '# Runway survey\n\nCracks in the tarmac near gate 4.',
          })
        ).artifact_id;
        // The other tenant holds the same words, under full grants of its own.
        const spy = await agentOn('spy', 'ab-other');
        await spy.ok('write_knowledge', { title: 'Spy manual', expected_version: 0, content: 'albatross zeppelin hangar tarmac' });
        await spy.ok('create_memory', { name: 'Spy memory', content: 'albatross zeppelin hangar tarmac' });
        const tenantId = await gw.tenantIdOf('ab');
        const routedId = await gw.principalId('routed');
        await gw.db.tx((tx) => addRoute(tx, { tenantId, resourceId: knowledgeId, target: { agentId: routedId } }));
        // A Viewer of this one Knowledge, which a route delivers to it as well.
        const singleId = await gw.principalId('single');
        await gw.db.tx(async (tx) => {
          await grantContextRole(tx, { tenantId, grantee: { principalId: singleId }, type: 'knowledge', resourceId: knowledgeId, role: 'viewer' });
          await addRoute(tx, { tenantId, resourceId: knowledgeId, target: { agentId: singleId } });
        });
        await gw.settled();
      });

      /** The queries the engine was asked while `work` ran. */
      const queriesDuring = async (work: () => Promise<unknown>): Promise<SearchQuery[]> => {
        const search = gw.running.gateway.services.search;
        const original = search.search.bind(search);
        const seen: SearchQuery[] = [];
        Object.assign(search, { search: (query: SearchQuery, signal?: AbortSignal) => (seen.push(query), original(query, signal)) });
        try {
          await work();
        } finally {
          Object.assign(search, { search: original });
        }
        return seen;
      };
      after(async () => {
        await gw?.close();
        await engine?.dispose();
      });

      it('lets a Viewer find the latest version of a Knowledge, with a read_ref that reads it', async () => {
        const reader = await agentOn('reader');
        const answer = await find(reader, 'zeppelin');
        assert.equal(answer.total, 1);
        const [hit] = answer.results;
        assert.equal(hit?.kind, 'knowledge');
        assert.equal(hit?.knowledge_id, knowledgeId);
        assert.equal(hit?.version, 2);
        assert.equal(hit?.is_published_version, false);
        assert.deepEqual(hit?.read_ref, { tool: 'read_knowledge', arguments: { knowledge_id: knowledgeId, version: 'latest' } });
        const read = await reader.ok<{ content: string; version: number }>('read_knowledge', hit.read_ref.arguments);
        assert.equal(read.version, 2);
        assert.match(read.content, /zeppelin/);
      });

      it('shows a Viewer the latest version only, not the published one beside it', async () => {
        const reader = await agentOn('reader');
        const answer = await find(reader, 'albatross');
        assert.equal(answer.total, 0);
        assert.deepEqual(answer.results, []);
      });

      it('shows a Viewer of one Knowledge, which a route delivers too, its latest version only, by that one scope', async () => {
        const single = await agentOn('single');
        let latest: Answer | undefined;
        const [query] = await queriesDuring(async () => {
          latest = await find(single, 'zeppelin albatross');
        });
        const published = await find(single, 'albatross');
        assert.deepEqual(
          {
            scopes: query?.scopes.filter((s) => s.startsWith('knowledge')),
            prefixes: query?.scopePrefixes ?? [],
            hits: latest?.results.map((h) => ({ id: h.knowledge_id, version: h.version, published: h.is_published_version })),
            albatross: published.total,
          },
          { scopes: [`knowledge.latest:${knowledgeId}`], prefixes: [], hits: [{ id: knowledgeId, version: 2, published: false }], albatross: 0 },
        );
      });

      it('finds each of 50 Knowledge once for a Viewer of all Knowledge, through one scope prefix naming none of them', async () => {
        const created: string[] = [];
        for (let i = 0; i < 50; i++) {
          // Every other one published as its latest version: shown as two documents, found once.
          const made = await author.ok<{ knowledge_id: string }>('write_knowledge', {
            title: `Quokka note ${i}`,
            expected_version: 0,
            content: `The quokka count at station ${i}.`,
            ...(i % 2 === 0 ? { publish: true } : {}),
          });
          created.push(made.knowledge_id);
        }
        await gw.settled();
        const reader = await agentOn('reader');
        let answer: Answer | undefined;
        const [query] = await queriesDuring(async () => {
          answer = await find(reader, 'quokka', { max_files: 50, filters: { kinds: ['knowledge'] } });
        });
        assert.deepEqual(
          {
            scopes: query?.scopes.filter((s) => s.startsWith('knowledge')),
            prefixes: query?.scopePrefixes,
            total: answer?.total,
            ids: answer?.results.map((h) => h.knowledge_id).sort(),
            published: answer?.results.filter((h) => h.is_published_version).length,
          },
          { scopes: [], prefixes: ['knowledge.latest:'], total: 50, ids: created.sort(), published: 25 },
        );
      });

      it('finds the Memories a grant on all Memories reaches, by prefix, and no other tenant’s', async () => {
        const reader = await agentOn('reader');
        let answer: Answer | undefined;
        const [query] = await queriesDuring(async () => {
          answer = await find(reader, 'hangar', { filters: { kinds: ['memory'] } });
        });
        assert.deepEqual(
          { scopes: query?.scopes, prefixes: query?.scopePrefixes, ids: answer?.results.map((h) => h.memory_id), total: answer?.total },
          { scopes: [], prefixes: ['memory:'], ids: [memoryId], total: 1 },
        );
      });

      it('lets an agent a route delivers the Knowledge to find its published text, read by its read_ref', async () => {
        const routed = await agentOn('routed');
        const answer = await find(routed, 'albatross');
        assert.equal(answer.total, 1);
        const [hit] = answer.results;
        assert.equal(hit?.knowledge_id, knowledgeId);
        assert.equal(hit?.version, 1);
        assert.equal(hit?.is_published_version, true);
        assert.deepEqual(hit?.read_ref, { tool: 'read_knowledge', arguments: { knowledge_id: knowledgeId, version: 'published' } });
        const read = await routed.ok<{ content: string }>('read_knowledge', hit.read_ref.arguments);
        assert.match(read.content, /albatross/);
      });

      it('finds nothing for a route-only reader by a word only the unpublished version holds, and counts nothing', async () => {
        const routed = await agentOn('routed');
        const answer = await find(routed, 'zeppelin');
        assert.equal(answer.total, 0);
        assert.deepEqual(answer.results, []);
      });

      it('offers search to a route-only agent on /atmina/mcp, and not to an agent that may read nothing', async () => {
        const routed = await gw.connect('routed', 'context.read', { path: '/atmina/mcp' });
        const outsider = await gw.connect('outsider', 'context.read', { path: '/atmina/mcp' });
        const names = async (who: Agent) => (await who.client.listTools()).tools.map((t) => t.name);
        assert.ok((await names(routed)).includes('search'));
        assert.ok(!(await names(outsider)).includes('search'));
        assertAtminaError(
          await outsider.fail('search', { query: 'albatross' }),
          'permission_denied',
          /search needs search access on a Knowledge Base, or read access/,
        );
      });

      it('finds Memories and Artifacts by kind, with the identifiers their read tools take', async () => {
        const reader = await agentOn('reader');
        const memory = await find(reader, 'hangar door');
        assert.equal(memory.results[0]?.kind, 'memory');
        assert.equal(memory.results[0]?.memory_id, memoryId);
        assert.deepEqual(memory.results[0]?.read_ref, { tool: 'read_memory', arguments: { memory_id: memoryId } });
        const read = await reader.ok<{ content: string }>('read_memory', { memory_id: memoryId });
        assert.match(read.content, /hangar/);
        const artifact = await find(reader, 'tarmac cracks');
        assert.equal(artifact.results[0]?.kind, 'artifact');
        assert.equal(artifact.results[0]?.artifact_id, artifactId);
        assert.deepEqual(artifact.results[0]?.read_ref, { tool: 'read_artifact', arguments: { artifact_id: artifactId, version: 1 } });
        await reader.ok('read_artifact', artifact.results[0].read_ref.arguments);
      });

      it('never shows a Memory or Artifact to a principal without a role on it, nor counts it', async () => {
        const knower = await agentOn('knower');
        for (const query of ['hangar', 'tarmac']) {
          const answer = await find(knower, query);
          assert.equal(answer.total, 0, query);
        }
      });

      it('never shows what another tenant holds, however well it matches', async () => {
        const reader = await agentOn('reader');
        const answer = await find(reader, 'albatross zeppelin hangar tarmac');
        assert.ok(answer.results.length > 0);
        for (const hit of answer.results) assert.ok([knowledgeId, memoryId, artifactId].includes(String(hit.knowledge_id ?? hit.memory_id ?? hit.artifact_id)));
        const spy = await agentOn('spy', 'ab-other');
        const theirs = await find(spy, 'albatross zeppelin hangar tarmac');
        assert.deepEqual(theirs.results.map((h) => h.title).sort(), ['Spy manual', 'Spy memory']);
        assert.equal(theirs.total, 2);
      });

      it('filters by kind', async () => {
        const reader = await agentOn('reader');
        const everything = await find(reader, 'zeppelin hangar tarmac');
        assert.deepEqual([...new Set(everything.results.map((h) => h.kind))].sort(), ['artifact', 'knowledge', 'memory']);
        const memories = await find(reader, 'zeppelin hangar tarmac', { filters: { kinds: ['memory'] } });
        assert.deepEqual(
          memories.results.map((h) => h.kind),
          ['memory'],
        );
        assert.equal(memories.total, 1);
        const files = await find(reader, 'zeppelin hangar tarmac', { filters: { kinds: ['file'] } });
        assert.equal(files.total, 0);
      });

      it('refuses a kind it does not know, naming the kinds it takes', async () => {
        const reader = await agentOn('reader');
        const text = await reader.fail('search', { query: 'zeppelin', filters: { kinds: ['skill'] } });
        assertAtminaError(text, 'validation', /kinds/);
        assert.match(text, /file.*knowledge.*memory.*artifact/);
      });

      it('refuses a NUL or a lone surrogate in the query, and reads bidi characters as separators', async () => {
        const reader = await agentOn('reader');
        assertAtminaError(await reader.fail('search', { query: 'zeppelin\u0000' }), 'validation', /query/);
        assertAtminaError(await reader.fail('search', { query: 'zeppelin\ud800' }), 'validation', /query/);
        const answer = await find(reader, '\u202ezeppelin\u202c\u2066hangar\u2069');
        assert.deepEqual([...new Set(answer.results.map((h) => h.kind))].sort(), ['knowledge', 'memory']);
      });

      it('drops an archived Memory from the results and shows it again once restored', async () => {
        const reader = await agentOn('reader');
        const tenantId = await gw.tenantIdOf('ab');
        await gw.db.tx((tx) => setContextResourceStatus(tx, tenantId, memoryId, 'archived'));
        await gw.settled();
        assert.equal((await find(reader, 'hangar door')).total, 0);
        await gw.db.tx((tx) => setContextResourceStatus(tx, tenantId, memoryId, 'active'));
        await gw.settled();
        const back = await find(reader, 'hangar door');
        assert.equal(back.results[0]?.memory_id, memoryId);
      });

      it('moves the published document when a later version is published, leaving no stale one', async () => {
        const other = await author.ok<{ knowledge_id: string }>('write_knowledge', {
          title: 'Glider notes',
          expected_version: 0,
          content: 'The thermal lifts the sailplane.',
          publish: true,
        });
        await author.ok('write_knowledge', { knowledge_id: other.knowledge_id, expected_version: 1, content: 'The ridge lifts the sailplane.' });
        const tenantId = await gw.tenantIdOf('ab');
        const routedId = await gw.principalId('routed');
        await gw.db.tx((tx) => addRoute(tx, { tenantId, resourceId: other.knowledge_id, target: { agentId: routedId } }));
        await gw.settled();
        const routed = await agentOn('routed');
        assert.equal((await find(routed, 'thermal')).total, 1);
        assert.equal((await find(routed, 'ridge')).total, 0);
        await author.ok('publish_knowledge', { knowledge_id: other.knowledge_id });
        await gw.settled();
        const ridge = await find(routed, 'ridge');
        assert.equal(ridge.results[0]?.version, 2);
        assert.equal((await find(routed, 'thermal')).total, 0);
        // The Viewer now finds the one version, published and latest at once, once.
        const reader = await agentOn('reader');
        const seen = await find(reader, 'sailplane');
        assert.deepEqual(
          seen.results.map((h) => ({ version: h.version, published: h.is_published_version })),
          [{ version: 2, published: true }],
        );
        // Its documents: the latest and the published, both of version 2; no stale version 1.
        const docs = await gw.db.query<{ doc_id: string; version: number }>(
          "SELECT doc_id, (ref->>'version')::int AS version FROM search_docs WHERE doc_id LIKE $1",
          [`%${other.knowledge_id}`],
        );
        docs.sort((x, y) => (x.doc_id < y.doc_id ? -1 : 1));
        if (choice.name === 'builtin')
          assert.deepEqual(docs, [
            { doc_id: `knowledge.latest:${other.knowledge_id}`, version: 2 },
            { doc_id: `knowledge:${other.knowledge_id}`, version: 2 },
          ]);
      });

      it('rebuilds the Alignbase documents from the store (kgw reindex --search)', async () => {
        const reader = await agentOn('reader');
        const ids = async () => (await find(reader, 'zeppelin hangar tarmac')).results.map((h) => h.knowledge_id ?? h.memory_id ?? h.artifact_id).sort();
        const before = await ids();
        const report = await rebuildProjection(gw.db, gw.running.gateway.services.projections, 'search');
        await gw.settled();
        assert.ok(report.enqueued >= 3, `enqueued ${report.enqueued}`);
        assert.deepEqual(await ids(), before);
        assert.deepEqual(before, [knowledgeId, memoryId, artifactId].sort());
      });
    });
}
