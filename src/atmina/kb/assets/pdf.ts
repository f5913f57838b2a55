import { Worker } from 'node:worker_threads';
import { validation } from '../../../kernel/errors.ts';
import { assertAssetSize, sniffFormat } from './detect.ts';
import type { Failed, FailureReason } from './failure.ts';
import { siblingModule } from '../../../kernel/module-url.ts';

/*
 * Text and page count of a PDF, for its Companion. PDF.js (through unpdf's build of it) does the
 * parsing, in a worker thread (pdf-worker.ts) that this module ends when the document takes too
 * long or too much memory: PDF.js has neither bound, and a crafted document can make it inflate
 * gigabytes from a few hundred kilobytes or loop for as long as it is let. A document that
 * cannot be read is an answer, not an exception: `{ state: 'failed', reason }`.
 */

/** The Companion text of a PDF holds at most this much UTF-8 (1 MiB); the rest is cut and marked truncated. */
export const PDF_MAX_TEXT_BYTES = 1024 * 1024;
/** Text is read from at most this many pages; a longer document is marked truncated. */
export const PDF_MAX_PAGES = 1000;
/** How long a parse may take, from starting its worker to its answer. */
export const PDF_DEADLINE_MS = 20_000;
/**
 * What a parse may hold: its JavaScript heap and the array buffers PDF.js decodes streams into
 * (which no V8 heap limit counts). Checked every PDF_MEMORY_CHECK_MS, so a parse that doubles
 * a buffer may pass it once by up to that buffer's size before it is ended.
 */
export const PDF_MEMORY_BUDGET_BYTES = 512 * 1024 * 1024;
const PDF_MEMORY_CHECK_MS = 100;

/** What pdf.ts hands its worker. */
export interface PdfJob {
  data: Uint8Array;
  maxPages: number;
  maxTextBytes: number;
}

/** A PDF's page count and extracted text, or why they could not be had. */
export type PdfOutcome = { state: 'ready'; pages: number; text: string; truncated: boolean } | Failed;

export interface PdfOptions {
  deadlineMs?: number;
  maxPages?: number;
  maxTextBytes?: number;
  memoryBudgetBytes?: number;
}

const WORKER_URL = siblingModule(import.meta.url, './pdf-worker');

/**
 * The page count and text of a PDF. Refuses (`validation`) bytes that are not a PDF and
 * (`payload_too_large`) a PDF above the Asset ceiling; never rejects otherwise: an encrypted,
 * damaged, too slow or too hungry document gives `{ state: 'failed', reason }`.
 */
export async function extractPdf(buffer: Buffer, options: PdfOptions = {}): Promise<PdfOutcome> {
  if (sniffFormat(buffer) !== 'pdf') throw validation('The file is not a PDF document: it does not begin with %PDF-.');
  assertAssetSize(buffer, 'pdf');
  const deadlineMs = options.deadlineMs ?? PDF_DEADLINE_MS;
  const memoryBudget = options.memoryBudgetBytes ?? PDF_MEMORY_BUDGET_BYTES;
  // A copy the worker owns: transferring it leaves the caller's Buffer (often a slice of a larger one) intact.
  const data = new Uint8Array(buffer);
  const job: PdfJob = { data, maxPages: options.maxPages ?? PDF_MAX_PAGES, maxTextBytes: options.maxTextBytes ?? PDF_MAX_TEXT_BYTES };
  const heapMb = Math.max(16, Math.ceil(memoryBudget / (1024 * 1024)));
  const { promise, resolve } = Promise.withResolvers<PdfOutcome>();
  const worker = new Worker(WORKER_URL, {
    workerData: job,
    transferList: [data.buffer],
    resourceLimits: { maxOldGenerationSizeMb: heapMb },
    // Whatever PDF.js prints is dropped, not copied into the gateway's own output.
    stdout: true,
    stderr: true,
  });
  worker.stdout.resume();
  worker.stderr.resume();

  let settled = false;
  const failed = (reason: FailureReason): Failed => ({ state: 'failed', reason });
  const finish = (outcome: PdfOutcome): void => {
    if (settled) return;
    settled = true;
    clearTimeout(deadline);
    clearInterval(watch);
    void worker.terminate().catch(() => undefined);
    resolve(outcome);
  };
  const deadline = setTimeout(() => finish(failed('deadline')), deadlineMs);
  const watch = setInterval(() => {
    worker.getHeapStatistics().then(
      (heap) => {
        if (heap.used_heap_size + heap.external_memory > memoryBudget) finish(failed('memory'));
      },
      // The worker has just ended: its exit or message settles the outcome.
      () => undefined,
    );
  }, PDF_MEMORY_CHECK_MS);
  worker.on('message', (message: unknown) => finish(isPdfOutcome(message) ? message : failed('corrupt')));
  worker.on('error', (error: unknown) => finish(failed(isOutOfMemory(error) ? 'memory' : 'corrupt')));
  worker.on('exit', () => finish(failed('corrupt')));
  return promise;
}

/** A worker that outgrew its heap limit is ended with ERR_WORKER_OUT_OF_MEMORY. */
const isOutOfMemory = (error: unknown): boolean => error instanceof Error && 'code' in error && error.code === 'ERR_WORKER_OUT_OF_MEMORY';

const FAILURE_REASONS: readonly unknown[] = ['encrypted', 'corrupt', 'deadline', 'memory'] satisfies FailureReason[];

/** The worker's answer, checked: it crosses a thread boundary untyped. */
function isPdfOutcome(value: unknown): value is PdfOutcome {
  if (typeof value !== 'object' || value === null || !('state' in value)) return false;
  if (value.state === 'failed') return 'reason' in value && FAILURE_REASONS.includes(value.reason);
  return (
    value.state === 'ready' &&
    'pages' in value &&
    Number.isSafeInteger(value.pages) &&
    'text' in value &&
    typeof value.text === 'string' &&
    'truncated' in value &&
    typeof value.truncated === 'boolean'
  );
}
