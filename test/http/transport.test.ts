import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { OneShotTransport } from '../../src/mcp/transport.ts';

// The one-shot transport on its own, with a protocol stand-in that answers only what the test
// says: the order and bound of delivery, the deadline and the dropped cancellation.

const request = (id: number): JSONRPCMessage => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'x' } });
const answer = (id: number): JSONRPCMessage => ({ jsonrpc: '2.0', id, result: { content: [] } });

function connect(onRequest: (id: number, transport: OneShotTransport) => void): { transport: OneShotTransport; delivered: JSONRPCMessage[] } {
  const transport = new OneShotTransport();
  const delivered: JSONRPCMessage[] = [];
  transport.onmessage = (message) => {
    delivered.push(message);
    if ('id' in message && 'method' in message) onRequest(Number(message.id), transport);
  };
  return { transport, delivered };
}

describe('OneShotTransport', () => {
  it('runs at most `concurrency` requests at once and answers in request order', async () => {
    let running = 0;
    let most = 0;
    const { transport } = connect((id, t) => {
      running += 1;
      most = Math.max(most, running);
      setTimeout(
        () => {
          running -= 1;
          void t.send(answer(id));
        },
        10 - (id % 5),
      );
    });
    const responses = await transport.exchange(
      Array.from({ length: 20 }, (_, i) => request(i + 1)),
      { concurrency: 3, timeoutMs: 10_000 },
    );
    assert.equal(most, 3);
    assert.deepEqual(
      responses.map((r) => ('id' in r ? r.id : undefined)),
      Array.from({ length: 20 }, (_, i) => i + 1),
    );
  });

  it('answers a request still running at the deadline, and one never started, with timeout errors', async () => {
    const { transport, delivered } = connect(() => undefined);
    const responses = await transport.exchange([request(1), request(2)], { concurrency: 1, timeoutMs: 50 });
    assert.equal(delivered.length, 1);
    assert.deepEqual(responses, [
      { jsonrpc: '2.0', id: 1, error: { code: -32001, message: 'Request timed out after 50 ms; a write it made may still be applied: read before retrying' } },
      { jsonrpc: '2.0', id: 2, error: { code: -32001, message: 'Request not started: the batch ran out of time after 50 ms' } },
    ]);
  });

  it('does not pass a cancellation on, so the cancelled request is still answered', async () => {
    const { transport, delivered } = connect((id, t) => setImmediate(() => void t.send(answer(id))));
    const cancel: JSONRPCMessage = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } };
    const responses = await transport.exchange([request(1), cancel], { concurrency: 4, timeoutMs: 10_000 });
    assert.deepEqual(delivered, [request(1)]);
    assert.deepEqual(responses, [answer(1)]);
  });

  it('passes other notifications on and answers nothing for them', async () => {
    const { transport, delivered } = connect(() => undefined);
    const note: JSONRPCMessage = { jsonrpc: '2.0', method: 'notifications/initialized' };
    assert.deepEqual(await transport.exchange([note], { concurrency: 4, timeoutMs: 10_000 }), []);
    assert.deepEqual(delivered, [note]);
  });
});
