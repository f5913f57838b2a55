import { createHash } from 'node:crypto';
import { STAGE_MAX_BYTES, STAGE_PIECE_MAX_BYTES } from '../admin/stage.ts';
import { UsageError } from './usage.ts';
import type { OpResult } from '../admin/ops.ts';
import { parseKbPath } from '../atmina/index.ts';
import { mapInParallel } from '../kernel/concurrency.ts';
import { isKgwError } from '../kernel/errors.ts';
import type { OpRunner } from './session.ts';

/**
 * What the imports into a Knowledge Base share (kgw import folder, kgw import memory): the rule
 * that maps names to KB paths and the batches that carry files to the `kb.import` operation.
 */

/** A file larger than this is left out: the most a KB keeps of one file (an image or PDF: 25 MiB, which the KB says). */
export const IMPORT_FILE_MAX_BYTES = STAGE_MAX_BYTES;
/**
 * A file larger than this is staged in pieces (`stage.begin`, `stage.append`) and named in its
 * batch by its stage, since a batch must fit one request to a running gateway (16 MiB of JSON).
 */
const INLINE_MAX_BYTES = STAGE_PIECE_MAX_BYTES;
/** A batch: at most this many files and bytes (before base64) in one operation. */
const BATCH_FILES = 200;
const BATCH_BYTES = 8 * 1024 * 1024;

// eslint-disable-next-line no-control-regex
const REMOVED = /[\u0000-\u001f\u007f-\u009f\p{Cf}\u2028\u2029]/gu;

/**
 * A folder's name for a file (its segments as the file system gave them) as a KB path, by the
 * documented rule; undefined when nothing of a segment is left.
 */
export function mappedPath(segments: readonly string[]): string | undefined {
  const mapped = segments.map((segment) => segment.normalize('NFC').replace(REMOVED, '').replaceAll('\\', '-').trim());
  if (mapped.some((segment) => segment === '' || segment === '.' || segment === '..')) return undefined;
  return mapped.join('/');
}

type Imported = OpResult<'kb.import'>['files'][number];

/** A file on its way into a KB: where it came from (as the report names it), its KB path, and its size. */
export interface Outgoing {
  readonly source: string;
  readonly path: string;
  readonly size: number;
  /** Its bytes, read when its batch is sent; ItemRefused when they cannot be had (the reason is reported). */
  bytes(): Promise<Buffer>;
  /** Where it came from, for an import from another endpoint (kept on the version it saves). */
  provenance?(): Promise<SentProvenance>;
}

/** Provenance as the `kb.import` operation takes it. */
export interface SentProvenance {
  readonly source: string;
  readonly source_id: string;
  readonly source_version: number;
  readonly author?: string;
  readonly at?: string;
}

/** Items whose bytes are read at once while a batch is filled. */
const READ_CONCURRENCY = 8;

/** Thrown by an item's `bytes()` when it cannot be imported (the reason is reported; the others go on). */
export class ItemRefused extends Error {}

/** A JSON object (not an array, not null): what a source's or a file's items must be. */
export const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The options every import into a KB takes (with its own), for parseCommand. */
export const KB_IMPORT_OPTIONS = {
  tenant: { type: 'string' },
  kb: { type: 'string' },
  as: { type: 'string' },
  'dry-run': { type: 'boolean' },
  json: { type: 'boolean' },
} as const;

/** A report with nothing sent yet. */
export const noneSent = (): SentReport => ({ files: 0, bytes: 0, created: 0, updated: 0, unchanged: 0, failed: [] });

/** What sending files to a KB counts. */
export interface SentReport {
  files: number;
  bytes: number;
  created: number;
  updated: number;
  unchanged: number;
  failed: { path: string; reason: string }[];
}

/**
 * Sends `items` to the KB in batches of at most BATCH_FILES files and BATCH_BYTES bytes (the
 * `kb.import` operation, which checks the person's role and saves each file as an upload would),
 * counting each outcome in `report` and writing progress lines (files, MiB, rate, time left).
 */
export async function sendToKb(
  run: OpRunner,
  target: { readonly tenant: string; readonly kb: string; readonly as: string; readonly dryRun: boolean },
  items: readonly Outgoing[],
  report: SentReport,
  progress: (line: string) => void,
): Promise<void> {
  const total = items.reduce((sum, item) => sum + item.size, 0);
  const started = performance.now();
  let batch: Outgoing[] = [];
  let batchBytes = 0;
  const send = async (staged = false): Promise<void> => {
    if (batch.length === 0) return;
    // Bytes are read a few at a time (a source may be a remote endpoint); one that cannot be
    // read is refused alone, with the reason, and the rest of the batch goes on.
    const read = await mapInParallel(batch, READ_CONCURRENCY, async (item) => {
      try {
        // A path no KB file can have is refused here, alone, in the KB's words: the operation
        // refuses a batch whose arguments hold text the store cannot (NUL, lone surrogates) whole.
        parseKbPath(item.path);
        const [data, provenance] = await Promise.all([item.bytes(), item.provenance?.()]);
        return { item, data, provenance };
      } catch (error) {
        if (!(error instanceof ItemRefused) && !isKgwError(error)) throw error;
        report.failed.push({ path: item.source, reason: error.message });
        return undefined;
      }
    });
    const ready = read.filter((entry) => entry !== undefined);
    const files = await Promise.all(
      ready.map(async ({ item, data, provenance }) => ({
        path: item.path,
        ...(staged ? { stage_id: await stage(run, data) } : { data_base64: data.toString('base64') }),
        ...(provenance && { provenance }),
      })),
    );
    const result =
      files.length === 0 ? { files: [] } : await run('kb.import', { tenant: target.tenant, kb: target.kb, as: target.as, dry_run: target.dryRun, files });
    result.files.forEach((done: Imported, i) => {
      if ('error' in done) report.failed.push({ path: ready[i]?.item.source ?? done.path, reason: done.error });
      else report[done.outcome] += 1;
    });
    report.files += batch.length;
    report.bytes += batchBytes;
    const seconds = Math.max((performance.now() - started) / 1000, 0.001);
    progress(
      `${report.files}/${items.length} files, ${(report.bytes / (1024 * 1024)).toFixed(1)} of ${(total / (1024 * 1024)).toFixed(1)} MiB, ` +
        `${Math.round(report.files / seconds)} files/s, about ${Math.ceil((total - report.bytes) / Math.max(report.bytes / seconds, 1))} s left`,
    );
    batch = [];
    batchBytes = 0;
  };
  for (const item of items) {
    if (item.size > INLINE_MAX_BYTES) {
      // A large file goes alone, after the batch before it, staged: read and sent one at a time.
      await send();
      batch.push(item);
      batchBytes += item.size;
      await send(true);
      continue;
    }
    if (batch.length >= BATCH_FILES || (batch.length > 0 && batchBytes + item.size > BATCH_BYTES)) await send();
    batch.push(item);
    batchBytes += item.size;
  }
  await send();
}

/** Stages `bytes` in pieces; the stage's id, which `kb.import` takes instead of the bytes. */
async function stage(run: OpRunner, bytes: Buffer): Promise<string> {
  const { stage_id: id } = await run('stage.begin', { size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') });
  for (let offset = 0; offset < bytes.length; offset += INLINE_MAX_BYTES)
    await run('stage.append', { stage_id: id, offset, data_base64: bytes.subarray(offset, offset + INLINE_MAX_BYTES).toString('base64') });
  return id;
}

/**
 * `--kb FROM[=TO]` options as slug here → slug there (source → local for an import, local →
 * target for an export, as `form` names them); empty: every KB.
 */
export function kbChoices(values: readonly string[], form = 'SOURCE or SOURCE=LOCAL'): Map<string, string> {
  const chosen = new Map<string, string>();
  for (const value of values) {
    const [from = '', to = from] = value.split('=', 2);
    if (from === '' || to === '') throw new UsageError(`--kb takes ${form} (Knowledge Base slugs), not "${value}"`);
    chosen.set(from, to);
  }
  return chosen;
}
