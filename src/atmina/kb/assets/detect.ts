import { KgwError, validation } from '../../../kernel/errors.ts';

/*
 * What a file of a Knowledge Base is, from its first bytes rather than from what its writer
 * says: an image Asset (PNG, JPEG, GIF, WebP), a PDF Asset, or any other file. The declared
 * MIME type must agree with the bytes, because everything downstream trusts the format (the
 * decoder chosen, the Companion text, the rendition's type), and a client that labels a PDF as
 * image/png has made a mistake it should hear about rather than an Asset nobody can read.
 *
 * SVG is never an image Asset: it is XML that can run script and fetch other resources, and
 * rasterising it would hand every writer's markup to an SVG renderer. An SVG file is kept as an
 * ordinary file (kind `other`), with no Companion and no rendition.
 */

/** The ceiling the spec sets for an image or PDF Asset: 25 MiB. Other files keep their own. */
export const ASSET_MAX_BYTES = 25 * 1024 * 1024;

export type ImageFormat = 'png' | 'jpeg' | 'gif' | 'webp';
export type AssetFormat = ImageFormat | 'pdf';

/** What a file is: an image or PDF Asset with its format and canonical MIME type, or another file. */
export type Detected =
  { kind: 'image'; format: ImageFormat; mimeType: string } | { kind: 'pdf'; format: 'pdf'; mimeType: 'application/pdf' } | { kind: 'other'; mimeType: string };

/** An image or PDF Asset, as detectAsset finds one. */
export type DetectedAsset = Exclude<Detected, { kind: 'other' }>;

const MIME_OF: Record<AssetFormat, string> = {
  png: 'image/png',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  pdf: 'application/pdf',
};

/** What each format is called in a message. */
const NAME_OF: Record<AssetFormat, string> = {
  png: 'a PNG image',
  jpeg: 'a JPEG image',
  gif: 'a GIF image',
  webp: 'a WebP image',
  pdf: 'a PDF document',
};

/** Other names clients send for the same types. */
const MIME_ALIASES: Readonly<Record<string, string>> = { 'image/jpg': 'image/jpeg', 'image/pjpeg': 'image/jpeg', 'application/x-pdf': 'application/pdf' };

/** Declared types that say nothing about the content: the bytes decide. */
const UNSPECIFIED_MIME = new Set(['', 'application/octet-stream']);

const startsWith = (buffer: Buffer, bytes: readonly number[], at = 0): boolean =>
  buffer.length >= at + bytes.length && bytes.every((byte, i) => buffer[at + i] === byte);
const ascii = (text: string): number[] => [...text].map((c) => c.charCodeAt(0));

/**
 * The Asset format the bytes begin with, or undefined. Signatures: PNG's eight bytes, JPEG's
 * SOI marker and the first byte of the next marker, GIF87a/GIF89a, RIFF…WEBP, and `%PDF-` at
 * the very start (readers accept a header up to 1 KiB in, but a text file that merely mentions
 * `%PDF-` near its top must not become a PDF).
 */
export function sniffFormat(buffer: Buffer): AssetFormat | undefined {
  if (startsWith(buffer, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'png';
  if (startsWith(buffer, [0xff, 0xd8, 0xff])) return 'jpeg';
  if (startsWith(buffer, ascii('GIF87a')) || startsWith(buffer, ascii('GIF89a'))) return 'gif';
  if (startsWith(buffer, ascii('RIFF')) && startsWith(buffer, ascii('WEBP'), 8)) return 'webp';
  if (startsWith(buffer, ascii('%PDF-'))) return 'pdf';
  return undefined;
}

/** A declared MIME type in its canonical form: lower case, without parameters, aliases resolved. */
export function normaliseMimeType(declared: string): string {
  const essence = declared.split(';', 1)[0]?.trim().toLowerCase() ?? '';
  return MIME_ALIASES[essence] ?? essence;
}

const formatOfMime = (mimeType: string): AssetFormat | undefined => (Object.keys(MIME_OF) as AssetFormat[]).find((format) => MIME_OF[format] === mimeType);

/**
 * Classifies a file from its bytes and its declared MIME type (undefined, empty or
 * application/octet-stream: the bytes decide). Refuses, as `validation`, a declared type the
 * bytes contradict (either way: a PNG declared as a PDF, or a PDF declared as text), and, as
 * `payload_too_large`, an image or PDF above ASSET_MAX_BYTES.
 */
export function detectAsset(buffer: Buffer, declaredMimeType?: string): Detected {
  const declared = normaliseMimeType(declaredMimeType ?? '');
  const declaredFormat = formatOfMime(declared);
  const sniffed = sniffFormat(buffer);
  if (declaredFormat !== undefined && sniffed !== declaredFormat) {
    const found =
      buffer.length === 0 ? 'the file is empty' : sniffed === undefined ? `the bytes are not ${NAME_OF[declaredFormat]}` : `the bytes are ${NAME_OF[sniffed]}`;
    throw validation(`mime_type ${declared} does not match the file: ${found}.`, { declared, detected: sniffed ?? null });
  }
  if (sniffed === undefined) return { kind: 'other', mimeType: UNSPECIFIED_MIME.has(declared) ? 'application/octet-stream' : declared };
  if (!UNSPECIFIED_MIME.has(declared) && declaredFormat === undefined) {
    throw validation(`mime_type ${declared} does not match the file: the bytes are ${NAME_OF[sniffed]} (${MIME_OF[sniffed]}).`, {
      declared,
      detected: sniffed,
    });
  }
  assertAssetSize(buffer, sniffed);
  if (sniffed === 'pdf') return { kind: 'pdf', format: 'pdf', mimeType: 'application/pdf' };
  return { kind: 'image', format: sniffed, mimeType: MIME_OF[sniffed] };
}

/** Refuses an image or PDF above ASSET_MAX_BYTES, before anything parses it. */
export function assertAssetSize(buffer: Buffer, format: AssetFormat): void {
  if (buffer.length > ASSET_MAX_BYTES) {
    throw new KgwError(
      'payload_too_large',
      `${capitalised(NAME_OF[format])} may be at most ${ASSET_MAX_BYTES} bytes (25 MiB); this one has ${buffer.length}.`,
      {
        details: { maxBytes: ASSET_MAX_BYTES, bytes: buffer.length },
      },
    );
  }
}

const capitalised = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);

/** The canonical MIME type of an Asset format. */
export const mimeTypeOf = (format: AssetFormat): string => MIME_OF[format];
