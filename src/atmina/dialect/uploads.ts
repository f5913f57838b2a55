import { z } from 'zod';
import { FILE_KINDS, FILE_OPERATIONS } from '../kb/queries.ts';
import type { UploadItemResult } from '../kb/upload-batches.ts';
import { UPLOAD_ITEMS_MAX, confirmUploads, requestUploads } from '../kb/upload-batches.ts';
import type { CatalogResult } from '../kb/upload-catalog.ts';
import { INLINE_MAX_BYTES, updateFile, uploadFile } from '../kb/inline-uploads.ts';
import { defineTool, jsonReply } from '../../mcp/tool.ts';
import type { Caller } from '../../kernel/access/caller.ts';
import type { Services } from '../../kernel/services.ts';
import { thumbnailUrl } from './asset-rendition.ts';
import { assetBlock, assetWire } from './asset-wire.ts';
import { EDITOR_WRITES, IDEMPOTENT_WRITE, WRITE, fileId, filePath, kbId, writtenFields, writtenWire } from './schemas.ts';

/*
 * The Atmina upload tools: presigned batches (request_uploads, then PUT, then confirm_uploads)
 * for large or binary files, and inline base64 content of at most 1 MiB (upload_file,
 * update_file). Images and PDFs become Assets with their Companion text.
 */

const mimeType = z.string().describe('The MIME type, e.g. image/png, application/pdf, text/markdown; from the extension when omitted.');
const sha256Field = z.string().describe('SHA-256 of the exact bytes, 64 hex digits.');

const declaration = z
  .object({
    path: filePath,
    mime_type: mimeType.optional(),
    size_bytes: z.number().int().min(0).describe('The exact byte count: the PUT must carry exactly these bytes.'),
    sha256: sha256Field,
  })
  .strict();

export const requestUploadsTool = defineTool({
  name: 'request_uploads',
  dialect: 'atmina',
  title: 'Request uploads',
  description: `Declares up to ${UPLOAD_ITEMS_MAX} files to upload (path, MIME type, size_bytes, sha256) and returns, per file, a URL to PUT the exact bytes to with every returned header, and one batch_token for confirm_uploads. Images and PDFs may be at most 25 MiB, other files 100 MiB. URLs expire at expires_at (15 minutes unless the gateway is configured otherwise). A bad item (too large, a bad path, type or hash) is reported in failures while the rest are issued; repeated paths reject the whole batch.`,
  input: z.object({ kb_id: kbId, items: z.array(declaration).min(1).max(UPLOAD_ITEMS_MAX) }).strict(),
  output: z.object({
    kb_id: z.string(),
    batch_token: z.string().describe('A secret: pass it to confirm_uploads after every PUT.'),
    expires_at: z.string(),
    uploads: z.array(
      z.object({
        index: z.number().int().describe('The item’s place among those declared, from 0.'),
        path: z.string(),
        mime_type: z.string(),
        size_bytes: z.number().int(),
        sha256: z.string(),
        method: z.literal('PUT'),
        url: z.string(),
        headers: z.record(z.string(), z.string()).describe('Send exactly these headers with the PUT.'),
        expires_at: z.string(),
      }),
    ),
    requested: z.number().int().describe('How many items got a URL.'),
    failed: z.number().int().describe('How many items were refused, each in failures.'),
    failures: z
      .array(z.object({ index: z.number().int(), path: z.string(), code: z.string(), error: z.string().describe('As `code: message`.') }))
      .describe('The items refused on their own, in the order declared: no URL, nothing to PUT.'),
  }),
  annotations: WRITE,
  ...EDITOR_WRITES,
  async run({ caller, services, audit }, args) {
    const batch = await requestUploads(
      services,
      caller,
      {
        kbId: args.kb_id,
        items: args.items.map((item) => ({ path: item.path, mimeType: item.mime_type, sizeBytes: item.size_bytes, sha256: item.sha256 })),
        urlSeconds: services.config.uploadUrlSeconds,
      },
      audit,
    );
    return jsonReply({
      kb_id: batch.kbId,
      batch_token: batch.batchToken,
      expires_at: batch.expiresAt,
      uploads: batch.uploads.map((u) => ({
        index: u.index,
        path: u.path,
        mime_type: u.mediaType,
        size_bytes: u.sizeBytes,
        sha256: u.sha256,
        method: u.method,
        url: u.url,
        headers: { ...u.headers },
        expires_at: u.expiresAt,
      })),
      requested: batch.uploads.length,
      failed: batch.refused.length,
      failures: batch.refused.map((r) => ({ index: r.index, path: r.path, code: r.error.code, error: `${r.error.code}: ${r.error.message}` })),
    });
  },
});

const uploadedAsset = z.object({
  format: z.string(),
  state: z.string(),
  width: z.number().int().optional(),
  height: z.number().int().optional(),
  pages: z.number().int().optional(),
});

const confirmItem = z.object({
  path: z.string(),
  ok: z.boolean(),
  file_id: z.string().optional(),
  version: z.number().int().optional(),
  sha256: z.string().optional(),
  size_bytes: z.number().int().optional(),
  kind: z.enum(FILE_KINDS).optional(),
  media_type: z.string().optional(),
  operation: z.enum(FILE_OPERATIONS).optional().describe('upload: a new file; update: a new version of the file at the path.'),
  changed: z.boolean().optional(),
  asset: uploadedAsset.optional(),
  code: z.string().optional(),
  error: z.string().optional().describe('A failed item’s error, as `code: message`.'),
});

function confirmItemWire(item: UploadItemResult): z.infer<typeof confirmItem> {
  if (!item.ok) return { path: item.path, ok: false, code: item.code, error: `${item.code}: ${item.message}` };
  return {
    path: item.path,
    ok: true,
    file_id: item.fileId,
    version: item.version,
    sha256: item.sha256,
    size_bytes: item.sizeBytes,
    kind: item.kind,
    media_type: item.mediaType,
    operation: item.operation,
    changed: item.changed,
    ...(item.asset === undefined ? {} : { asset: { ...item.asset } }),
  };
}

export const confirmUploadsTool = defineTool({
  name: 'confirm_uploads',
  dialect: 'atmina',
  title: 'Confirm uploads',
  description:
    'After every PUT of a request_uploads batch: verifies each uploaded file (size and SHA-256), catalogs it as a new file or a new version of the file at its path, reads an image’s size or a PDF’s text, and starts indexing; a result per item. Safe to retry: a second call answers the same and catalogs nothing twice. An expired batch needs a new request_uploads.',
  input: z.object({ kb_id: kbId, batch_token: z.string().min(1).max(200).describe('The batch_token request_uploads returned.') }).strict(),
  output: z.object({
    kb_id: z.string(),
    confirmed_at: z.string(),
    results: z.array(confirmItem).describe('One per declared file, in the order declared.'),
    confirmed: z.number().int(),
    failed: z.number().int(),
  }),
  annotations: IDEMPOTENT_WRITE,
  ...EDITOR_WRITES,
  async run({ caller, services, audit }, args) {
    const result = await confirmUploads(services, caller, { kbId: args.kb_id, batchToken: args.batch_token }, audit);
    const confirmed = result.items.filter((item) => item.ok).length;
    return jsonReply({
      kb_id: result.kbId,
      confirmed_at: result.confirmedAt,
      results: result.items.map(confirmItemWire),
      confirmed,
      failed: result.items.length - confirmed,
    });
  },
});

const inlineOutput = {
  ...writtenFields,
  kind: z.enum(FILE_KINDS),
  media_type: z.string(),
  asset: assetBlock.optional(),
};

/** The written file, and for an Asset its block with the thumbnail link, as read_file gives it. */
async function inlineWire(services: Services, caller: Caller, result: CatalogResult): Promise<z.infer<z.ZodObject<typeof inlineOutput>>> {
  const { file } = result;
  return {
    ...writtenWire(result),
    kind: file.kind,
    media_type: file.mediaType,
    ...(file.kind === 'asset' ? { asset: assetWire(file, result.asset, await thumbnailUrl(services, caller, file, result.asset)) } : {}),
  };
}

const contentBase64 = z
  .string()
  .describe(`The file’s bytes in base64, at most ${INLINE_MAX_BYTES} bytes (1 MiB) decoded; larger files go through request_uploads.`);
const description = z.string().optional().describe('For an image: its description, the Companion text that search and read_file show (at most 16 KiB).');

export const uploadFileTool = defineTool({
  name: 'upload_file',
  dialect: 'atmina',
  title: 'Upload file',
  description:
    'Uploads a new file of at most 1 MiB as base64 (Editor): an image or PDF becomes an Asset with its Companion text, other bytes a file. conflict when a file exists at filename (use update_file). Larger files: request_uploads.',
  input: z.object({ kb_id: kbId, filename: filePath, mime_type: mimeType.optional(), content_base64: contentBase64, description }).strict(),
  output: z.object(inlineOutput),
  annotations: WRITE,
  ...EDITOR_WRITES,
  async run({ caller, services, audit }, args) {
    const result = await uploadFile(
      services,
      caller,
      { kbId: args.kb_id, path: args.filename, mimeType: args.mime_type, contentBase64: args.content_base64, description: args.description },
      audit,
    );
    return jsonReply(await inlineWire(services, caller, result));
  },
});

export const updateFileTool = defineTool({
  name: 'update_file',
  dialect: 'atmina',
  title: 'Update file',
  description:
    'Replaces a file’s bytes with base64 content of at most 1 MiB as its next version (Editor). if_match is the sha256 you read: conflict when the file changed since (reread, then retry).',
  input: z
    .object({
      kb_id: kbId,
      file_id: fileId,
      mime_type: mimeType,
      content_base64: contentBase64,
      if_match: z.string().describe('The sha256 you read: the update applies only to that version, else conflict.'),
      description: description.describe(
        'For an image: its new description, the Companion text that search and read_file show (at most 16 KiB). Omitted, an image keeps the description it had; "" clears it.',
      ),
    })
    .strict(),
  output: z.object(inlineOutput),
  annotations: WRITE,
  ...EDITOR_WRITES,
  async run({ caller, services, audit }, args) {
    const result = await updateFile(
      services,
      caller,
      {
        kbId: args.kb_id,
        fileId: args.file_id,
        mimeType: args.mime_type,
        contentBase64: args.content_base64,
        ifMatch: args.if_match,
        description: args.description,
      },
      audit,
    );
    return jsonReply(await inlineWire(services, caller, result));
  },
});
