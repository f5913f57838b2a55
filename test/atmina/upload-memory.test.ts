import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CliStore } from '../cli/support.ts';
import { cliStoreBackends, writeIn } from '../cli/support.ts';
import type { KgwProcess } from '../support/kgw-process.ts';
import { callOk, closeAll, createTokenCli, kgwOk, mcpClient, startKgw, until } from '../support/kgw-process.ts';

/*
 * A 100 MiB upload to the disk blob store's own upload route, against a real `kgw serve`: the
 * body is streamed to disk while it is hashed, so what the gateway holds live stays far below
 * the upload. The gateway runs with its inspector on a loopback port, and the test asks it
 * through the inspector protocol to collect garbage and report its memory, so garbage a lazy
 * collector has not reclaimed yet is not counted (the RSS would count it) and nothing in the
 * gateway exists only for this test.
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

/** A client of a process's inspector (the Chrome DevTools protocol over its WebSocket). */
class Inspector {
  readonly #socket: WebSocket;
  readonly #waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  #next = 1;

  private constructor(socket: WebSocket) {
    this.#socket = socket;
    socket.addEventListener('message', (event: MessageEvent) => {
      const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: { message: string } };
      const waiting = message.id === undefined ? undefined : this.#waiting.get(message.id);
      if (waiting === undefined || message.id === undefined) return;
      this.#waiting.delete(message.id);
      if (message.error === undefined) waiting.resolve(message.result);
      else waiting.reject(new Error(message.error.message));
    });
  }

  static async connect(url: string): Promise<Inspector> {
    const socket = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener('open', () => resolve(), { once: true });
      socket.addEventListener('error', () => reject(new Error(`no inspector at ${url}`)), { once: true });
    });
    return new Inspector(socket);
  }

  call(method: string, params: Record<string, unknown> = {}): Promise<unknown> {
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      this.#socket.send(JSON.stringify({ id, method, params }));
    });
  }

  /** The process's live memory after a full collection: its V8 heap and its Buffers. */
  async live(): Promise<{ heap: number; buffers: number }> {
    await this.call('HeapProfiler.collectGarbage');
    const answer = (await this.call('Runtime.evaluate', {
      expression: 'JSON.stringify(process.memoryUsage())',
      returnByValue: true,
    })) as { result: { value: string } };
    const usage = JSON.parse(answer.result.value) as { heapUsed: number; arrayBuffers: number };
    return { heap: usage.heapUsed, buffers: usage.arrayBuffers };
  }

  close(): void {
    this.#socket.close();
  }
}

const embedded = cliStoreBackends().find((backend) => backend.name === 'embedded');

describe('a 100 MiB upload to the disk store', { skip: process.platform !== 'linux' || embedded === undefined }, () => {
  let store: CliStore;
  let gateway: KgwProcess;
  let inspector: Inspector;
  const clients: Client[] = [];
  before(async () => {
    store = await (embedded as NonNullable<typeof embedded>).open();
    await kgwOk(['apply', await writeIn(store.workDir, 'org.yaml', ORG)], store.env);
    // Port 0: the inspector picks a free loopback port and names it on stderr.
    gateway = await startKgw({ ...store.env, NODE_OPTIONS: `${store.env.NODE_OPTIONS ?? ''} --inspect=127.0.0.1:0`.trim() });
    const url = await until('the gateway’s inspector URL', () =>
      Promise.resolve(/Debugger listening on (ws:\/\/127\.0\.0\.1:\d+\/[\w-]+)/.exec(gateway.output().stderr)?.[1]),
    );
    inspector = await Inspector.connect(url);
  });
  after(async () => {
    inspector?.close();
    await closeAll(clients);
    await gateway?.stop();
    await store?.dispose();
  });

  it('is streamed with what the gateway holds live bounded, then confirmed', async () => {
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

    // Every 8 MiB sent, the body waits while the gateway's live memory is read: by then the
    // gateway has received nearly all of it (what is in flight is the sockets' few buffers).
    const base = await inspector.live();
    const peak = { heap: 0, buffers: 0 };
    let samples = 0;
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (sent > 0 && sent % 8 === 0) {
          const now = await inspector.live();
          samples += 1;
          peak.heap = Math.max(peak.heap, now.heap - base.heap);
          peak.buffers = Math.max(peak.buffers, now.buffers - base.buffers);
        }
        if (sent === 100) controller.close();
        else {
          sent += 1;
          controller.enqueue(new Uint8Array(block));
        }
      },
    });
    const init: RequestInit & { duplex: 'half' } = { method: 'PUT', headers: upload.headers, body, duplex: 'half' };
    const response = await fetch(upload.url, init);
    assert.deepStrictEqual({ status: response.status, samples }, { status: 200, samples: 12 });
    // Streaming holds a few 64 KiB chunks at a time (well under 1 MiB is measured); 16 MiB
    // leaves room for what the gateway's own work allocates meanwhile (a log line, the rate
    // limiter, the used-ticket file), while a store that kept a quarter of what it receives, in
    // its heap or in Buffers, would hold 24 MiB by the last sample (96 MiB sent) and fail.
    assert.ok(peak.heap < 16 * MiB, `the gateway's live heap grew by ${(peak.heap / MiB).toFixed(1)} MiB`);
    assert.ok(peak.buffers < 16 * MiB, `the gateway's live Buffers grew by ${(peak.buffers / MiB).toFixed(1)} MiB`);

    const confirmed = await callOk<{ results: { ok: boolean; kind: string; size_bytes: number; sha256: string }[] }>(client, 'confirm_uploads', {
      kb_id: kb.kb_id,
      batch_token: batch.batch_token,
    });
    assert.partialDeepStrictEqual(confirmed.results[0], { ok: true, kind: 'asset', size_bytes: 100 * MiB, sha256: digest });
  });
});
