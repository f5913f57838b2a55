import type { Provenance } from '../../kernel/imports/provenance.ts';
import { checkProvenance } from '../../kernel/imports/provenance.ts';
import type { Caller } from '../../kernel/access/caller.ts';
import type { AuditTrail } from '../../kernel/audit/trail.ts';
import { isKgwError, validation } from '../../kernel/errors.ts';
import { kbFor } from './access.ts';
import type { KbStores } from './files.ts';
import { sha256Of } from './files.ts';
import { parseKbPath, pathProblem } from './paths.ts';
import { catalog, checkSize, classify, uploadType } from './upload-catalog.ts';

/**
 * Files brought into a Knowledge Base by the operator (`kgw import folder`), as a person of the
 * tenant: each through the same classification and catalogue as an upload (text of at most
 * 1 MiB for the text tools, images and PDFs as Assets with their Companions, anything else an
 * Asset kept as it is), so an imported file is what the tools would have made of it. A file
 * the KB holds with the same bytes is left as it is; one with other bytes gets a new version;
 * a refused file (its path, size or kind) is reported with the reason and changes nothing.
 */

/** Files in one call: the CLI sends a folder in batches of at most this many (and 8 MiB). */
export const IMPORT_BATCH_FILES_MAX = 200;

export type ImportOutcome = 'created' | 'updated' | 'unchanged';

export type ImportedFile =
  | { readonly path: string; readonly outcome: ImportOutcome; readonly kind: 'text' | 'asset'; readonly sha256: string; readonly version: number | null }
  | { readonly path: string; readonly error: string };

/** Imports `files` into the KB (by id or slug) as `caller`; with `dryRun`, says what each would do and writes nothing. */
export async function importKbFiles(
  stores: KbStores,
  caller: Caller,
  input: {
    readonly kb: string;
    readonly files: readonly { readonly path: string; readonly bytes: Buffer; readonly provenance?: Provenance | undefined }[];
    readonly dryRun: boolean;
  },
  audit: AuditTrail,
): Promise<{ kbId: string; slug: string; files: ImportedFile[] }> {
  if (input.files.length > IMPORT_BATCH_FILES_MAX) throw validation(`at most ${IMPORT_BATCH_FILES_MAX} files in one call, got ${input.files.length}`);
  const { kb } = await kbFor(stores.db, caller, input.kb, 'editor', 'importing files');
  const results: ImportedFile[] = [];
  // What the KB holds at the batch's paths, read once: a file sent again with the same bytes is
  // left as it is without being classified or written (the common case of a second run).
  const paths = input.files.flatMap((file) => (pathProblem(file.path) === undefined ? [file.path.normalize('NFC')] : []));
  const heads = new Map(
    (
      await stores.db.query<{ path: string; sha256: string; kind: 'text' | 'asset'; latest_version: number }>(
        'SELECT path, sha256, kind, latest_version FROM kb_files WHERE tenant_id = $1 AND kb_id = $2 AND path = ANY($3::text[]) AND deleted_at IS NULL',
        [caller.tenant.id, kb.id, paths],
      )
    ).map((row) => [row.path, row]),
  );
  for (const file of input.files) {
    try {
      const path = parseKbPath(file.path);
      const provenance = file.provenance === undefined ? undefined : checkProvenance(file.provenance);
      const sha256 = sha256Of(file.bytes);
      const head = heads.get(path);
      if (head?.sha256 === sha256) {
        results.push({ path, outcome: 'unchanged', kind: head.kind, sha256, version: input.dryRun ? null : head.latest_version });
        continue;
      }
      const mediaType = uploadType(path, undefined, 'path');
      checkSize(file.bytes.length, path, mediaType);
      const classified = await classify(path, mediaType, file.bytes);
      if (input.dryRun) {
        results.push({ path, outcome: head === undefined ? 'created' : 'updated', kind: classified.kind, sha256, version: null });
        continue;
      }
      // Bytes before metadata, as every KB write: the version names bytes already stored.
      await stores.blob.put({ body: file.bytes, size: file.bytes.length, sha256 });
      const saved = await catalog(stores, caller, kb.id, { path, replace: true }, { sha256, sizeBytes: file.bytes.length, provenance }, classified, audit);
      const outcome: ImportOutcome = !saved.changed ? 'unchanged' : saved.operation === 'upload' ? 'created' : 'updated';
      results.push({ path, outcome, kind: saved.file.kind, sha256, version: saved.file.version });
    } catch (error) {
      if (!isKgwError(error)) throw error;
      results.push({ path: file.path, error: error.message });
    }
  }
  return { kbId: kb.id, slug: kb.slug, files: results };
}
