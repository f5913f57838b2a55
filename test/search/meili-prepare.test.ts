import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Meilisearch } from 'meilisearch';
import { searchProjection } from '../../connectors/search/contract.ts';
import { openSearchBackend } from '../../connectors/search/index.ts';
import { enqueue } from '../../src/kernel/outbox/outbox.ts';
import { OutboxWorker, dueRows } from '../../src/kernel/outbox/worker.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackendAt } from '../support/stores.ts';
import { searchDocument } from './documents.ts';

/*
 * On PGlite (one transaction at a time) the search projection has Meilisearch confirm the due
 * rows before it claims them, outside any transaction, so a write of the store never waits
 * behind a Meilisearch task; a row is still applied only once Meilisearch has confirmed its
 * document as it now is. A proxy in front of the shared test server holds the task polls
 * while a test needs Meilisearch to be slow.
 */

const MEILI_URL = process.env.KGW_TEST_MEILI_URL;
const MEILI_KEY = process.env.KGW_TEST_MEILI_KEY ?? '';
const skip = MEILI_URL === undefined || MEILI_URL === '' ? 'KGW_TEST_MEILI_URL is not set (eval "$(bash test/services/meilisearch.sh)")' : false;

/** Forwards to Meilisearch; while held, the polls of task status wait until released. */
class TaskHoldingProxy {
  readonly #server: http.Server;
  #held: (() => void)[] = [];
  #holding = false;
  /** Resolves when a task poll is being held. */
  #onHeld: (() => void) | undefined;

  private constructor(server: http.Server) {
    this.#server = server;
  }

  static async start(target: string): Promise<TaskHoldingProxy> {
    const upstream = new URL(target);
    let proxy: TaskHoldingProxy | undefined = undefined;
    const server = http.createServer((req, res) => {
      const forward = () => {
        const out = http.request(
          { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: { ...req.headers, host: upstream.host } },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        out.on('error', () => res.destroy());
        req.pipe(out);
      };
      if (proxy !== undefined && proxy.#holding && req.method === 'GET' && (req.url ?? '').startsWith('/tasks/')) {
        proxy.#held.push(forward);
        proxy.#onHeld?.();
      } else forward();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    proxy = new TaskHoldingProxy(server);
    return proxy;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  hold(): Promise<void> {
    this.#holding = true;
    return new Promise((resolve) => {
      this.#onHeld = resolve;
    });
  }

  release(): void {
    this.#holding = false;
    this.#onHeld = undefined;
    for (const forward of this.#held.splice(0)) forward();
  }

  async close(): Promise<void> {
    this.release();
    this.#server.closeAllConnections();
    await new Promise((resolve) => this.#server.close(resolve));
  }
}

describe('Meilisearch confirming rows before the claim, on PGlite', { skip }, () => {
  let store: TestStore;
  let proxy: TaskHoldingProxy;
  const index = `kgw_test_${randomBytes(6).toString('hex')}`;
  const tenantId = randomUUID();

  before(async () => {
    store = await storeBackendAt(undefined).open({ migrated: true });
    proxy = await TaskHoldingProxy.start(MEILI_URL ?? '');
  });
  after(async () => {
    await proxy?.close();
    await store?.dispose();
    if (MEILI_URL !== undefined) await new Meilisearch({ host: MEILI_URL, apiKey: MEILI_KEY }).index(index).delete().waitTask({ timeout: 60_000 });
  });

  const backendOpen = () => openSearchBackend({ url: proxy.url, apiKey: MEILI_KEY, index }, store.db);
  const row = (id: string, body: string) => ({
    tenantId,
    projection: 'search',
    resourceKey: id,
    operation: 'upsert' as const,
    payload: { doc: searchDocument({ tenantId, id, scope: 'kb:a', body }) },
  });
  const found = async (text: string) => {
    const backend = backendOpen();
    const answer = await backend.search({ tenantId, text, language: 'english', scopes: ['kb:a'], limit: 10, snippets: 0 });
    return answer.hits.map((h) => h.id);
  };

  it('lets a write of the store commit while a Meilisearch task is still unconfirmed, and applies the row once it is', async () => {
    const backend = backendOpen();
    const worker = new OutboxWorker(store.db, [searchProjection(backend, undefined, { prepareRemote: true })]);
    await store.db.tx((tx) => enqueue(tx, [row('kb_file:held', 'albatross')]));
    const events: string[] = [];
    const held = proxy.hold();
    const drained = worker.drainOnce().then(() => events.push('drained'));
    await held;
    // Were the wait inside the claim's transaction, the write below would wait for it: the
    // proxy then lets the polls through after a while, and the order below fails the test.
    const unblock = setTimeout(() => proxy.release(), 20_000);
    // Meilisearch has the document but its task is not confirmed: the store still takes writes.
    await store.db.tx((tx) => tx.query('INSERT INTO tenants (id, slug, name) VALUES ($1, $2, $3)', [randomUUID(), `t-${randomBytes(4).toString('hex')}`, 'T']));
    events.push('wrote');
    const [pending] = await store.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM outbox WHERE projection = 'search'`);
    assert.equal(pending?.n, 1, 'the row stays until Meilisearch confirms');
    proxy.release();
    clearTimeout(unblock);
    await drained;
    assert.deepEqual(events, ['wrote', 'drained']);
    const [left] = await store.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM outbox WHERE projection = 'search'`);
    assert.equal(left?.n, 0);
    assert.deepEqual(await found('albatross'), ['kb_file:held']);
  });

  it('leaves the row pending with the error when Meilisearch refuses the write', async () => {
    const backend = openSearchBackend({ url: proxy.url, apiKey: 'not-the-key', index }, store.db);
    const worker = new OutboxWorker(store.db, [searchProjection(backend, undefined, { prepareRemote: true })]);
    await store.db.tx((tx) => enqueue(tx, [row('kb_file:refused', 'cormorant')]));
    await worker.drainOnce();
    const [pending] = await store.db.query<{ n: number; error: string | null }>(
      `SELECT count(*)::int AS n, max(last_error) AS error FROM outbox WHERE projection = 'search' AND resource_key = 'kb_file:refused'`,
    );
    assert.equal(pending?.n, 1);
    assert.match(pending?.error ?? '', /Meilisearch/);
    const [state] = await store.db.query<{ last_error: string | null }>(`SELECT last_error FROM projection_state WHERE projection = 'search'`);
    assert.match(state?.last_error ?? '', /Meilisearch/);
    assert.deepEqual(await found('cormorant'), []);
  });

  it('sends a document again inside the claim when it changed after Meilisearch confirmed it', async () => {
    const backend = backendOpen();
    const projection = searchProjection(backend, undefined, { prepareRemote: true });
    await store.db.tx((tx) => enqueue(tx, [row('kb_file:changed', 'pelican')]));
    const signal = new AbortController().signal;
    await projection.prepare?.({ db: store.db, rows: await dueRows(store.db, 'search', 100), signal });
    // A newer state arrives after prepare confirmed the first; the claim applies both rows.
    await store.db.tx((tx) => enqueue(tx, [row('kb_file:changed', 'heron')]));
    const rows = await store.db.query<{ id: string; tenant_id: string; resource_key: string; operation: 'upsert'; payload: unknown }>(
      `SELECT id, tenant_id, resource_key, operation, payload FROM outbox WHERE projection = 'search' AND resource_key = 'kb_file:changed' ORDER BY id`,
    );
    await store.db.tx((tx) =>
      projection.apply(
        rows.map((r) => ({ id: r.id, tenantId: r.tenant_id, resourceKey: r.resource_key, operation: r.operation, payload: r.payload }) as never),
        { tx, signal },
      ),
    );
    assert.deepEqual(await found('heron'), ['kb_file:changed']);
    assert.deepEqual(await found('pelican'), []);
  });
});
