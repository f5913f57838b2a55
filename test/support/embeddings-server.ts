import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/*
 * A small OpenAI-compatible embeddings server for the tests: POST /v1/embeddings with
 * `{ model, input, dimensions }` answers `{ data: [{ index, embedding }] }`. The vectors are
 * deterministic: each word (lower-cased letters and digits, after a synonym table maps it to
 * its group's word) is hashed into one of `dimensions` buckets and counted, and the counts are
 * scaled to unit length, so texts sharing words (or synonyms) are near and texts sharing none
 * are orthogonal. It can be told to fail, to be slow, or to answer vectors of another length,
 * and it counts requests and keeps every text it embedded.
 */

export type EmbeddingsMode = 'ok' | 'fail' | 'slow' | 'wrong-length';

export interface EmbeddingsServerOptions {
  readonly dimensions: number;
  /** Words embedded as the same word: each list's words all map to its first. */
  readonly synonyms?: readonly (readonly string[])[];
  /** A Bearer token the server requires. */
  readonly key?: string;
}

/** Words that carry no meaning here, so two texts are not near by them alone. */
const STOP = new Set(['a', 'an', 'and', 'are', 'for', 'in', 'is', 'it', 'of', 'on', 'the', 'to', 'we', 'with', 'md']);

export class EmbeddingsServer {
  readonly #server: Server;
  readonly #dimensions: number;
  readonly #synonyms = new Map<string, string>();
  readonly #key: string | undefined;
  #url = '';
  /** How the server answers from now on. */
  mode: EmbeddingsMode = 'ok';
  /** How long a 'slow' answer waits. */
  slowMs = 5_000;
  /** Requests answered (or failed) so far. */
  requests = 0;
  /** Every text embedded, in order. */
  readonly texts: string[] = [];

  private constructor(options: EmbeddingsServerOptions) {
    this.#dimensions = options.dimensions;
    this.#key = options.key;
    for (const group of options.synonyms ?? []) for (const word of group) this.#synonyms.set(word, group[0] ?? word);
    this.#server = createServer((request, response) => void this.#handle(request, response));
  }

  static async start(options: EmbeddingsServerOptions): Promise<EmbeddingsServer> {
    const server = new EmbeddingsServer(options);
    await new Promise<void>((resolve) => server.#server.listen(0, '127.0.0.1', resolve));
    server.#url = `http://127.0.0.1:${(server.#server.address() as AddressInfo).port}/v1`;
    return server;
  }

  /** The base URL, for KGW_EMBEDDINGS_URL. */
  get url(): string {
    return this.#url;
  }

  /** The gateway environment that uses this server. */
  env(extra: Record<string, string> = {}): Record<string, string> {
    return {
      KGW_EMBEDDINGS_URL: this.#url,
      KGW_EMBEDDINGS_MODEL: 'test-hash',
      KGW_EMBEDDINGS_DIMENSIONS: String(this.#dimensions),
      ...(this.#key === undefined ? {} : { KGW_EMBEDDINGS_KEY: this.#key }),
      ...extra,
    };
  }

  /** How many texts embedded contain `part`. */
  embedded(part: string): number {
    return this.texts.filter((t) => t.includes(part)).length;
  }

  /** The vector of a text, as the server computes it. */
  vector(text: string): number[] {
    const counts = new Array<number>(this.#dimensions).fill(0);
    for (const raw of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
      if (STOP.has(raw)) continue;
      const word = this.#synonyms.get(raw) ?? raw;
      const bucket = createHash('sha256').update(word).digest().readUInt32BE(0) % this.#dimensions;
      counts[bucket] = (counts[bucket] ?? 0) + 1;
    }
    const norm = Math.sqrt(counts.reduce((s, x) => s + x * x, 0));
    // A text without words gets a fixed direction of its own, never a zero vector.
    if (norm === 0) return counts.map((_, i) => (i === 0 ? 1 : 0));
    return counts.map((x) => x / norm);
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    this.requests += 1;
    const send = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    if (request.method !== 'POST' || request.url !== '/v1/embeddings') return send(404, { error: { message: 'not found' } });
    if (this.#key !== undefined && request.headers.authorization !== `Bearer ${this.#key}`) return send(401, { error: { message: 'bad key' } });
    if (this.mode === 'fail') return send(500, { error: { message: 'the model is not loaded' } });
    if (this.mode === 'slow') await new Promise((resolve) => setTimeout(resolve, this.slowMs));
    let input: unknown;
    try {
      input = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { input?: unknown }).input;
    } catch {
      return send(400, { error: { message: 'not JSON' } });
    }
    if (!Array.isArray(input) || input.some((t) => typeof t !== 'string' || t === ''))
      return send(400, { error: { message: 'input must be non-empty strings' } });
    const texts = input as string[];
    this.texts.push(...texts);
    const data = texts.map((text, index) => ({
      object: 'embedding',
      index,
      embedding: this.mode === 'wrong-length' ? [...this.vector(text), 0] : this.vector(text),
    }));
    if (!response.destroyed) send(200, { object: 'list', data, model: 'test-hash' });
  }
}
