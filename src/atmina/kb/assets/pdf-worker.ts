import { parentPort, workerData } from 'node:worker_threads';
import { getDocumentProxy } from 'unpdf';
import type { PdfJob, PdfOutcome } from './pdf.ts';
import { boundedText, tidyText } from './text.ts';

/*
 * The PDF parse, in a worker thread of its own: PDF.js offers no deadline and no memory bound,
 * so pdf.ts runs this file in a Worker it can terminate, whatever the document makes PDF.js do.
 * The answer is one message (PdfOutcome); an exception becomes a failed outcome, and a crash of
 * the thread is the parent's to read.
 */

const PAGE_SEPARATOR = '\n\n';

async function extract(job: PdfJob): Promise<PdfOutcome> {
  let document;
  try {
    document = await getDocumentProxy(job.data, {
      // Errors only: a hostile document must not fill the gateway's output with warnings.
      verbosity: 0,
      // Text needs neither font rendering nor anything fetched on the document's behalf.
      disableFontFace: true,
      useSystemFonts: false,
      enableXfa: false,
      stopAtErrors: false,
    });
  } catch (error) {
    return { state: 'failed', reason: isPasswordError(error) ? 'encrypted' : 'corrupt' };
  }
  try {
    const pages = document.numPages;
    const text = boundedText(job.maxTextBytes);
    const readable = Math.min(pages, job.maxPages);
    let wrote = false;
    for (let number = 1; number <= readable; number += 1) {
      const pageText = await readPage(document, number);
      if (pageText === '') continue;
      if (wrote && !text.add(PAGE_SEPARATOR)) break;
      if (!text.add(pageText)) break;
      wrote = true;
    }
    return { state: 'ready', pages, text: text.text, truncated: text.truncated || pages > readable };
  } finally {
    // Destroying the loading task ends the document and PDF.js's in-thread worker with it.
    await document.loadingTask.destroy().catch(() => undefined);
  }
}

type Document = Awaited<ReturnType<typeof getDocumentProxy>>;

/** One page's text, or empty when the page cannot be read: one damaged page loses only itself. */
async function readPage(document: Document, number: number): Promise<string> {
  try {
    const page = await document.getPage(number);
    const content = await page.getTextContent();
    const text = content.items.map((item) => ('str' in item ? item.str + (item.hasEOL ? '\n' : '') : '')).join('');
    // Releases what the page held (decoded streams, fonts) before the next one is read.
    page.cleanup();
    return tidyText(text);
  } catch {
    return '';
  }
}

/** PDF.js rejects a document whose password it was not given with a PasswordException. */
const isPasswordError = (error: unknown): boolean => error instanceof Error && error.name === 'PasswordException';

/** The job pdf.ts posts: checked, since workerData arrives untyped. */
function isPdfJob(value: unknown): value is PdfJob {
  if (typeof value !== 'object' || value === null) return false;
  const job: Partial<Record<keyof PdfJob, unknown>> = value;
  return job.data instanceof Uint8Array && Number.isSafeInteger(job.maxPages) && Number.isSafeInteger(job.maxTextBytes);
}

const port = parentPort;
const job: unknown = workerData;
if (port !== null && isPdfJob(job)) {
  const outcome = await extract(job).catch((): PdfOutcome => ({ state: 'failed', reason: 'corrupt' }));
  port.postMessage(outcome);
}
