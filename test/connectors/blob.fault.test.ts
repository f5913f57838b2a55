import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { BlobStore } from '../../connectors/blob/contract.ts';
import { blobKey } from '../../connectors/blob/contract.ts';
import { isKgwError } from '../../src/kernel/errors.ts';
import type { RunningGateway } from '../support/gateway.ts';
import { ACME_ORG, connectClient, issueToken, seedOrg, startGateway } from '../support/gateway.ts';
import type { PrivateMinio } from '../support/services.ts';
import { minioSkip, startMinio } from '../support/services.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';

/** How long a blob call may take against a dead S3 before it counts as a hang. */
const FAIL_WITHIN_MS = 20_000;

interface ReadyBody {
  status: string;
  backends: Record<string, { backend: string; ok: boolean; error?: string }>;
}

const sha = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The call's error, or a failed assertion when it succeeds or takes longer than FAIL_WITHIN_MS. */
async function failure(call: Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const started = performance.now();
  const timer = new AbortController();
  try {
    const outcome = await Promise.race([
      call.then(
        () => ({ settled: 'resolved' as const, error: undefined }),
        (error: unknown) => ({ settled: 'rejected' as const, error }),
      ),
      sleep(FAIL_WITHIN_MS, { settled: 'hung' as const, error: undefined }, { signal: timer.signal }),
    ]);
    assert.equal(outcome.settled, 'rejected', `expected a failure within ${FAIL_WITHIN_MS} ms`);
    return { error: outcome.error, ms: Math.round(performance.now() - started) };
  } finally {
    timer.abort();
  }
}

async function readyz(url: string): Promise<{ status: number; body: ReadyBody }> {
  const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(10_000) });
  return { status: response.status, body: (await response.json()) as ReadyBody };
}

for (const backend of storeBackends()) {
  describe(`blob bytes on S3 while MinIO goes down and comes back, on ${backend.name}`, { skip: minioSkip(), timeout: 300_000 }, () => {
    let minio: PrivateMinio;
    let store: TestStore;
    let running: RunningGateway;
    let blob: BlobStore;
    const first = randomBytes(300_000);
    const lost = randomBytes(200_000);

    before(async () => {
      minio = await startMinio();
      store = await backend.open({ migrated: true });
      running = await startGateway(store.db, minio.gatewayEnv());
      blob = running.gateway.services.blob;
    });
    after(async () => {
      await running?.close();
      await store?.dispose();
      await minio?.close();
    });

    it('stores a blob and is ready while MinIO is up', async () => {
      const info = await blob.put({ body: first, size: first.length, sha256: sha(first) });
      assert.equal(info.key, blobKey(sha(first)));
      assert.deepEqual(await blob.head(info.key), { size: first.length });
      const { status, body } = await readyz(running.url);
      assert.equal(status, 200, JSON.stringify(body));
      assert.equal(body.backends.blob?.backend, 's3');
    });

    it('answers /readyz 503 naming the S3 backend once MinIO is killed, while /healthz stays 200', async () => {
      await minio.stop(); // SIGKILL: down mid-run
      assert.equal(minio.pid, undefined);
      const { status, body } = await readyz(running.url);
      assert.equal(status, 503, JSON.stringify(body));
      assert.equal(body.status, 'unavailable');
      assert.equal(body.backends.blob?.backend, 's3');
      assert.equal(body.backends.blob?.ok, false);
      assert.ok((body.backends.blob?.error ?? '').length > 0);
      assert.equal(body.backends.store?.ok, true);
      const health = await fetch(`${running.url}/healthz`);
      assert.equal(health.status, 200);
      assert.deepEqual(await health.json(), { status: 'ok' });
    });

    it('fails blob puts and reads promptly as unavailable while MinIO is down', async (t) => {
      const put = await failure(blob.put({ body: lost, size: lost.length, sha256: sha(lost) }));
      assert.ok(isKgwError(put.error, 'unavailable'), `expected KgwError(unavailable), got ${String(put.error)}`);
      const read = await failure(blob.get(blobKey(sha(first))));
      assert.ok(isKgwError(read.error, 'unavailable'), `expected KgwError(unavailable), got ${String(read.error)}`);
      t.diagnostic(`put failed after ${put.ms} ms, get after ${read.ms} ms`);
    });

    it('still commits writes that need no S3: an org apply and a token that then works over MCP', async () => {
      await seedOrg(store.db, ACME_ORG);
      const token = await issueToken(store.db, 'acme', 'alice@acme.test', 'context.read');
      const client = await connectClient(`${running.url}/mcp`, token);
      try {
        const whoami = await client.callTool({ name: 'whoami', arguments: {} });
        assert.equal(whoami.isError, undefined);
        const me = whoami.structuredContent as { tenant: { slug: string }; principal: { email: string } };
        assert.equal(me.tenant.slug, 'acme');
        assert.equal(me.principal.email, 'alice@acme.test');
      } finally {
        await client.close();
      }
    });

    it('is ready again once MinIO restarts on the same port and data', async (t) => {
      const started = performance.now();
      await minio.restart();
      const restartedMs = Math.round(performance.now() - started);
      const deadline = Date.now() + 30_000;
      let last = await readyz(running.url);
      while (last.status !== 200 && Date.now() < deadline) {
        await sleep(200);
        last = await readyz(running.url);
      }
      assert.equal(last.status, 200, JSON.stringify(last.body));
      assert.equal(last.body.backends.blob?.ok, true);
      t.diagnostic(`MinIO answered ${restartedMs} ms after the restart began; /readyz 200 after ${Math.round(performance.now() - started)} ms`);
    });

    it('still has the earlier blob byte for byte, nothing of the failed put, and takes new puts', async () => {
      assert.deepEqual(await collect(await blob.get(blobKey(sha(first)))), first);
      assert.equal(await blob.head(blobKey(sha(lost))), undefined);
      const next = randomBytes(150_000);
      const info = await blob.put({ body: next, size: next.length, sha256: sha(next) });
      assert.deepEqual(await collect(await blob.get(info.key)), next);
      // The put that failed may simply be retried.
      const retried = await blob.put({ body: lost, size: lost.length, sha256: sha(lost) });
      assert.deepEqual(await blob.head(retried.key), { size: lost.length });
    });
  });
}
