import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { KbWire } from '../atmina/support.ts';
import { KbSuite, assertAtminaError } from '../atmina/support.ts';
import { until } from '../support/kgw-process.ts';
import { freePort } from '../support/services.ts';
import { storeBackends } from '../support/stores.ts';

/*
 * Meilisearch goes down under a running gateway while agents keep writing: the writes commit,
 * the KB's indexing status shows the lag and the error, a search says search is unavailable,
 * and once Meilisearch is back the projection catches up exactly (the new files found, the
 * deleted one gone, the totals right). A private Meilisearch process (the shared one serves
 * other suites) is stopped and started again on the same data folder.
 */

const REPO = path.resolve(import.meta.dirname, '../..');
const BINARY = process.env.MEILI_BIN ?? path.join(REPO, '..', 'shared', 'bin', 'meilisearch');
const skip =
  process.env.KGW_TEST_MEILI_URL === undefined
    ? 'KGW_TEST_MEILI_URL is not set (eval "$(bash test/services/meilisearch.sh)")'
    : !existsSync(BINARY) && `no Meilisearch binary at ${BINARY}`;

class PrivateMeili {
  #child: ChildProcess | undefined;
  readonly url: string;
  readonly key = randomBytes(16).toString('hex');
  readonly #port: number;
  readonly #dir: string;

  private constructor(port: number, dir: string) {
    this.#port = port;
    this.#dir = dir;
    this.url = `http://127.0.0.1:${port}`;
  }

  static async start(): Promise<PrivateMeili> {
    const meili = new PrivateMeili(await freePort(), await mkdtemp(path.join(os.tmpdir(), 'kgw-meili-fault-')));
    await meili.up();
    return meili;
  }

  async up(): Promise<void> {
    const dir = this.#dir;
    this.#child = spawn(
      BINARY,
      [
        '--http-addr',
        `127.0.0.1:${this.#port}`,
        '--master-key',
        this.key,
        '--no-analytics',
        '--env',
        'development',
        '--db-path',
        `${dir}/db`,
        '--dump-dir',
        `${dir}/dumps`,
        '--snapshot-dir',
        `${dir}/snapshots`,
      ],
      { stdio: 'ignore' },
    );
    await until('Meilisearch answers', async () => ((await fetch(`${this.url}/health`).catch(() => undefined))?.ok === true ? true : undefined), 60_000, 100);
  }

  async down(): Promise<void> {
    const child = this.#child;
    if (child === undefined || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }

  async dispose(): Promise<void> {
    await this.down();
    await rm(this.#dir, { recursive: true, force: true });
  }
}

interface Status {
  indexed: boolean;
  projections: { projection: string; pending: number; failing: number; last_error: string | null }[];
}

for (const backend of storeBackends()) {
  describe(`search while Meilisearch goes down and comes back, store ${backend.name}`, { skip, timeout: 600_000 }, () => {
    let meili: PrivateMeili;
    let suite: KbSuite;
    let kb: KbWire;
    before(async () => {
      meili = await PrivateMeili.start();
      suite = await KbSuite.open(backend, { MEILI_URL: meili.url, MEILI_API_KEY: meili.key }, { projections: true });
      kb = await suite.kb();
    });
    after(async () => {
      await suite?.close();
      await meili?.dispose();
    });

    const found = async () => {
      const answer = await (await suite.agent('viewer-bot')).ok<{ results: { path: string }[]; total: number }>('search', { query: 'hangar', max_files: 50 });
      return { paths: answer.results.map((r) => r.path).sort(), total: answer.total };
    };
    const status = async () => {
      const { contents } = await (await suite.agent('viewer-bot')).client.readResource({ uri: `atmina://kb/${kb.kb_id}/indexing-status` });
      const [first] = contents;
      assert.ok(first !== undefined && 'text' in first);
      return (JSON.parse(first.text) as Status).projections.find((p) => p.projection === 'search');
    };

    it('commits writes while it is down, shows the lag, and catches up exactly', async () => {
      await suite.file(kb.kb_id, 'a.md', 'hangar a');
      const doomed = await suite.file(kb.kb_id, 'b.md', 'hangar b');
      await suite.settled();
      assert.deepEqual(await found(), { paths: ['a.md', 'b.md'], total: 2 });

      await meili.down();
      for (const name of ['c', 'd', 'e']) await suite.file(kb.kb_id, `${name}.md`, `hangar ${name}`);
      await (await suite.agent('admin-bot')).ok('delete_file', { kb_id: kb.kb_id, file_id: doomed.file_id, confirm: 'b.md' });
      const lagging = await until('the indexing status shows the failure', async () => {
        const search = await status();
        return search !== undefined && search.failing > 0 && search.last_error !== null ? search : undefined;
      });
      assert.ok(lagging.pending >= 4, `pending ${lagging.pending}`);
      assertAtminaError(await (await suite.agent('viewer-bot')).fail('search', { query: 'hangar' }), 'unavailable', 'search is unavailable');

      await meili.up();
      await suite.settled();
      assert.deepEqual(
        { found: await found(), pending: (await status())?.pending },
        { found: { paths: ['a.md', 'c.md', 'd.md', 'e.md'], total: 4 }, pending: 0 },
      );
    });
  });
}
