import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { OutboxRow } from '../../connectors/projection.ts';
import type { SearchBackend, SearchDocument } from '../../connectors/search/contract.ts';
import { searchProjection } from '../../connectors/search/contract.ts';
import { MEILI_BATCH_ROWS } from '../../connectors/search/index.ts';
import { searchDocument } from '../search/documents.ts';

// No store involved: this checks only how rows become backend calls.
describe('searchProjection', () => {
  it("claims the engine's own batch when it names one, and the worker's otherwise", () => {
    const engine = (batchSize?: number): SearchBackend => ({
      name: 'sized',
      ...(batchSize === undefined ? {} : { batchSize }),
      upsert: () => Promise.resolve(),
      delete: () => Promise.resolve(),
      search: () => Promise.resolve({ hits: [], total: 0 }),
      stats: () => Promise.resolve({ backend: 'sized', documents: 0 }),
      clear: () => Promise.resolve(),
    });
    assert.deepEqual(
      { sized: searchProjection(engine(MEILI_BATCH_ROWS)).batchSize, unsized: searchProjection(engine()).batchSize },
      { sized: 1000, unsized: undefined },
    );
  });

  it('groups consecutive upserts and deletes into backend calls without reordering them', async () => {
    const calls: string[] = [];
    const record = (call: string) => {
      calls.push(call);
      return Promise.resolve();
    };
    // A recording test double of a search backend; only the write calls matter here.
    const backend: SearchBackend = {
      name: 'recording',
      upsert: (docs) => record(`upsert ${docs.map((d) => `${d.id}=${d.body}`).join(',')}`),
      delete: (refs) => record(`delete ${refs.map((r) => r.id).join(',')}`),
      search: () => Promise.resolve({ hits: [], total: 0 }),
      stats: () => Promise.resolve({ backend: 'recording', documents: 0 }),
      clear: () => record('clear'),
    };
    const doc = (id: string, body: string): SearchDocument => searchDocument({ tenantId: 't', id, body });
    const row = (id: number, key: string, operation: 'upsert' | 'delete', body = ''): OutboxRow => ({
      id: String(id),
      tenantId: 't',
      projection: 'search',
      resourceKey: key,
      operation,
      payload: operation === 'upsert' ? { doc: doc(key, body) } : {},
      createdAt: new Date(),
      attempts: 0,
    });
    const projection = searchProjection(backend);
    assert.equal(projection.name, 'search');
    await projection.apply(
      [row(1, 'a', 'upsert', 'one'), row(2, 'b', 'upsert', 'two'), row(3, 'c', 'delete'), row(4, 'd', 'delete'), row(5, 'c', 'upsert', 'three')],
      {
        tx: { query: () => Promise.resolve([]) },
        signal: new AbortController().signal,
      },
    );
    await projection.clear();
    assert.deepEqual(calls, ['upsert a=one,b=two', 'delete c,d', 'upsert c=three', 'clear']);
  });
});
