import { createHash } from 'node:crypto';
import type { BlobStore } from '../../../connectors/blob/contract.ts';
import { blobKey } from '../../../connectors/blob/contract.ts';
import type { Caller } from '../../kernel/access/caller.ts';
import type { AuditTrail } from '../../kernel/audit/trail.ts';
import { KgwError } from '../../kernel/errors.ts';
import type { KbWithAccess } from './access.ts';
import { kbFor } from './access.ts';
import { contributionNote } from './contributions.ts';
import type { FileRef, KbStores } from './files.ts';
import type { WriteResult } from './file-versions.ts';
import { findFile, parseRef, parseSha, textOf } from './files.ts';
import { applyWrite, prepareWrite } from './file-writes.ts';
import { parseKbPath } from './paths.ts';
import type { KbFile } from './queries.ts';
import { refuseKb } from './refusals.ts';
import { HUB_INDEX_FILE, hubIndexFor, isGeneratedHubIndex } from './text/hub-index.ts';
import { navFor } from './text/nav.ts';
import type { Outline } from './text/outline.ts';
import { outlineOf, summarisePage } from './text/outline.ts';
import type { PageEntry } from './text/pages.ts';

/**
 * The page views of a Knowledge Base: a file's outline (get_file_outline), and the two files
 * generated from the KB's pages, a folder's hub index (generate_hub_index) and the KB's
 * navigation (generate_nav), each previewed and then applied through the write path of
 * write_file. docs/atmina.md ("Outlines", "Generated files") has the rules.
 */

const MARKDOWN = 'text/markdown';

// ---------------------------------------------------------------------------------------------
// Outlines

export interface FileOutline {
  readonly kb: KbWithAccess;
  readonly file: KbFile;
  /** Markdown only; other files (plain text, JSON, Assets) have no headings or front matter. */
  readonly outline: Outline;
  /** The reader's contribution note, when it has not written to the KB lately. */
  readonly note: string | undefined;
}

const NO_OUTLINE: Outline = { frontMatter: { status: 'absent', keys: [] }, headings: [], truncated: false };

/**
 * get_file_outline (Viewer): the headings and front-matter keys of a Markdown file with its
 * size and SHA-256, never its body. An Asset's bytes are not read: its outline is empty, and
 * size_bytes and sha256 are those of the original bytes, which an uploader compares.
 */
export async function fileOutline(stores: KbStores, caller: Caller, input: { kbId: string } & FileRef, audit: AuditTrail): Promise<FileOutline> {
  const ref = parseRef(input);
  const kb = await kbFor(stores.db, caller, input.kbId, 'viewer', 'reading files');
  const file = await findFile(stores.db, caller.tenant.id, kb.kb.id, ref);
  const outline = file.kind === 'text' && file.mediaType === MARKDOWN ? outlineOf(await textOf(stores.blob, file)) : NO_OUTLINE;
  const note = await readerNote(stores, caller, kb);
  audit.touch({ type: 'kb_file', id: file.id, version: file.version });
  return { kb, file, outline, note };
}

/** The contribution note of a read by `caller` in `kb`. */
export function readerNote(stores: KbStores, caller: Caller, kb: KbWithAccess): Promise<string | undefined> {
  return contributionNote(stores.db, caller.tenant.id, { id: kb.kb.id, teamId: kb.kb.team.id }, caller.principal.id);
}

// ---------------------------------------------------------------------------------------------
// Generated files

/**
 * At most this many files are read for the titles and descriptions of a hub index or the
 * navigation (the first in path order), and of each only its first GENERATE_READ_BYTES: front
 * matter and a first heading are at the top. Files beyond are listed by their file name.
 */
export const GENERATE_READ_MAX_FILES = 1000;
export const GENERATE_READ_BYTES = 96 * 1024;
const READ_CONCURRENCY = 8;

export interface GeneratedFile {
  readonly kb: KbWithAccess;
  readonly path: string;
  /** The exact content that would be written. */
  readonly content: string;
  readonly sha256: string;
  readonly sizeBytes: number;
  /** The live file at `path` now, if any. */
  readonly current: KbFile | undefined;
  /** Whether `current` is absent or holds other bytes. */
  readonly differs: boolean;
  /** Whether `current` is a file a person wrote (a hub index without the generated marker). */
  readonly handWritten: boolean;
  /** The files listed, and how many the bound left out. */
  readonly listed: number;
  readonly omitted: number;
}

interface Generated {
  readonly path: string;
  readonly content: string;
  readonly listed: number;
  readonly omitted: number;
}

interface CatalogRow {
  path: string;
  sha256: string;
  size_bytes: string | number;
  media_type: string;
  kind: string;
}

const sha256Of = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');
const LOSSY_UTF8 = new TextDecoder('utf-8', { fatal: false });

/** The first GENERATE_READ_BYTES of a text blob, decoded (a sequence cut at the end becomes U+FFFD). */
async function headOf(blob: BlobStore, sha256: string, sizeBytes: number): Promise<string> {
  if (sizeBytes === 0) return '';
  const chunks: Buffer[] = [];
  const stream = await blob.get(blobKey(sha256), { start: 0, end: Math.min(sizeBytes, GENERATE_READ_BYTES) - 1 });
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return LOSSY_UTF8.decode(Buffer.concat(chunks).subarray(0, GENERATE_READ_BYTES));
}

/** The page entries of catalog rows: Markdown ones summarised from their heads, the first GENERATE_READ_MAX_FILES only. */
async function pageEntries(blob: BlobStore, rows: readonly CatalogRow[]): Promise<PageEntry[]> {
  const entries: PageEntry[] = rows.map((row) => ({ path: row.path }));
  const toRead = rows
    .map((row, index) => ({ row, index }))
    .filter(({ row }) => row.kind === 'text' && row.media_type === MARKDOWN)
    .slice(0, GENERATE_READ_MAX_FILES);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < toRead.length) {
      const item = toRead[next];
      next += 1;
      if (item === undefined) break;
      const summary = summarisePage(await headOf(blob, item.row.sha256, Number(item.row.size_bytes)));
      entries[item.index] = { path: item.row.path, ...summary };
    }
  };
  await Promise.all(Array.from({ length: READ_CONCURRENCY }, worker));
  return entries;
}

/** The live files of the KB under `prefix` (all of them for ``), Markdown only when asked, in path order. */
async function catalog(stores: KbStores, tenantId: string, kbId: string, prefix: string, markdownOnly: boolean): Promise<CatalogRow[]> {
  return stores.db.query<CatalogRow>(
    `SELECT f.path, f.sha256, f.size_bytes, f.media_type, f.kind FROM kb_files f
      WHERE f.tenant_id = $1 AND f.kb_id = $2 AND f.deleted_at IS NULL AND starts_with(f.path, $3)
        AND ($4::text IS NULL OR f.media_type = $4)
      ORDER BY f.path COLLATE "C"`,
    [tenantId, kbId, prefix, markdownOnly ? MARKDOWN : null],
  );
}

/** A folder as given (`` or `/` for the root; one trailing `/` allowed), in normal form. */
function parseFolder(raw: string): string {
  const folder = raw.replace(/^\/$/, '').replace(/(.)\/$/, '$1');
  if (folder === '') return '';
  parseKbPath(`${folder}/${HUB_INDEX_FILE}`, 'folder');
  return parseKbPath(folder, 'folder');
}

export interface HubIndexInput {
  readonly kbId: string;
  readonly folder?: string | undefined;
  readonly title?: string | undefined;
}

export interface NavInput {
  readonly kbId: string;
}

type Generator = (stores: KbStores, tenantId: string, kbId: string) => Promise<Generated>;

function hubIndexGenerator(input: HubIndexInput): Generator {
  const folder = parseFolder(input.folder ?? '');
  return async (stores, tenantId, kbId) => {
    const rows = await catalog(stores, tenantId, kbId, folder === '' ? '' : `${folder}/`, false);
    const path = folder === '' ? HUB_INDEX_FILE : `${folder}/${HUB_INDEX_FILE}`;
    const index = hubIndexFor(
      folder,
      await pageEntries(
        stores.blob,
        rows.filter((row) => row.path !== path),
      ),
      input.title === undefined ? {} : { title: input.title },
    );
    // parseFolder let only folder paths through.
    if (index === undefined) throw refuseKb.invalidPath('folder', 'must be a folder path');
    return { path: index.path, content: index.content, listed: index.entries.length, omitted: index.omitted };
  };
}

const navGenerator: Generator = async (stores, tenantId, kbId) => {
  const rows = await catalog(stores, tenantId, kbId, '', true);
  const nav = navFor(await pageEntries(stores.blob, rows));
  return { path: nav.path, content: nav.content, listed: nav.pages.length, omitted: nav.omitted };
};

async function preview(stores: KbStores, caller: Caller, kbId: string, generate: Generator, audit: AuditTrail): Promise<GeneratedFile> {
  const kb = await kbFor(stores.db, caller, kbId, 'editor', 'generating files');
  const generated = await generate(stores, caller.tenant.id, kb.kb.id);
  const current = await currentFile(stores, caller.tenant.id, kb.kb.id, generated.path);
  const sha256 = sha256Of(generated.content);
  const handWritten =
    current !== undefined && generated.path.endsWith(HUB_INDEX_FILE) && current.kind === 'text' && !isGeneratedHubIndex(await textOf(stores.blob, current));
  audit.touch({ type: 'kb', id: kb.kb.id });
  return {
    kb,
    path: generated.path,
    content: generated.content,
    sha256,
    sizeBytes: Buffer.byteLength(generated.content, 'utf8'),
    current,
    differs: current?.sha256 !== sha256,
    handWritten,
    listed: generated.listed,
    omitted: generated.omitted,
  };
}

async function currentFile(stores: KbStores, tenantId: string, kbId: string, path: string): Promise<KbFile | undefined> {
  try {
    return await findFile(stores.db, tenantId, kbId, { path });
  } catch (error) {
    if (error instanceof KgwError && error.reason === 'file_not_found') return undefined;
    throw error;
  }
}

export interface ApplyGenerated {
  /** The sha256 of the previewed content; omitted: whatever the KB's files generate now. */
  readonly sha256?: string | undefined;
  /**
   * The previewed current_sha256, the head the apply replaces (null: the preview saw no file);
   * omitted: whatever file is at the path now, or none.
   */
  readonly ifMatch?: string | null | undefined;
}

/**
 * Writes the generated file, as generated now (the spec: "preview first, then call with
 * operation apply"). The preview's hashes are optional guards: `sha256`, the content generated
 * now must hash to it; `ifMatch`, the file's head must be the one the preview saw (null: no
 * file). A guard that no longer holds is `conflict`, nothing written. Written as write_file
 * writes (create, or overwrite guarded by the head it read), so it leaves the same history,
 * outbox rows, contribution and audit event.
 */
export interface AppliedFile {
  readonly kb: KbWithAccess;
  readonly result: WriteResult;
  readonly listed: number;
  readonly omitted: number;
}

/** Attempts of an apply without if_match whose file another writer keeps changing between the read and the write. */
const APPLY_ATTEMPTS = 3;

async function apply(stores: KbStores, caller: Caller, kbId: string, generate: Generator, guard: ApplyGenerated, audit: AuditTrail): Promise<AppliedFile> {
  const expected = guard.sha256 === undefined ? undefined : parseSha('sha256', guard.sha256);
  const ifMatch = guard.ifMatch === undefined || guard.ifMatch === null ? guard.ifMatch : parseSha('if_match', guard.ifMatch);
  const target = await kbFor(stores.db, caller, kbId, 'editor', 'generating files');
  const { kb } = target;
  for (let attempt = 1; ; attempt += 1) {
    const generated = await generate(stores, caller.tenant.id, kb.id);
    if (expected !== undefined && sha256Of(generated.content) !== expected) throw refuseKb.generatedChanged(generated.path);
    const current = await currentFile(stores, caller.tenant.id, kb.id, generated.path);
    const head = current?.sha256 ?? null;
    if (ifMatch !== undefined && head !== ifMatch) throw refuseKb.generatedHeadMoved(generated.path, head, ifMatch);
    // The write is guarded by the head just read (or its absence), so nobody's write between the
    // read and the write is replaced unseen.
    const write = prepareWrite({ path: generated.path, mode: head === null ? 'create' : 'overwrite', content: generated.content, ifMatch: head ?? undefined });
    try {
      const result = await applyWrite(stores, caller, kb.id, write, audit);
      return { kb: target, result, listed: generated.listed, omitted: generated.omitted };
    } catch (error) {
      const raced = error instanceof KgwError && (error.reason === 'file_not_found' || error.reason === 'stale_if_match' || error.reason === 'file_exists');
      if (!raced) throw error;
      // The file moved between the read and the write: the caller's guard no longer holds; an
      // unguarded apply reads again (the KB's files may have moved with it), a few times.
      if (ifMatch !== undefined) {
        const now = await currentFile(stores, caller.tenant.id, kb.id, generated.path);
        throw refuseKb.generatedHeadMoved(generated.path, now?.sha256 ?? null, ifMatch);
      }
      if (attempt >= APPLY_ATTEMPTS) throw refuseKb.writeContended(attempt);
    }
  }
}

/** generate_hub_index preview (Editor): `<folder>/index.md` as it would be written, nothing written. */
export function previewHubIndex(stores: KbStores, caller: Caller, input: HubIndexInput, audit: AuditTrail): Promise<GeneratedFile> {
  return preview(stores, caller, input.kbId, hubIndexGenerator(input), audit);
}

/** generate_hub_index apply (Editor): writes the previewed index. */
export function applyHubIndex(stores: KbStores, caller: Caller, input: HubIndexInput & ApplyGenerated, audit: AuditTrail): Promise<AppliedFile> {
  return apply(stores, caller, input.kbId, hubIndexGenerator(input), input, audit);
}

/** generate_nav preview (Editor): `wiki/nav.yaml` as it would be written, nothing written. */
export function previewNav(stores: KbStores, caller: Caller, input: NavInput, audit: AuditTrail): Promise<GeneratedFile> {
  return preview(stores, caller, input.kbId, navGenerator, audit);
}

/** generate_nav apply (Editor): writes the previewed navigation. */
export function applyNav(stores: KbStores, caller: Caller, input: NavInput & ApplyGenerated, audit: AuditTrail): Promise<AppliedFile> {
  return apply(stores, caller, input.kbId, navGenerator, input, audit);
}
