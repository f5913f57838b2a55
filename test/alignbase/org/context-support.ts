import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before } from 'node:test';
import { blobKey } from '../../../connectors/blob/contract.ts';
import type { BlobStore } from '../../../connectors/blob/contract.ts';
import { DiskBlobStore } from '../../../connectors/blob/disk.ts';
import type { OrgApplyResult } from '../../../src/kernel/org/apply.ts';
import { applyOrgFile, readReferencedFiles } from '../../../src/org-sections.ts';
import type { Db } from '../../../src/store/db.ts';
import { cliTrail } from '../../support/audit.ts';
import type { StoreBackend, TestStore } from '../../support/stores.ts';

/** A store for the knowledge and skills sections: the database, a disk blob store and a folder for org files. */
export interface ContextStore {
  readonly db: Db;
  readonly databaseUrl: string | undefined;
  readonly blob: BlobStore;
  /** Where the tests write org files and the files they reference. */
  readonly folder: string;
  dispose(): Promise<void>;
}

export async function openContextStore(backend: StoreBackend): Promise<ContextStore> {
  const store: TestStore = await backend.open({ migrated: true });
  const dir = await mkdtemp(path.join(os.tmpdir(), 'kgw-org-context-'));
  const blob = new DiskBlobStore({ dataDir: path.join(dir, 'data'), publicUrl: 'http://127.0.0.1:1' });
  const folder = path.join(dir, 'org');
  await mkdir(folder);
  return {
    db: store.db,
    databaseUrl: store.databaseUrl,
    blob,
    folder,
    async dispose() {
      await blob.close();
      await store.dispose();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * One tenant of a shared store, so that the tests of a suite need not open a store each: its
 * slug replaces `acme` in the files it applies, and it has a folder of its own.
 */
export interface TenantScope extends Omit<ContextStore, 'dispose'> {
  readonly slug: string;
}

export async function tenantScope(store: ContextStore, slug: string): Promise<TenantScope> {
  const folder = path.join(store.folder, slug);
  await mkdir(folder);
  return { db: store.db, databaseUrl: store.databaseUrl, blob: store.blob, folder, slug };
}

/** A suite's shared store, opened before its tests and closed after them; each test takes a tenant of it. */
export function sharedStore(backend: StoreBackend): (slug: string, work: (scope: TenantScope) => Promise<void>) => Promise<void> {
  let store: ContextStore | undefined;
  before(async () => {
    store = await openContextStore(backend);
  });
  after(() => store?.dispose());
  return async (slug, work) => {
    if (store === undefined) throw new Error('the shared store is not open');
    await work(await tenantScope(store, slug));
  };
}

/** Writes files (text or bytes) under `root`, creating folders; a path ending in `/` is an empty folder. */
export async function writeTree(root: string, tree: Readonly<Record<string, string | Buffer>>): Promise<void> {
  for (const [relative, content] of Object.entries(tree)) {
    const target = path.join(root, relative);
    if (relative.endsWith('/')) {
      await mkdir(target, { recursive: true });
      continue;
    }
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, content);
  }
}

/**
 * Applies `source` as `kgw apply` would from `store.folder`: the referenced files read from
 * there. For a tenant scope, its slug replaces the file's `tenant: acme`.
 */
export async function applyIn(
  store: ContextStore | TenantScope,
  source: string,
  options: { dryRun?: boolean; db?: Db; folder?: string } = {},
): Promise<OrgApplyResult> {
  const scoped = 'slug' in store ? source.replace(/^tenant: acme$/m, `tenant: ${store.slug}`) : source;
  const files = await readReferencedFiles(scoped, options.folder ?? store.folder);
  const db = options.db ?? store.db;
  return applyOrgFile(db, { source: scoped, files, blob: store.blob, dryRun: options.dryRun }, cliTrail(db));
}

/** How many versions are saved, in one tenant or in all. */
export async function countVersions(db: Db, slug?: string): Promise<number> {
  const rows =
    slug === undefined
      ? await db.query<{ n: number }>('SELECT count(*)::int AS n FROM context_versions')
      : await db.query<{ n: number }>('SELECT count(*)::int AS n FROM context_versions v JOIN tenants t ON t.id = v.tenant_id WHERE t.slug = $1', [slug]);
  return rows[0]?.n ?? -1;
}

/** The ids of a tenant and of one of its principals (by email or name). */
export async function idsOf(db: Db, slug: string, principal: string): Promise<{ tenantId: string; principalId: string }> {
  const [row] = await db.query<{ tenant_id: string; id: string }>(
    'SELECT p.tenant_id, p.id FROM principals p JOIN tenants t ON t.id = p.tenant_id WHERE t.slug = $1 AND coalesce(p.email, p.name) = $2',
    [slug, principal],
  );
  if (!row) throw new Error(`no principal ${principal} in tenant ${slug}`);
  return { tenantId: row.tenant_id, principalId: row.id };
}

export interface StoredVersion {
  readonly version: number;
  readonly content: string;
  readonly authority: string | null;
  readonly name: string | null;
  readonly description: string | null;
  readonly attachments: { path: string; media_type: string; size: number; sha256: string; digest_encoding: string }[];
  readonly created_by: string | null;
}

export interface StoredResource {
  readonly id: string;
  readonly latest: number;
  readonly published: number | null;
  readonly reviewBy: string | null;
  readonly expiresAt: string | null;
  readonly createdBy: string | null;
  readonly versions: StoredVersion[];
}

/** Every resource of the type and name in the tenant, with its versions, oldest first. */
export async function resourcesNamed(db: Db, slug: string, type: 'knowledge' | 'skill' | 'memory', name: string): Promise<StoredResource[]> {
  const heads = await db.query<{
    id: string;
    latest_version: number;
    published_version: number | null;
    review_by: string | null;
    expires_at: string | null;
    created_by: string | null;
  }>(
    `SELECT r.id, r.latest_version, r.published_version, r.review_by::text AS review_by, r.expires_at::text AS expires_at, r.created_by
       FROM context_resources r JOIN tenants t ON t.id = r.tenant_id
      WHERE t.slug = $1 AND r.type = $2 AND r.name = $3 ORDER BY r.created_at, r.id`,
    [slug, type, name],
  );
  const result: StoredResource[] = [];
  for (const head of heads) {
    const versions = await db.query<StoredVersion>(
      'SELECT version, content, authority, name, description, attachments, created_by FROM context_versions WHERE resource_id = $1 ORDER BY version',
      [head.id],
    );
    result.push({
      id: head.id,
      latest: Number(head.latest_version),
      published: head.published_version === null ? null : Number(head.published_version),
      reviewBy: head.review_by,
      expiresAt: head.expires_at,
      createdBy: head.created_by,
      versions: versions.map((v) => ({
        ...v,
        version: Number(v.version),
        attachments: typeof v.attachments === 'string' ? (JSON.parse(v.attachments) as StoredVersion['attachments']) : v.attachments,
      })),
    });
  }
  return result;
}

/** The one resource of that name; fails when there is not exactly one. */
export async function resourceNamed(db: Db, slug: string, type: 'knowledge' | 'skill' | 'memory', name: string): Promise<StoredResource> {
  const found = await resourcesNamed(db, slug, type, name);
  if (found.length !== 1) throw new Error(`expected one ${type} "${name}", found ${found.length}`);
  return found[0]!;
}

/** The bytes the blob store holds under a SHA-256, or undefined. */
export async function blobBytes(blob: BlobStore, sha256: string): Promise<Buffer | undefined> {
  if ((await blob.head(blobKey(sha256))) === undefined) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of await blob.get(blobKey(sha256))) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** How many blobs the store holds. */
export async function blobCount(blob: BlobStore): Promise<number> {
  let count = 0;
  for await (const _ of blob.list('sha256/')) count++;
  return count;
}

/** A PNG header and some bytes that are not UTF-8: a binary attachment. */
export const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0xff, 0xfe, 0x00, 0x01]);

/** A SKILL.md with the given name and description. */
export const skillMd = (name: string, description = `Does ${name}.`, body = `Follow the steps of ${name}.\n`): string =>
  `---\nname: ${name}\ndescription: ${description}\n---\n${body}`;
