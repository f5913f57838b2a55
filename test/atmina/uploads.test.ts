import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { pngOf, textPdf } from './assets/fixtures.ts';
import { issueToken } from '../support/gateway.ts';
import { storeBackends } from '../support/stores.ts';
import type { KbWire, ReadWire } from './support.ts';
import { KbSuite, assertAtminaError, backendLabel } from './support.ts';

interface UploadWire {
  index: number;
  path: string;
  mime_type: string;
  size_bytes: number;
  sha256: string;
  method: string;
  url: string;
  headers: Record<string, string>;
  expires_at: string;
}
interface RequestWire {
  kb_id: string;
  batch_token: string;
  expires_at: string;
  uploads: UploadWire[];
}
interface ConfirmItemWire {
  path: string;
  ok: boolean;
  file_id?: string;
  version?: number;
  sha256?: string;
  kind?: string;
  media_type?: string;
  operation?: string;
  changed?: boolean;
  asset?: { format: string; state: string; width?: number; height?: number; pages?: number };
  code?: string;
  error?: string;
}
interface ConfirmWire {
  kb_id: string;
  confirmed_at: string;
  results: ConfirmItemWire[];
  confirmed: number;
  failed: number;
}
interface InlineWire {
  file_id: string;
  path: string;
  version: number;
  sha256: string;
  kind: string;
  media_type: string;
  operation: string;
  changed: boolean;
  asset?: Record<string, unknown>;
}
interface AssetReadWire extends ReadWire {
  asset?: Record<string, unknown>;
  download_url?: string;
}

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');
const MiB = 1024 * 1024;

/** PUTs to an upload URL with its headers; the disk store's URLs name the gateway's public URL, which in tests is its listening address. */
async function putUpload(suite: KbSuite, onS3: boolean, upload: UploadWire, body: Buffer | ReadableStream<Uint8Array>): Promise<Response> {
  let target = upload.url;
  if (!onS3) {
    const url = new URL(upload.url);
    target = new URL(`${url.pathname}${url.search}`, suite.running.url).toString();
  }
  const init: RequestInit & { duplex: 'half' } = { method: 'PUT', headers: upload.headers, body, duplex: 'half' };
  return fetch(target, init);
}

for (const backend of storeBackends()) {
  describe(`Atmina uploads on ${backendLabel(backend)}`, () => {
    let suite: KbSuite;
    let kb: KbWire;
    before(async () => {
      suite = await KbSuite.open(backend);
      kb = await suite.kb();
    });
    after(async () => {
      await suite?.close();
    });

    const editor = () => suite.agent('editor-bot');
    const onS3 = () => backendLabel(backend).endsWith('+s3');

    const put = (upload: UploadWire, body: Buffer | ReadableStream<Uint8Array>): Promise<Response> => putUpload(suite, onS3(), upload, body);

    async function request(items: { path: string; mime_type?: string; bytes: Buffer }[]): Promise<RequestWire> {
      return (await editor()).ok<RequestWire>('request_uploads', {
        kb_id: kb.kb_id,
        items: items.map((item) => ({ path: item.path, mime_type: item.mime_type, size_bytes: item.bytes.length, sha256: sha256(item.bytes) })),
      });
    }

    async function versionsOf(fileId: string): Promise<number> {
      const [row] = await suite.db.query<{ n: number }>('SELECT count(*)::int AS n FROM kb_file_versions WHERE file_id = $1', [fileId]);
      return row?.n ?? 0;
    }

    it('uploads a PDF and a PNG through presigned PUTs: the PDF’s text and the PNG’s size are read', async () => {
      const pdf = textPdf([['Quarterly report', 'Revenue grew'], ['Page two']]);
      const png = pngOf(640, 480);
      const batch = await request([
        { path: 'assets/report.pdf', mime_type: 'application/pdf', bytes: pdf },
        { path: 'assets/chart.png', bytes: png },
      ]);
      assert.partialDeepStrictEqual(batch.uploads[1], { path: 'assets/chart.png', mime_type: 'image/png', method: 'PUT', size_bytes: png.length });
      assert.equal((await put(batch.uploads[0] as UploadWire, pdf)).status, 200);
      assert.equal((await put(batch.uploads[1] as UploadWire, png)).status, 200);
      const confirmed = await (await editor()).ok<ConfirmWire>('confirm_uploads', { kb_id: kb.kb_id, batch_token: batch.batch_token });
      assert.partialDeepStrictEqual(confirmed, {
        confirmed: 2,
        failed: 0,
        results: [
          {
            path: 'assets/report.pdf',
            ok: true,
            kind: 'asset',
            media_type: 'application/pdf',
            operation: 'upload',
            asset: { format: 'pdf', state: 'ready', pages: 2 },
          },
          { path: 'assets/chart.png', ok: true, kind: 'asset', media_type: 'image/png', asset: { format: 'png', state: 'ready', width: 640, height: 480 } },
        ],
      });
      const read = await (await editor()).ok<AssetReadWire>('read_file', { kb_id: kb.kb_id, path: 'assets/report.pdf' });
      assert.match(read.content, /Quarterly report[\s\S]*Revenue grew[\s\S]*Page two/);
      assert.partialDeepStrictEqual(read.asset, { path: 'assets/report.pdf', format: 'pdf', pages: 2, state: 'ready' });
    });

    it('answers a retried confirmation with the same result and catalogs nothing twice', async () => {
      const bytes = Buffer.from('a,b\n1,2\n');
      const batch = await request([{ path: 'data/retry.csv', mime_type: 'text/csv', bytes }]);
      await put(batch.uploads[0] as UploadWire, bytes);
      const first = await (await editor()).ok<ConfirmWire>('confirm_uploads', { kb_id: kb.kb_id, batch_token: batch.batch_token });
      const before = await suite.snapshot();
      const second = await (await editor()).ok<ConfirmWire>('confirm_uploads', { kb_id: kb.kb_id, batch_token: batch.batch_token });
      assert.deepStrictEqual(second, first);
      assert.deepStrictEqual(await suite.snapshot(), before);
      assert.equal(await versionsOf(first.results[0]?.file_id ?? ''), 1);
    });

    it('catalogs an upload to a path that holds a file as its next version', async () => {
      const one = Buffer.from('one\n');
      const two = Buffer.from('two\n');
      const first = await request([{ path: 'notes/versioned.txt', bytes: one }]);
      await put(first.uploads[0] as UploadWire, one);
      await (await editor()).ok<ConfirmWire>('confirm_uploads', { kb_id: kb.kb_id, batch_token: first.batch_token });
      const second = await request([{ path: 'notes/versioned.txt', bytes: two }]);
      await put(second.uploads[0] as UploadWire, two);
      const confirmed = await (await editor()).ok<ConfirmWire>('confirm_uploads', { kb_id: kb.kb_id, batch_token: second.batch_token });
      assert.partialDeepStrictEqual(confirmed.results[0], { ok: true, version: 2, operation: 'update', kind: 'text', sha256: sha256(two) });
    });

    it('catalogs batches to one free path confirmed at once as one file with a version each, refusing none', async () => {
      const bodies = Array.from({ length: 6 }, (_, n) => Buffer.from(`racer ${n}\n`));
      const batches = [];
      for (const body of bodies) {
        const batch = await request([{ path: 'notes/raced.txt', bytes: body }]);
        assert.equal((await put(batch.uploads[0] as UploadWire, body)).status, 200);
        batches.push(batch);
      }
      const agents = await Promise.all(bodies.map(() => suite.connect('editor-bot', undefined, { path: '/atmina/mcp' })));
      const confirmed = await Promise.all(
        batches.map((batch, n) =>
          (agents[n] as (typeof agents)[number]).ok<ConfirmWire>('confirm_uploads', { kb_id: kb.kb_id, batch_token: batch.batch_token }),
        ),
      );
      assert.deepEqual(
        confirmed.map((c) => c.failed),
        bodies.map(() => 0),
        JSON.stringify(confirmed.map((c) => c.results)),
      );
      assert.deepEqual(new Set(confirmed.map((c) => c.results[0]?.file_id)).size, 1);
      assert.deepEqual(confirmed.map((c) => c.results[0]?.version).sort(), [1, 2, 3, 4, 5, 6]);
    });

    it('refuses bytes other than the declared ones at the PUT itself', async () => {
      const declared = Buffer.from('the declared bytes');
      const other = Buffer.from('other bytes, same len');
      const batch = await request([{ path: 'wrong/bytes.txt', bytes: declared }]);
      const upload = batch.uploads[0] as UploadWire;
      // Same length as declared, so only the store's check of the SHA-256 can refuse them.
      const response = await put(upload, other.subarray(0, declared.length));
      assert.equal(response.status, 400);
      if (onS3()) assert.match(await response.text(), /BadDigest|XAmzContentChecksumMismatch|checksum/i);
      const confirmed = await (await editor()).ok<ConfirmWire>('confirm_uploads', { kb_id: kb.kb_id, batch_token: batch.batch_token });
      assert.partialDeepStrictEqual(confirmed.results[0], { path: 'wrong/bytes.txt', ok: false, code: 'validation' });
    });

    it('refuses to confirm an expired batch, and asks for a new request', async () => {
      const bytes = Buffer.from('late\n');
      const batch = await request([{ path: 'late.txt', bytes }]);
      await put(batch.uploads[0] as UploadWire, bytes);
      await suite.db.tx((tx) =>
        tx.query("UPDATE kb_upload_batches SET expires_at = clock_timestamp() - interval '1 second' WHERE token_sha256 = $1", [
          sha256(Buffer.from(batch.batch_token)),
        ]),
      );
      const text = await (await editor()).fail('confirm_uploads', { kb_id: kb.kb_id, batch_token: batch.batch_token });
      assertAtminaError(text, 'validation', 'call request_uploads again');
    });

    it('collects the bytes of an expired, unconfirmed batch on the next request, and forgets the batch', async () => {
      const bytes = Buffer.from(`abandoned ${suite.unique('upload')}\n`);
      const batch = await request([{ path: 'abandoned.txt', bytes }]);
      await put(batch.uploads[0] as UploadWire, bytes);
      const blob = suite.running.gateway.services.blob;
      const key = `sha256/${sha256(bytes).slice(0, 2)}/${sha256(bytes).slice(2, 4)}/${sha256(bytes)}`;
      // Staged for this batch alone: not a blob until a confirmation promotes it.
      assert.equal(await blob.head(key), undefined);
      const [row] = await suite.db.query<{ items: { stagingKey: string }[] | string }>('SELECT items FROM kb_upload_batches WHERE token_sha256 = $1', [
        sha256(Buffer.from(batch.batch_token)),
      ]);
      const items = typeof row?.items === 'string' ? (JSON.parse(row.items) as { stagingKey: string }[]) : (row?.items ?? []);
      const staged = { key: items[0]?.stagingKey ?? '', size: bytes.length, sha256: sha256(bytes) };
      await suite.db.tx((tx) =>
        tx.query("UPDATE kb_upload_batches SET expires_at = clock_timestamp() - interval '1 second' WHERE token_sha256 = $1", [
          sha256(Buffer.from(batch.batch_token)),
        ]),
      );
      await request([{ path: 'next.txt', bytes: Buffer.from('next') }]);
      await assert.rejects(blob.promoteUpload(staged), (error: Error & { code?: string }) => error.code === 'not_found');
      assert.equal(await blob.head(key), undefined);
      const text = await (await editor()).fail('confirm_uploads', { kb_id: kb.kb_id, batch_token: batch.batch_token });
      assertAtminaError(text, 'not_found', 'call request_uploads again');
    });

    it('confirms only bytes this batch PUT: another tenant’s file, declared by its SHA-256 and size, is not taken', async () => {
      const secret = Buffer.from(`globex secret ${randomUUID()}\n`);
      const globex = await suite.agent('globex-bot', 'context.read context.write', 'globex');
      const theirs = await globex.ok<KbWire>('create_kb', { name: suite.unique('Vault'), team: 'ops' });
      await globex.ok('write_file', { kb_id: theirs.kb_id, path: 'secret.md', mode: 'create', content: secret.toString() });
      const before = await suite.snapshot();
      const batch = await request([{ path: 'stolen.md', bytes: secret }]);
      const confirmed = await (await editor()).ok<ConfirmWire>('confirm_uploads', { kb_id: kb.kb_id, batch_token: batch.batch_token });
      assert.partialDeepStrictEqual(confirmed, { confirmed: 0, failed: 1, results: [{ path: 'stolen.md', ok: false, code: 'validation' }] });
      assert.match(confirmed.results[0]?.error ?? '', /nothing was uploaded for "stolen\.md"; PUT its bytes to its URL first/);
      assertAtminaError(await (await editor()).fail('read_file', { kb_id: kb.kb_id, path: 'stolen.md' }), 'not_found', 'no file "stolen.md"');
      const [held] = await suite.db.query<{ n: number }>('SELECT count(*)::int AS n FROM kb_files WHERE tenant_id = $1 AND sha256 = $2', [
        await suite.tenantIdOf('acme'),
        sha256(secret),
      ]);
      assert.equal(held?.n, 0);
      // Only the batch row and its audit events are new: no file, version, contribution or outbox row.
      assert.deepStrictEqual(await suite.snapshot(), before);
    });

    it('confirms only bytes this batch PUT: a file of a private KB the editor cannot read is not taken either', async () => {
      const secret = Buffer.from(`private plan ${randomUUID()}\n`);
      const hidden = await suite.kb({ visibility: 'private' });
      await suite.file(hidden.kb_id, 'plan.md', secret.toString());
      assertAtminaError(await (await editor()).fail('read_file', { kb_id: hidden.kb_id, path: 'plan.md' }), 'not_found');
      const batch = await request([{ path: 'plan-copy.md', bytes: secret }]);
      const confirmed = await (await editor()).ok<ConfirmWire>('confirm_uploads', { kb_id: kb.kb_id, batch_token: batch.batch_token });
      assert.partialDeepStrictEqual(confirmed.results[0], { path: 'plan-copy.md', ok: false, code: 'validation' });
      assertAtminaError(await (await editor()).fail('read_file', { kb_id: kb.kb_id, path: 'plan-copy.md' }), 'not_found');
      // Its own PUT of the same bytes is what a batch needs: a new batch that uploads them is confirmed.
      const honest = await request([{ path: 'plan-copy.md', bytes: secret }]);
      assert.equal((await put(honest.uploads[0] as UploadWire, secret)).status, 200);
      const ok = await (await editor()).ok<ConfirmWire>('confirm_uploads', { kb_id: kb.kb_id, batch_token: honest.batch_token });
      assert.partialDeepStrictEqual(ok.results[0], { path: 'plan-copy.md', ok: true, sha256: sha256(secret) });
    });

    it('refuses a batch with a repeated path whole, requesting nothing', async () => {
      const before = await suite.snapshot();
      const bytes = Buffer.from('x');
      const text = await (
        await editor()
      ).fail('request_uploads', {
        kb_id: kb.kb_id,
        items: [
          { path: 'dup.txt', size_bytes: 1, sha256: sha256(bytes) },
          { path: 'other.txt', size_bytes: 1, sha256: sha256(bytes) },
          { path: 'dup.txt', size_bytes: 1, sha256: sha256(bytes) },
        ],
      });
      assertAtminaError(text, 'validation', 'items 0, 2 name the same path');
      assert.deepStrictEqual(await suite.snapshot(), before);
    });

    it('reports a bad item in its place and issues the rest: batch failures are per item', async () => {
      const good = Buffer.from(`kept ${randomUUID()}\n`);
      const hash = sha256(Buffer.from('x'));
      const before = await suite.snapshot();
      const batch = await (
        await editor()
      ).ok<RequestWire & { requested: number; failed: number; failures: { index: number; path: string; code: string; error: string }[] }>('request_uploads', {
        kb_id: kb.kb_id,
        items: [
          { path: 'big.png', size_bytes: 25 * MiB + 1, sha256: hash },
          { path: 'per-item/kept.txt', size_bytes: good.length, sha256: sha256(good) },
          { path: 'bad-hash.txt', size_bytes: 1, sha256: 'not a hash' },
          { path: '../escape.txt', size_bytes: 1, sha256: hash },
        ],
      });
      assert.deepStrictEqual(
        { requested: batch.requested, failed: batch.failed, issued: batch.uploads.map((u): [number, string] => [u.index, u.path]) },
        { requested: 1, failed: 3, issued: [[1, 'per-item/kept.txt']] },
      );
      assert.deepStrictEqual(
        batch.failures.map((f) => [f.index, f.path, f.code]),
        [
          [0, 'big.png', 'payload_too_large'],
          [2, 'bad-hash.txt', 'validation'],
          [3, '../escape.txt', 'validation'],
        ],
      );
      assert.match(batch.failures[0]?.error ?? '', /^payload_too_large: an image or PDF Asset may be at most 26214400 bytes/);
      assert.equal(batch.failures[1]?.error, 'validation: items[2].sha256: must be a SHA-256 as 64 hex digits');
      assert.match(batch.failures[2]?.error ?? '', /^validation: items\[3\]\.path: /);
      assert.deepStrictEqual(await suite.snapshot(), before);
      assert.equal((await put(batch.uploads[0] as UploadWire, good)).status, 200);
      const confirmed = await (await editor()).ok<ConfirmWire>('confirm_uploads', { kb_id: kb.kb_id, batch_token: batch.batch_token });
      assert.partialDeepStrictEqual(confirmed, { confirmed: 1, failed: 0, results: [{ path: 'per-item/kept.txt', ok: true, sha256: sha256(good) }] });
    });

    it('still rejects the whole batch for repeated paths, even beside a bad item', async () => {
      const before = await suite.snapshot();
      const hash = sha256(Buffer.from('x'));
      const text = await (
        await editor()
      ).fail('request_uploads', {
        kb_id: kb.kb_id,
        items: [
          { path: 'twice.txt', size_bytes: 1, sha256: hash },
          { path: 'big.png', size_bytes: 25 * MiB + 1, sha256: hash },
          { path: 'twice.txt', size_bytes: 1, sha256: hash },
        ],
      });
      assertAtminaError(text, 'validation', 'items 0, 2 name the same path "twice.txt"; nothing was requested');
      assert.deepStrictEqual(await suite.snapshot(), before);
    });

    it('refuses declarations above the ceilings: 25 MiB for an image or PDF, 100 MiB for other files', async () => {
      const hash = sha256(Buffer.from('x'));
      const png = await (await editor()).fail('request_uploads', { kb_id: kb.kb_id, items: [{ path: 'big.png', size_bytes: 25 * MiB + 1, sha256: hash }] });
      assertAtminaError(png, 'payload_too_large', 'at most 26214400 bytes');
      const zip = await (await editor()).fail('request_uploads', { kb_id: kb.kb_id, items: [{ path: 'big.zip', size_bytes: 100 * MiB + 1, sha256: hash }] });
      assertAtminaError(zip, 'payload_too_large', 'at most 104857600 bytes');
    });

    it('refuses bad input with validation, changing nothing', async () => {
      const before = await suite.snapshot();
      const badSha = await (await editor()).fail('request_uploads', { kb_id: kb.kb_id, items: [{ path: 'a.txt', size_bytes: 1, sha256: 'nope' }] });
      assertAtminaError(badSha, 'validation', 'items[0].sha256');
      const badPath = await (await editor()).fail('request_uploads', { kb_id: kb.kb_id, items: [{ path: '../a.txt', size_bytes: 1, sha256: 'a'.repeat(64) }] });
      assertAtminaError(badPath, 'validation', 'items[0].path');
      const badBase64 = await (await editor()).fail('upload_file', { kb_id: kb.kb_id, filename: 'b.txt', content_base64: 'not base64!' });
      assertAtminaError(badBase64, 'validation', 'content_base64');
      const lying = await (
        await editor()
      ).fail('upload_file', { kb_id: kb.kb_id, filename: 'c.png', mime_type: 'image/png', content_base64: Buffer.from('%PDF-1.4').toString('base64') });
      assertAtminaError(lying, 'validation', 'does not match the file');
      assert.deepStrictEqual(await suite.snapshot(), before);
    });

    it('refuses uploads to a Viewer', async () => {
      const viewer = await suite.agent('viewer-bot');
      const text = await viewer.fail('request_uploads', { kb_id: kb.kb_id, items: [{ path: 'v.txt', size_bytes: 1, sha256: 'a'.repeat(64) }] });
      assertAtminaError(text, 'permission_denied', 'Editor');
      const inline = await viewer.fail('upload_file', { kb_id: kb.kb_id, filename: 'v.txt', content_base64: 'eA==' });
      assertAtminaError(inline, 'permission_denied', 'Editor');
    });

    it('uploads an image inline and read_file shows its medium rendition beside the JSON', async () => {
      const png = pngOf(2048, 1024);
      const uploaded = await (
        await editor()
      ).ok<InlineWire>('upload_file', {
        kb_id: kb.kb_id,
        filename: 'pictures/wide.png',
        content_base64: png.toString('base64'),
        description: 'A red rectangle',
      });
      assert.partialDeepStrictEqual(uploaded, {
        kind: 'asset',
        media_type: 'image/png',
        operation: 'upload',
        asset: { format: 'png', width: 2048, height: 1024 },
      });
      const result = await (await editor()).call('read_file', { kb_id: kb.kb_id, file_id: uploaded.file_id });
      assert.partialDeepStrictEqual(result.structuredContent, { content: 'A red rectangle', asset: { path: 'pictures/wide.png', state: 'ready' } });
      const image = result.content.find((block) => block.type === 'image');
      assert.ok(image?.type === 'image');
      assert.equal(image.mimeType, 'image/png');
      const textOnly = await (await editor()).call('read_file', { kb_id: kb.kb_id, file_id: uploaded.file_id, include_image: false });
      assert.equal(
        textOnly.content.some((block) => block.type === 'image'),
        false,
      );
    });

    it('serves an Asset’s original bytes through read_file’s short-lived link to its reader’s token only', async () => {
      const png = pngOf(32, 16);
      const uploaded = await (
        await editor()
      ).ok<InlineWire>('upload_file', { kb_id: kb.kb_id, filename: 'pictures/original.png', content_base64: png.toString('base64') });
      const read = await (await editor()).ok<AssetReadWire>('read_file', { kb_id: kb.kb_id, file_id: uploaded.file_id, include_image: false });
      const link = new URL(new URL(read.download_url ?? '').pathname, suite.running.url).toString();
      const mine = await fetch(link, { headers: { authorization: `Bearer ${await issueToken(suite.db, 'acme', 'editor-bot', 'context.read')}` } });
      assert.deepStrictEqual(
        { status: mine.status, type: mine.headers.get('content-type'), sha256: sha256(Buffer.from(await mine.arrayBuffer())) },
        { status: 200, type: 'image/png', sha256: sha256(png) },
      );
      const anonymous = await fetch(link);
      assert.equal(anonymous.status, 401);
      const other = await fetch(link, { headers: { authorization: `Bearer ${await issueToken(suite.db, 'acme', 'admin-bot', 'context.read')}` } });
      assert.equal(other.status, 403);
      const forged = await fetch(`${link.slice(0, -4)}AAAA`, {
        headers: { authorization: `Bearer ${await issueToken(suite.db, 'acme', 'editor-bot', 'context.read')}` },
      });
      assert.equal(forged.status, 403);
    });

    it('keeps an uploaded Markdown file as text with its front-matter tags', async () => {
      const markdown = Buffer.from('---\ntags: [policy, retention]\n---\n# Retention\n');
      const uploaded = await (
        await editor()
      ).ok<InlineWire>('upload_file', { kb_id: kb.kb_id, filename: 'policies/retention.md', content_base64: markdown.toString('base64') });
      const read = await (await editor()).ok<ReadWire & { tags: string[] }>('read_file', { kb_id: kb.kb_id, file_id: uploaded.file_id });
      assert.partialDeepStrictEqual(read, { kind: 'text', media_type: 'text/markdown', content: markdown.toString('utf8'), tags: ['policy', 'retention'] });
    });

    it('refuses inline content above 1 MiB with payload_too_large naming request_uploads', async () => {
      const text = await (
        await editor()
      ).fail('upload_file', { kb_id: kb.kb_id, filename: 'big.bin', content_base64: Buffer.alloc(MiB + 1).toString('base64') });
      assertAtminaError(text, 'payload_too_large', 'request_uploads');
    });

    it('refuses upload_file to a path that holds a file', async () => {
      await (await editor()).ok('upload_file', { kb_id: kb.kb_id, filename: 'taken.bin', content_base64: 'AAEC' });
      const text = await (await editor()).fail('upload_file', { kb_id: kb.kb_id, filename: 'taken.bin', content_base64: 'AwQF' });
      assertAtminaError(text, 'conflict', 'already exists');
    });

    it('updates a file guarded by if_match, and refuses a stale one with conflict', async () => {
      const first = await (await editor()).ok<InlineWire>('upload_file', { kb_id: kb.kb_id, filename: 'guarded.bin', content_base64: 'AAEC' });
      const updated = await (
        await editor()
      ).ok<InlineWire>('update_file', {
        kb_id: kb.kb_id,
        file_id: first.file_id,
        mime_type: 'application/octet-stream',
        content_base64: 'AwQF',
        if_match: first.sha256,
      });
      assert.partialDeepStrictEqual(updated, { version: 2, operation: 'update', changed: true });
      const text = await (
        await editor()
      ).fail('update_file', { kb_id: kb.kb_id, file_id: first.file_id, mime_type: 'application/octet-stream', content_base64: 'BgcI', if_match: first.sha256 });
      assertAtminaError(text, 'conflict', 'changed since you read it');
      assert.equal(await versionsOf(first.file_id), 2);
    });
  });

  describe(`Atmina upload URLs that expire on ${backendLabel(backend)}`, () => {
    // Long enough for a request and its PUT on a loaded machine: S3 counts the lifetime from
    // the signing time, truncated to the second, so a URL may live up to a second less.
    const LIFETIME = 3;
    let suite: KbSuite;
    let kb: KbWire;
    before(async () => {
      suite = await KbSuite.open(backend, { KGW_UPLOAD_URL_TTL_SECONDS: String(LIFETIME) });
      kb = await suite.kb();
    });
    after(async () => {
      await suite?.close();
    });

    const onS3 = () => backendLabel(backend).endsWith('+s3');
    const editor = () => suite.agent('editor-bot');
    const request = async (path: string, bytes: Buffer): Promise<RequestWire> =>
      (await editor()).ok<RequestWire>('request_uploads', { kb_id: kb.kb_id, items: [{ path, size_bytes: bytes.length, sha256: sha256(bytes) }] });

    it('signs S3 URLs for the configured lifetime', { skip: !onS3() }, async () => {
      const batch = await request('signed.txt', Buffer.from('signed'));
      assert.equal(new URL(batch.uploads[0]?.url ?? '').searchParams.get('X-Amz-Expires'), String(LIFETIME));
    });

    it('refuses a PUT after its URL expired at the store, catalogues nothing, and a new request works', async () => {
      // Bytes of their own: the S3 bucket outlives a run, and the blob must be absent before the PUT.
      const bytes = Buffer.from(`late ${randomUUID()}\n`);
      const path = 'late/expired.txt';
      const stale = await request(path, bytes);
      const upload = stale.uploads[0] as UploadWire;
      // Past both the URL's and the batch's expiry, with a second to spare for clocks.
      const past = Math.max(Date.parse(upload.expires_at), Date.parse(stale.expires_at)) + 1000;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, past - Date.now())));

      const refused = await putUpload(suite, onS3(), upload, bytes);
      const body = await refused.text();
      if (onS3())
        assert.deepStrictEqual({ status: refused.status, expired: /AccessDenied/.test(body) && /expired/i.test(body) }, { status: 403, expired: true });
      else
        assert.deepStrictEqual(
          { status: refused.status, body: JSON.parse(body) as unknown },
          {
            status: 403,
            body: { error: { code: 'permission_denied', message: 'the upload URL has expired; request a new one' } },
          },
        );
      const key = `sha256/${sha256(bytes).slice(0, 2)}/${sha256(bytes).slice(2, 4)}/${sha256(bytes)}`;
      assert.equal(await suite.running.gateway.services.blob.head(key), undefined);

      const text = await (await editor()).fail('confirm_uploads', { kb_id: kb.kb_id, batch_token: stale.batch_token });
      assertAtminaError(text, 'validation', /expired.*call request_uploads again/);
      const [catalogued] = await suite.db.query<{ n: number }>('SELECT count(*)::int AS n FROM kb_files WHERE kb_id = $1 AND path = $2', [kb.kb_id, path]);
      assert.equal(catalogued?.n, 0);

      const fresh = await request(path, bytes);
      assert.equal((await putUpload(suite, onS3(), fresh.uploads[0] as UploadWire, bytes)).status, 200);
      const confirmed = await (await editor()).ok<ConfirmWire>('confirm_uploads', { kb_id: kb.kb_id, batch_token: fresh.batch_token });
      assert.partialDeepStrictEqual(confirmed, { confirmed: 1, failed: 0, results: [{ path, ok: true, operation: 'upload', sha256: sha256(bytes) }] });
    });
  });
}
