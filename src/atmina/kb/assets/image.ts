import type Sharp from 'sharp';
import { validation } from '../../../kernel/errors.ts';
import type { ImageFormat } from './detect.ts';
import { assertAssetSize, mimeTypeOf, sniffFormat } from './detect.ts';
import type { Failed } from './failure.ts';

/*
 * Size and renditions of image Assets, through sharp (libvips). Decoding runs on libuv's thread
 * pool, so it never holds the event loop, and it is bounded three ways: the input (the 25 MiB
 * Asset ceiling), the pixels (IMAGE_MAX_PIXELS, checked from the header before any pixel is
 * decoded, because a few kilobytes of PNG can declare gigapixels) and the time (sharp's timeout).
 * Bytes of the right format that cannot be decoded are an answer, `{ state: 'failed' }`, never
 * an exception; only what the writer must change is refused.
 */

/**
 * libvips is loaded with the first image, not by every process at start. Awaited outside the
 * decoding's try: a library that cannot load is the install's fault, not the image's.
 */
let loaded: Promise<typeof Sharp> | undefined;
const loadSharp = (): Promise<typeof Sharp> => (loaded ??= import('sharp').then((module) => module.default));

/** The most pixels (width × height) an image Asset may have: 50 megapixels (an 8K frame has 33). */
export const IMAGE_MAX_PIXELS = 50_000_000;
/** The longest edge of the medium rendition read_file returns. */
export const MEDIUM_EDGE = 1024;
/** The longest edge of a thumbnail. */
export const THUMBNAIL_EDGE = 256;
/** The largest rendition edge this module makes. */
export const MAX_RENDITION_EDGE = 4096;
/** How long one decode may take; sharp counts whole seconds. */
export const IMAGE_DEADLINE_MS = 10_000;

const SUPPORTED = 'a PNG, JPEG, GIF or WebP image';

/** An image's format and its displayed size (after its EXIF orientation, as a viewer shows it). */
export interface ImageInfo {
  state: 'ready';
  format: ImageFormat;
  width: number;
  height: number;
}

/** A rendition of an image: its bytes, their MIME type and size. */
export interface Rendition {
  state: 'ready';
  mimeType: string;
  data: Buffer;
  width: number;
  height: number;
}

export interface RenditionOptions {
  /** The longest edge of the rendition; an image already within it keeps its size. */
  maxEdge?: number;
  deadlineMs?: number;
  /** `webp` encodes WebP whatever the source was; by default JPEG and WebP keep their format, the rest become PNG. */
  output?: 'webp';
}

/** The format of an image Asset's bytes, refusing anything else and anything above the Asset ceiling. */
function imageFormat(buffer: Buffer): ImageFormat {
  const format = sniffFormat(buffer);
  if (format === undefined || format === 'pdf') throw validation(`The file is not ${SUPPORTED}.`);
  assertAssetSize(buffer, format);
  return format;
}

/**
 * The format and size of an image, read from its header only. Refuses (`validation`) bytes
 * that are not an image Asset, and an image above IMAGE_MAX_PIXELS; a header that cannot be
 * read gives `{ state: 'failed', reason: 'corrupt' }`.
 */
export async function readImageInfo(buffer: Buffer): Promise<ImageInfo | Failed> {
  const format = imageFormat(buffer);
  const sharp = await loadSharp();
  let metadata;
  try {
    // The pixel bound is checked below, with a message of its own; metadata decodes no pixel.
    metadata = await sharp(buffer, { limitInputPixels: false }).metadata();
  } catch {
    return { state: 'failed', reason: 'corrupt' };
  }
  // libvips sniffs the format itself; a disagreement means the bytes are not what they seem.
  if (metadata.format !== format) return { state: 'failed', reason: 'corrupt' };
  const { width, height } = metadata.autoOrient;
  if (!(width > 0 && height > 0)) return { state: 'failed', reason: 'corrupt' };
  if (width * height > IMAGE_MAX_PIXELS) {
    throw validation(`The image is ${width} × ${height} pixels; an image may have at most ${IMAGE_MAX_PIXELS / 1_000_000} megapixels.`, {
      width,
      height,
      maxPixels: IMAGE_MAX_PIXELS,
    });
  }
  return { state: 'ready', format, width, height };
}

/**
 * A rendition of an image whose longest edge is at most `maxEdge` (MEDIUM_EDGE unless given),
 * aspect kept, never enlarged, turned upright by its EXIF orientation and stripped of its
 * metadata (EXIF, GPS positions, comments). JPEG stays JPEG and WebP stays WebP; PNG and GIF
 * become PNG (of a GIF's first frame), unless `output` asks for WebP. Refuses what
 * readImageInfo refuses; pixel data that cannot be decoded gives `{ state: 'failed', reason:
 * 'corrupt' }`, a decode past the deadline `{ state: 'failed', reason: 'deadline' }`.
 */
export async function rendition(buffer: Buffer, options: RenditionOptions = {}): Promise<Rendition | Failed> {
  const maxEdge = options.maxEdge ?? MEDIUM_EDGE;
  if (!Number.isInteger(maxEdge) || maxEdge < 1 || maxEdge > MAX_RENDITION_EDGE)
    throw new RangeError(`maxEdge must be a whole number from 1 to ${MAX_RENDITION_EDGE}`);
  const info = await readImageInfo(buffer);
  if (info.state === 'failed') return info;
  const seconds = Math.max(1, Math.ceil((options.deadlineMs ?? IMAGE_DEADLINE_MS) / 1000));
  // The header was checked against IMAGE_MAX_PIXELS; the limit here holds libvips to the same bound.
  const sharp = await loadSharp();
  const pipeline = sharp(buffer, { limitInputPixels: IMAGE_MAX_PIXELS, autoOrient: true, sequentialRead: true })
    .timeout({ seconds })
    .resize({ width: maxEdge, height: maxEdge, fit: 'inside', withoutEnlargement: true });
  const format: ImageFormat = options.output ?? (info.format === 'jpeg' || info.format === 'webp' ? info.format : 'png');
  const output = format === 'jpeg' ? pipeline.jpeg({ quality: 82 }) : format === 'webp' ? pipeline.webp({ quality: 82 }) : pipeline.png();
  try {
    const { data, info: written } = await output.toBuffer({ resolveWithObject: true });
    return { state: 'ready', mimeType: mimeTypeOf(format), data, width: written.width, height: written.height };
  } catch (error) {
    return { state: 'failed', reason: isTimeout(error) ? 'deadline' : 'corrupt' };
  }
}

/**
 * The thumbnail of an image: longest edge THUMBNAIL_EDGE, never enlarged, always WebP, so a
 * client showing many of them gets one small type that keeps transparency (JPEG drops it, PNG
 * is many times larger for a photograph). Refuses and fails as `rendition` does.
 */
export function thumbnail(buffer: Buffer, options: { deadlineMs?: number } = {}): Promise<Rendition | Failed> {
  return rendition(buffer, { maxEdge: THUMBNAIL_EDGE, output: 'webp', deadlineMs: options.deadlineMs });
}

/** sharp ends a pipeline past its timeout with "timeout: N% complete". */
const isTimeout = (error: unknown): boolean => error instanceof Error && error.message.startsWith('timeout');
