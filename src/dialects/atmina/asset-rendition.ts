import type { AssetRecord } from '../../core/kb/asset-rows.ts';
import { MEDIUM_EDGE, rendition } from '../../core/kb/assets/image.ts';
import type { KbStores } from '../../core/kb/files.ts';
import { headBytes } from '../../core/kb/files.ts';
import type { KbFile } from '../../core/kb/queries.ts';

/**
 * The medium rendition read_file shows beside an image Asset's JSON (longest edge 1024, aspect
 * kept, metadata stripped), made from the original bytes on each read: the original is at most
 * 25 MiB and the resize is bounded by the image module's pixel limit and deadline. A PDF, an
 * Asset whose content could not be read, and a rendition that fails give none.
 */
export async function assetRendition(
  stores: KbStores,
  file: KbFile,
  asset: AssetRecord | undefined,
): Promise<{ readonly data: Buffer; readonly mimeType: string } | undefined> {
  if (asset === undefined || asset.format === 'pdf' || asset.state !== 'ready') return undefined;
  const made = await rendition(await headBytes(stores.blob, file), { maxEdge: MEDIUM_EDGE });
  return made.state === 'ready' ? { data: made.data, mimeType: made.mimeType } : undefined;
}
