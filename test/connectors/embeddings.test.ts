import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { EmbeddingsClient, embeddableText, parseEmbeddings } from '../../connectors/embeddings/client.ts';
import type { EmbeddingsConfig } from '../../src/config.ts';
import { EmbeddingsServer } from '../support/embeddings-server.ts';

/*
 * The embeddings client (connectors/embeddings/client.ts) against the local embeddings server
 * the tests start, and its checks of an answer.
 */

const KEY = 'embeddings-secret-key';

const config = (url: string, extra: Partial<EmbeddingsConfig> = {}): EmbeddingsConfig => ({
  url,
  model: 'test-hash',
  dimensions: 16,
  apiKey: KEY,
  timeoutMs: 1000,
  batch: 2,
  maxChars: 100,
  ...extra,
});

describe('the embeddings client', () => {
  let server: EmbeddingsServer;
  before(async () => {
    server = await EmbeddingsServer.start({ dimensions: 16, key: KEY });
  });
  after(() => server.close());

  it('answers one unit vector per text, in order, over as many requests as the batch needs', async () => {
    const client = new EmbeddingsClient(config(server.url));
    const requests = server.requests;
    const texts = ['wing design', 'boundary layer', 'swept wing'];
    const vectors = await client.embed(texts);
    assert.deepEqual(
      {
        requests: server.requests - requests,
        lengths: vectors.map((v) => v.length),
        norms: vectors.map((v) => Math.round(Math.hypot(...v) * 1e6) / 1e6),
        first: [...(vectors[0] ?? [])].map((x) => Math.round(x * 1e6) / 1e6),
      },
      { requests: 2, lengths: [16, 16, 16], norms: [1, 1, 1], first: server.vector('wing design').map((x) => Math.round(x * 1e6) / 1e6) },
    );
  });

  it('cuts a text to the configured characters', async () => {
    await new EmbeddingsClient(config(server.url, { maxChars: 5 })).embed(['abcdefghij']);
    assert.equal(server.texts.at(-1), 'abcde');
  });

  it('refuses an answer of another length, naming the setting', async () => {
    server.mode = 'wrong-length';
    try {
      await assert.rejects(new EmbeddingsClient(config(server.url)).embed(['wing']), /has 17 dimensions, not 16 \(KGW_EMBEDDINGS_DIMENSIONS\)/);
    } finally {
      server.mode = 'ok';
    }
  });

  it('says what the endpoint answered when it fails, without the key', async () => {
    server.mode = 'fail';
    try {
      await assert.rejects(
        new EmbeddingsClient(config(server.url)).embed(['wing']),
        (error: Error) => /answered 500: .*the model is not loaded/.test(error.message) && !error.message.includes(KEY),
      );
    } finally {
      server.mode = 'ok';
    }
  });

  it('says so when the key is refused', async () => {
    await assert.rejects(new EmbeddingsClient(config(server.url, { apiKey: 'wrong' })).embed(['wing']), /answered 401/);
  });

  it('gives up on an endpoint slower than its timeout', async () => {
    server.mode = 'slow';
    server.slowMs = 3000;
    try {
      await assert.rejects(new EmbeddingsClient(config(server.url, { timeoutMs: 100 })).embed(['wing']), /did not answer within 100 ms/);
    } finally {
      server.mode = 'ok';
    }
  });

  it('says why an endpoint cannot be reached', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await assert.rejects(new EmbeddingsClient(config(`http://127.0.0.1:${port}/v1`)).embed(['wing']), /could not be reached: ECONNREFUSED/);
  });

  for (const [how, send] of [
    ['declared', (response: ServerResponse) => response.end(`{"data":[],"pad":"${'x'.repeat(2 * 1024 * 1024)}"}`)],
    [
      'streamed',
      (response: ServerResponse) => {
        // Written in pieces, so it goes chunked, without a length.
        for (let i = 0; i < 32; i++) response.write('x'.repeat(64 * 1024));
        response.end();
      },
    ],
  ] as const) {
    it(`refuses an answer larger than the vectors asked for could be (${how})`, async () => {
      const big = createServer((_, response) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        send(response);
      });
      await new Promise<void>((resolve) => big.listen(0, '127.0.0.1', resolve));
      try {
        const url = `http://127.0.0.1:${(big.address() as AddressInfo).port}/v1`;
        await assert.rejects(new EmbeddingsClient(config(url)).embed(['wing']), /more than the \d+ bytes expected/);
      } finally {
        big.closeAllConnections();
        await new Promise<void>((resolve) => big.close(() => resolve()));
      }
    });
  }
});

describe('an embeddings answer', () => {
  const answer = (data: unknown) => JSON.stringify({ data });
  for (const [name, body, problem] of [
    ['not JSON', 'nope', /not JSON/],
    ['without data', '{}', /no data list/],
    ['with too few vectors', answer([{ index: 0, embedding: [1, 0] }]), /1 vectors for 2 texts/],
    [
      'with a repeated index',
      answer([
        { index: 0, embedding: [1, 0] },
        { index: 0, embedding: [0, 1] },
      ]),
      /bad or repeated index/,
    ],
    [
      'with a value that is not a number',
      answer([
        { index: 0, embedding: [1, 'x'] },
        { index: 1, embedding: [0, 1] },
      ]),
      /not a finite number/,
    ],
    [
      'with a zero vector',
      answer([
        { index: 0, embedding: [0, 0] },
        { index: 1, embedding: [0, 1] },
      ]),
      /has no length/,
    ],
    [
      'with base64 instead of numbers',
      answer([
        { index: 0, embedding: 'AAAA' },
        { index: 1, embedding: [0, 1] },
      ]),
      /not a list of numbers/,
    ],
  ] as const) {
    it(`is refused ${name}`, () => {
      assert.throws(() => parseEmbeddings(body, 2, 2), problem);
    });
  }

  it('is read by its indexes, not its order', () => {
    const vectors = parseEmbeddings(
      answer([
        { index: 1, embedding: [0, 2] },
        { index: 0, embedding: [3, 0] },
      ]),
      2,
      2,
    );
    assert.deepEqual(
      vectors.map((v) => [...v]),
      [
        [1, 0],
        [0, 1],
      ],
    );
  });
});

describe('a text sent for embedding', () => {
  it('is never empty, never ends in half a surrogate pair, and is well-formed', () => {
    assert.deepEqual(
      { empty: embeddableText('  ', 10), pair: embeddableText('ab\u{1F600}', 3), lone: embeddableText('a\uDC00b', 10) },
      { empty: '.', pair: 'ab', lone: 'a\uFFFDb' },
    );
  });
});
