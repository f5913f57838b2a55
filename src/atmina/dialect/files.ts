import { importedFromField, importedFromWire } from '../../mcp/imported-from.ts';
import { z } from 'zod';
import { iso, isoOrNull } from '../../kernel/instants.ts';
import { BATCH_CONCURRENCY_MAX, BATCH_ITEMS_MAX, writeFiles } from '../kb/batch.ts';
import type { BatchItemResult } from '../kb/batch.ts';
import { DESCRIPTION_SOURCES, FILE_SORTS, HISTORY_LIMIT_MAX, LIST_LIMIT_MAX, fileHistory, listFiles } from '../kb/catalog.ts';
import type { WriteInput } from '../kb/file-writes.ts';
import { deleteFile, moveFile, readFile, restoreVersion } from '../kb/files.ts';
import { WRITE_MODES, writeFile } from '../kb/file-writes.ts';
import { signDownload } from '../kb/download-links.ts';
import { readerNote } from '../kb/pages.ts';
import { PATCH_EDITS_MAX } from '../kb/patch.ts';
import { FILE_KINDS, FILE_OPERATIONS } from '../kb/queries.ts';
import { defineTool, jsonReply } from '../../mcp/tool.ts';
import { assetBlock, assetWire } from './asset-wire.ts';
import { assetRendition, thumbnailUrl } from './asset-rendition.ts';
import { atminaCode, atminaText } from './errors.ts';
import {
  DESTRUCTIVE,
  EDITOR_WRITES,
  IDEMPOTENT_WRITE,
  KB_WRITES,
  READ,
  WRITE,
  contributionNote,
  fileFields,
  fileIdentity,
  filePath,
  fileRefOf,
  fileWire,
  kbId,
  listedFileWire,
  writtenFields,
  writtenWire,
} from './schemas.ts';

/*
 * The Atmina file tools: list, read, write (one or a batch), history, restore, move, delete.
 * They serve text files and Assets alike (read_file gives an Asset's Companion text, metadata and
 * rendition); only the writes are text, since Assets arrive through the upload tools (uploads.ts).
 */

const cursor = z.string().describe('next_cursor of the previous page; omit for the first page.');

export const listFilesTool = defineTool({
  name: 'list_files',
  dialect: 'atmina',
  title: 'List files',
  description:
    'The exhaustive catalog of a Knowledge Base’s live files with their tags, a page at a time: use it for requests such as every file under policies/. Filter by path_prefix, kind and tag; sort by path (default), updated_at or size.',
  input: z
    .object({
      kb_id: kbId,
      path_prefix: z.string().optional().describe('Only paths starting with it, e.g. "policies/".'),
      kind: z.enum(FILE_KINDS).optional(),
      tag: z.string().optional().describe('Only files with this front-matter tag (case-insensitive).'),
      sort: z.enum(FILE_SORTS).optional().describe('Default path.'),
      order: z.enum(['asc', 'desc']).optional().describe('Default asc.'),
      limit: z.number().int().min(1).max(LIST_LIMIT_MAX).optional().describe(`Files per page, 1 to ${LIST_LIMIT_MAX}; default 100.`),
      cursor: cursor.optional(),
    })
    .strict(),
  output: z.object({
    kb_id: z.string(),
    files: z.array(
      z.object({
        ...fileFields,
        description_source: z
          .enum(DESCRIPTION_SOURCES)
          .optional()
          .describe(
            'For an Asset with a Companion text: writer (the description its writer gave an image), extracted (the text read out of a PDF) or none (an image not described, a PDF without readable text).',
          ),
      }),
    ),
    next_cursor: z.string().nullable().describe('Pass it as cursor for the next page; null on the last page.'),
  }),
  annotations: READ,
  scopes: ['context.read'],
  minimumRole: 'viewer',
  async run({ caller, services, audit }, args) {
    const page = await listFiles(
      services.db,
      caller,
      {
        kbId: args.kb_id,
        pathPrefix: args.path_prefix,
        kind: args.kind,
        tag: args.tag,
        sort: args.sort,
        order: args.order,
        limit: args.limit,
        cursor: args.cursor,
      },
      audit,
    );
    return jsonReply({
      kb_id: page.kb.kb.id,
      files: page.files.map(listedFileWire),
      next_cursor: page.nextCursor ?? null,
    });
  },
});

export const readFileTool = defineTool({
  name: 'read_file',
  dialect: 'atmina',
  title: 'Read file',
  description:
    'Reads a file of a Knowledge Base by path or file_id (path wins when both are sent): a text file’s UTF-8 content, size_bytes, sha256 and version. For an Asset (image, PDF), content is its Companion text, asset describes it, and an image comes with a medium rendition as image content unless include_image is false. Before changing the file, carry its sha256 as if_match.',
  input: z
    .object({
      kb_id: kbId,
      ...fileIdentity,
      include_image: z.boolean().optional().describe('For an image Asset: false leaves out the rendition (text only). Default true.'),
    })
    .strict(),
  output: z.object({
    contribution_note: contributionNote,
    kb_id: z.string(),
    ...fileFields,
    content: z.string().describe('The file as UTF-8 text, exactly; for an Asset, its Companion text.'),
    asset: assetBlock.optional(),
    download_url: z
      .string()
      .optional()
      .describe('An Asset’s original bytes: GET it with your bearer token before download_expires_at (a few minutes); read the file again for a new one.'),
    download_expires_at: z.string().optional(),
  }),
  annotations: READ,
  scopes: ['context.read'],
  minimumRole: 'viewer',
  async run({ caller, services, audit }, args) {
    const read = await readFile(services, caller, fileRefOf(args), audit);
    const note = await readerNote(services, caller, read.kb);
    const reply = { ...(note === undefined ? {} : { contribution_note: note }), kb_id: read.kb.kb.id, ...fileWire(read.file), content: read.content };
    if (read.file.kind !== 'asset') return jsonReply(reply);
    const link = await signDownload(services.db, {
      tenantId: caller.tenant.id,
      kbId: read.file.kbId,
      fileId: read.file.id,
      version: read.file.version,
      principalId: caller.principal.id,
    });
    const structured = {
      ...reply,
      asset: assetWire(read.file, read.asset, await thumbnailUrl(services, caller, read.file, read.asset)),
      download_url: `${services.config.publicUrl}/atmina/files/${link.token}`,
      download_expires_at: iso(link.expiresAt),
    };
    const image = args.include_image === false ? undefined : await assetRendition(services, read.file, read.asset);
    return image === undefined ? jsonReply(structured) : { ...jsonReply(structured), images: [image] };
  },
});

const patchEdit = z
  .object({
    find: z.string().min(1).describe('Exact text to find (never a nearest match).'),
    replace: z.string().describe('Its replacement; empty deletes it.'),
    occurrence: z
      .union([z.number().int().min(1), z.literal('all')])
      .optional()
      .describe('Which occurrence (1-based) or "all"; required when find occurs more than once.'),
  })
  .strict();

const writeFields = {
  path: filePath,
  mode: z.enum(WRITE_MODES).describe('create (fails if the path exists), overwrite, append (adds content at the end), or patch (find/replace edits in order).'),
  content: z.string().optional().describe('UTF-8 text for create, overwrite and append; at most 1 MiB for the resulting file.'),
  patch: z.array(patchEdit).min(1).max(PATCH_EDITS_MAX).optional().describe('The edits of mode patch, applied in order.'),
  expected_bytes: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe('Byte count of the exact UTF-8 bytes of content (patch: of the whole resulting file); a mismatch fails with content_integrity.'),
  content_sha256: z.string().optional().describe('SHA-256 (hex) of the same bytes as expected_bytes.'),
  if_match: z.string().optional().describe('The sha256 you read: the write applies only if the file is still that version, else conflict.'),
};

const writeItem = z.object(writeFields).strict();
type WriteArgs = z.infer<typeof writeItem>;

const writeInput = (args: WriteArgs): WriteInput => ({
  path: args.path,
  mode: args.mode,
  content: args.content,
  patch: args.patch,
  expectedBytes: args.expected_bytes,
  contentSha256: args.content_sha256,
  ifMatch: args.if_match,
});

export const writeFileTool = defineTool({
  name: 'write_file',
  dialect: 'atmina',
  title: 'Write file',
  description:
    'Writes a text file (Editor): mode create, overwrite or append with UTF-8 content, or patch with find/replace edits. Send expected_bytes and content_sha256 of the exact UTF-8 bytes to have them checked (content_integrity on a mismatch, nothing written), and the sha256 you read as if_match (conflict when someone changed the file: reread and reapply). Returns the new head’s version and etag.',
  input: z.object({ kb_id: kbId, ...writeFields }).strict(),
  output: z.object(writtenFields),
  annotations: WRITE,
  ...EDITOR_WRITES,
  async run({ caller, services, audit }, args) {
    const result = await writeFile(services, caller, { kbId: args.kb_id, ...writeInput(args) }, audit);
    return jsonReply(writtenWire(result));
  },
});

const itemOutput = z.object({
  index: z.number().int().describe('The item’s position in items, from 0.'),
  path: z.string(),
  ok: z.boolean(),
  file_id: z.string().optional(),
  version: z.number().int().optional(),
  sha256: z.string().optional(),
  etag: z.string().optional(),
  size_bytes: z.number().int().optional(),
  changed: z.boolean().optional(),
  operation: z.enum(FILE_OPERATIONS).optional(),
  code: z.string().optional().describe('A failed item’s error code (validation, conflict, content_integrity, ...).'),
  error: z.string().optional().describe('A failed item’s error, as `code: message`.'),
});

function itemWire(item: BatchItemResult): z.infer<typeof itemOutput> {
  if (!item.ok) return { index: item.index, path: item.path, ok: false, code: atminaCode(item.error), error: atminaText(item.error) };
  const { kb_id: _kb, ...written } = writtenWire(item.result);
  return { index: item.index, ok: true, ...written };
}

export const writeFilesTool = defineTool({
  name: 'write_files',
  dialect: 'atmina',
  title: 'Write files',
  description: `Up to ${BATCH_ITEMS_MAX} writes (as write_file’s) to one Knowledge Base, with a result per item: a failed item does not stop the others. Items of different paths run side by side (concurrency, default ${BATCH_CONCURRENCY_MAX}). To edit one path several times, list its items in order: after its first item, append, patch or overwrite items, each applied to the result of the one before; carry each new sha256 forward as the next item's if_match (an overwrite needs it; append and patch may leave it out and are guarded the same), and a wrong one is a conflict of that item. Any other repeated path rejects the whole batch.`,
  input: z
    .object({
      kb_id: kbId,
      items: z.array(writeItem).min(1).max(BATCH_ITEMS_MAX),
      concurrency: z.number().int().min(1).max(BATCH_CONCURRENCY_MAX).optional().describe(`Items applied at once, 1 to ${BATCH_CONCURRENCY_MAX}.`),
    })
    .strict(),
  output: z.object({
    kb_id: z.string(),
    results: z.array(itemOutput).describe('One per item, in the order of items.'),
    written: z.number().int().describe('Items that succeeded.'),
    failed: z.number().int().describe('Items that failed.'),
  }),
  annotations: WRITE,
  ...EDITOR_WRITES,
  async run({ caller, services, audit }, args) {
    const { kbId: kb, results } = await writeFiles(
      services,
      caller,
      { kbId: args.kb_id, items: args.items.map(writeInput), concurrency: args.concurrency },
      audit,
    );
    return jsonReply({
      kb_id: kb,
      results: results.map(itemWire),
      written: results.filter((r) => r.ok).length,
      failed: results.filter((r) => !r.ok).length,
    });
  },
});

const author = z
  .object({ id: z.string(), kind: z.enum(['person', 'agent']), name: z.string() })
  .nullable()
  .describe('Who saved it; null once removed.');

export const fileHistoryTool = defineTool({
  name: 'file_history',
  dialect: 'atmina',
  title: 'File history',
  description:
    'The retained versions of a file, newest first, a page at a time: author, time, size, sha256 and operation of each. Every version is retained; pass one to restore_version. Admins also see deleted files’ histories, by file_id.',
  input: z
    .object({
      kb_id: kbId,
      ...fileIdentity,
      limit: z.number().int().min(1).max(HISTORY_LIMIT_MAX).optional().describe(`Versions per page, 1 to ${HISTORY_LIMIT_MAX}; default 20.`),
      cursor: cursor.optional(),
    })
    .strict(),
  output: z.object({
    kb_id: z.string(),
    file_id: z.string(),
    path: z.string(),
    deleted: z.boolean(),
    versions: z.array(
      z.object({
        version: z.number().int(),
        version_id: z.string(),
        operation: z.enum(FILE_OPERATIONS),
        path: z.string().describe('The path at this version.'),
        sha256: z.string(),
        size_bytes: z.number().int(),
        media_type: z.string(),
        restored_from: z.number().int().nullable(),
        author,
        created_at: z.string(),
        ...importedFromField,
      }),
    ),
    next_cursor: z.string().nullable(),
  }),
  annotations: READ,
  scopes: ['context.read'],
  minimumRole: 'viewer',
  async run({ caller, services, audit }, args) {
    const page = await fileHistory(services.db, caller, { ...fileRefOf(args), limit: args.limit, cursor: args.cursor }, audit);
    return jsonReply({
      kb_id: page.kb.kb.id,
      file_id: page.file.id,
      path: page.file.path,
      deleted: page.file.deletedAt !== undefined,
      versions: page.versions.map((v) => ({
        version: v.version,
        version_id: v.id,
        operation: v.operation,
        path: v.path,
        sha256: v.sha256,
        size_bytes: v.sizeBytes,
        media_type: v.mediaType,
        restored_from: v.restoredFrom ?? null,
        author: v.author === undefined ? null : { id: v.author.id, kind: v.author.kind, name: v.author.name },
        created_at: iso(v.createdAt),
        ...importedFromWire(v.importedFrom),
      })),
      next_cursor: page.nextCursor ?? null,
    });
  },
});

export const restoreVersionTool = defineTool({
  name: 'restore_version',
  dialect: 'atmina',
  title: 'Restore version',
  description:
    'Makes a retained version the file’s content again, as a new version (Editor); the file keeps its current path. if_match must be the current head’s sha256.',
  input: z
    .object({
      kb_id: kbId,
      ...fileIdentity,
      version: z.number().int().min(1).describe('The retained version to restore (file_history).'),
      if_match: z.string().describe('The current head’s sha256.'),
    })
    .strict(),
  output: z.object({ ...writtenFields, restored_from: z.number().int() }),
  annotations: WRITE,
  ...EDITOR_WRITES,
  async run({ caller, services, audit }, args) {
    const result = await restoreVersion(services, caller, { ...fileRefOf(args), version: args.version, ifMatch: args.if_match }, audit);
    return jsonReply({ ...writtenWire(result), restored_from: result.restoredFrom });
  },
});

export const moveFileTool = defineTool({
  name: 'move_file',
  dialect: 'atmina',
  title: 'Move file',
  description:
    'Moves (renames) a file to to_path, keeping its id and history (Editor). Fails with conflict when a file already exists at to_path. This tool takes no if_match guard.',
  input: z.object({ kb_id: kbId, ...fileIdentity, to_path: filePath.describe('The new path.') }).strict(),
  output: z.object({
    kb_id: z.string(),
    file_id: z.string(),
    from_path: z.string(),
    path: z.string(),
    version: z.number().int(),
    sha256: z.string(),
    etag: z.string(),
    changed: z.boolean().describe('false when the file already was at to_path.'),
  }),
  annotations: IDEMPOTENT_WRITE,
  ...EDITOR_WRITES,
  async run({ caller, services, audit }, args) {
    const moved = await moveFile(services, caller, { ...fileRefOf(args), toPath: args.to_path }, audit);
    const { file } = moved;
    return jsonReply({
      kb_id: file.kbId,
      file_id: file.id,
      from_path: moved.fromPath,
      path: file.path,
      version: file.version,
      sha256: file.sha256,
      etag: file.sha256,
      changed: moved.changed,
    });
  },
});

export const deleteFileTool = defineTool({
  name: 'delete_file',
  dialect: 'atmina',
  title: 'Delete file',
  description:
    'Deletes a file (Admin) after explicit confirmation: confirm must be the file’s current path, exactly. The history is kept (Admins read it with file_history by file_id) and the path is free again.',
  input: z.object({ kb_id: kbId, ...fileIdentity, confirm: z.string().describe('The file’s current path, exactly: the explicit confirmation.') }).strict(),
  output: z.object({
    kb_id: z.string(),
    file_id: z.string(),
    path: z.string(),
    deleted: z.literal(true),
    version: z.number().int().describe('The version that records the deletion.'),
    deleted_at: z.string().nullable(),
  }),
  annotations: DESTRUCTIVE,
  scopes: ['context.write'],
  minimumRole: 'admin',
  rateLimit: KB_WRITES,
  async run({ caller, services, audit }, args) {
    const file = await deleteFile(services, caller, { ...fileRefOf(args), confirm: args.confirm }, audit);
    return jsonReply({
      kb_id: file.kbId,
      file_id: file.id,
      path: file.path,
      deleted: true as const,
      version: file.version,
      deleted_at: isoOrNull(file.deletedAt),
    });
  },
});
