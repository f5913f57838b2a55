import type { BlobStore } from '../../../connectors/blob/contract.ts';
import type { KbFileNode, KbLinkInput } from '../../../connectors/graph/contract.ts';
import type { KbFileGraphSource } from '../../../connectors/graph/projection.ts';
import type { ResourceRef } from '../../../connectors/projection.ts';
import type { Queryable } from '../../store/db.ts';
import { KB_TEXT_MAX_BYTES } from './files.ts';
import { headTexts, shownFiles } from './projection.ts';
import { siblingModule } from '../../kernel/module-url.ts';
import { offload } from '../../kernel/offload.ts';
import { hasReferences, referencesOf } from './text/references.ts';

/** The module of referencesOf, for the worker that runs it. */
const REFERENCES_MODULE = siblingModule(import.meta.url, './text/references');

/*
 * KB files as the graph keeps them for `related`. The outbox rows of a file name it; this reads
 * it as it now is, in the transaction that claimed the rows: its KB, path and kind, and for a
 * Markdown file the references in its bytes. A file deleted, or in an archived KB, is not
 * returned, so the graph forgets it.
 */

export function kbFileGraphSource(blob: BlobStore): KbFileGraphSource {
  return {
    async load(tx: Queryable, refs: readonly ResourceRef[], signal: AbortSignal) {
      const loaded: { file: KbFileNode; links: KbLinkInput[] }[] = [];
      const shown = await shownFiles(tx, refs);
      // A text file is at most KB_TEXT_MAX_BYTES.
      const texts = await headTexts(
        blob,
        shown.map((s) => s.file),
        KB_TEXT_MAX_BYTES,
        signal,
        hasReferences,
      );
      for (const [i, { tenantId, file }] of shown.entries()) {
        const text = texts[i] ?? '';
        // Reading a large file's links runs on a worker thread (src/kernel/offload.ts).
        const links = hasReferences(file) ? (await offload(REFERENCES_MODULE, referencesOf, text.length, text, file.path)).references : [];
        loaded.push({
          file: { tenantId, kbId: file.kbId, fileId: file.id, path: file.path, kind: file.kind, mediaType: file.mediaType },
          links: links.map((l) => ({ type: l.type, key: l.key, target: l.target, paths: l.paths, name: l.name })),
        });
      }
      return loaded;
    },
  };
}
