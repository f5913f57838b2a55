import { z } from 'zod';
import type { AssetRecord } from '../kb/asset-rows.ts';
import type { KbFile } from '../kb/queries.ts';

/** The spec's `asset` block: `path` always; the rest when the catalog resolved it. */
export const assetBlock = z
  .object({
    path: z.string(),
    file_id: z.string().optional(),
    format: z.string().optional().describe('png, jpeg, gif, webp or pdf.'),
    width: z.number().int().optional(),
    height: z.number().int().optional(),
    pages: z.number().int().optional(),
    state: z.enum(['ready', 'failed']).optional().describe('failed: the content could not be read (the reason says why); the original bytes are kept.'),
    reason: z.string().optional(),
    rendition_url: z
      .string()
      .optional()
      .describe('A ready image’s thumbnail (WebP, longest edge 256): GET it with your bearer token within a few minutes; read the file again for a new one.'),
  })
  .describe('The Asset behind the Companion text.');

export function assetWire(file: KbFile, asset: AssetRecord | undefined, renditionUrl?: string): z.infer<typeof assetBlock> {
  if (asset === undefined) return { path: file.path, file_id: file.id };
  return {
    path: file.path,
    file_id: file.id,
    format: asset.format,
    ...(asset.width === undefined ? {} : { width: asset.width }),
    ...(asset.height === undefined ? {} : { height: asset.height }),
    ...(asset.pages === undefined ? {} : { pages: asset.pages }),
    state: asset.state,
    ...(asset.reason === undefined ? {} : { reason: asset.reason }),
    ...(renditionUrl === undefined ? {} : { rendition_url: renditionUrl }),
  };
}
