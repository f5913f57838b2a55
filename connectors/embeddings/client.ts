import { Readable } from 'node:stream';
import type { EmbeddingsConfig } from '../../src/config.ts';

/*
 * A client of an OpenAI-compatible embeddings endpoint (OpenAI, Azure's OpenAI-compatible
 * route, Ollama, vLLM, llama.cpp's server, text-embeddings-inference ...): POST
 * `<url>/embeddings` with `{ model, input: [...], dimensions }` and read `data[i].embedding`.
 * Plain fetch, no SDK. Every request is bounded in time (KGW_EMBEDDINGS_TIMEOUT_MS, and the
 * caller's signal) and its answer in size; an answer that is not exactly one vector of the
 * configured length per text is an error. Errors are plain Errors for the operator (the
 * projection's status, logs): the gateway never shows their text to an MCP caller, and no
 * message holds the key.
 */

/** What hybrid search and the vectors projection need of an embeddings endpoint. */
export interface Embedder {
  readonly model: string;
  readonly dimensions: number;
  /** Texts per request. */
  readonly batch: number;
  /** Characters of one text sent at most. */
  readonly maxChars: number;
  /** One unit-length vector per text, in order. */
  embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]>;
}

/** Bytes of an answer per number expected (a JSON float is at most about 25 characters), and for everything else. */
const ANSWER_BYTES_PER_NUMBER = 32;
const ANSWER_BYTES_OVERHEAD = 1024 * 1024;
/** Characters of an error answer's body quoted in the error. */
const ERROR_BODY_CHARS = 200;

export class EmbeddingsError extends Error {
  constructor(message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'EmbeddingsError';
  }
}

/** The answer's body as text, refused once it grows past `max` bytes. */
async function boundedText(response: Response, max: number): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > max) {
    await response.body?.cancel();
    throw new EmbeddingsError(`the embeddings answer is ${declared} bytes, more than the ${max} bytes expected`);
  }
  if (response.body === null) return '';
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of Readable.fromWeb(response.body)) {
    const bytes = chunk as Buffer;
    size += bytes.byteLength;
    // Throwing ends the iteration, which cancels the rest of the answer.
    if (size > max) {
      throw new EmbeddingsError(`the embeddings answer is more than the ${max} bytes expected`);
    }
    chunks.push(bytes);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The vectors of an answer body, checked: one per text, each of `dimensions` finite numbers, not all zero; scaled to unit length. */
export function parseEmbeddings(body: string, count: number, dimensions: number): Float32Array[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new EmbeddingsError('the embeddings answer is not JSON');
  }
  const data = (parsed as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) throw new EmbeddingsError('the embeddings answer has no data list');
  if (data.length !== count) throw new EmbeddingsError(`the embeddings answer has ${data.length} vectors for ${count} texts`);
  const out: (Float32Array | undefined)[] = new Array<Float32Array | undefined>(count).fill(undefined);
  data.forEach((item: unknown, position) => {
    const { index, embedding } = (item ?? {}) as { index?: unknown; embedding?: unknown };
    // OpenAI numbers the vectors; a server that does not is read in order.
    const at = index === undefined ? position : index;
    if (typeof at !== 'number' || !Number.isInteger(at) || at < 0 || at >= count || out[at] !== undefined)
      throw new EmbeddingsError(`the embeddings answer's vector ${position} has a bad or repeated index`);
    if (!Array.isArray(embedding)) throw new EmbeddingsError(`the embeddings answer's vector ${position} is not a list of numbers`);
    if (embedding.length !== dimensions)
      throw new EmbeddingsError(`the embeddings answer's vector ${position} has ${embedding.length} dimensions, not ${dimensions} (KGW_EMBEDDINGS_DIMENSIONS)`);
    const vector = new Float32Array(dimensions);
    let norm = 0;
    for (let i = 0; i < dimensions; i++) {
      const x: unknown = embedding[i];
      if (typeof x !== 'number' || !Number.isFinite(x))
        throw new EmbeddingsError(`the embeddings answer's vector ${position} holds a value that is not a finite number`);
      vector[i] = x;
      norm += x * x;
    }
    if (norm === 0 || !Number.isFinite(norm)) throw new EmbeddingsError(`the embeddings answer's vector ${position} has no length`);
    const scale = 1 / Math.sqrt(norm);
    for (let i = 0; i < dimensions; i++) vector[i] = (vector[i] ?? 0) * scale;
    out[at] = vector;
  });
  return out.map((v) => v ?? new Float32Array(dimensions));
}

/** A text as sent: well-formed, at most `max` characters (not ending in half a pair), never empty (endpoints refuse ''). */
export function embeddableText(text: string, max: number): string {
  let cut = text.length > max ? text.slice(0, max) : text;
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
  cut = cut.toWellFormed();
  return cut.trim() === '' ? '.' : cut;
}

export class EmbeddingsClient implements Embedder {
  readonly #config: EmbeddingsConfig;
  readonly #endpoint: string;

  constructor(config: EmbeddingsConfig) {
    this.#config = config;
    this.#endpoint = `${config.url}/embeddings`;
  }

  get model(): string {
    return this.#config.model;
  }

  get dimensions(): number {
    return this.#config.dimensions;
  }

  get batch(): number {
    return this.#config.batch;
  }

  get maxChars(): number {
    return this.#config.maxChars;
  }

  async embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += this.#config.batch) out.push(...(await this.#request(texts.slice(i, i + this.#config.batch), signal)));
    return out;
  }

  async #request(texts: readonly string[], signal: AbortSignal | undefined): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    const { model, dimensions, apiKey, timeoutMs, maxChars } = this.#config;
    const timeout = AbortSignal.timeout(timeoutMs);
    const bound = signal === undefined ? timeout : AbortSignal.any([signal, timeout]);
    const body = JSON.stringify({ model, input: texts.map((t) => embeddableText(t, maxChars)), dimensions });
    let response: Response;
    try {
      response = await fetch(this.#endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', ...(apiKey === undefined ? {} : { authorization: `Bearer ${apiKey}` }) },
        body,
        signal: bound,
        redirect: 'error',
      });
      const text = await boundedText(response, texts.length * dimensions * ANSWER_BYTES_PER_NUMBER + ANSWER_BYTES_OVERHEAD);
      if (!response.ok) {
        const quoted = this.#redact(text.replace(/\s+/g, ' ').trim().slice(0, ERROR_BODY_CHARS));
        throw new EmbeddingsError(`the embeddings endpoint ${this.#endpoint} answered ${response.status}${quoted === '' ? '' : `: ${quoted}`}`);
      }
      return parseEmbeddings(text, texts.length, dimensions);
    } catch (error) {
      if (error instanceof EmbeddingsError) throw error;
      if (timeout.aborted) throw new EmbeddingsError(`the embeddings endpoint ${this.#endpoint} did not answer within ${timeoutMs} ms`, error);
      if (signal?.aborted === true) throw new EmbeddingsError('the embeddings request was given up by its caller', error);
      // fetch's TypeError hides the reason (ECONNREFUSED, ENOTFOUND ...) in its cause.
      let cause: unknown = error;
      while (cause instanceof Error && cause.cause instanceof Error) cause = cause.cause;
      const code = (cause as { code?: unknown } | undefined)?.code;
      const reason = typeof code === 'string' ? code : cause instanceof Error ? cause.message : String(cause);
      throw new EmbeddingsError(`the embeddings endpoint ${this.#endpoint} could not be reached: ${this.#redact(reason)}`, error);
    }
  }

  /** Text with the key taken out, should an endpoint echo it. */
  #redact(text: string): string {
    const key = this.#config.apiKey;
    return key === undefined || key.length < 4 ? text : text.replaceAll(key, '***');
  }
}
