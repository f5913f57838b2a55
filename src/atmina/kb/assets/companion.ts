import { validation } from '../../../kernel/errors.ts';
import { unstorableText } from '../../../kernel/text.ts';
import type { AssetFormat, DetectedAsset } from './detect.ts';
import type { FailureReason } from './failure.ts';
import { readImageInfo, rendition } from './image.ts';
import type { PdfOptions } from './pdf.ts';
import { extractPdf } from './pdf.ts';

/*
 * The Companion of an Asset: the text that stands for it wherever text is read (read_file,
 * search, snippets), beside what is known of the file. A PDF's Companion is the text PDF.js
 * extracts from it; an image's is the description its writer gave, or empty (nothing here
 * looks at the pixels to describe them). The original bytes are kept as they are; the
 * Companion is what this module derives from them.
 */

/** The longest description a writer may give an image: 16 KiB of UTF-8. */
export const DESCRIPTION_MAX_BYTES = 16 * 1024;

/** What is known of an Asset's file: `state` says whether its content could be read, `reason` why not. */
export interface AssetMeta {
  format: AssetFormat;
  /** An image's displayed size in pixels, when its header could be read. */
  width?: number;
  height?: number;
  /** A PDF's page count, when it could be opened. */
  pages?: number;
  state: 'ready' | 'failed';
  reason?: FailureReason;
}

export interface Companion {
  text: string;
  /** The text was cut at its bound (a PDF's text beyond PDF_MAX_TEXT_BYTES, or its pages beyond PDF_MAX_PAGES). */
  truncated: boolean;
  meta: AssetMeta;
}

export interface CompanionOptions {
  /** An image's description, from its writer; not taken for a PDF, whose text is its own. */
  description?: string | undefined;
  /** Bounds of the PDF parse (deadline, pages, text, memory). */
  pdf?: PdfOptions;
  /** How long the image decode that checks the pixels may take. */
  imageDeadlineMs?: number;
}

/** The edge of the rendition made only to check that an image's pixels decode: small, so cheap to write. */
const CHECK_EDGE = 32;

/**
 * A writer's description of an image, checked: storable text (no U+0000, no lone surrogate) of
 * at most DESCRIPTION_MAX_BYTES. Refusals are `validation` errors.
 */
export function checkDescription(description: string): string {
  const problem = unstorableText(description);
  if (problem !== undefined) throw validation(`The description ${problem}.`);
  const bytes = Buffer.byteLength(description, 'utf8');
  if (bytes > DESCRIPTION_MAX_BYTES) {
    throw validation(`The description may be at most ${DESCRIPTION_MAX_BYTES} bytes of UTF-8; it has ${bytes}.`, { maxBytes: DESCRIPTION_MAX_BYTES, bytes });
  }
  return description;
}

/**
 * The Companion of an image or PDF Asset (as detectAsset classified it). Refuses what the
 * writer must change (a bad description, a description for a PDF, an image above the pixel
 * bound, bytes that are not the Asset's kind); content that cannot be read gives a Companion
 * whose `meta.state` is `failed`, with its reason: the Asset is still kept.
 */
export async function buildCompanion(buffer: Buffer, asset: DetectedAsset, options: CompanionOptions = {}): Promise<Companion> {
  const description = options.description ?? '';
  if (asset.kind === 'pdf') {
    if (description !== '') throw validation("A PDF's Companion is the text extracted from it: a description is taken only for images.");
    const outcome = await extractPdf(buffer, options.pdf);
    if (outcome.state === 'failed') return { text: '', truncated: false, meta: { format: 'pdf', state: 'failed', reason: outcome.reason } };
    return { text: outcome.text, truncated: outcome.truncated, meta: { format: 'pdf', pages: outcome.pages, state: 'ready' } };
  }
  const text = checkDescription(description);
  const info = await readImageInfo(buffer);
  if (info.state === 'failed') return { text, truncated: false, meta: { format: asset.format, state: 'failed', reason: info.reason } };
  // The header can be sound over pixel data that is not (a file cut short): decoding it once,
  // into a tiny rendition, tells the two apart before the Asset is called ready.
  const decoded = await rendition(buffer, { maxEdge: CHECK_EDGE, deadlineMs: options.imageDeadlineMs });
  const meta: AssetMeta = { format: info.format, width: info.width, height: info.height, state: 'ready' };
  if (decoded.state === 'failed') return { text, truncated: false, meta: { ...meta, state: 'failed', reason: decoded.reason } };
  return { text, truncated: false, meta };
}
