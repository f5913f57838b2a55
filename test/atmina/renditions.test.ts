import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { DOWNLOAD_LINK_SECONDS, signDownload } from '../../src/atmina/kb/download-links.ts';
import { pngOf, textPdf } from './assets/fixtures.ts';
import { issueToken } from '../support/gateway.ts';
import { storeBackends } from '../support/stores.ts';
import type { KbWire, ReadWire } from './support.ts';
import { KbSuite, backendLabel } from './support.ts';

interface UploadedWire {
  file_id: string;
  version: number;
  asset?: { rendition_url?: string };
}
interface AssetReadWire extends ReadWire {
  asset?: { path: string; state?: string; format?: string; rendition_url?: string };
  download_url?: string;
}
interface ShareWire {
  grant_id: string;
}

/** A gradient, so that a cut through its compressed pixels leaves the decoder short of data. */
const GRADIENT = pngOf(400, 200, (x, y) => [x % 256, y % 256, (x * y) % 256]);

for (const backend of storeBackends()) {
  describe(`Atmina thumbnails on ${backendLabel(backend)}`, () => {
    let suite: KbSuite;
    let kb: KbWire;
    before(async () => {
      suite = await KbSuite.open(backend);
      kb = await suite.kb();
    });
    after(async () => {
      await suite?.close();
    });

    const bearer = async (principal: string): Promise<{ authorization: string }> => ({
      authorization: `Bearer ${await issueToken(suite.db, 'acme', principal, 'context.read')}`,
    });
    /** The gateway's own address for a link: its public URL in tests is its listening address. */
    const local = (url: string): string => new URL(new URL(url).pathname, suite.running.url).toString();

    async function upload(path: string, bytes: Buffer, by = 'editor-bot', kbId = kb.kb_id): Promise<UploadedWire> {
      return (await suite.agent(by)).ok<UploadedWire>('upload_file', { kb_id: kbId, filename: path, content_base64: bytes.toString('base64') });
    }

    async function read(fileId: string, by = 'editor-bot', kbId = kb.kb_id): Promise<AssetReadWire> {
      return (await suite.agent(by)).ok<AssetReadWire>('read_file', { kb_id: kbId, file_id: fileId, include_image: false });
    }

    /** The thumbnail link read_file gives the reader for an uploaded image. */
    async function thumbnailLink(path: string, bytes: Buffer): Promise<string> {
      const uploaded = await upload(path, bytes);
      const url = (await read(uploaded.file_id)).asset?.rendition_url;
      assert.ok(url !== undefined, 'read_file gives a rendition_url');
      return local(url);
    }

    it('gives a ready image’s asset block a rendition_url on the renditions route', async () => {
      const uploaded = await upload('pictures/chart.png', pngOf(1024, 512));
      const asset = (await read(uploaded.file_id)).asset;
      assert.partialDeepStrictEqual(asset, { path: 'pictures/chart.png', format: 'png', state: 'ready' });
      assert.match(asset?.rendition_url ?? '', /\/atmina\/renditions\/v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    });

    it('gives upload_file’s asset block the same rendition_url kind as read_file', async () => {
      const uploaded = await upload('pictures/upload-answer.png', pngOf(640, 480));
      assert.match(uploaded.asset?.rendition_url ?? '', /\/atmina\/renditions\/v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    });

    it('serves the reader a WebP thumbnail of at most 256 pixels on its longest edge, aspect kept', async () => {
      const answer = await fetch(await thumbnailLink('pictures/wide.png', pngOf(1024, 512)), { headers: await bearer('editor-bot') });
      const decoded = await sharp(Buffer.from(await answer.arrayBuffer())).metadata();
      assert.deepStrictEqual(
        {
          status: answer.status,
          type: answer.headers.get('content-type'),
          nosniff: answer.headers.get('x-content-type-options'),
          private: answer.headers.get('cache-control')?.startsWith('private, max-age='),
          format: decoded.format,
          width: decoded.width,
          height: decoded.height,
        },
        { status: 200, type: 'image/webp', nosniff: 'nosniff', private: true, format: 'webp', width: 256, height: 128 },
      );
    });

    it('never enlarges an image smaller than a thumbnail', async () => {
      const answer = await fetch(await thumbnailLink('pictures/small.png', pngOf(120, 90)), { headers: await bearer('editor-bot') });
      const decoded = await sharp(Buffer.from(await answer.arrayBuffer())).metadata();
      assert.deepStrictEqual({ status: answer.status, width: decoded.width, height: decoded.height }, { status: 200, width: 120, height: 90 });
    });

    it('audits each thumbnail served as kb.file.thumbnail, naming the file version', async () => {
      const uploaded = await upload('pictures/audited.png', pngOf(64, 64));
      const url = (await read(uploaded.file_id)).asset?.rendition_url ?? '';
      assert.equal((await fetch(local(url), { headers: await bearer('editor-bot') })).status, 200);
      const events = await suite.db.query<{ tool: string; result: string; resources: unknown }>(
        `SELECT tool, result, resources FROM audit_events WHERE action = 'kb.file.thumbnail' AND resources::text LIKE $1`,
        [`%${uploaded.file_id}%`],
      );
      assert.deepStrictEqual(events, [
        { tool: 'download_thumbnail', result: 'ok', resources: [{ type: 'kb_file', id: uploaded.file_id, version: uploaded.version }] },
      ]);
    });

    it('refuses a request without a token with 401', async () => {
      const answer = await fetch(await thumbnailLink('pictures/anonymous.png', pngOf(64, 64)));
      assert.deepStrictEqual({ status: answer.status, challenge: answer.headers.get('www-authenticate') }, { status: 401, challenge: 'Bearer' });
    });

    it('refuses another principal’s token with 403, though it may read the file', async () => {
      const answer = await fetch(await thumbnailLink('pictures/theirs.png', pngOf(64, 64)), { headers: await bearer('admin-bot') });
      assert.equal(answer.status, 403);
    });

    it('refuses a tampered link with 403', async () => {
      const link = await thumbnailLink('pictures/tampered.png', pngOf(64, 64));
      const answer = await fetch(`${link.slice(0, -4)}AAAA`, { headers: await bearer('editor-bot') });
      assert.equal(answer.status, 403);
    });

    it('refuses an expired link with 403, asking to read the file again', async () => {
      const uploaded = await upload('pictures/expired.png', pngOf(64, 64));
      const link = await signDownload(
        suite.db,
        {
          tenantId: await suite.tenantIdOf('acme'),
          kbId: kb.kb_id,
          fileId: uploaded.file_id,
          version: uploaded.version,
          principalId: await suite.principalId('editor-bot'),
          rendition: 'thumbnail',
        },
        Date.now() - (DOWNLOAD_LINK_SECONDS + 1) * 1000,
      );
      const answer = await fetch(new URL(`/atmina/renditions/${link.token}`, suite.running.url), { headers: await bearer('editor-bot') });
      assert.deepStrictEqual(
        { status: answer.status, body: await answer.json() },
        { status: 403, body: { error: { code: 'permission_denied', message: 'the download link has expired; read the file again for a new one' } } },
      );
    });

    it('serves a thumbnail link on the renditions route only, and a download link on the files route only', async () => {
      const uploaded = await upload('pictures/kinds.png', pngOf(64, 64));
      const { asset, download_url: download } = await read(uploaded.file_id);
      const thumbnailPath = new URL(asset?.rendition_url ?? '').pathname;
      const downloadPath = new URL(download ?? '').pathname;
      const headers = await bearer('editor-bot');
      const swapped = {
        thumbnailAsFile: (await fetch(new URL(thumbnailPath.replace('/atmina/renditions/', '/atmina/files/'), suite.running.url), { headers })).status,
        downloadAsThumbnail: (await fetch(new URL(downloadPath.replace('/atmina/files/', '/atmina/renditions/'), suite.running.url), { headers })).status,
      };
      assert.deepStrictEqual(swapped, { thumbnailAsFile: 403, downloadAsThumbnail: 403 });
    });

    it('refuses a reader who lost access to the KB as the download route does', async () => {
      const admin = await suite.agent('admin-bot');
      const shared = await suite.kb();
      const uploaded = await upload('pictures/shared.png', pngOf(64, 64), 'admin-bot', shared.kb_id);
      const share = await admin.ok<ShareWire>('share_kb', { kb_id: shared.kb_id, principal_id: await suite.principalId('outsider-bot'), role: 'viewer' });
      const readBefore = await read(uploaded.file_id, 'outsider-bot', shared.kb_id);
      const headers = await bearer('outsider-bot');
      const thumbnail = local(readBefore.asset?.rendition_url ?? '');
      assert.equal((await fetch(thumbnail, { headers })).status, 200);
      await admin.ok('revoke_share', { kb_id: shared.kb_id, grant_id: share.grant_id });
      const refusal = async (url: string) => {
        const answer = await fetch(url, { headers });
        return { status: answer.status, body: await answer.json() };
      };
      const thumbnailRefusal = await refusal(thumbnail);
      assert.deepStrictEqual(thumbnailRefusal, await refusal(local(readBefore.download_url ?? '')));
      assert.partialDeepStrictEqual(thumbnailRefusal, { status: 404, body: { error: { code: 'not_found' } } });
    });

    it('gives a PDF no rendition_url', async () => {
      const uploaded = await upload('reports/q1.pdf', textPdf([['Quarterly report']]));
      const asset = (await read(uploaded.file_id)).asset;
      assert.deepStrictEqual(
        { format: asset?.format, state: asset?.state, renditionUrl: asset?.rendition_url },
        { format: 'pdf', state: 'ready', renditionUrl: undefined },
      );
    });

    it('gives an image whose pixels could not be read no rendition_url', async () => {
      const uploaded = await upload('pictures/cut.png', GRADIENT.subarray(0, 2000));
      const asset = (await read(uploaded.file_id)).asset;
      assert.deepStrictEqual({ state: asset?.state, renditionUrl: asset?.rendition_url }, { state: 'failed', renditionUrl: undefined });
    });
  });
}
