import { z } from 'zod';
import type { KbWithAccess } from '../kb/access.ts';
import type { WriteResult } from '../kb/file-versions.ts';
import type { KbFile } from '../kb/queries.ts';
import type { ListedFile } from '../kb/catalog.ts';
import { FILE_KINDS, FILE_OPERATIONS, KB_VISIBILITIES, LOCATION_POLICIES } from '../kb/queries.ts';
import { iso } from '../../kernel/instants.ts';

/**
 * Pieces the Atmina Knowledge-Base tools share: input fields, output shapes and their wire
 * mappers (snake_case, ISO instants). Bounds the core checks with its own words (paths, sizes,
 * hashes) are left to it, so a caller reads one clear message instead of a schema's.
 */

export const READ = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;
export const WRITE = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false } as const;
export const IDEMPOTENT_WRITE = { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;
export const DESTRUCTIVE = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false } as const;

/**
 * The rate of a tool that writes files or their bytes (ToolDef.rateLimit; docs/atmina.md,
 * Rates). Tools that manage KBs, shares or team settings are not counted: they add no version
 * and no bytes, and need an Admin.
 */
export const KB_WRITES = { limiter: 'kb_writes' } as const;

/** Who may call a tool that writes a KB's files or their bytes, and how it is counted: an Editor of the KB, at the KB_WRITES rate. */
export const EDITOR_WRITES = { scopes: ['context.write'], minimumRole: 'editor', rateLimit: KB_WRITES } as const;

export const kbId = z
  .string()
  .describe('The Knowledge Base: its kb_id from list_kbs; its slug works too, bare ("handbook") or with your organisation\'s slug ("acme/handbook").');
export const filePath = z
  .string()
  .describe('The file path in the KB: relative, / between folders, e.g. "decisions/search.md"; case-sensitive, at most 1024 bytes.');
export const fileId = z.string().describe('The file_id a list, read or write returned.');

/** The reader's contribution note (src/atmina/kb/contributions.ts): first in a read's answer, ahead of the content. */
export const contributionNote = z
  .string()
  .optional()
  .describe('Present when you have never written to this Knowledge Base or not lately; absent when you have. Only your own writes count.');

/** A file named by path or file_id; the path wins when both are sent. */
export const fileIdentity = {
  path: filePath.optional().describe('The file path (wins over file_id when both are sent).'),
  file_id: fileId.optional(),
};

/** The KB and the file (fileIdentity) a tool's arguments name, as the core takes them. */
export const fileRefOf = (args: { kb_id: string; path?: string | undefined; file_id?: string | undefined }) => ({
  kbId: args.kb_id,
  path: args.path,
  fileId: args.file_id,
});

export const visibility = z
  .enum(KB_VISIBILITIES)
  .describe(
    'team: the owning team by role, plus its shares; private: the owning team’s Admins and the shares only; public: as team, and anyone in the organisation may search it.',
  );
export const locationPolicy = z
  .enum(LOCATION_POLICIES)
  .describe(
    'visible: search shows where a match is (the file, its path and snippets) to whoever may search the KB; flag_only: to a caller who may search but not read it (a public KB), search only flags that the KB holds a match.',
  );

const role = z.enum(['search', 'viewer', 'editor', 'admin']).describe('Your access: search (search only), or your Viewer, Editor or Admin role.');

export const kbOutput = z.object({
  kb_id: z.string().describe('Stable id; pass it as kb_id.'),
  slug: z.string().describe('Unique in the organisation.'),
  name: z.string(),
  description: z.string(),
  visibility: z.enum(KB_VISIBILITIES),
  location_policy: z.enum(LOCATION_POLICIES),
  team: z.object({ team_id: z.string(), slug: z.string(), name: z.string() }).describe('The owning team.'),
  role,
  created_at: z.string(),
  updated_at: z.string(),
});

export function kbWire({ kb, access }: KbWithAccess): z.infer<typeof kbOutput> {
  return {
    kb_id: kb.id,
    slug: kb.slug,
    name: kb.name,
    description: kb.description,
    visibility: kb.visibility,
    location_policy: kb.locationPolicy,
    team: { team_id: kb.team.id, slug: kb.team.slug, name: kb.team.name },
    role: access,
    created_at: iso(kb.createdAt),
    updated_at: iso(kb.updatedAt),
  };
}

export const fileFields = {
  file_id: z.string(),
  path: z.string(),
  version: z.number().int().describe('The head version: every write saves the next one.'),
  sha256: z.string().describe('SHA-256 of the exact bytes, lower-case hex; pass it as if_match.'),
  etag: z.string().describe('The head’s etag: its SHA-256.'),
  size_bytes: z.number().int(),
  media_type: z.string(),
  kind: z.enum(FILE_KINDS).describe('text (UTF-8, read and written here) or asset (binary, uploaded).'),
  tags: z.array(z.string()).describe('The front-matter tags of a Markdown file’s current version; empty for other files.'),
  updated_at: z.string(),
};

/** The head's identity, version and bytes, as every answer about a file gives them. */
function headWire(file: KbFile) {
  return { file_id: file.id, path: file.path, version: file.version, sha256: file.sha256, etag: file.sha256, size_bytes: file.sizeBytes };
}

export function fileWire(file: KbFile) {
  return {
    ...headWire(file),
    media_type: file.mediaType,
    kind: file.kind,
    tags: [...file.tags],
    updated_at: iso(file.updatedAt),
  };
}

/** A list_files entry (and atmina://kb/{kb_id}/files): the file, and where an Asset's Companion text comes from when known. */
export function listedFileWire(file: ListedFile) {
  return { ...fileWire(file), ...(file.descriptionSource === undefined ? {} : { description_source: file.descriptionSource }) };
}

/**
 * What a write that saves a file answers (write_file and the other text writes, upload_file,
 * update_file): the new head and what the write did.
 */
export const writtenFields = {
  kb_id: z.string(),
  file_id: z.string(),
  path: z.string(),
  version: z.number().int().describe('The new head version (the current one when nothing changed).'),
  sha256: z.string(),
  etag: z.string().describe('The new head’s etag: its SHA-256.'),
  size_bytes: z.number().int(),
  changed: z.boolean().describe('false when the file already held exactly this; no version was saved.'),
  operation: z.enum(FILE_OPERATIONS),
};

export function writtenWire(result: WriteResult): z.infer<z.ZodObject<typeof writtenFields>> {
  return {
    kb_id: result.file.kbId,
    ...headWire(result.file),
    changed: result.changed,
    operation: result.operation,
  };
}
