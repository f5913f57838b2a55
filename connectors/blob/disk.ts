import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { copyFile, link, mkdir, open, readdir, readFile, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { KgwError } from '../../src/kernel/errors.ts';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../../src/store/private-dir.ts';
import type { Probe } from '../probe.ts';
import { diskProbe } from './probe.ts';
import {
  MAX_PRESIGNED_PUT_BYTES,
  STAGING_COLLECT_MAX,
  TEMP_IDLE_MS,
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

export interface DiskBlobStoreOptions {
  /** KGW_DATA_DIR: blobs live in `<dataDir>/blobs`, the upload secret in `<dataDir>/upload-secret`. */
  readonly dataDir: string;
  /** The gateway's public URL; presigned PUTs go to `<publicUrl>/uploads/<ticket>`. */
  readonly publicUrl: string;
  readonly maxPresignedBytes?: number;
  /** Milliseconds since the epoch; tests move time. */
  readonly now?: () => number;
}

/** What `PUT /uploads/<ticket>` hands the store: the request's headers and its body stream. */
export interface UploadRequest {
  readonly contentLength: string | undefined;
  readonly contentType: string | undefined;
  /** `x-amz-checksum-sha256`: base64 SHA-256, as S3 takes it. */
  readonly checksumSha256: string | undefined;
  readonly body: Readable;
}

/** The receiving end of the gateway's own presigned URLs. */
export interface UploadReceiver {
  receiveUpload(ticket: string, request: UploadRequest): Promise<BlobInfo>;
}

interface Ticket {
  /** SHA-256 hex. */
  readonly h: string;
  /** Size in bytes. */
  readonly s: number;
  /** Content type. */
  readonly c: string;
  /** Expiry, seconds since the epoch. */
  readonly e: number;
  /** Random id, 32 hex: the single-use record and the staging key `staging/<e>-<n>`. */
  readonly n: string;
}

const TICKET = /^v1\.([A-Za-z0-9_-]{1,2048})\.([A-Za-z0-9_-]{43})$/;

/**
 * Blobs as files under `<dataDir>/blobs/sha256/ab/cd/<hex>`. Each write goes to a temporary
 * file in `blobs/.tmp/`, is hashed while streaming, fsynced and renamed into place, so a blob
 * file is always complete; a temporary file a killed process left is collected at the next
 * start (collectStaged). A presigned PUT lands in `blobs/staging/<expiry>-<id>`, its ticket's
 * own file, and becomes a blob only through promoteUpload (a hard link, or a copy). Like everything in the data folder, folders are created
 * 0700 and files 0600 (tenants' content; src/store/private-dir.ts). Presigned PUTs are
 * HMAC-signed tickets served by `PUT /uploads/<ticket>` (src/atmina/http/upload-routes.ts).
 */
export class DiskBlobStore implements BlobStore, UploadReceiver {
  readonly root: string;
  readonly health: Probe;
  readonly #dataDir: string;
  readonly #publicUrl: string;
  readonly #maxPresignedBytes: number;
  readonly #now: () => number;
  #macKey: Promise<Buffer> | undefined;
  #lastPrune = 0;

  constructor(options: DiskBlobStoreOptions) {
    this.#dataDir = path.resolve(options.dataDir);
    this.root = path.join(this.#dataDir, 'blobs');
    this.#publicUrl = options.publicUrl.replace(/\/+$/, '');
    this.#maxPresignedBytes = options.maxPresignedBytes ?? MAX_PRESIGNED_PUT_BYTES;
    this.#now = options.now ?? Date.now;
    this.health = diskProbe(this.#dataDir);
  }

  #file(key: string): string {
    const hex = parseBlobKey(key);
    return path.join(this.root, 'sha256', hex.slice(0, 2), hex.slice(2, 4), hex);
  }

  async put(input: PutInput): Promise<BlobInfo> {
    validatePut(input);
    const key = blobKey(input.sha256);
    const file = this.#file(key);
    const body = toReadable(input.body);
    const existing = await statFile(file);
    if (existing !== undefined && existing.size === input.size) {
      // Already stored: still check the caller's bytes, but write nothing.
      await pipeline(body, new VerifyingStream(input), discard());
      return { key, size: input.size, sha256: input.sha256 };
    }
    await this.#write(body, input, file);
    return { key, size: input.size, sha256: input.sha256 };
  }

  /** Streams checked bytes to a temporary file, fsynced, then renamed to `file`: never a partial file at `file`. */
  async #write(body: Readable, expected: { size: number; sha256: string }, file: string): Promise<void> {
    const temp = await this.#temp();
    let renamed = false;
    try {
      // flush: the file is fsynced before it closes, so the rename never exposes partial bytes.
      await pipeline(body, new VerifyingStream(expected), createWriteStream(temp, { flags: 'wx', mode: PRIVATE_FILE_MODE, flush: true }));
      await this.#place(temp, file);
      renamed = true;
    } catch (error) {
      if (!body.destroyed) body.destroy();
      throw error;
    } finally {
      if (!renamed) await unlink(temp).catch(() => undefined);
    }
  }

  /** A fresh temporary path in `blobs/.tmp/` (same file system as the blobs, so a rename is atomic). */
  async #temp(): Promise<string> {
    const folder = path.join(this.root, '.tmp');
    await mkdir(folder, { recursive: true, mode: PRIVATE_DIR_MODE });
    return path.join(folder, `.tmp-${randomBytes(12).toString('hex')}`);
  }

  /** Renames a complete temporary file to `file`, and makes the rename durable. */
  async #place(temp: string, file: string): Promise<void> {
    const dir = path.dirname(file);
    await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    await rename(temp, file);
    await syncDir(dir);
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    const file = this.#file(key);
    const info = await statFile(file);
    if (info === undefined) throw new KgwError('not_found', 'no such blob', { details: { key } });
    const { start, end } = resolveRange(range, info.size);
    if (end < start) return createReadStream(file);
    return createReadStream(file, { start, end });
  }

  async head(key: string): Promise<{ size: number } | undefined> {
    const info = await statFile(this.#file(key));
    return info === undefined ? undefined : { size: info.size };
  }

  async delete(key: string): Promise<void> {
    await unlink(this.#file(key)).catch((error: unknown) => {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    });
  }

  async *list(prefix: string): AsyncIterable<BlobListEntry> {
    if (!isKeyPrefix(prefix)) throw new KgwError('validation', 'not a blob key prefix');
    const base = path.join(this.root, 'sha256');
    for (const ab of await dirNames(base, /^[0-9a-f]{2}$/)) {
      for (const cd of await dirNames(path.join(base, ab), /^[0-9a-f]{2}$/)) {
        const folder = path.join(base, ab, cd);
        const pre = `sha256/${ab}/${cd}/`;
        if (!pre.startsWith(prefix) && !prefix.startsWith(pre)) continue;
        for (const hex of await dirNames(folder, /^[0-9a-f]{64}$/)) {
          const key = pre + hex;
          if (!key.startsWith(prefix)) continue;
          const info = await statFile(path.join(folder, hex));
          if (info !== undefined) yield { key, size: info.size };
        }
      }
    }
  }

  async presignPut(input: PresignInput): Promise<PresignedPut> {
    validatePresign(input, this.#maxPresignedBytes);
    const expires = Math.floor(this.#now() / 1000) + input.expiresInSeconds;
    const ticket: Ticket = { h: input.sha256, s: input.size, c: input.contentType, e: expires, n: randomBytes(16).toString('hex') };
    const key = stagingKey(expires, ticket.n);
    const payload = Buffer.from(JSON.stringify(ticket)).toString('base64url');
    const mac = createHmac('sha256', await this.#key())
      .update(`v1.${payload}`)
      .digest('base64url');
    return {
      url: `${this.#publicUrl}/uploads/v1.${payload}.${mac}`,
      method: 'PUT',
      headers: { 'content-length': String(input.size), 'content-type': input.contentType, 'x-amz-checksum-sha256': hexToBase64(input.sha256) },
      expiresAt: new Date(expires * 1000).toISOString(),
      key,
      size: input.size,
      sha256: input.sha256,
    };
  }

  async receiveUpload(raw: string, request: UploadRequest): Promise<BlobInfo> {
    const ticket = await this.#openTicket(raw);
    if (request.contentLength !== String(ticket.s)) {
      throw new KgwError('validation', 'Content-Length must be the declared size', { details: { expected: ticket.s } });
    }
    if (request.checksumSha256 === undefined || base64ToHex(request.checksumSha256) !== ticket.h || hexToBase64(ticket.h) !== request.checksumSha256) {
      throw new KgwError('validation', 'x-amz-checksum-sha256 must be the declared SHA-256 in base64');
    }
    if (request.contentType !== ticket.c) throw new KgwError('validation', 'Content-Type must be the declared one');
    const claim = await this.#claim(ticket);
    try {
      await this.#write(request.body, { size: ticket.s, sha256: ticket.h }, this.#stagedFile(stagingKey(ticket.e, ticket.n)));
      return { key: blobKey(ticket.h), size: ticket.s, sha256: ticket.h };
    } catch (error) {
      // A failed attempt gives the ticket back: only a stored upload uses it up.
      await unlink(claim).catch(() => undefined);
      throw error;
    }
  }

  #stagedFile(key: string): string {
    parseStagingKey(key);
    return path.join(this.root, key);
  }

  async promoteUpload(ticket: StagedUpload): Promise<BlobInfo> {
    validatePut(ticket);
    const staged = this.#stagedFile(ticket.key);
    const info = await statFile(staged);
    if (info === undefined) throw new KgwError('not_found', 'nothing was uploaded', { details: { key: ticket.key } });
    const actual = info.size === ticket.size ? await hashStream(createReadStream(staged)) : undefined;
    if (actual?.sha256 !== ticket.sha256) {
      await this.discardStaged(ticket.key);
      throw new KgwError('content_integrity', 'the stored bytes do not match', { details: { key: ticket.key } });
    }
    const key = blobKey(ticket.sha256);
    const file = this.#file(key);
    if ((await statFile(file))?.size !== ticket.size) {
      // A second name for the staged bytes (a copy where the file system has no hard links),
      // renamed into place: the staged file stays until the confirmation is done with it.
      const temp = await this.#temp();
      try {
        await link(staged, temp).catch(async (error: unknown) => {
          if (!['EPERM', 'ENOTSUP', 'EXDEV', 'EMLINK', 'EOPNOTSUPP'].includes((error as NodeJS.ErrnoException).code ?? '')) throw error;
          await copyFile(staged, temp);
        });
        await this.#place(temp, file);
      } finally {
        await unlink(temp).catch(() => undefined);
      }
    }
    return { key, size: ticket.size, sha256: ticket.sha256 };
  }

  async discardStaged(key: string): Promise<void> {
    await unlink(this.#stagedFile(key)).catch((error: unknown) => {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    });
  }

  async collectStaged(options: { readonly tempsIdleMs?: number } = {}): Promise<number> {
    const now = this.#now();
    const idleMs = options.tempsIdleMs ?? TEMP_IDLE_MS;
    let removed = 0;
    for (const name of await dirNames(path.join(this.root, 'staging'), /^[0-9]{10}-[0-9a-f]{32}$/)) {
      if (removed >= STAGING_COLLECT_MAX) return removed;
      // Sorted by expiry: the first that may still be used ends the sweep.
      if (!stagedExpired(parseStagingKey(`staging/${name}`), now)) break;
      await this.discardStaged(`staging/${name}`);
      removed += 1;
    }
    const temps = path.join(this.root, '.tmp');
    for (const name of await dirNames(temps, /^\.tmp-[0-9a-f]{24}$/)) {
      if (removed >= STAGING_COLLECT_MAX) return removed;
      const file = path.join(temps, name);
      const info = await stat(file).catch(() => undefined);
      if (info === undefined || now - info.mtimeMs < idleMs) continue;
      await unlink(file).catch(() => undefined);
      removed += 1;
    }
    return removed;
  }

  async close(): Promise<void> {
    // Nothing held open between calls.
  }

  /** The HMAC key: derived from a random secret made on first use in the data folder (mode 0600). */
  #key(): Promise<Buffer> {
    this.#macKey ??= (async () => {
      const file = path.join(this.#dataDir, 'upload-secret');
      await mkdir(this.#dataDir, { recursive: true, mode: PRIVATE_DIR_MODE });
      let secret: Buffer;
      try {
        const handle = await open(file, 'wx', PRIVATE_FILE_MODE);
        secret = randomBytes(32);
        try {
          await handle.writeFile(secret);
          await handle.sync();
        } finally {
          await handle.close();
        }
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        secret = await readSecret(file);
      }
      return Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'kgw upload ticket v1', 32));
    })();
    this.#macKey.catch(() => (this.#macKey = undefined));
    return this.#macKey;
  }

  async #openTicket(raw: string): Promise<Ticket> {
    const match = TICKET.exec(raw);
    const denied = new KgwError('permission_denied', 'invalid upload URL');
    if (match === null) throw denied;
    const [, payload = '', mac = ''] = match;
    const expected = createHmac('sha256', await this.#key())
      .update(`v1.${payload}`)
      .digest();
    const given = Buffer.from(mac, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw denied;
    const ticket = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Ticket;
    // A URL signed before uploads were staged names no staging file: it is refused, so request a new one.
    if (!/^[0-9a-f]{32}$/.test(ticket.n)) throw denied;
    if (ticket.e * 1000 <= this.#now()) throw new KgwError('permission_denied', 'the upload URL has expired; request a new one');
    return ticket;
  }

  /** Records the ticket's id, atomically: a second use of the same ticket is a conflict. */
  async #claim(ticket: Ticket): Promise<string> {
    const folder = path.join(this.root, '.uploads');
    await mkdir(folder, { recursive: true, mode: PRIVATE_DIR_MODE });
    await this.#prune(folder);
    const file = path.join(folder, `${ticket.e}-${ticket.n}`);
    try {
      await (await open(file, 'wx', PRIVATE_FILE_MODE)).close();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new KgwError('conflict', 'this upload URL was already used');
      throw error;
    }
    return file;
  }

  /** Forgets used tickets once they have expired (at most once a minute). */
  async #prune(folder: string): Promise<void> {
    const now = this.#now();
    if (now - this.#lastPrune < 60_000) return;
    this.#lastPrune = now;
    for (const name of await readdir(folder)) {
      const expiry = Number(name.split('-', 1)[0]);
      if (Number.isFinite(expiry) && expiry * 1000 < now) await unlink(path.join(folder, name)).catch(() => undefined);
    }
  }
}

async function statFile(file: string): Promise<{ size: number } | undefined> {
  try {
    const info = await stat(file);
    return info.isFile() ? { size: info.size } : undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

async function dirNames(folder: string, pattern: RegExp): Promise<string[]> {
  try {
    return (await readdir(folder)).filter((name) => pattern.test(name)).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function readSecret(file: string): Promise<Buffer> {
  // A concurrent first use may still be writing it.
  for (let attempt = 0; attempt < 50; attempt++) {
    const secret = await readFile(file);
    if (secret.length === 32) return secret;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new KgwError('unavailable', 'the upload secret is unreadable');
}

function discard(): Writable {
  return new Writable({ write: (_chunk, _encoding, callback) => callback() });
}
