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
    // folders are read, whatever the number of blobs.
    await store.collectStaged();
    return store;
  }
  const { S3BlobStore } = await import('./s3.ts');
  return new S3BlobStore(config.s3);
}
