import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { S3Config } from '../../src/config.ts';
import { KgwError, isKgwError } from '../../src/kernel/errors.ts';
import type { Probe } from '../probe.ts';
import {
  MAX_PRESIGNED_PUT_BYTES,
  STAGING_COLLECT_MAX,
  VerifyingStream,
  base64ToHex,
  blobKey,
  hashStream,
  hexToBase64,
  isKeyPrefix,
  parseBlobKey,
  parseStagingKey,
  resolveRange,
  stagedExpired,
  stagingKey,
  toReadable,
  validatePresign,
  validatePut,
} from './contract.ts';
import type { BlobInfo, BlobListEntry, BlobStore, ByteRange, PresignInput, PresignedPut, PutInput, StagedUpload } from './contract.ts';
import { s3Probe } from './probe.ts';

export interface S3BlobStoreOptions {
  /** Metadata calls (head, delete, list page, presign); default 30 s. */
  readonly timeoutMs?: number;
  /** A whole PUT or the wait for a GET's first byte; default 15 min. */
  readonly transferTimeoutMs?: number;
  readonly maxPresignedBytes?: number;
  /** Prepended to every key, e.g. `kgw/`; default none. */
  readonly keyPrefix?: string;
}

/** Headers a presigned PUT signs: S3 refuses a request whose values differ. */
const SIGNED_HEADERS = new Set(['content-length', 'content-type', 'x-amz-checksum-sha256']);

/**
 * Blobs in an S3 bucket (AWS, MinIO, ...). Each PUT carries Content-Length and
 * x-amz-checksum-sha256 so the store verifies the bytes itself; the gateway hashes them too,
 * so a wrong stream fails fast and as `content_integrity`. A presigned PUT goes to its own
 * `staging/<expiry>-<id>` object; promoteUpload copies it to the content address inside the
 * bucket once its checksum is the ticket's. Staged objects that nobody confirmed are removed by
 * collectStaged; a lifecycle rule expiring `staging/` after 8 days is a good second net.
 */
export class S3BlobStore implements BlobStore {
  readonly client: S3Client;
  readonly health: Probe;
  readonly #bucket: string;
  readonly #timeoutMs: number;
  readonly #transferTimeoutMs: number;
  readonly #maxPresignedBytes: number;
  readonly #prefix: string;

  constructor(config: S3Config, options: S3BlobStoreOptions = {}) {
    this.#bucket = config.bucket;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#transferTimeoutMs = options.transferTimeoutMs ?? 15 * 60_000;
    this.#maxPresignedBytes = options.maxPresignedBytes ?? MAX_PRESIGNED_PUT_BYTES;
    this.#prefix = options.keyPrefix ?? '';
    this.client = new S3Client({
      region: config.region,
      endpoint: config.endpoint,
      forcePathStyle: config.endpoint !== undefined,
      credentials: config.accessKeyId && config.secretAccessKey ? { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey } : undefined,
      // Only the checksums we set: no CRC32 of an empty body in presigned URLs.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
    this.health = s3Probe(config);
  }

  #objectKey(key: string): string {
    parseBlobKey(key);
    return this.#prefix + key;
  }

  async put(input: PutInput): Promise<BlobInfo> {
    validatePut(input);
    const key = blobKey(input.sha256);
    const body = toReadable(input.body);
    let failure: unknown;
    try {
      if ((await this.head(key))?.size === input.size) {
        // Already stored: still check the caller's bytes, but upload nothing.
        await hashInto(body, input);
        return { key, size: input.size, sha256: input.sha256 };
      }
      // Checked here as they pass, and by S3 against ChecksumSHA256: wrong bytes are never stored.
      const verified = new VerifyingStream(input);
      // The SDK does not end a request whose body fails: abort it, so S3 never commits a partial object.
      const abort = new AbortController();
      verified.once('error', (error: unknown) => {
        failure ??= error;
        abort.abort(error);
      });
      body.once('error', (error: unknown) => verified.destroy(error instanceof Error ? error : new Error(String(error))));
      body.pipe(verified);
      await this.client.send(
        new PutObjectCommand({
          Bucket: this.#bucket,
          Key: this.#objectKey(key),
          Body: verified,
          ContentLength: input.size,
          ChecksumSHA256: hexToBase64(input.sha256),
          ContentType: 'application/octet-stream',
        }),
        { abortSignal: AbortSignal.any([abort.signal, AbortSignal.timeout(this.#transferTimeoutMs)]) },
      );
      if (failure !== undefined) throw mapError(failure, key);
      return { key, size: input.size, sha256: input.sha256 };
    } catch (error) {
      if (!body.destroyed) body.destroy();
      throw mapError(failure ?? error, key);
    }
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    const objectKey = this.#objectKey(key);
    let header: string | undefined;
    if (range?.start !== undefined || range?.end !== undefined) {
      const info = await this.head(key);
      if (info === undefined) throw new KgwError('not_found', 'no such blob', { details: { key } });
      const { start, end } = resolveRange(range, info.size);
      header = `bytes=${start}-${end}`;
    }
    return this.#getObject(objectKey, key, header);
  }

  /** An object's bytes (or a range), waiting at most the transfer bound for the first byte. */
  async #getObject(objectKey: string, key: string, range?: string): Promise<Readable> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new KgwError('unavailable', 'the blob store timed out')), this.#transferTimeoutMs);
    try {
      const output = await this.client.send(new GetObjectCommand({ Bucket: this.#bucket, Key: objectKey, Range: range }), { abortSignal: controller.signal });
      if (!(output.Body instanceof Readable)) throw new KgwError('unavailable', 'the blob store returned no body');
      return output.Body;
    } catch (error) {
      throw mapError(error, key);
    } finally {
      clearTimeout(timer);
    }
  }

  async head(key: string): Promise<{ size: number } | undefined> {
    try {
      const output = await this.client.send(new HeadObjectCommand({ Bucket: this.#bucket, Key: this.#objectKey(key) }), this.#signal());
      return { size: output.ContentLength ?? 0 };
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw mapError(error, key);
    }
  }

  async delete(key: string): Promise<void> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: this.#objectKey(key) }), this.#signal());
    } catch (error) {
      if (!isMissing(error)) throw mapError(error, key);
    }
  }

  async *list(prefix: string): AsyncIterable<BlobListEntry> {
    if (!isKeyPrefix(prefix)) throw new KgwError('validation', 'not a blob key prefix');
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.#bucket, Prefix: this.#prefix + prefix, ContinuationToken: token }),
        this.#signal(),
      );
      for (const item of page.Contents ?? []) {
        const key = item.Key?.slice(this.#prefix.length);
        if (key === undefined || !/^sha256\/[0-9a-f]{2}\/[0-9a-f]{2}\/[0-9a-f]{64}$/.test(key)) continue;
        yield { key, size: item.Size ?? 0 };
      }
      token = page.IsTruncated === true ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
  }

  async presignPut(input: PresignInput): Promise<PresignedPut> {
    validatePresign(input, this.#maxPresignedBytes);
    const checksum = hexToBase64(input.sha256);
    const issued = Date.now();
    const expires = Math.floor(issued / 1000) + input.expiresInSeconds;
    const key = stagingKey(expires);
    const url = await getSignedUrl(
      this.client,
      new PutObjectCommand({
        Bucket: this.#bucket,
        Key: this.#stagedObjectKey(key),
        ContentLength: input.size,
        ContentType: input.contentType,
        ChecksumSHA256: checksum,
      }),
      {
        expiresIn: input.expiresInSeconds,
        signableHeaders: SIGNED_HEADERS,
        unhoistableHeaders: new Set(['x-amz-checksum-sha256']),
        signingDate: new Date(issued),
      },
    );
    return {
      url,
      method: 'PUT',
      headers: { 'content-length': String(input.size), 'content-type': input.contentType, 'x-amz-checksum-sha256': checksum },
      expiresAt: new Date(expires * 1000).toISOString(),
      key,
      size: input.size,
      sha256: input.sha256,
    };
  }

  #stagedObjectKey(key: string): string {
    parseStagingKey(key);
    return this.#prefix + key;
  }

  async promoteUpload(ticket: StagedUpload): Promise<BlobInfo> {
    validatePut(ticket);
    const staged = this.#stagedObjectKey(ticket.key);
    let output;
    try {
      output = await this.client.send(new HeadObjectCommand({ Bucket: this.#bucket, Key: staged, ChecksumMode: 'ENABLED' }), this.#signal());
    } catch (error) {
      if (isMissing(error)) throw new KgwError('not_found', 'nothing was uploaded', { details: { key: ticket.key } });
      throw mapError(error, ticket.key);
    }
    const size = output.ContentLength ?? 0;
    // S3 keeps the SHA-256 it verified on upload (the presigned PUT signs it); without one, hash the bytes.
    let sha256: string | undefined;
    if (size === ticket.size) {
      sha256 =
        output.ChecksumSHA256 !== undefined && output.ChecksumType !== 'COMPOSITE'
          ? base64ToHex(output.ChecksumSHA256)
          : (await hashStream(await this.#getObject(staged, ticket.key))).sha256;
    }
    if (sha256 !== ticket.sha256) {
      await this.discardStaged(ticket.key);
      throw new KgwError('content_integrity', 'the stored bytes do not match', { details: { key: ticket.key } });
    }
    const key = blobKey(ticket.sha256);
    if ((await this.head(key))?.size !== ticket.size) {
      // A copy inside the bucket; the staged object stays until the confirmation is done with it.
      try {
        await this.client.send(
          new CopyObjectCommand({
            Bucket: this.#bucket,
            Key: this.#objectKey(key),
            CopySource: `${this.#bucket}/${encodeURIComponent(staged).replaceAll('%2F', '/')}`,
            ChecksumAlgorithm: 'SHA256',
            ContentType: 'application/octet-stream',
            MetadataDirective: 'REPLACE',
          }),
          this.#signal(this.#transferTimeoutMs),
        );
      } catch (error) {
        throw mapError(error, key);
      }
    }
    return { key, size: ticket.size, sha256: ticket.sha256 };
  }

  async discardStaged(key: string): Promise<void> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: this.#stagedObjectKey(key) }), this.#signal());
    } catch (error) {
      if (!isMissing(error)) throw mapError(error, key);
    }
  }

  /** Staged objects only: a PUT to S3 leaves no temporary object behind. */
  async collectStaged(): Promise<number> {
    // One page: keys sort by their expiry, so the expired ones come first.
    const page = await this.client.send(
      new ListObjectsV2Command({ Bucket: this.#bucket, Prefix: `${this.#prefix}staging/`, MaxKeys: STAGING_COLLECT_MAX }),
      this.#signal(),
    );
    let removed = 0;
    for (const item of page.Contents ?? []) {
      const key = item.Key?.slice(this.#prefix.length);
      let expires: number;
      try {
        expires = parseStagingKey(key);
      } catch {
        continue;
      }
      if (!stagedExpired(expires, Date.now())) break;
      await this.discardStaged(key ?? '');
      removed += 1;
    }
    return removed;
  }

  close(): Promise<void> {
    this.client.destroy();
    return Promise.resolve();
  }

  #signal(timeoutMs = this.#timeoutMs): { abortSignal: AbortSignal } {
    return { abortSignal: AbortSignal.timeout(timeoutMs) };
  }
}

async function hashInto(body: Readable, expected: { size: number; sha256: string }): Promise<void> {
  const verified = new VerifyingStream(expected);
  await pipeline(body, verified, async (source: AsyncIterable<Buffer>) => {
    for await (const chunk of source) void chunk;
  });
}

function isMissing(error: unknown): boolean {
  return error instanceof S3ServiceException && (error.name === 'NotFound' || error.name === 'NoSuchKey' || error.$metadata.httpStatusCode === 404);
}

/** S3's answers as gateway errors: checksum and size refusals are `content_integrity`. */
function mapError(error: unknown, key: string): unknown {
  if (isKgwError(error)) return error;
  if (isMissing(error)) return new KgwError('not_found', 'no such blob', { details: { key }, cause: error });
  if (error instanceof S3ServiceException) {
    if (['BadDigest', 'XAmzContentChecksumMismatch', 'XAmzContentSHA256Mismatch', 'IncompleteBody', 'InvalidDigest'].includes(error.name)) {
      return new KgwError('content_integrity', 'the blob store refused the bytes', { details: { key }, cause: error });
    }
    if (error.name === 'InvalidRange') return new KgwError('validation', 'byte range outside the blob', { cause: error });
  }
  if (error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError')) {
    return new KgwError('unavailable', 'the blob store timed out', { cause: error });
  }
  return new KgwError('unavailable', 'the blob store failed', { cause: error });
}
