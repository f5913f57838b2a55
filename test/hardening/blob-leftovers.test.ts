import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, utimes } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { CliStore, Served } from '../cli/support.ts';
import { cliStoreBackends, writeIn } from '../cli/support.ts';
import { callOk, closeAll, createTokenCli, kgwOk, mcpClient, startKgw, until } from '../support/kgw-process.ts';

/*
 * What kill -9 leaves in the disk blob store goes at the next start: the temporary file of a
 * PUT cut off mid-body (every one at once on the embedded store, whose data folder the starting
 * gateway holds alone; those untouched for ten minutes with an external database), while a
 * staged upload whose URL is still valid stays and is confirmed after the restart.
 */

const ORG = `
tenant: crash
name: Crash
people:
  - { email: owner@crash.test, name: Owner }
agents:
  - { name: uploader, owner: owner@crash.test }
teams:
  - slug: docs
    name: Docs
    members: { uploader: admin }
`;

interface Ticket {
  path: string;
  url: string;
  headers: Record<string, string>;
}

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** Starts a PUT of `declared` bytes to the ticket's URL (on the gateway at `base`) and sends only `sent` of them. */
function partialPut(base: string, ticket: Ticket, sent: Buffer): void {
  const url = new URL(ticket.url);
  const request = httpRequest(new URL(`${url.pathname}${url.search}`, base), { method: 'PUT', headers: ticket.headers, agent: false });
  request.on('error', () => undefined);
  request.write(sent);
}

async function put(base: string, ticket: Ticket, body: Buffer): Promise<number> {
  const url = new URL(ticket.url);
  const response = await fetch(new URL(`${url.pathname}${url.search}`, base), { method: 'PUT', headers: ticket.headers, body });
  await response.arrayBuffer();
  return response.status;
}

const temps = (dataDir: string) => path.join(dataDir, 'blobs', '.tmp');
const tempFiles = async (dataDir: string) => (existsSync(temps(dataDir)) ? (await readdir(temps(dataDir))).filter((n) => n.startsWith('.tmp-')) : []);

for (const backend of cliStoreBackends()) {
  describe(`blob leftovers of kill -9 on the ${backend.name} store`, { timeout: 120_000 }, () => {
    let store: CliStore;
    let gateway: Served | undefined;
    let token: string;

    before(async () => {
      store = await backend.open();
      await kgwOk(['apply', await writeIn(store.workDir, 'org.yaml', ORG)], store.env);
      token = await createTokenCli(store.env, 'crash', 'uploader', 'context.read context.write');
    });
    after(async () => {
      await gateway?.kill9();
      await store?.dispose();
    });

    it('removes the temporary file of a PUT cut off by kill -9 at the next start, and keeps a staged upload', async () => {
      gateway = await startKgw(store.env);
      const client = await mcpClient(`${gateway.url}/atmina/mcp`, token);
      const whole = randomBytes(64 * 1024);
      const cut = randomBytes(4 * 1024 * 1024);
      let kbId: string;
      let batch: { batch_token: string; uploads: Ticket[] };
      try {
        kbId = (await callOk<{ kb_id: string }>(client, 'create_kb', { name: 'Crash uploads', team: 'docs' })).kb_id;
        batch = await callOk(client, 'request_uploads', {
          kb_id: kbId,
          items: [
            { path: 'whole.bin', size_bytes: whole.length, sha256: sha(whole) },
            { path: 'cut.bin', size_bytes: cut.length, sha256: sha(cut) },
          ],
        });
      } finally {
        await closeAll([client]);
      }
      const [wholeTicket, cutTicket] = batch.uploads;
      assert.ok(wholeTicket !== undefined && cutTicket !== undefined);
      assert.equal(await put(gateway.url, wholeTicket, whole), 200);
      partialPut(gateway.url, cutTicket, cut.subarray(0, 1024 * 1024));
      await until('the cut PUT has its temporary file', async () => ((await tempFiles(store.dataDir)).length > 0 ? true : undefined));
      const ended = await gateway.kill9();
      assert.equal(ended.signal, 'SIGKILL');
      const left = await tempFiles(store.dataDir);
      assert.equal(left.length, 1, 'kill -9 left the temporary file');
      if (store.databaseUrl !== undefined) {
        // With an external database another process may share the folder: only a file untouched for ten minutes is a dead write's.
        const old = new Date(Date.now() - 11 * 60_000);
        await utimes(path.join(temps(store.dataDir), left[0] ?? ''), old, old);
      }

      gateway = await startKgw(store.env);
      assert.deepEqual(await tempFiles(store.dataDir), []);
      const again = await mcpClient(`${gateway.url}/atmina/mcp`, token);
      try {
        const confirmed = await callOk<{ results: { path: string; ok: boolean; code?: string }[] }>(again, 'confirm_uploads', {
          kb_id: kbId,
          batch_token: batch.batch_token,
        });
        assert.partialDeepStrictEqual(confirmed.results, [
          { path: 'whole.bin', ok: true },
          { path: 'cut.bin', ok: false, code: 'validation' },
        ]);
      } finally {
        await closeAll([again]);
      }
      await gateway.stop();
      gateway = undefined;
    });
  });
}
