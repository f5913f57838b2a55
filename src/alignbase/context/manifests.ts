import type { BlobStore } from '../../../connectors/blob/contract.ts';
import type { AttachmentEntry } from '../versions/queries.ts';
import type { PackageFile } from './skill-package.ts';

/**
 * A version's files on the way in: their bytes go to the blob store under their SHA-256, written
 * before any version points at them, and the manifest the version keeps lists path, media type,
 * size and digest. Skills, Artifacts, drafts and the org file all save files this way;
 * read_context_attachment (attachments.ts) hands them out again.
 */

/** Writes the files' bytes to the blob store (idempotent: the same bytes have the same key) and returns the manifest. */
export async function storeFiles(blob: BlobStore, files: readonly PackageFile[]): Promise<AttachmentEntry[]> {
  const manifest: AttachmentEntry[] = [];
  // A few at a time: a package is at most 3 MiB, but up to 500 files.
  for (let start = 0; start < files.length; start += 8) {
    await Promise.all(files.slice(start, start + 8).map((f) => blob.put({ body: f.bytes, size: f.size, sha256: f.sha256 })));
  }
  for (const f of files) manifest.push({ path: f.path, mediaType: f.mediaType, size: f.size, sha256: f.sha256, digestEncoding: f.digestEncoding });
  return manifest;
}

/** Two manifests name the same files with the same bytes. */
export function sameManifest(a: readonly AttachmentEntry[], b: readonly AttachmentEntry[]): boolean {
  return a.length === b.length && a.every((e, i) => e.path === b[i]?.path && e.sha256 === b[i]?.sha256 && e.mediaType === b[i]?.mediaType);
}
