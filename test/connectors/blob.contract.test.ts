import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { after, before, describe, it } from 'node:test';
import { DeleteObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import type { BlobStore, PresignedPut } from '../../connectors/blob/contract.ts';
import { STAGING_GRACE_SECONDS, blobKey, isKeyPrefix } from '../../connectors/blob/contract.ts';
import { DiskBlobStore } from '../../connectors/blob/disk.ts';
import { S3BlobStore } from '../../connectors/blob/s3.ts';
import { RateLimiter } from '../../src/auth/rate-limit.ts';
import { registerUploadRoutes } from '../../src/atmina/http/upload-routes.ts';
import { rejectsWithKgwError } from '../support/fixtures.ts';

const MiB = 1024 * 1024;

interface Backend {
  readonly name: 'disk' | 's3';
  readonly store: BlobStore;
  /** Files a failed write may have left (disk: temp files); [] when clean. */
  leftovers(): Promise<string[]>;
  /** Moves the clock forward (disk) or waits (s3) so that URLs valid for `seconds` expire. */
  expire(seconds: number): Promise<void>;
  dispose(): Promise<void>;
}

/** The S3 server for the contract suite; CI must provide it, a developer may not. */
function testS3(): { endpoint: string; bucket: string; accessKeyId: string; secretAccessKey: string } | undefined {
  const endpoint = process.env.KGW_TEST_S3_ENDPOINT;
  if (endpoint === undefined || endpoint === '') {
    if (process.env.CI === 'true') throw new Error('KGW_TEST_S3_ENDPOINT must be set in CI: the blob contract runs against S3 too (test/services/minio.sh)');
    return undefined;
  }
  return {
    endpoint,
    bucket: process.env.KGW_TEST_S3_BUCKET ?? 'kgw-test',
    accessKeyId: process.env.KGW_TEST_S3_ACCESS_KEY_ID ?? 'minioadmin',
    secretAccessKey: process.env.KGW_TEST_S3_SECRET_ACCESS_KEY ?? 'minioadmin',
  };
}

async function openDisk(): Promise<Backend> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'kgw-blob-'));
  let offsetMs = 0;
  const holder: { store?: DiskBlobStore } = {};
  // The upload routes need the store and the store needs the port: a late-bound receiver.
  const app: FastifyInstance = Fastify({ logger: false, forceCloseConnections: true });
  registerUploadRoutes(
    app,
    {
      receiveUpload: (ticket, request) => {
        if (holder.store === undefined) throw new Error('store not ready');
        return holder.store.receiveUpload(ticket, request);
      },
    },
    new RateLimiter(120, 60_000),
  );
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  const store = new DiskBlobStore({ dataDir, publicUrl: `http://127.0.0.1:${port}`, now: () => Date.now() + offsetMs });
  holder.store = store;
  const root = store.root;
  return {
    name: 'disk',
    store,
    async leftovers() {
      const found: string[] = [];
      const walk = async (dir: string): Promise<void> => {
        for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
          if (entry.isDirectory()) await walk(path.join(dir, entry.name));
          else if (entry.name.startsWith('.tmp-')) found.push(path.join(dir, entry.name));
        }
      };
      await walk(root);
      return found;
    },
    expire(seconds) {
      offsetMs += (seconds + 1) * 1000;
      return Promise.resolve();
    },
    async dispose() {
      await app.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

function openS3(): Promise<Backend | undefined> {
  const s3 = testS3();
  if (s3 === undefined) return Promise.resolve(undefined);
  // Each run in its own key space, removed afterwards.
  const keyPrefix = `run-${randomBytes(6).toString('hex')}/`;
  const store = new S3BlobStore(
    { endpoint: s3.endpoint, bucket: s3.bucket, region: 'us-east-1', accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    { keyPrefix, timeoutMs: 10_000 },
  );
  return Promise.resolve({
    name: 's3',
    store,
    leftovers: () => Promise.resolve([]),
    expire: (seconds) => new Promise((resolve) => setTimeout(resolve, (seconds + 1) * 1000)),
    async dispose() {
      // Blobs and staged objects alike: everything under the run's prefix.
      const page = await store.client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: keyPrefix }));
      for (const item of page.Contents ?? []) await store.client.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: item.Key }));
      await store.close();
    },
  });
}

function sha(buf: Buffer): string {
  return createHash('sha256').update(buf).digest('hex');
}

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** `total` deterministic bytes in 64 KiB chunks, made as they are read. */
function exposedGc(): () => void {
  const own = (globalThis as { gc?: () => void }).gc;
  if (own) return own;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

function deterministic(total: number, onChunk?: () => void): Readable {
  const chunkSize = 64 * 1024;
  let sent = 0;
  return new Readable({
    read() {
      if (sent >= total) {
        this.push(null);
        return;
      }
      const n = Math.min(chunkSize, total - sent);
      const chunk = Buffer.allocUnsafe(n);
      chunk.fill((sent / chunkSize) & 0xff);
      chunk.writeUInt32BE(sent >>> 0, 0);
      sent += n;
      onChunk?.();
      this.push(chunk);
    },
  });
}

async function hashOf(stream: Readable): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of stream) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

async function putPresigned(ticket: PresignedPut, body: Buffer, headers: Record<string, string> = {}): Promise<Response> {
  // fetch sets Content-Length from the body itself; every other returned header is sent as is.
  const sent = Object.fromEntries(Object.entries({ ...ticket.headers, ...headers }).filter(([name]) => name !== 'content-length'));
  return fetch(ticket.url, { method: ticket.method, headers: sent, body });
}

const backends: Array<{ name: string; open: () => Promise<Backend | undefined> }> = [
  { name: 'disk', open: openDisk },
  { name: 's3', open: openS3 },
];

for (const { name, open } of backends) {
  describe(
    `blob store contract on ${name}`,
    { skip: name === 's3' && !process.env.KGW_TEST_S3_ENDPOINT && process.env.CI !== 'true' ? 'KGW_TEST_S3_ENDPOINT is not set' : false },
    () => {
      let backend: Backend;
      let store: BlobStore;

      before(async () => {
        const opened = await open();
        assert.ok(opened);
        backend = opened;
        store = opened.store;
      });
      after(async () => {
        await backend.dispose();
      });

      it('answers its health probe', async () => {
        assert.equal(store.health.role, 'blob');
        await store.health.check(AbortSignal.timeout(5000));
      });

      it('stores bytes under their SHA-256 and reads them back, whole and by range', async () => {
        const bytes = randomBytes(10_000);
        const info = await store.put({ body: bytes, size: bytes.length, sha256: sha(bytes) });
        assert.equal(info.key, blobKey(sha(bytes)));
        assert.match(info.key, /^sha256\/[0-9a-f]{2}\/[0-9a-f]{2}\/[0-9a-f]{64}$/);
        assert.deepEqual(await store.head(info.key), { size: 10_000 });
        assert.deepEqual(await collect(await store.get(info.key)), bytes);
        assert.deepEqual(await collect(await store.get(info.key, { start: 100, end: 199 })), bytes.subarray(100, 200));
        assert.deepEqual(await collect(await store.get(info.key, { start: 9_990 })), bytes.subarray(9_990));
        assert.deepEqual(await collect(await store.get(info.key, { end: 9 })), bytes.subarray(0, 10));
        assert.deepEqual(await collect(await store.get(info.key, { start: 9_999, end: 50_000 })), bytes.subarray(9_999));
        await rejectsWithKgwError(store.get(info.key, { start: 10_000 }), 'validation');
        await rejectsWithKgwError(store.get(info.key, { start: 5, end: 4 }), 'validation');
      });

      it('stores an empty blob', async () => {
        const empty = Buffer.alloc(0);
        const info = await store.put({ body: empty, size: 0, sha256: sha(empty) });
        assert.deepEqual(await store.head(info.key), { size: 0 });
        assert.equal((await collect(await store.get(info.key))).length, 0);
      });

      it('lists by prefix and deletes', async () => {
        const blobs = [randomBytes(10), randomBytes(20), randomBytes(30)];
        const keys = await Promise.all(blobs.map(async (b) => (await store.put({ body: b, size: b.length, sha256: sha(b) })).key));
        const all = new Map<string, number>();
        for await (const entry of store.list('sha256/')) all.set(entry.key, entry.size);
        for (const [i, key] of keys.entries()) assert.equal(all.get(key), blobs[i]?.length);
        const first = keys[0] ?? '';
        const narrow: string[] = [];
        for await (const entry of store.list(first.slice(0, 12))) narrow.push(entry.key);
        assert.ok(narrow.includes(first));
        assert.ok(narrow.every((k) => k.startsWith(first.slice(0, 12))));
        await store.delete(first);
        assert.equal(await store.head(first), undefined);
        await rejectsWithKgwError(store.get(first), 'not_found');
        await store.delete(first); // deleting twice is fine
        const after: string[] = [];
        for await (const entry of store.list('')) after.push(entry.key);
        assert.ok(!after.includes(first));
      });

      it('is idempotent: the same bytes again are a no-op, wrong bytes for an existing blob still fail', async () => {
        const bytes = randomBytes(4096);
        const a = await store.put({ body: bytes, size: bytes.length, sha256: sha(bytes) });
        const b = await store.put({ body: Readable.from([bytes]), size: bytes.length, sha256: sha(bytes) });
        assert.deepEqual(a, b);
        await rejectsWithKgwError(store.put({ body: randomBytes(4096), size: 4096, sha256: sha(bytes) }), 'content_integrity');
        assert.deepEqual(await collect(await store.get(a.key)), bytes);
      });

      it('refuses a wrong checksum and leaves nothing behind', async () => {
        const bytes = randomBytes(70_000);
        const claimed = sha(randomBytes(8));
        await rejectsWithKgwError(store.put({ body: bytes, size: bytes.length, sha256: claimed }), 'content_integrity');
        assert.equal(await store.head(blobKey(claimed)), undefined);
        assert.deepEqual(await backend.leftovers(), []);
      });

      it('refuses a wrong size, both too few and too many bytes', async () => {
        const bytes = randomBytes(5000);
        await rejectsWithKgwError(store.put({ body: bytes, size: 4999, sha256: sha(bytes) }), 'content_integrity');
        await rejectsWithKgwError(store.put({ body: bytes, size: 5001, sha256: sha(bytes) }), 'content_integrity');
        assert.equal(await store.head(blobKey(sha(bytes))), undefined);
        assert.deepEqual(await backend.leftovers(), []);
      });

      it('refuses a truncated stream and a stream that fails midway', async () => {
        const bytes = randomBytes(300_000);
        const truncated = Readable.from([bytes.subarray(0, 100_000), bytes.subarray(100_000, 200_000)]);
        await rejectsWithKgwError(store.put({ body: truncated, size: bytes.length, sha256: sha(bytes) }), 'content_integrity');
        let sentChunks = 0;
        const failing = new Readable({
          read() {
            if (sentChunks++ < 2) this.push(bytes.subarray(0, 100_000));
            else this.destroy(new Error('connection reset by peer'));
          },
        });
        await assert.rejects(store.put({ body: failing, size: bytes.length, sha256: sha(bytes) }));
        assert.equal(await store.head(blobKey(sha(bytes))), undefined);
        assert.deepEqual(await backend.leftovers(), []);
      });

      it('takes concurrent writers of the same blob and of different blobs', async () => {
        const same = randomBytes(256 * 1024);
        const results = await Promise.all(
          Array.from({ length: 6 }, () =>
            store.put({ body: Readable.from([same.subarray(0, 100_000), same.subarray(100_000)]), size: same.length, sha256: sha(same) }),
          ),
        );
        assert.equal(new Set(results.map((r) => r.key)).size, 1);
        assert.deepEqual(await collect(await store.get(results[0]?.key ?? '')), same);
        const many = Array.from({ length: 8 }, () => randomBytes(50_000));
        const stored = await Promise.all(many.map((b) => store.put({ body: b, size: b.length, sha256: sha(b) })));
        for (const [i, info] of stored.entries()) assert.deepEqual(await collect(await store.get(info.key)), many[i]);
        assert.deepEqual(await backend.leftovers(), []);
      });

      it('streams 100 MiB without holding it in memory', { timeout: 180_000 }, async () => {
        const total = 100 * MiB;
        const digest = await hashOf(deterministic(total));
        // Measure what is live, not garbage a lazy collector has not reclaimed
        // yet: collect before every sixteenth sample (one per MiB streamed).
        const gc = exposedGc();
        gc();
        const base = process.memoryUsage();
        let peakHeap = 0;
        let peakBuffers = 0;
        let samples = 0;
        const sample = () => {
          if (++samples % 16 !== 0) return;
          gc();
          const now = process.memoryUsage();
          peakHeap = Math.max(peakHeap, now.heapUsed - base.heapUsed);
          peakBuffers = Math.max(peakBuffers, now.arrayBuffers - base.arrayBuffers);
        };
        const info = await store.put({ body: deterministic(total, sample), size: total, sha256: digest });
        assert.deepEqual(await store.head(info.key), { size: total });
        const read = await store.get(info.key);
        read.on('data', sample);
        assert.equal(await hashOf(read), digest);
        assert.ok(peakHeap < 16 * MiB, `heap grew by ${(peakHeap / MiB).toFixed(1)} MiB`);
        assert.ok(peakBuffers < 16 * MiB, `buffers grew by ${(peakBuffers / MiB).toFixed(1)} MiB`);
        await store.delete(info.key);
      });

      it('refuses hostile and malformed keys', async () => {
        const hex = sha(Buffer.from('x'));
        const hostile = [
          '',
          '../../etc/passwd',
          '/etc/passwd',
          `sha256/${hex.slice(0, 2)}/${hex.slice(2, 4)}/../../${hex}`,
          `sha256/${hex.slice(0, 2)}/${hex.slice(2, 4)}/${hex}\0`,
          `sha256/${hex.slice(0, 2)}/${hex.slice(2, 4)}/${hex.toUpperCase()}`,
          `sha256/zz/${hex.slice(2, 4)}/${hex}`,
          `sha256/${hex.slice(2, 4)}/${hex.slice(0, 2)}/${hex}`,
          `sha256/${hex.slice(0, 2)}/${hex.slice(2, 4)}/${hex.slice(0, 63)}ａ`,
          `sha256/${hex.slice(0, 2)}/${hex.slice(2, 4)}/${hex}/`,
          `sha256\\${hex.slice(0, 2)}\\${hex.slice(2, 4)}\\${hex}`,
          `SHA256/${hex.slice(0, 2)}/${hex.slice(2, 4)}/${hex}`,
          `sha256/é/${hex}`,
        ];
        for (const key of hostile) {
          await rejectsWithKgwError(store.get(key), 'validation');
          await rejectsWithKgwError(store.head(key), 'validation');
          await rejectsWithKgwError(store.delete(key), 'validation');
          await rejectsWithKgwError(store.promoteUpload({ key, size: 1, sha256: hex }), 'validation');
          await rejectsWithKgwError(store.discardStaged(key), 'validation');
        }
        for (const key of [
          'staging/0000000001-' + hex.slice(0, 31),
          'staging/1-' + hex.slice(0, 32),
          '../staging/0000000001-' + hex.slice(0, 32),
          blobKey(hex),
        ]) {
          await rejectsWithKgwError(store.promoteUpload({ key, size: 1, sha256: hex }), 'validation');
          await rejectsWithKgwError(store.discardStaged(key), 'validation');
        }
        for (const prefix of ['../', '/', 'sha256/../', 'sha256/ab/../', 'sha256/é', 'x']) {
          assert.equal(isKeyPrefix(prefix), false, prefix);
          await rejectsWithKgwError(
            (async () => {
              for await (const entry of store.list(prefix)) void entry;
            })(),
            'validation',
          );
        }
        await rejectsWithKgwError(store.put({ body: Buffer.from('x'), size: 1, sha256: hex.toUpperCase() }), 'validation');
        await rejectsWithKgwError(store.put({ body: Buffer.from('x'), size: -1, sha256: hex }), 'validation');
      });

      describe('presigned PUT', () => {
        it('takes the exact bytes into a staging object of its own, and makes them a blob only when promoted', async () => {
          const bytes = randomBytes(200_000);
          const ticket = await store.presignPut({ size: bytes.length, sha256: sha(bytes), contentType: 'application/pdf', expiresInSeconds: 300 });
          assert.equal(ticket.method, 'PUT');
          assert.match(ticket.key, /^staging\/[0-9]{10}-[0-9a-f]{32}$/);
          assert.equal(ticket.headers['content-length'], String(bytes.length));
          assert.equal(ticket.headers['x-amz-checksum-sha256'], Buffer.from(sha(bytes), 'hex').toString('base64'));
          assert.ok(Date.parse(ticket.expiresAt) > Date.now() + 250_000);
          await rejectsWithKgwError(store.promoteUpload(ticket), 'not_found');
          const response = await putPresigned(ticket, bytes);
          assert.equal(response.status, 200, await response.text());
          // Uploaded, not yet a blob.
          assert.equal(await store.head(blobKey(sha(bytes))), undefined);
          const promoted = { key: blobKey(sha(bytes)), size: bytes.length, sha256: sha(bytes) };
          assert.deepEqual(await store.promoteUpload(ticket), promoted);
          // A confirmation repeated before the staged object is discarded promotes again.
          assert.deepEqual(await store.promoteUpload({ key: ticket.key, size: ticket.size, sha256: ticket.sha256 }), promoted);
          assert.deepEqual(await collect(await store.get(blobKey(sha(bytes)))), bytes);
          await store.discardStaged(ticket.key);
          await store.discardStaged(ticket.key);
          await rejectsWithKgwError(store.promoteUpload(ticket), 'not_found');
          assert.deepEqual(await collect(await store.get(blobKey(sha(bytes)))), bytes);
          assert.deepEqual(await backend.leftovers(), []);
        });

        it('grants nothing for bytes that exist already: a ticket whose PUT never came is not_found', async () => {
          const bytes = randomBytes(5_000);
          await store.put({ body: bytes, size: bytes.length, sha256: sha(bytes) });
          const ticket = await store.presignPut({ size: bytes.length, sha256: sha(bytes), contentType: 'text/plain', expiresInSeconds: 300 });
          await rejectsWithKgwError(store.promoteUpload(ticket), 'not_found');
          // Its own PUT of the same bytes is promoted onto the existing blob, which stays as it was.
          const response = await putPresigned(ticket, bytes);
          assert.equal(response.status, 200, await response.text());
          assert.deepEqual(await store.promoteUpload(ticket), { key: blobKey(sha(bytes)), size: bytes.length, sha256: sha(bytes) });
          await store.discardStaged(ticket.key);
          assert.deepEqual(await collect(await store.get(blobKey(sha(bytes)))), bytes);
        });

        it('refuses to promote against another size or SHA-256, removing the staged object', async () => {
          const bytes = randomBytes(2_000);
          const ticket = await store.presignPut({ size: bytes.length, sha256: sha(bytes), contentType: 'text/plain', expiresInSeconds: 300 });
          const response = await putPresigned(ticket, bytes);
          assert.equal(response.status, 200, await response.text());
          await rejectsWithKgwError(store.promoteUpload({ key: ticket.key, size: bytes.length, sha256: sha(Buffer.from('other')) }), 'content_integrity');
          await rejectsWithKgwError(store.promoteUpload(ticket), 'not_found');
          assert.equal(await store.head(blobKey(sha(bytes))), undefined);
        });

        it('is refused by the store for wrong bytes of the right length', async () => {
          const bytes = randomBytes(50_000);
          const ticket = await store.presignPut({ size: bytes.length, sha256: sha(bytes), contentType: 'application/octet-stream', expiresInSeconds: 300 });
          const response = await putPresigned(ticket, randomBytes(50_000));
          await response.arrayBuffer();
          assert.equal(response.status, 400);
          await rejectsWithKgwError(store.promoteUpload(ticket), 'not_found');
          assert.deepEqual(await backend.leftovers(), []);
        });

        it('is refused for another size, another checksum header or another content type', async () => {
          const bytes = randomBytes(10_000);
          const ticket = await store.presignPut({ size: bytes.length, sha256: sha(bytes), contentType: 'image/png', expiresInSeconds: 300 });
          const bigger = await putPresigned(ticket, Buffer.concat([bytes, Buffer.from('!')]));
          await bigger.arrayBuffer();
          assert.ok(bigger.status >= 400 && bigger.status < 500, String(bigger.status));
          const otherSum = await putPresigned(ticket, bytes, { 'x-amz-checksum-sha256': Buffer.from(sha(Buffer.from('y')), 'hex').toString('base64') });
          await otherSum.arrayBuffer();
          assert.ok(otherSum.status >= 400 && otherSum.status < 500, String(otherSum.status));
          const otherType = await putPresigned(ticket, bytes, { 'content-type': 'text/html' });
          await otherType.arrayBuffer();
          assert.ok(otherType.status >= 400 && otherType.status < 500, String(otherType.status));
          await rejectsWithKgwError(store.promoteUpload(ticket), 'not_found');
        });

        it('is refused once expired', { timeout: 20_000 }, async () => {
          const bytes = randomBytes(1000);
          const ticket = await store.presignPut({ size: bytes.length, sha256: sha(bytes), contentType: 'text/plain', expiresInSeconds: 1 });
          await backend.expire(1);
          const response = await putPresigned(ticket, bytes);
          await response.arrayBuffer();
          assert.equal(response.status, 403);
          await rejectsWithKgwError(store.promoteUpload(ticket), 'not_found');
        });

        it('refuses sizes over the single-PUT ceiling and bad input', async () => {
          await rejectsWithKgwError(
            store.presignPut({ size: 100 * MiB + 1, sha256: sha(Buffer.from('z')), contentType: 'application/pdf', expiresInSeconds: 60 }),
            'payload_too_large',
          );
          await rejectsWithKgwError(store.presignPut({ size: 1, sha256: 'nope', contentType: 'text/plain', expiresInSeconds: 60 }), 'validation');
          await rejectsWithKgwError(
            store.presignPut({ size: 1, sha256: sha(Buffer.from('z')), contentType: 'text/plain\r\nx: y', expiresInSeconds: 60 }),
            'validation',
          );
          await rejectsWithKgwError(store.presignPut({ size: 1, sha256: sha(Buffer.from('z')), contentType: 'text/plain', expiresInSeconds: 0 }), 'validation');
        });

        if (name === 'disk') {
          it('is single use, but a failed attempt may be retried (disk)', async () => {
            const bytes = randomBytes(3000);
            const ticket = await store.presignPut({ size: bytes.length, sha256: sha(bytes), contentType: 'text/plain', expiresInSeconds: 300 });
            const wrong = await putPresigned(ticket, randomBytes(3000));
            await wrong.arrayBuffer();
            assert.equal(wrong.status, 400);
            const first = await putPresigned(ticket, bytes);
            await first.arrayBuffer();
            assert.equal(first.status, 200);
            const again = await putPresigned(ticket, bytes);
            await again.arrayBuffer();
            assert.equal(again.status, 409);
          });

          it('refuses forged and tampered tickets (disk)', async () => {
            const bytes = randomBytes(100);
            const ticket = await store.presignPut({ size: bytes.length, sha256: sha(bytes), contentType: 'text/plain', expiresInSeconds: 300 });
            const url = new URL(ticket.url);
            const [version, payload = '', mac = ''] = (url.pathname.split('/').pop() ?? '').split('.');
            const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
            const forged = Buffer.from(JSON.stringify({ ...claims, e: Number(claims.e) + 3600 })).toString('base64url');
            for (const bad of [`${version}.${forged}.${mac}`, `${version}.${payload}.${'A'.repeat(43)}`, 'v1..', '..%2F..%2Fetc', `${version}.${payload}`]) {
              const response = await putPresigned({ ...ticket, url: `${url.origin}/uploads/${bad}` }, bytes);
              await response.arrayBuffer();
              assert.equal(response.status, 403, bad);
            }
            await rejectsWithKgwError(store.promoteUpload(ticket), 'not_found');
          });

          it('collects staged uploads whose URL expired past the grace, and temporary files a killed write left (disk)', async () => {
            const disk = store as DiskBlobStore;
            const bytes = randomBytes(1_000);
            const old = await store.presignPut({ size: bytes.length, sha256: sha(bytes), contentType: 'text/plain', expiresInSeconds: 60 });
            assert.equal((await putPresigned(old, bytes)).status, 200);
            const fresh = await store.presignPut({ size: bytes.length, sha256: sha(bytes), contentType: 'text/plain', expiresInSeconds: 7 * 24 * 3600 });
            assert.equal((await putPresigned(fresh, bytes)).status, 200);
            // What kill -9 leaves in the middle of a write: a temporary file, an hour old.
            const temps = path.join(disk.root, '.tmp');
            await mkdir(temps, { recursive: true });
            const dead = path.join(temps, `.tmp-${randomBytes(12).toString('hex')}`);
            const live = path.join(temps, `.tmp-${randomBytes(12).toString('hex')}`);
            await writeFile(dead, 'partial');
            await writeFile(live, 'partial');
            const hourAgo = new Date(Date.now() - 2 * 3600_000);
            await utimes(dead, hourAgo, hourAgo);
            await store.collectStaged();
            assert.deepEqual(await readdir(temps), [path.basename(live)]);
            assert.deepEqual(await store.promoteUpload(old), { key: blobKey(sha(bytes)), size: bytes.length, sha256: sha(bytes) });
            // Past its URL's expiry and the grace (earlier tests' staged uploads go with it).
            await backend.expire(60 + STAGING_GRACE_SECONDS);
            assert.ok((await store.collectStaged()) >= 1);
            await rejectsWithKgwError(store.promoteUpload(old), 'not_found');
            assert.deepEqual(await store.promoteUpload(fresh), { key: blobKey(sha(bytes)), size: bytes.length, sha256: sha(bytes) });
          });

          it('keeps the upload secret private (disk)', async () => {
            const disk = store as DiskBlobStore;
            const secret = await stat(path.join(path.dirname(disk.root), 'upload-secret'));
            assert.equal(secret.mode & 0o777, 0o600);
          });
        }
      });
    },
  );
}
