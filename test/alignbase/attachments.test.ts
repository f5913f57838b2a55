import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { blobKey } from '../../connectors/blob/contract.ts';
import { S3BlobStore } from '../../connectors/blob/s3.ts';
import { storeFiles } from '../../src/alignbase/context/manifests.ts';
import { createKnowledge as insertKnowledge } from '../../src/alignbase/context/knowledge.ts';
import { validateAttachments } from '../../src/alignbase/context/skill-package.ts';
import { storeBackends } from '../support/stores.ts';
import type { Agent } from './support.ts';
import { ATTACHMENT_CHUNK, SKILL_MD, Suite, assertShape, b64, backendLabel, createSkill, route, snapshot } from './support.ts';

type Chunk = { data_base64: string; offset: number; next_offset: number; size: number; eof: boolean; media_type: string; version_id: string };
type SkillRead = { version: number; version_id: string; attachments: { path: string; media_type: string; size: number; digest_encoding: string }[] };

const KiB = 1024;
const MiB = 1024 * KiB;
const CHUNK = 256 * KiB;

for (const backend of storeBackends()) {
  describe(`Alignbase read_context_attachment on ${backendLabel(backend)}`, () => {
    let suite: Suite;
    let admin: Agent;
    before(async () => {
      suite = await Suite.open(backend);
      admin = await suite.agent('admin-bot');
    });
    after(async () => {
      await suite?.close();
    });

    /** Reads a whole attachment chunk by chunk, checking every chunk; returns the bytes and the chunks. */
    async function download(
      agent: Agent,
      args: { context_type: string; context_id: string; version: number | string; path: string },
    ): Promise<{ bytes: Buffer; chunks: Chunk[] }> {
      const chunks: Chunk[] = [];
      let offset = 0;
      for (;;) {
        const chunk = await agent.ok<Chunk>('read_context_attachment', { ...args, offset });
        assertShape('read_context_attachment', chunk, ATTACHMENT_CHUNK);
        const data = Buffer.from(chunk.data_base64, 'base64');
        assert.equal(chunk.data_base64, data.toString('base64'), 'canonical base64');
        assert.equal(chunk.offset, offset);
        assert.ok(data.length <= CHUNK, `a chunk holds at most 256 KiB, got ${data.length}`);
        assert.equal(chunk.next_offset, offset + data.length);
        assert.equal(chunk.eof, chunk.next_offset === chunk.size);
        chunks.push(chunk);
        if (chunk.eof) break;
        assert.ok(data.length > 0, 'progress before eof');
        offset = chunk.next_offset;
      }
      for (const chunk of chunks) {
        assert.equal(chunk.version_id, chunks[0]?.version_id, 'version_id stays the same across chunks');
        assert.equal(chunk.size, chunks[0]?.size);
        assert.equal(chunk.media_type, chunks[0]?.media_type);
      }
      return { bytes: Buffer.concat(chunks.map((c) => Buffer.from(c.data_base64, 'base64'))), chunks };
    }

    it('round-trips a 2 MiB random binary in 256 KiB chunks, bytes identical, on the version’s own version_id', async () => {
      const binary = randomBytes(2 * MiB);
      const text = Buffer.from('# Notes\n\nSmall text file.\n');
      const name = suite.unique('binary');
      const created = await createSkill(admin, name, {
        attachments: [
          { path: 'assets/blob.bin', data_base64: b64(binary) },
          { path: 'notes.md', data_base64: b64(text) },
        ],
      });
      const read = await admin.ok<SkillRead>('read_skill', { skill_id: created.skill_id, version: 1 });
      assert.deepEqual(read.attachments, [
        { path: 'assets/blob.bin', media_type: 'application/octet-stream', size: 2 * MiB, digest_encoding: 'binary' },
        { path: 'notes.md', media_type: 'text/markdown', size: text.length, digest_encoding: 'text' },
      ]);

      const { bytes, chunks } = await download(admin, { context_type: 'skill', context_id: created.skill_id, version: 1, path: 'assets/blob.bin' });
      assert.equal(chunks.length, 8);
      assert.deepEqual(
        chunks.map((c) => c.offset),
        [0, 1, 2, 3, 4, 5, 6, 7].map((n) => n * CHUNK),
      );
      assert.deepEqual(
        chunks.map((c) => c.eof),
        [false, false, false, false, false, false, false, true],
      );
      assert.ok(chunks.every((c) => c.version_id === created.version_id && c.size === 2 * MiB && c.media_type === 'application/octet-stream'));
      assert.ok(bytes.equals(binary), 'the bytes are identical');

      // From an offset that is not a chunk boundary; the version as a numeric string.
      const middle = await admin.ok<Chunk>('read_context_attachment', {
        context_type: 'skill',
        context_id: created.skill_id,
        version: '1',
        path: 'assets/blob.bin',
        offset: 2 * MiB - 1000,
      });
      assert.partialDeepStrictEqual(middle, { offset: 2 * MiB - 1000, next_offset: 2 * MiB, eof: true });
      assert.ok(Buffer.from(middle.data_base64, 'base64').equals(binary.subarray(2 * MiB - 1000)));
      // At the very end: empty and eof.
      const end = await admin.ok<Chunk>('read_context_attachment', {
        context_type: 'skill',
        context_id: created.skill_id,
        version: 1,
        path: 'assets/blob.bin',
        offset: 2 * MiB,
      });
      assert.partialDeepStrictEqual(end, { data_base64: '', offset: 2 * MiB, next_offset: 2 * MiB, eof: true });

      const small = await download(admin, { context_type: 'skill', context_id: created.skill_id, version: 1, path: 'notes.md' });
      assert.equal(small.chunks.length, 1);
      assert.partialDeepStrictEqual(small.chunks[0], { media_type: 'text/markdown', offset: 0, eof: true });
      assert.ok(small.bytes.equals(text));

      // Offset omitted is 0.
      const first = await admin.ok<Chunk>('read_context_attachment', { context_type: 'skill', context_id: created.skill_id, version: 1, path: 'notes.md' });
      assert.equal(first.offset, 0);

      if (suite.s3) {
        // With S3 configured, the bytes are in the bucket under their SHA-256.
        const blob = suite.running.gateway.services.blob;
        assert.ok(blob instanceof S3BlobStore);
        const info = await blob.head(blobKey(createHash('sha256').update(binary).digest('hex')));
        assert.equal(info?.size, 2 * MiB);
      }
    });

    it('serves exact versions only, each with its own files, and refuses unknown paths and offsets past the end', async () => {
      const name = suite.unique('versions');
      const created = await createSkill(admin, name, { attachments: [{ path: 'v1.md', data_base64: b64('first') }] });
      const second = await admin.ok<{ version_id: string }>('write_skill', {
        skill_id: created.skill_id,
        expected_version: 1,
        skill_md: SKILL_MD(name),
        attachments: [{ path: 'v2.md', data_base64: b64('second!') }],
      });
      const id = created.skill_id;
      const get = (version: unknown, path: string, extra: Record<string, unknown> = {}) => ({ context_type: 'skill', context_id: id, version, path, ...extra });
      assert.equal(Buffer.from((await admin.ok<Chunk>('read_context_attachment', get(1, 'v1.md'))).data_base64, 'base64').toString(), 'first');
      const v2 = await admin.ok<Chunk>('read_context_attachment', get(2, 'v2.md'));
      assert.deepEqual(
        { data: Buffer.from(v2.data_base64, 'base64').toString(), version_id: v2.version_id, size: v2.size },
        { data: 'second!', version_id: second.version_id, size: 7 },
      );

      const snap = await snapshot(suite.db, suite.tenantId);
      const cases: [Record<string, unknown>, string][] = [
        [get('latest', 'v2.md'), 'version must be an exact positive version number'],
        [get('published', 'v2.md'), 'version must be an exact positive version number'],
        [get(0, 'v2.md'), 'version must be an exact positive version number'],
        [get(-1, 'v2.md'), 'version must be an exact positive version number'],
        [get('1.5', 'v2.md'), 'version must be an exact positive version number'],
        [get(3, 'v2.md'), 'skill version not found'],
        [get(1, 'v2.md'), 'attachment not found'],
        [get(2, 'v1.md'), 'attachment not found'],
        [get(2, 'SKILL.md'), 'attachment not found'],
        [get(2, 'V2.md'), 'attachment not found'],
        [get(2, 'v2.md', { offset: 8 }), 'offset must not exceed the attachment size (7)'],
        [get(2, 'v2.md', { offset: 10 * MiB }), 'offset must not exceed the attachment size (7)'],
        [get(2, 'v2.md', { offset: -1 }), 'offset must be a non-negative integer'],
        [{ ...get(2, 'v2.md'), context_type: 'document' }, 'context_type must be knowledge, skill, or artifact'],
        [{ ...get(2, 'v2.md'), context_id: 'not-an-id' }, 'invalid skill_id'],
        [{ ...get(2, 'v2.md'), context_type: 'knowledge' }, 'Knowledge not found'],
        [{ ...get(2, 'v2.md'), context_id: '3f2e1d0c-9b8a-4765-8432-10fedcba9876' }, 'skill not found'],
      ];
      for (const [args, text] of cases) assert.equal(await admin.fail('read_context_attachment', args), text, JSON.stringify(args));
      assert.equal(await (await suite.agent('outsider-bot')).fail('read_context_attachment', get(1, 'v1.md')), 'skill not found');
      assert.deepEqual(await snapshot(suite.db, suite.tenantId), snap);

      // A Viewer reads any exact version, the old ones included.
      const viewer = await suite.agent('viewer-bot', 'context.read');
      assert.equal(Buffer.from((await viewer.ok<Chunk>('read_context_attachment', get(1, 'v1.md'))).data_base64, 'base64').toString(), 'first');
    });

    it('lets a route-only reader fetch only the current published version', async () => {
      const name = suite.unique('routed-files');
      const created = await createSkill(admin, name, { attachments: [{ path: 'f.md', data_base64: b64('one') }] });
      const id = created.skill_id;
      await admin.ok('publish_skill', { skill_id: id });
      await admin.ok('write_skill', { skill_id: id, expected_version: 1, skill_md: SKILL_MD(name), attachments: [{ path: 'f.md', data_base64: b64('two') }] });
      await suite.access({ routes: [route(`skill:${name}`, 'routed-bot')] });
      const routed = await suite.agent('routed-bot', 'context.read');
      const get = (version: number) => ({ context_type: 'skill', context_id: id, version, path: 'f.md' });

      const published = await routed.ok<SkillRead>('read_skill', { skill_id: id, version: 'published' });
      assert.deepEqual(
        published.attachments.map((a) => a.path),
        ['f.md'],
      );
      assert.equal(Buffer.from((await routed.ok<Chunk>('read_context_attachment', get(published.version))).data_base64, 'base64').toString(), 'one');
      assert.equal(await routed.fail('read_context_attachment', get(2)), 'forbidden');

      // Once version 2 is published, version 1 is no longer the routed package.
      await admin.ok('publish_skill', { skill_id: id, version: 2 });
      assert.equal(Buffer.from((await routed.ok<Chunk>('read_context_attachment', get(2))).data_base64, 'base64').toString(), 'two');
      assert.equal(await routed.fail('read_context_attachment', get(1)), 'forbidden');
      // Access is checked on every call: without the route, nothing.
      await suite.access({ dropRoutes: [route(`skill:${name}`, 'routed-bot')] });
      assert.equal(await routed.fail('read_context_attachment', get(2)), 'skill not found');
    });

    it('serves Knowledge attachments the same way, and a content write keeps them', async () => {
      // Knowledge gets files from an accepted proposal; made here with the core's own functions.
      const files = validateAttachments([{ path: 'refs/table.csv', data_base64: b64('a,b\n1,2\n') }], { errorPrefix: 'invalid attachments: ' });
      const manifest = await storeFiles(suite.running.gateway.services.blob, files);
      const title = suite.unique('With files');
      const adminId = await suite.principalId('admin-bot');
      const created = await suite.db.tx((tx) =>
        insertKnowledge(tx, suite.tenantId, {
          title,
          content: 'See the table.',
          authority: 'informational',
          createdBy: adminId,
          publish: true,
          attachments: manifest,
        }),
      );
      const id = created.id;
      const get = (version: unknown) => ({ context_type: 'knowledge', context_id: id, version, path: 'refs/table.csv' });

      const chunk = await admin.ok<Chunk>('read_context_attachment', get(1));
      assert.deepEqual(
        {
          data: Buffer.from(chunk.data_base64, 'base64').toString(),
          media_type: chunk.media_type,
          size: chunk.size,
          eof: chunk.eof,
          version_id: chunk.version_id,
        },
        { data: 'a,b\n1,2\n', media_type: 'text/csv', size: 8, eof: true, version_id: created.versionId },
      );
      assert.equal(await admin.fail('read_context_attachment', { ...get(1), context_id: 'x' }), 'invalid knowledge_id');
      assert.equal(await admin.fail('read_context_attachment', get(2)), 'Knowledge version not found');

      // write_knowledge replaces the content; the files stay with the Knowledge.
      const written = await admin.ok<{ version: number; version_id: string }>('write_knowledge', {
        knowledge_id: id,
        expected_version: 1,
        content: 'See the table, again.',
      });
      const again = await admin.ok<Chunk>('read_context_attachment', get(2));
      assert.deepEqual(
        { data: Buffer.from(again.data_base64, 'base64').toString(), version_id: again.version_id },
        { data: 'a,b\n1,2\n', version_id: written.version_id },
      );

      // Route-only: the published version (1) only.
      await suite.access({ routes: [route(`knowledge:${title}`, 'routed-bot')] });
      const routed = await suite.agent('routed-bot', 'context.read');
      assert.equal((await routed.ok<Chunk>('read_context_attachment', get(1))).version_id, created.versionId);
      assert.equal(await routed.fail('read_context_attachment', get(2)), 'forbidden');
      assert.equal(await (await suite.agent('outsider-bot')).fail('read_context_attachment', get(1)), 'Knowledge not found');
    });
  });
}
