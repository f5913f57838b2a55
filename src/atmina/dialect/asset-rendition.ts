import type { AssetRecord } from '../kb/asset-rows.ts';
import { MEDIUM_EDGE, rendition } from '../kb/assets/image.ts';
import type { Caller } from '../../kernel/access/caller.ts';
import { hasRendition, signDownload } from '../kb/download-links.ts';
import type { KbStores } from '../kb/files.ts';
import { headBytes } from '../kb/files.ts';
import type { KbFile } from '../kb/queries.ts';
import type { Services } from '../../kernel/services.ts';

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
  if (!hasRendition(asset)) return undefined;
  const made = await rendition(await headBytes(stores.blob, file), { maxEdge: MEDIUM_EDGE });
  return made.state === 'ready' ? { data: made.data, mimeType: made.mimeType } : undefined;
}

/**
 * The asset block's `rendition_url`: a download link for the reader (5 minutes, signed, its
 * bearer token still needed) that names the thumbnail of this version, for an image whose
 * pixels were read; none for a PDF or a failed image.
 */
export async function thumbnailUrl(services: Services, caller: Caller, file: KbFile, asset: AssetRecord | undefined): Promise<string | undefined> {
  if (!hasRendition(asset)) return undefined;
  const link = await signDownload(services.db, {
    tenantId: caller.tenant.id,
    kbId: file.kbId,
    fileId: file.id,
    version: file.version,
    principalId: caller.principal.id,
    rendition: 'thumbnail',
  });
  return `${services.config.publicUrl}/atmina/renditions/${link.token}`;
}
