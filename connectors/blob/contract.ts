import { createHash, randomBytes } from 'node:crypto';
import { Readable, Transform } from 'node:stream';
import type { TransformCallback } from 'node:stream';
import { KgwError } from '../../src/kernel/errors.ts';
import type { Probe } from '../probe.ts';

/**
 * The blob store: file bytes, content-addressed by SHA-256. Postgres holds the metadata;
 * the bytes are stored here first ("bytes before metadata"), so a row never points at
 * missing bytes. Keys are `sha256/ab/cd/<64 hex>`; callers never choose them.
 */
export interface BlobStore {
  /**
   * Stores bytes whose size and SHA-256 the caller declares. The bytes are streamed and
   * checked while they are written; a mismatch throws `content_integrity` and leaves nothing
   * behind. Storing a blob that already exists is a no-op (the bytes are still checked).
   */
  put(input: PutInput): Promise<BlobInfo>;
  /** The bytes of a blob, or the inclusive byte range `start`..`end`; `not_found` when absent. */
  get(key: string, range?: ByteRange): Promise<Readable>;
  /** The size of a blob, or undefined when it does not exist. */
  head(key: string): Promise<{ readonly size: number } | undefined>;
  /** Removes a blob; removing a missing blob is not an error. */
  delete(key: string): Promise<void>;
  /** Every blob whose key starts with `prefix` (a prefix of the key layout, e.g. `sha256/ab/`). */
  list(prefix: string): AsyncIterable<BlobListEntry>;
  /**
   * A URL a client PUTs the exact bytes to, with every returned header. The store itself
   * refuses other bytes, another size, and an expired URL. The bytes land in a staging object of
   * this ticket's own (`key`, a staging key), never at the content address: only promoteUpload,
   * after checking them, makes them a blob. So a confirmation proves that this ticket delivered
   * the bytes, and a blob that exists already (another tenant's file) grants nothing.
   */
  presignPut(input: PresignInput): Promise<PresignedPut>;
  /**
   * Checks the object a presigned PUT staged (its size and SHA-256 must be the ticket's) and
   * makes its bytes the blob of that SHA-256 (kept as it is when it exists already). The staged
   * object stays until discardStaged, so a confirmation that dies before it catalogues the file
   * can be repeated. `not_found` when nothing was staged, `content_integrity` when the bytes do
   * not match (the staged object is removed).
   */
  promoteUpload(ticket: StagedUpload): Promise<BlobInfo>;
  /** Removes a staged object (a staging key); removing a missing one is not an error. */
  discardStaged(key: string): Promise<void>;
  /**
   * Removes what no live upload can still use: staged objects whose URL expired more than
   * STAGING_GRACE_SECONDS ago, and (disk) temporary files of writes that died: untouched for
   * `tempsIdleMs` (default TEMP_IDLE_MS; 0 when the caller holds the data folder alone, as an
   * embedded gateway does at start, so every temporary file is a dead write's). Bounded work per
   * call (STAGING_COLLECT_MAX objects); returns how many it removed.
   */
  collectStaged(options?: { readonly tempsIdleMs?: number }): Promise<number>;
  /** Whether the backend answers (the readiness probe). */
  readonly health: Probe;
  close(): Promise<void>;
}

export interface PutInput {
  readonly body: Buffer | Readable;
  readonly size: number;
  /** Lower-case hex SHA-256 of the bytes. */
  readonly sha256: string;
}

export interface BlobInfo {
  readonly key: string;
  readonly size: number;
  readonly sha256: string;
}

export interface ByteRange {
  readonly start?: number;
  /** Inclusive, as in an HTTP Range header. */
  readonly end?: number;
}

export interface BlobListEntry {
  readonly key: string;
  readonly size: number;
}

export interface PresignInput {
  readonly size: number;
  readonly sha256: string;
  readonly contentType: string;
  readonly expiresInSeconds: number;
}

/** What promoteUpload checks a staged object against: the ticket's staging key, size and SHA-256. */
export interface StagedUpload {
  readonly key: string;
  readonly size: number;
  /** Lower-case hex SHA-256 of the bytes. */
  readonly sha256: string;
}

export interface PresignedPut {
  readonly url: string;
  readonly method: 'PUT';
  /** Every header the PUT must carry, exactly (Content-Length, Content-Type, x-amz-checksum-sha256). */
  readonly headers: Readonly<Record<string, string>>;
  /** ISO 8601. */
  readonly expiresAt: string;
  /** The staging key the bytes land at: `staging/<expiry in seconds>-<32 random hex>`. */
  readonly key: string;
  readonly size: number;
  readonly sha256: string;
}

/** Single PUT ceiling of presigned uploads (the Atmina spec's 100 MiB). */
export const MAX_PRESIGNED_PUT_BYTES = 100 * 1024 * 1024;
/** Longest validity of a presigned URL (S3's limit for SigV4). */
export const MAX_PRESIGN_SECONDS = 7 * 24 * 3600;

/** How long after its URL expired a staged object may still be promoted (a confirmation's lease, with room). */
export const STAGING_GRACE_SECONDS = 3600;
/**
 * How long a temporary file must be untouched to be a dead write's: a live write keeps writing
 * it, and a request that stalls is ended within the 5-minute whole-request bound.
 */
export const TEMP_IDLE_MS = 10 * 60_000;
/** Objects collectStaged removes at most in one call. */
export const STAGING_COLLECT_MAX = 1000;

const HEX64 = /^[0-9a-f]{64}$/;
const STAGING_KEY = /^staging\/([0-9]{10})-([0-9a-f]{32})$/;
const KEY = /^sha256\/([0-9a-f]{2})\/([0-9a-f]{2})\/([0-9a-f]{64})$/;

export function isSha256Hex(value: unknown): value is string {
  return typeof value === 'string' && HEX64.test(value);
}

/** The key of the blob with this SHA-256. */
export function blobKey(sha256: string): string {
  if (!isSha256Hex(sha256)) throw new KgwError('validation', 'sha256 must be 64 lower-case hex digits');
  return `sha256/${sha256.slice(0, 2)}/${sha256.slice(2, 4)}/${sha256}`;
}

/** The whole of the blob with this SHA-256, in memory: for files whose size is bounded by their kind. */
export async function readBlobBytes(blob: BlobStore, sha256: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await blob.get(blobKey(sha256))) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The SHA-256 a key names; `validation` for anything that is not exactly a blob key. */
export function parseBlobKey(key: unknown): string {
  const match = typeof key === 'string' ? KEY.exec(key) : null;
  const [, ab, cd, hex] = match ?? [];
  if (hex === undefined || hex.slice(0, 2) !== ab || hex.slice(2, 4) !== cd) {
    throw new KgwError('validation', 'not a blob key (sha256/ab/cd/<64 hex>)');
  }
  return hex;
}

/** The staging key of a presigned PUT that expires at `expires` (seconds since the epoch): `id` is 32 hex, fresh by default. */
export function stagingKey(expires: number, id = randomBytes(16).toString('hex')): string {
  return `staging/${String(expires).padStart(10, '0')}-${id}`;
}

/** When a staging key's URL expires (seconds since the epoch); `validation` for anything that is not exactly a staging key. */
export function parseStagingKey(key: unknown): number {
  const match = typeof key === 'string' ? STAGING_KEY.exec(key) : null;
  if (match?.[1] === undefined) throw new KgwError('validation', 'not a staging key (staging/<expiry>-<32 hex>)');
  return Number(match[1]);
}

/** Whether a staged object may go: its URL expired more than the grace ago. */
export const stagedExpired = (expires: number, nowMs: number): boolean => (expires + STAGING_GRACE_SECONDS) * 1000 < nowMs;

/** Whether `prefix` can start a blob key: `''`, `sha2`, `sha256/a`, `sha256/ab/cd/abcd`, ... */
export function isKeyPrefix(prefix: unknown): prefix is string {
  if (typeof prefix !== 'string') return false;
  if (prefix.length <= 7) return 'sha256/'.startsWith(prefix);
  const rest = prefix.slice(7);
  const m = /^([0-9a-f]{0,2})(?:\/([0-9a-f]{0,2})(?:\/([0-9a-f]{0,64}))?)?$/.exec(rest);
  if (m === null) return false;
  const [, ab = '', cd, hex] = m;
  if (cd !== undefined && ab.length !== 2) return false;
  if (hex !== undefined && cd?.length !== 2) return false;
  if (hex !== undefined) {
    const n = Math.min(4, hex.length);
    if (hex.slice(0, n) !== (ab + (cd ?? '')).slice(0, n)) return false;
  }
  return true;
}

export function validatePut(input: { size: number; sha256: string }): void {
  if (!Number.isSafeInteger(input.size) || input.size < 0) throw new KgwError('validation', 'size must be a whole number of bytes');
  if (!isSha256Hex(input.sha256)) throw new KgwError('validation', 'sha256 must be 64 lower-case hex digits');
}

export function validatePresign(input: PresignInput, maxBytes: number): void {
  validatePut(input);
  if (input.size > maxBytes) throw new KgwError('payload_too_large', `a presigned PUT carries at most ${maxBytes} bytes`);
  if (!Number.isInteger(input.expiresInSeconds) || input.expiresInSeconds < 1 || input.expiresInSeconds > MAX_PRESIGN_SECONDS) {
    throw new KgwError('validation', `expiresInSeconds must be 1 to ${MAX_PRESIGN_SECONDS}`);
  }
  // A header value: visible ASCII, as a MIME type is.
  if (!/^[\x21-\x7e][\x20-\x7e]{0,254}$/.test(input.contentType)) throw new KgwError('validation', 'contentType is not a MIME type');
}

/** Validates a range against a size; returns inclusive bounds, or throws `validation`. */
export function resolveRange(range: ByteRange | undefined, size: number): { start: number; end: number } {
  if (range?.start === undefined && range?.end === undefined) return { start: 0, end: size - 1 };
  const start = range.start ?? 0;
  const end = Math.min(range.end ?? size - 1, size - 1);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(range.end ?? 0) || start < 0 || start >= size || end < start) {
    throw new KgwError('validation', 'byte range outside the blob', { details: { size } });
  }
  return { start, end };
}

export const hexToBase64 = (hex: string): string => Buffer.from(hex, 'hex').toString('base64');
export const base64ToHex = (b64: string): string => Buffer.from(b64, 'base64').toString('hex');

export function toReadable(body: Buffer | Readable): Readable {
  return Buffer.isBuffer(body) ? Readable.from([body]) : body;
}

/**
 * Passes bytes through while counting and hashing them. Fails as soon as more than `size`
 * bytes arrive, and at the end when the count or the SHA-256 differ: `content_integrity`.
 */
export class VerifyingStream extends Transform {
  readonly #hash = createHash('sha256');
  readonly #size: number;
  readonly #sha256: string;
  #seen = 0;

  constructor(expected: { size: number; sha256: string }) {
    super();
    this.#size = expected.size;
    this.#sha256 = expected.sha256;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.#seen += chunk.length;
    if (this.#seen > this.#size) {
      callback(new KgwError('content_integrity', `more bytes than the declared size ${this.#size}`, { details: { expectedSize: this.#size } }));
      return;
    }
    this.#hash.update(chunk);
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    if (this.#seen !== this.#size) {
      callback(
        new KgwError('content_integrity', `got ${this.#seen} bytes, declared ${this.#size}`, { details: { expectedSize: this.#size, actualSize: this.#seen } }),
      );
      return;
    }
    const actual = this.#hash.digest('hex');
    if (actual !== this.#sha256) {
      callback(
        new KgwError('content_integrity', 'the bytes do not match the declared SHA-256', { details: { expectedSha256: this.#sha256, actualSha256: actual } }),
      );
      return;
    }
    callback();
  }
}

/** Hashes a stream without keeping it; returns its size and SHA-256. */
export async function hashStream(stream: Readable): Promise<{ size: number; sha256: string }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of stream) {
    const buf = chunk as Buffer;
    size += buf.length;
    hash.update(buf);
  }
  return { size, sha256: hash.digest('hex') };
}
