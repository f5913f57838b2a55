import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Readable } from 'node:stream';
import { blobKey } from '../../../connectors/blob/contract.ts';
import type { Db } from '../../store/db.ts';
import type { Caller } from '../../kernel/access/caller.ts';
import type { AuditTrail } from '../../kernel/audit/trail.ts';
import { KgwError } from '../../kernel/errors.ts';
import { kbFor } from './access.ts';
import type { AssetRecord } from './asset-rows.ts';
import { readAsset } from './asset-rows.ts';
import { thumbnail } from './assets/image.ts';
import type { KbStores } from './files.ts';
import { headBytes } from './files.ts';
import { refuseKb } from './refusals.ts';

/**
 * Short-lived links to an Asset's original bytes: HMAC-signed, naming the tenant, KB, file,
 * version and the principal they were made for, valid DOWNLOAD_LINK_SECONDS. A link is not a
 * credential on its own: the download route also needs that principal's bearer token and
 * checks its access as read_file does (access.ts), so a link that leaks, or outlives a
 * revoked share, gives nothing. The key is one random secret kept in the store (kb_link_keys).
 *
 * A link names what it serves: the original bytes, or a rendition of them (`rendition`, inside
 * the signed payload, so a download link cannot be turned into a thumbnail link or back).
 */

/** How long a download link is valid. */
export const DOWNLOAD_LINK_SECONDS = 5 * 60;

/** What a link may serve instead of the original bytes. */
export type RenditionKind = 'thumbnail';

export interface DownloadTarget {
  readonly tenantId: string;
  readonly kbId: string;
  readonly fileId: string;
  readonly version: number;
  readonly principalId: string;
  /** A rendition of the version; the original bytes when absent. */
  readonly rendition?: RenditionKind;
}

/** A link's target as opened, with when it stops being valid. */
export interface OpenedLink extends DownloadTarget {
  readonly expiresAt: Date;
}

interface Payload {
  readonly t: string;
  readonly k: string;
  readonly f: string;
  readonly v: number;
  readonly p: string;
  /** The rendition; absent for the original bytes (so download links keep their form). */
  readonly r?: RenditionKind;
  /** Expiry, seconds since the epoch. */
  readonly e: number;
}

const LINK = /^v1\.([A-Za-z0-9_-]{1,1024})\.([A-Za-z0-9_-]{43})$/;
const keys = new WeakMap<Db, Promise<Buffer>>();

/** The signing key of this store, made on first use (concurrent first uses agree on one). */
function keyOf(db: Db): Promise<Buffer> {
  let key = keys.get(db);
  if (key === undefined) {
    key = (async () => {
      const secret = await db.tx(async (tx) => {
        await tx.query('INSERT INTO kb_link_keys (id, secret) VALUES (1, $1) ON CONFLICT (id) DO NOTHING', [randomBytes(32).toString('base64url')]);
        const [row] = await tx.query<{ secret: string }>('SELECT secret FROM kb_link_keys WHERE id = 1');
        return row?.secret;
      });
      if (secret === undefined) throw new KgwError('unavailable', 'the download link key is missing');
      return Buffer.from(secret, 'base64url');
    })();
    keys.set(db, key);
    key.catch(() => keys.delete(db));
  }
  return key;
}

const mac = (key: Buffer, payload: string): Buffer => createHmac('sha256', key).update(`v1.${payload}`).digest();

/** A link token for the target, valid DOWNLOAD_LINK_SECONDS from `now`. */
export async function signDownload(db: Db, target: DownloadTarget, now = Date.now()): Promise<{ token: string; expiresAt: Date }> {
  const expires = Math.floor(now / 1000) + DOWNLOAD_LINK_SECONDS;
  const payload: Payload = {
    t: target.tenantId,
    k: target.kbId,
    f: target.fileId,
    v: target.version,
    p: target.principalId,
    ...(target.rendition === undefined ? {} : { r: target.rendition }),
    e: expires,
  };
  const encoded = Buffer.from(JSON.stringify(payload)).toString('base64url');
  return { token: `v1.${encoded}.${mac(await keyOf(db), encoded).toString('base64url')}`, expiresAt: new Date(expires * 1000) };
}

/** The target of a link token; `permission_denied` when it is not one this store signed or it has expired. */
export async function openDownload(db: Db, token: string, now = Date.now()): Promise<OpenedLink> {
  const denied = new KgwError('permission_denied', 'invalid download link');
  const match = LINK.exec(token);
  if (match === null) throw denied;
  const [, encoded = '', given = ''] = match;
  const expected = mac(await keyOf(db), encoded);
  const sent = Buffer.from(given, 'base64url');
  if (sent.length !== expected.length || !timingSafeEqual(sent, expected)) throw denied;
  const payload = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8')) as Payload;
  if (payload.e * 1000 <= now) throw new KgwError('permission_denied', 'the download link has expired; read the file again for a new one');
  return {
    tenantId: payload.t,
    kbId: payload.k,
    fileId: payload.f,
    version: payload.v,
    principalId: payload.p,
    ...(payload.r === undefined ? {} : { rendition: payload.r }),
    expiresAt: new Date(payload.e * 1000),
  };
}

interface LinkedVersion {
  readonly path: string;
  readonly mediaType: string;
  readonly sizeBytes: number;
  readonly sha256: string;
}

/**
 * The file version a link names, for the caller it was made for and the kind of answer the
 * route gives: access is checked as read_file checks it (Viewer of the KB, now), and the file
 * must still be live. Another principal's link, or a link of the other kind, is the same
 * refusal as a forged one.
 */
async function linkedVersion(
  stores: KbStores,
  caller: Caller,
  target: DownloadTarget,
  serves: RenditionKind | undefined,
  audit: AuditTrail,
): Promise<LinkedVersion> {
  if (caller.tenant.id !== target.tenantId || caller.principal.id !== target.principalId || target.rendition !== serves)
    throw new KgwError('permission_denied', 'invalid download link');
  const { kb } = await kbFor(stores.db, caller, target.kbId, 'viewer', 'downloading files');
  const [row] = await stores.db.query<{ path: string; media_type: string; size_bytes: string | number; sha256: string }>(
    `SELECT v.path, v.media_type, v.size_bytes, v.sha256
       FROM kb_file_versions v JOIN kb_files f ON f.tenant_id = v.tenant_id AND f.id = v.file_id
      WHERE v.tenant_id = $1 AND f.kb_id = $2 AND v.file_id = $3 AND v.version = $4 AND f.deleted_at IS NULL`,
    [caller.tenant.id, kb.id, target.fileId, target.version],
  );
  if (row === undefined) throw refuseKb.fileNotFound(target.fileId);
  audit.touch({ type: 'kb_file', id: target.fileId, version: target.version });
  return { path: row.path, mediaType: row.media_type, sizeBytes: Number(row.size_bytes), sha256: row.sha256 };
}

export interface Original {
  readonly path: string;
  readonly mediaType: string;
  readonly sizeBytes: number;
  readonly sha256: string;
  readonly body: Readable;
}

/** The original bytes a download link names, for the caller it was made for (linkedVersion). */
export async function readOriginal(stores: KbStores, caller: Caller, target: DownloadTarget, audit: AuditTrail): Promise<Original> {
  const version = await linkedVersion(stores, caller, target, undefined, audit);
  return { ...version, body: await stores.blob.get(blobKey(version.sha256)) };
}

/**
 * Whether an Asset has renditions: an image whose pixels were read. A PDF has none (no page
 * rasteriser is among the dependencies), nor has an image whose content could not be read.
 */
export function hasRendition(asset: AssetRecord | undefined): asset is AssetRecord {
  return asset !== undefined && asset.format !== 'pdf' && asset.state === 'ready';
}

export interface Thumbnail {
  readonly data: Buffer;
  readonly mimeType: string;
  /** The SHA-256 of the original bytes it was made from. */
  readonly sha256: string;
}

/**
 * The thumbnail a rendition link names (longest edge 256, WebP), made from the original bytes
 * on each request within the image module's pixel and time bounds (docs/atmina-assets.md says
 * why nothing is cached). Access is checked as for the original bytes.
 */
export async function readThumbnail(stores: KbStores, caller: Caller, target: DownloadTarget, audit: AuditTrail): Promise<Thumbnail> {
  const version = await linkedVersion(stores, caller, target, 'thumbnail', audit);
  if (!hasRendition(await readAsset(stores.db, caller.tenant.id, target.fileId, target.version))) throw new KgwError('not_found', 'this file has no thumbnail');
  const made = await thumbnail(await headBytes(stores.blob, version));
  if (made.state === 'failed') throw new KgwError('unavailable', 'the thumbnail could not be made just now; try again');
  return { data: made.data, mimeType: made.mimeType, sha256: version.sha256 };
}
