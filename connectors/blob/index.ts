import type { Config } from '../../src/config.ts';
import type { BlobStore } from './contract.ts';
import { DiskBlobStore } from './disk.ts';

/**
 * The blob store the configuration names: S3 when S3_BUCKET is set, local disk under
 * KGW_DATA_DIR otherwise. The S3 client is loaded only when it is used.
 */
export async function openBlobStore(config: Config): Promise<BlobStore> {
  if (config.s3 === undefined) {
    const store = new DiskBlobStore({ dataDir: config.dataDir, publicUrl: config.publicUrl });
    // At start: what a killed process left (temporary files, expired staged uploads) goes. Two
    // folders are read, whatever the number of blobs. The embedded store is opened only by the
    // process holding the data folder's lock, so none of its temporary files is a live write.
    await store.collectStaged(config.databaseUrl === undefined ? { tempsIdleMs: 0 } : {});
    return store;
  }
  const { S3BlobStore } = await import('./s3.ts');
  return new S3BlobStore(config.s3);
}

/**
 * The origin a browser sends presigned uploads to, when it is not the gateway's own: the S3
 * endpoint (path-style, as the client signs for it), or the bucket's virtual-hosted AWS address.
 * The console's CSP allows a page's script to connect there (connect-src); the bucket's CORS
 * rules must allow the gateway's origin to PUT (docs/console.md). Local disk: none, the gateway
 * serves the uploads itself.
 */
export function uploadOrigin(config: Config): string | undefined {
  if (config.s3 === undefined) return undefined;
  if (config.s3.endpoint !== undefined) return new URL(config.s3.endpoint).origin;
  return `https://${config.s3.bucket}.s3.${config.s3.region}.amazonaws.com`;
}
