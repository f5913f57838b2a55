import { z } from 'zod';
import type { AppliedFile, ApplyGenerated, GeneratedFile } from '../kb/pages.ts';
import { GENERATE_READ_MAX_FILES, applyHubIndex, applyNav, fileOutline, previewHubIndex, previewNav } from '../kb/pages.ts';
import { refuseKb } from '../kb/refusals.ts';
import { FRONT_MATTER_STATUSES } from '../kb/text/front-matter.ts';
import { defineTool, jsonReply } from '../../mcp/tool.ts';
import { KB_WRITES, READ, WRITE, contributionNote, fileFields, fileIdentity, fileRefOf, fileWire, kbId } from './schemas.ts';

/*
 * The Atmina page tools: a file's outline, and the generated hub index and navigation, each a
 * preview first and then an explicit apply, of what the files generate then, guarded by the
 * preview's hashes when the caller passes them.
 */

export const getFileOutlineTool = defineTool({
  name: 'get_file_outline',
  dialect: 'atmina',
  title: 'File outline',
  description:
    'The outline of a file by path or file_id (path wins when both are sent): its Markdown headings with their level and line, its front-matter keys, size_bytes and sha256, without the body. After a write, compare size_bytes and sha256 with what you sent. Non-Markdown files and Assets have no headings.',
  input: z.object({ kb_id: kbId, ...fileIdentity }).strict(),
  output: z.object({
    contribution_note: contributionNote,
    kb_id: z.string(),
    ...fileFields,
    front_matter: z.object({
      status: z.enum(FRONT_MATTER_STATUSES).describe('absent, parsed, or why it was not read: unterminated, too_large, malformed.'),
      keys: z.array(z.string()).describe('Its top-level keys in document order; empty unless parsed.'),
    }),
    headings: z.array(z.object({ level: z.number().int().min(1).max(6), text: z.string(), line: z.number().int().describe('1-based.') })),
    truncated: z.boolean().describe('true when the file has more headings than the 1000 listed.'),
  }),
  annotations: READ,
  scopes: ['context.read'],
  minimumRole: 'viewer',
  async run({ caller, services, audit }, args) {
    const { kb, file, outline, note } = await fileOutline(services, caller, fileRefOf(args), audit);
    return jsonReply({
      ...(note === undefined ? {} : { contribution_note: note }),
      kb_id: kb.kb.id,
      ...fileWire(file),
      front_matter: { status: outline.frontMatter.status, keys: [...outline.frontMatter.keys] },
      headings: outline.headings.map((h) => ({ level: h.level, text: h.text, line: h.line })),
      truncated: outline.truncated,
    });
  },
});

const operation = z
  .enum(['preview', 'apply'])
  .optional()
  .describe('preview (default): what would be written, nothing written. apply: writes what the KB’s files generate now.');
const applyFields = {
  sha256: z
    .string()
    .optional()
    .describe('For apply, optional: the sha256 of the preview. Conflict, nothing written, when the files changed so the content would differ.'),
  if_match: z
    .string()
    .nullable()
    .optional()
    .describe(
      'For apply, optional: the preview’s current_sha256 as it was (null when there was no file). Conflict, nothing written, when the file changed since. Omitted: whatever file is there is replaced (its history keeps it).',
    ),
};

const generatedOutput = z.object({
  kb_id: z.string(),
  operation: z.enum(['preview', 'apply']),
  path: z.string().describe('The file written or to be written.'),
  sha256: z.string().describe('SHA-256 of the generated content; pass it to apply.'),
  size_bytes: z.number().int(),
  listed: z.number().int().describe('Files listed.'),
  omitted: z.number().int().describe('Files left out by the bound.'),
  content: z.string().optional().describe('Preview: the exact content that apply writes.'),
  current_sha256: z.string().nullable().optional().describe('Preview: the existing file’s sha256 (pass it as if_match to apply), or null when there is none.'),
  differs: z.boolean().optional().describe('Preview: whether the content differs from the existing file (true when there is none).'),
  hand_written: z
    .boolean()
    .optional()
    .describe('Preview: whether the existing index.md was written by hand (no generated marker); apply replaces it, its history keeps it.'),
  file_id: z.string().optional().describe('Apply: the written file.'),
  version: z.number().int().optional().describe('Apply: its head version.'),
  etag: z.string().optional(),
  changed: z.boolean().optional().describe('Apply: false when the file already held exactly this; no version was saved.'),
});

type GeneratedWire = z.infer<typeof generatedOutput>;

function previewWire(file: GeneratedFile): GeneratedWire {
  return {
    kb_id: file.kb.kb.id,
    operation: 'preview',
    path: file.path,
    sha256: file.sha256,
    size_bytes: file.sizeBytes,
    listed: file.listed,
    omitted: file.omitted,
    content: file.content,
    current_sha256: file.current?.sha256 ?? null,
    differs: file.differs,
    hand_written: file.handWritten,
  };
}

function applyWire(applied: AppliedFile): GeneratedWire {
  const { file } = applied.result;
  return {
    kb_id: applied.kb.kb.id,
    operation: 'apply',
    path: file.path,
    sha256: file.sha256,
    size_bytes: file.sizeBytes,
    listed: applied.listed,
    omitted: applied.omitted,
    file_id: file.id,
    version: file.version,
    etag: file.sha256,
    changed: applied.result.changed,
  };
}

/** The rate of the generating tools: an apply writes the file as write_file does; a preview writes nothing and is not counted. */
const GENERATED_WRITE = { ...KB_WRITES, counts: (args: { operation?: 'preview' | 'apply' | undefined }) => args.operation === 'apply' } as const;

/** The apply guards of the arguments (both optional); refuses a preview with either field. */
function guardOf(args: {
  operation?: 'preview' | 'apply' | undefined;
  sha256?: string | undefined;
  if_match?: string | null | undefined;
}): ApplyGenerated | undefined {
  if (args.operation !== 'apply') {
    if (args.sha256 !== undefined || args.if_match !== undefined)
      throw refuseKb.invalidField('operation', 'sha256 and if_match are for operation "apply"; preview first');
    return undefined;
  }
  return { sha256: args.sha256, ifMatch: args.if_match };
}

export const generateHubIndexTool = defineTool({
  name: 'generate_hub_index',
  dialect: 'atmina',
  title: 'Generate hub index',
  description: `Generates a folder’s index.md listing its files (titles and descriptions from front matter or first headings; the first ${GENERATE_READ_MAX_FILES} Markdown files are read). Preview first: it returns the exact content, its sha256 and current_sha256 of the existing file, and writes nothing. Then call with operation "apply" to write what the files generate now (Editor); add the preview’s sha256 and its current_sha256 as if_match to write only if nothing changed in between (else conflict).`,
  input: z
    .object({
      kb_id: kbId,
      folder: z.string().optional().describe('The folder, e.g. "guides"; omit or "" for the KB’s root.'),
      title: z.string().optional().describe('The index heading; default the folder’s name.'),
      operation,
      ...applyFields,
    })
    .strict(),
  output: generatedOutput,
  annotations: WRITE,
  scopes: ['context.write'],
  minimumRole: 'editor',
  rateLimit: GENERATED_WRITE,
  async run({ caller, services, audit }, args) {
    const guard = guardOf(args);
    const input = { kbId: args.kb_id, folder: args.folder, title: args.title };
    if (guard === undefined) return jsonReply(previewWire(await previewHubIndex(services, caller, input, audit)));
    return jsonReply(applyWire(await applyHubIndex(services, caller, { ...input, ...guard }, audit)));
  },
});

export const generateNavTool = defineTool({
  name: 'generate_nav',
  dialect: 'atmina',
  title: 'Generate navigation',
  description: `Generates wiki/nav.yaml, the navigation tree of the KB’s Markdown pages (titles from front matter or first headings; the first ${GENERATE_READ_MAX_FILES} pages are read). Preview first: it returns the exact content, its sha256 and current_sha256 of the existing file, and writes nothing. Then call with operation "apply" to write what the pages generate now (Editor); add the preview’s sha256 and its current_sha256 as if_match to write only if nothing changed in between (else conflict).`,
  input: z.object({ kb_id: kbId, operation, ...applyFields }).strict(),
  output: generatedOutput,
  annotations: WRITE,
  scopes: ['context.write'],
  minimumRole: 'editor',
  rateLimit: GENERATED_WRITE,
  async run({ caller, services, audit }, args) {
    const guard = guardOf(args);
    if (guard === undefined) return jsonReply(previewWire(await previewNav(services, caller, { kbId: args.kb_id }, audit)));
    return jsonReply(applyWire(await applyNav(services, caller, { kbId: args.kb_id, ...guard }, audit)));
  },
});
