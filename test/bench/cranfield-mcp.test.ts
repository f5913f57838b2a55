import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Projection, ProjectionSet } from '../../connectors/projection.ts';
import {
  WRITE_BATCH_ITEMS,
  createKb,
  readIndexingStatus,
  searchBackend,
  searchPageSize,
  searchQuery,
  waitForSearchIndexing,
  writeDocs,
} from '../../bench/cranfield-mcp.ts';
import type { CranfieldDoc } from '../../bench/cranfield.ts';
import { MAX_FILES_MAX } from '../../src/atmina/search.ts';
import type { RunningGateway } from '../support/gateway.ts';
import { ACME_ORG, connectClient, issueToken, seedOrg, startGateway } from '../support/gateway.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';

/*
 * The search-quality bench's loading through the MCP tools: create_kb, write_files in batches,
 * and the wait on the KB's indexing-status resource. The gateway's search projection is a
 * test double that accepts every row, so the wait ends once the outbox worker has drained
 * them; a gateway without one leaves the rows waiting. The queries run against the gateway's
 * own search, fed by its outbox worker as configured.
 */

/** More than one write_files call: a full batch and a partial one. */
const DOC_COUNT = WRITE_BATCH_ITEMS + 10;
const DOCS: CranfieldDoc[] = Array.from({ length: DOC_COUNT }, (_, i) => ({ id: i + 1, title: `title ${i + 1}`, body: `body of document ${i + 1}` }));

/** A search projection that only counts the rows it was given. */
function countingSearch(): { readonly set: ProjectionSet; applied(): number } {
  let applied = 0;
  const projection: Projection = {
    name: 'search',
    apply(rows) {
      // The seeded organisation's Knowledge has search rows too; only the files' count here.
      applied += rows.filter((row) => row.resourceKey.startsWith('kb_file:')).length;
      return Promise.resolve();
    },
    clear: () => Promise.resolve(),
  };
  return { set: { projections: [projection], rebuilders: [] }, applied: () => applied };
}

async function open(backend: ReturnType<typeof storeBackends>[number], projections?: ProjectionSet) {
  const store = await backend.open({ migrated: true });
  await seedOrg(store.db, ACME_ORG);
  const token = await issueToken(store.db, 'acme', 'alice@acme.test', 'context.read context.write');
  // A short idle sleep lets the worker pick the rows up as soon as they are written.
  const running = await startGateway(store.db, {}, { ...(projections === undefined ? {} : { projections }), outboxWorker: { idleMs: 5 } });
  const client = await connectClient(`${running.url}/atmina/mcp`, token);
  return { store, running, client };
}

for (const backend of storeBackends()) {
  describe(`search-quality loading (${backend.name})`, () => {
    const search = countingSearch();
    let store: TestStore;
    let running: RunningGateway;
    let client: Client;
    let kbId: string;
    let written: number;

    before(async () => {
      ({ store, running, client } = await open(backend, search.set));
      kbId = await createKb(client, 'Cranfield');
      written = await writeDocs(client, kbId, DOCS);
    });

    after(async () => {
      await client.close();
      await running.close();
      await store.dispose();
    });

    it('writes every document through write_files', () => {
      assert.equal(written, DOC_COUNT);
    });

    it('waits until no row waits for search', async () => {
      const status = await waitForSearchIndexing(client, kbId);
      assert.equal(status.projections.find((p) => p.projection === 'search')?.pending, 0);
    });

    it('has given search a row for every document once it is done waiting', async () => {
      await waitForSearchIndexing(client, kbId);
      assert.equal(search.applied(), DOC_COUNT);
    });

    it('sees every document as a live file of the KB', async () => {
      const status = await readIndexingStatus(client, kbId);
      assert.equal(status.files, DOC_COUNT);
    });
  });

  describe(`search-quality loading without a search projection (${backend.name})`, () => {
    let store: TestStore;
    let running: RunningGateway;
    let client: Client;
    let kbId: string;

    before(async () => {
      ({ store, running, client } = await open(backend, { projections: [], rebuilders: [] }));
      kbId = await createKb(client, 'Cranfield');
      await writeDocs(client, kbId, DOCS.slice(0, 3));
    });

    after(async () => {
      await client.close();
      await running.close();
      await store.dispose();
    });

    it('gives up waiting with the rows that still wait for search', async () => {
      // A bound of 0 gives up after the first read, which sees the three rows no projection takes.
      await assert.rejects(waitForSearchIndexing(client, kbId, { timeoutMs: 0 }), /search did not index KB .* within 0 s: 3 rows pending, 0 failing/);
    });
  });

  describe(`search-quality queries (${backend.name})`, () => {
    let store: TestStore;
    let running: RunningGateway;
    let client: Client;
    let kbId: string;

    before(async () => {
      ({ store, running, client } = await open(backend));
      kbId = await createKb(client, 'Cranfield');
      await writeDocs(client, kbId, DOCS);
      await waitForSearchIndexing(client, kbId);
    });

    after(async () => {
      await client.close();
      await running.close();
      await store.dispose();
    });

    it('reads the engine from the health tool', async () => {
      assert.equal(await searchBackend(client), 'builtin');
    });

    it('asks as many files a call as the search tool’s schema allows', async () => {
      assert.equal(await searchPageSize(client), MAX_FILES_MAX);
    });

    it('pages with next_cursor until every matching document is ranked', async () => {
      // Every document's body holds "document": all of them match, more than one page holds.
      const run = await searchQuery(client, kbId, { number: 1, label: '001', text: 'document' }, MAX_FILES_MAX);
      assert.equal(run.callsMs.length, 2);
      assert.equal(run.returned, DOC_COUNT);
    });

    it('ranks documents by the ids the judgements use', async () => {
      const run = await searchQuery(client, kbId, { number: 1, label: '001', text: 'document' }, MAX_FILES_MAX);
      assert.deepEqual(
        [...run.ranking].sort((a, b) => Number(a) - Number(b)),
        DOCS.map((d) => String(d.id)),
      );
    });
  });
}
