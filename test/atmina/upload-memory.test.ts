import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CliStore } from '../cli/support.ts';
import { cliStoreBackends, writeIn } from '../cli/support.ts';
import type { KgwProcess } from '../support/kgw-process.ts';
import { callOk, closeAll, createTokenCli, kgwOk, mcpClient, startKgw } from '../support/kgw-process.ts';

/*
 * A 100 MiB upload to the disk blob store's own upload route, against a real `kgw serve`: the
 * body is streamed to disk while it is hashed, so the gateway's resident memory grows by far
 * less than the upload (read from /proc, the child's own figure, not this process's).
 */

const MiB = 1024 * 1024;
const ORG = `tenant: bigco
name: Big Co
people:
  - { email: owner@big.test, name: Owner }
agents:
  - { name: uploader, owner: owner@big.test }
teams:
  - slug: files
    name: Files
    members: { uploader: admin }
`;

async function rssOf(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
  return Number(kib) * 1024;
}

const embedded = cliStoreBackends().find((backend) => backend.name === 'embedded');

describe('a 100 MiB upload to the disk store', { skip: process.platform !== 'linux' || embedded === undefined }, () => {
  let store: CliStore;
  let gateway: KgwProcess;
  const clients: Client[] = [];
  before(async () => {
    store = await (embedded as NonNullable<typeof embedded>).open();
    await kgwOk(['apply', await writeIn(store.workDir, 'org.yaml', ORG)], store.env);
    gateway = await startKgw(store.env);
  });
  after(async () => {
    await closeAll(clients);
    await gateway?.stop();
    await store?.dispose();
  });

  it('is streamed with the gateway’s memory bounded, then confirmed', async () => {
    const client = await mcpClient(`${gateway.url}/atmina/mcp`, await createTokenCli(store.env, 'bigco', 'uploader', 'context.read context.write'));
    clients.push(client);
    const kb = await callOk<{ kb_id: string }>(client, 'create_kb', { name: 'Archive', team: 'files' });
    const block = Buffer.alloc(MiB, 'kgw-');
    const hash = createHash('sha256');
    for (let n = 0; n < 100; n += 1) hash.update(block);
    const digest = hash.digest('hex');
    const batch = await callOk<{ batch_token: string; uploads: { url: string; headers: Record<string, string> }[] }>(client, 'request_uploads', {
      kb_id: kb.kb_id,
      items: [{ path: 'big/archive.bin', size_bytes: 100 * MiB, sha256: digest }],
    });
    const upload = batch.uploads[0];
    assert.ok(upload !== undefined);
    assert.ok(upload.url.startsWith(`${gateway.url}/uploads/`), upload.url);

    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 100) controller.close();
        else {
          sent += 1;
          controller.enqueue(new Uint8Array(block));
        }
      },
    });
    const start = await rssOf(gateway.pid);
    let peak = start;
    const sampler = setInterval(() => {
      rssOf(gateway.pid).then(
        (rss) => (peak = Math.max(peak, rss)),
        () => undefined,
      );
    }, 20);
    let status: number;
    try {
      const init: RequestInit & { duplex: 'half' } = { method: 'PUT', headers: upload.headers, body, duplex: 'half' };
      status = (await fetch(upload.url, init)).status;
    } finally {
      clearInterval(sampler);
    }
    assert.equal(status, 200);
    // What remains is garbage, not buffering: the socket's 64 KiB chunks live outside V8's heap
    // until a collection, which V8 starts once such memory passes about 64 MiB, so the RSS rises
    // by roughly that much and then stays level however long the upload runs. A body held in
    // memory would add its whole 100 MiB.
    assert.ok(peak - start < 80 * MiB, `the gateway's RSS grew by ${Math.round((peak - start) / MiB)} MiB`);

    const confirmed = await callOk<{ results: { ok: boolean; kind: string; size_bytes: number; sha256: string }[] }>(client, 'confirm_uploads', {
      kb_id: kb.kb_id,
      batch_token: batch.batch_token,
    });
    assert.partialDeepStrictEqual(confirmed.results[0], { ok: true, kind: 'asset', size_bytes: 100 * MiB, sha256: digest });
  });
});
