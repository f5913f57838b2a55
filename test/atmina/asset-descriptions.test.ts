import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pngOf, textPdf } from './assets/fixtures.ts';
import { storeBackends } from '../support/stores.ts';
import type { KbWire } from './support.ts';
import { KbSuite, backendLabel } from './support.ts';

/*
 * An image's description (its Companion text) across versions: update_file keeps it unless the
 * writer sends one ("" clears it), and list_files says where each Asset's Companion text comes
 * from (description_source). Through the MCP client on /atmina/mcp.
 */

interface InlineWire {
  file_id: string;
  sha256: string;
  version: number;
  changed: boolean;
}
interface ListWire {
  files: { path: string; kind: string; description_source?: string }[];
}

for (const backend of storeBackends()) {
  describe(`Atmina image descriptions on ${backendLabel(backend)}`, () => {
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
    const companion = async (fileId: string): Promise<unknown> =>
      (await (await editor()).call('read_file', { kb_id: kb.kb_id, file_id: fileId, include_image: false })).structuredContent?.content;

    it('keeps an image’s description when update_file sends new pixels without one, and clears it on ""', async () => {
      const agent = await editor();
      const first = await agent.ok<InlineWire>('upload_file', {
        kb_id: kb.kb_id,
        filename: 'pictures/chart.png',
        content_base64: pngOf(40, 20).toString('base64'),
        description: 'Revenue by quarter, 2026',
      });
      const second = await agent.ok<InlineWire>('update_file', {
        kb_id: kb.kb_id,
        file_id: first.file_id,
        mime_type: 'image/png',
        content_base64: pngOf(80, 40).toString('base64'),
        if_match: first.sha256,
      });
      assert.equal(second.version, 2);
      assert.equal(await companion(first.file_id), 'Revenue by quarter, 2026');

      const described = await agent.ok<InlineWire>('update_file', {
        kb_id: kb.kb_id,
        file_id: first.file_id,
        mime_type: 'image/png',
        content_base64: pngOf(80, 40).toString('base64'),
        if_match: second.sha256,
        description: 'Revenue by quarter, 2026, corrected',
      });
      // The same pixels with a new description are a new version: the Companion changed.
      assert.deepStrictEqual({ version: described.version, changed: described.changed }, { version: 3, changed: true });
      assert.equal(await companion(first.file_id), 'Revenue by quarter, 2026, corrected');

      const cleared = await agent.ok<InlineWire>('update_file', {
        kb_id: kb.kb_id,
        file_id: first.file_id,
        mime_type: 'image/png',
        content_base64: pngOf(80, 40).toString('base64'),
        if_match: described.sha256,
        description: '',
      });
      assert.deepStrictEqual({ version: cleared.version, changed: cleared.changed }, { version: 4, changed: true });
      assert.equal(await companion(first.file_id), '');

      const unchanged = await agent.ok<InlineWire>('update_file', {
        kb_id: kb.kb_id,
        file_id: first.file_id,
        mime_type: 'image/png',
        content_base64: pngOf(80, 40).toString('base64'),
        if_match: cleared.sha256,
      });
      assert.deepStrictEqual({ version: unchanged.version, changed: unchanged.changed }, { version: 4, changed: false });
    });

    it('list_files names each Asset’s description_source: writer, extracted or none; text files have none', async () => {
      const agent = await editor();
      const prefix = 'sources/';
      await agent.ok('upload_file', {
        kb_id: kb.kb_id,
        filename: `${prefix}described.png`,
        content_base64: pngOf(8, 8).toString('base64'),
        description: 'A red square',
      });
      await agent.ok('upload_file', { kb_id: kb.kb_id, filename: `${prefix}plain.png`, content_base64: pngOf(8, 8).toString('base64') });
      await agent.ok('upload_file', { kb_id: kb.kb_id, filename: `${prefix}report.pdf`, content_base64: textPdf([['Quarterly report']]).toString('base64') });
      await agent.ok('upload_file', { kb_id: kb.kb_id, filename: `${prefix}data.bin`, content_base64: Buffer.from([0, 1, 2, 255]).toString('base64') });
      await agent.ok('write_file', { kb_id: kb.kb_id, path: `${prefix}notes.md`, mode: 'create', content: '# Notes\n' });
      const listed = await agent.ok<ListWire>('list_files', { kb_id: kb.kb_id, path_prefix: prefix });
      assert.deepStrictEqual(
        listed.files.map((f) => [f.path, f.kind, f.description_source]),
        [
          [`${prefix}data.bin`, 'asset', undefined],
          [`${prefix}described.png`, 'asset', 'writer'],
          [`${prefix}notes.md`, 'text', undefined],
          [`${prefix}plain.png`, 'asset', 'none'],
          [`${prefix}report.pdf`, 'asset', 'extracted'],
        ],
      );
      const resource = await agent.client.readResource({ uri: `atmina://kb/${kb.kb_id}/files` });
      const first = resource.contents[0];
      const page = JSON.parse(first !== undefined && 'text' in first ? String(first.text) : '{}') as ListWire;
      assert.equal(page.files.find((f) => f.path === `${prefix}described.png`)?.description_source, 'writer');
    });
  });
}
