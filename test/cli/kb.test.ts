import assert from 'node:assert/strict';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { RebuildOutcome } from '../../src/admin/ops.ts';
import type { CliStore, Served } from './support.ts';
import { cliStoreBackends, kgw, lines, lookedIn, serveWithClient } from './support.ts';

/**
 * kgw kb (list, show, restore), kgw files get and kgw reindex, while kgw serve holds the store (so the
 * embedded store goes through the gateway's admin endpoint). The KBs and files come in through
 * the real Atmina tools.
 */

// Escapes a terminal would act on: files get must give them back exactly when not on a terminal.
const CONTENT = '# Runbook\n\nStep \u001b[31mone\u001b[0m.\n';

interface KbJson {
  tenant: string;
  kb_id: string;
  slug: string;
  team: string;
  visibility: string;
  files: number;
  bytes: number;
  archived_at: string | null;
}

for (const backend of cliStoreBackends()) {
  describe(`kgw kb and kgw files on ${backend.name}`, () => {
    let store: CliStore;
    let gateway: Served;
    let client: Client;
    let kbId: string;
    const run = (...args: string[]) => kgw(args, store.env);
    const json = async <T>(...args: string[]): Promise<T> => {
      const result = await run(...args, '--json');
      assert.equal(result.code, 0, result.stderr);
      return JSON.parse(result.stdout) as T;
    };
    const tool = async (name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> => {
      const result = await client.callTool({ name, arguments: args });
      assert.notEqual(result.isError, true, JSON.stringify(result.content));
      return result.structuredContent as Record<string, unknown>;
    };

    before(async () => {
      store = await backend.open();
      ({ gateway, client } = await serveWithClient(store));
      kbId = String((await tool('create_kb', { name: 'Runbooks', team: 'docs' })).kb_id);
      await tool('write_file', { kb_id: kbId, path: 'ops/runbook.md', mode: 'create', content: CONTENT });
      const gone = String((await tool('create_kb', { name: 'Old notes', team: 'docs' })).kb_id);
      await tool('delete_kb', { kb_id: gone, confirm: 'old-notes' });
    });
    after(async () => {
      await client?.close();
      await gateway?.stop();
      await store?.dispose();
    });

    it('lists the live KBs with their files and bytes', async () => {
      const kbs = await json<KbJson[]>('kb', 'list');
      assert.deepEqual(
        kbs.map((kb) => ({ tenant: kb.tenant, slug: kb.slug, team: kb.team, files: kb.files, bytes: kb.bytes, archived: kb.archived_at !== null })),
        [{ tenant: 'acme', slug: 'runbooks', team: 'docs', files: 1, bytes: Buffer.byteLength(CONTENT), archived: false }],
      );
    });

    it('lists the archived KBs too with --archived, as a table without --json', async () => {
      const result = await run('kb', 'list', '--tenant', 'acme', '--archived');
      assert.equal(result.code, 0, result.stderr);
      const [header, ...rows] = lines(result.stdout);
      assert.match(header ?? '', /^TENANT +SLUG +ID +TEAM +VISIBILITY +FILES +BYTES +STATE +NAME$/);
      assert.deepEqual(
        rows.map((row) =>
          row
            .split(/ +/)
            .slice(0, 2)
            .concat(row.split(/ +/)[7] ?? ''),
        ),
        [
          ['acme', 'old-notes', 'archived'],
          ['acme', 'runbooks', 'live'],
        ],
      );
    });

    it('shows one KB by slug or id', async () => {
      const bySlug = await json<KbJson>('kb', 'show', 'runbooks');
      assert.partialDeepStrictEqual(bySlug, { tenant: 'acme', kb_id: kbId, slug: 'runbooks', visibility: 'team', files: 1, archived_at: null });
      assert.deepEqual(await json<KbJson>('kb', 'show', kbId), bySlug);
    });

    it('refuses a KB the tenant does not have', async () => {
      const result = await run('kb', 'show', 'nothing', '--tenant', 'acme');
      assert.deepEqual(
        { code: result.code, stderr: result.stderr },
        { code: 1, stderr: `kgw: no Knowledge Base "nothing" in tenant "acme"${lookedIn(store)}\n` },
      );
    });

    it('restores an archived KB, and its tools see it again', async () => {
      const restored = await json<{ restored: boolean; slug: string }>('kb', 'restore', 'old-notes');
      assert.deepEqual({ restored: restored.restored, slug: restored.slug }, { restored: true, slug: 'old-notes' });
      const listed = (await client.callTool({ name: 'list_kbs', arguments: {} })).structuredContent as { kbs: { slug: string }[] };
      assert.ok(listed.kbs.some((kb) => kb.slug === 'old-notes'));
      const again = await run('kb', 'restore', 'old-notes');
      assert.deepEqual({ code: again.code, stdout: again.stdout }, { code: 0, stdout: 'old-notes in acme is not archived; nothing changed\n' });
    });

    it('writes a file’s exact bytes to stdout', async () => {
      const result = await run('files', 'get', 'runbooks', 'ops/runbook.md');
      assert.deepEqual({ code: result.code, stdout: result.stdout }, { code: 0, stdout: CONTENT });
    });

    it('writes a file’s bytes to --out, private to its owner', async () => {
      const out = path.join(store.workDir, 'runbook.md');
      const result = await run('files', 'get', kbId, 'ops/runbook.md', '--out', out);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(await readFile(out, 'utf8'), CONTENT);
      if (process.platform !== 'win32') assert.equal((await stat(out)).mode & 0o777, 0o600);
    });

    it('refuses a path the KB does not have, and a path no file can have', async () => {
      const missing = await run('files', 'get', 'runbooks', 'ops/none.md');
      assert.equal(missing.code, 1);
      assert.match(missing.stderr, /^kgw: no file "ops\/none.md"/);
      const hostile = await run('files', 'get', 'runbooks', '../etc/passwd');
      assert.equal(hostile.code, 1);
      assert.match(hostile.stderr, /path: must not have \. or \.\. segments/);
    });

    it('kgw reindex --graph counts each live file of a live KB, and none of an archived one', async () => {
      const graphCount = async (): Promise<number> =>
        (await json<RebuildOutcome>('reindex', '--graph')).rebuilt.find((r) => r.projection === 'graph')?.enqueued ?? -1;
      const before = await graphCount();
      const kb = String((await tool('create_kb', { name: 'Reindexed', team: 'docs' })).kb_id);
      for (const name of ['one.md', 'two.md']) await tool('write_file', { kb_id: kb, path: name, mode: 'create', content: name });
      const withFiles = await graphCount();
      const text = await run('reindex', '--graph');
      await tool('delete_kb', { kb_id: kb, confirm: 'reindexed' });
      assert.deepStrictEqual(
        { withFiles: withFiles - before, stdout: text.stdout, archived: (await graphCount()) - before },
        { withFiles: 2, stdout: `graph: cleared, ${withFiles} changes enqueued for the outbox worker\n`, archived: 0 },
      );
    });
  });
}
