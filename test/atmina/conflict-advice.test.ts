import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { refuseUpload } from '../../src/atmina/kb/upload-refusals.ts';
import { atminaErrors } from '../../src/atmina/dialect/errors.ts';
import { CONFLICT_ADVICE } from '../../src/mcp/errors.ts';
import { BUSY_ADVICE } from '../../src/mcp/retry-advice.ts';
import type { ToolDef } from '../../src/mcp/tool.ts';
import { storeBackends } from '../support/stores.ts';
import { KbSuite, backendLabel, sha256 } from './support.ts';

/*
 * Which conflicts carry the advice to wait and retry (src/mcp/retry-advice.ts), through the MCP
 * SDK's client over HTTP: only a write that lost a race with another writer. A conflict the
 * caller must resolve itself answers with its one text, as the spec says: reread and reapply,
 * "do not blindly retry".
 */

interface Texts {
  readonly isError: boolean;
  readonly texts: readonly string[];
}

for (const backend of storeBackends()) {
  describe(`Atmina conflict advice on ${backendLabel(backend)}`, () => {
    let suite: KbSuite;
    before(async () => {
      suite = await KbSuite.open(backend);
    });
    after(async () => {
      await suite?.close();
    });

    async function answer(agent: string, tool: string, args: Record<string, unknown>): Promise<Texts> {
      const result = await (await suite.agent(agent)).call(tool, args);
      return { isError: result.isError === true, texts: result.content.map((c) => (c.type === 'text' ? c.text : `<${c.type}>`)) };
    }

    it('follows a stale if_match (another writer saved first) with the advice to back off with jitter', async () => {
      const kb = await suite.kb();
      const file = await suite.file(kb.kb_id, 'a.md', 'one');
      await (await suite.agent('editor-bot')).ok('write_file', { kb_id: kb.kb_id, path: 'a.md', mode: 'overwrite', content: 'two' });
      const stale = await answer('editor-bot', 'write_file', { kb_id: kb.kb_id, path: 'a.md', mode: 'overwrite', content: 'three', if_match: file.sha256 });
      assert.deepEqual(stale, {
        isError: true,
        texts: [
          'conflict: the file changed since you read it: if_match is not the current SHA-256; read the file again and reapply your edit',
          CONFLICT_ADVICE,
        ],
      });
    });

    it('gives no retry advice for a path that exists on create', async () => {
      const kb = await suite.kb();
      await suite.file(kb.kb_id, 'a.md', 'one');
      assert.deepEqual(await answer('editor-bot', 'write_file', { kb_id: kb.kb_id, path: 'a.md', mode: 'create', content: 'two' }), {
        isError: true,
        texts: ['conflict: a file already exists at "a.md"; read it and write with mode overwrite, append or patch'],
      });
    });

    it('gives no retry advice for a move whose target exists', async () => {
      const kb = await suite.kb();
      const moved = await suite.file(kb.kb_id, 'a.md', 'one');
      await suite.file(kb.kb_id, 'b.md', 'two');
      const refused = await answer('editor-bot', 'move_file', { kb_id: kb.kb_id, file_id: moved.file_id, to_path: 'b.md' });
      assert.equal(refused.isError, true);
      assert.equal(refused.texts.length, 1, refused.texts.join('\n'));
      assert.match(refused.texts[0] ?? '', /^conflict: /);
    });

    it('gives no retry advice for a slug that is taken', async () => {
      const taken = await suite.kb();
      const refused = await answer('admin-bot', 'create_kb', { name: 'Another', team: 'docs', slug: taken.slug });
      assert.equal(refused.isError, true);
      assert.equal(refused.texts.length, 1, refused.texts.join('\n'));
      assert.match(refused.texts[0] ?? '', /^conflict: /);
    });

    it('gives no retry advice for an apply whose preview is stale', async () => {
      const kb = await suite.kb();
      await suite.file(kb.kb_id, 'guides/a.md', '# A\n');
      const refused = await answer('editor-bot', 'generate_hub_index', {
        kb_id: kb.kb_id,
        folder: 'guides',
        operation: 'apply',
        sha256: sha256('not the preview'),
      });
      assert.equal(refused.isError, true);
      assert.equal(refused.texts.length, 1, refused.texts.join('\n'));
      assert.match(refused.texts[0] ?? '', /^conflict: the Knowledge Base's files changed since the preview/);
    });
  });
}

describe('Atmina busy refusals', () => {
  it('follow an upload batch another call is confirming with the advice to wait with jitter, not the lost-race advice', () => {
    const reply = atminaErrors.fromError({ name: 'confirm_uploads' } as ToolDef, refuseUpload.batchBusy());
    assert.deepEqual(reply, {
      text: 'conflict: this batch is being confirmed by another call; retry confirm_uploads in a few seconds for its result',
      notes: [BUSY_ADVICE],
    });
  });
});
