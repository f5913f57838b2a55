import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { storeBackends } from '../support/stores.ts';
import type { Agent, ReadWire } from './support.ts';
import { KbSuite, backendLabel, sha256 } from './support.ts';

const WRITERS = 20;

interface Version {
  version: number;
  sha256: string;
  operation: string;
}

for (const backend of storeBackends()) {
  describe(`Atmina concurrent writers on ${backendLabel(backend)}`, () => {
    let suite: KbSuite;
    let writers: Agent[];
    before(async () => {
      suite = await KbSuite.open(backend);
      // One client each, as independent agents would be; their tokens belong to two Editors.
      writers = await Promise.all(
        Array.from({ length: WRITERS }, (_, n) => suite.connect(n % 2 === 0 ? 'editor-bot' : 'share-bot', undefined, { path: '/atmina/mcp' })),
      );
    });
    after(async () => {
      await suite?.close();
    });

    async function history(kbId: string, path: string): Promise<Version[]> {
      const { versions } = await (await suite.agent('viewer-bot')).ok<{ versions: Version[] }>('file_history', { kb_id: kbId, path, limit: 100 });
      return versions;
    }

    it('lets exactly one of 20 overwrites with the same if_match win; the others are conflicts and the history stays linear', async () => {
      const kb = await suite.kb();
      const first = await suite.file(kb.kb_id, 'race.md', 'start');
      const results = await Promise.all(
        writers.map((w, n) => w.call('write_file', { kb_id: kb.kb_id, path: 'race.md', mode: 'overwrite', content: `writer ${n}`, if_match: first.sha256 })),
      );
      const texts = results.map((r) => (r.content[0]?.type === 'text' ? r.content[0].text : ''));
      const winners = results.flatMap((r, n) => (r.isError === true ? [] : [n]));
      assert.deepEqual(
        { winners: winners.length, conflicts: texts.filter((t) => t.startsWith('conflict: the file changed since you read it')).length },
        { winners: 1, conflicts: WRITERS - 1 },
      );
      const [winner] = winners;
      assert.deepEqual(
        (await history(kb.kb_id, 'race.md')).map((v) => ({ version: v.version, sha256: v.sha256 })),
        [
          { version: 2, sha256: sha256(`writer ${winner}`) },
          { version: 1, sha256: sha256('start') },
        ],
      );
    });

    it('loses no append of 20 concurrent appenders that retry on conflict', async () => {
      const kb = await suite.kb();
      await suite.file(kb.kb_id, 'log.md', '# Log\n');
      await Promise.all(
        writers.map(async (w, n) => {
          for (let attempt = 0; ; attempt += 1) {
            const result = await w.call('write_file', { kb_id: kb.kb_id, path: 'log.md', mode: 'append', content: `- entry ${n}\n` });
            if (result.isError !== true) return;
            const text = result.content[0]?.type === 'text' ? result.content[0].text : '';
            assert.ok(text.startsWith('conflict: ') && attempt < 20, `writer ${n}: ${text}`);
            // Full jitter, as the conflict advice says.
            await sleep(Math.random() * Math.min(1000, 20 * 2 ** attempt));
          }
        }),
      );
      const { content } = await (await suite.agent('viewer-bot')).ok<ReadWire>('read_file', { kb_id: kb.kb_id, path: 'log.md' });
      const lines = content.split('\n').filter((line) => line.startsWith('- entry '));
      assert.deepEqual(new Set(lines), new Set(Array.from({ length: WRITERS }, (_, n) => `- entry ${n}`)));
      assert.equal(lines.length, WRITERS);
      const versions = await history(kb.kb_id, 'log.md');
      assert.deepEqual(
        versions.map((v) => v.version),
        Array.from({ length: WRITERS + 1 }, (_, n) => WRITERS + 1 - n),
      );
    });
  });
}
