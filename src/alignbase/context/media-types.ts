import type { Buffer } from 'node:buffer';
import { isUtf8 } from 'node:buffer';

/**
 * The media type of an attachment, read from its bytes (magic numbers, then whether it is text)
 * and, for text, its path: what a package file's manifest entry records. Pure.
 */

export type DigestEncoding = 'text' | 'binary';

const ascii = (text: string): number[] => Array.from(text, (char) => char.charCodeAt(0));

function startsWith(bytes: Buffer, signature: readonly number[], at = 0): boolean {
  if (bytes.length < at + signature.length) return false;
  for (let i = 0; i < signature.length; i++) if (bytes[at + i] !== signature[i]) return false;
  return true;
}

const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const JPEG = [0xff, 0xd8, 0xff];
const GIF87 = ascii('GIF87a');
const GIF89 = ascii('GIF89a');
const RIFF = ascii('RIFF');
const PDF = ascii('%PDF-');
const ZIP = [
  [0x50, 0x4b, 0x03, 0x04],
  [0x50, 0x4b, 0x05, 0x06],
  [0x50, 0x4b, 0x07, 0x08],
];
const GZIP = [0x1f, 0x8b];
const BZIP2_BLOCK = [0x31, 0x41, 0x59, 0x26, 0x53, 0x59];
const XZ = [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00];
const ZSTD = [0x28, 0xb5, 0x2f, 0xfd];
const SEVEN_Z = [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c];
const USTAR = ascii('ustar');
const ICO = [0x00, 0x00, 0x01, 0x00];
const TIFF_LE = [0x49, 0x49, 0x2a, 0x00];
const TIFF_BE = [0x4d, 0x4d, 0x00, 0x2a];
const WASM = [0x00, 0x61, 0x73, 0x6d];
const ID3 = ascii('ID3');
const OGG = [...ascii('OggS'), 0x00];
const FLAC = ascii('fLaC');
const FTYP = ascii('ftyp');
const EBML = [0x1a, 0x45, 0xdf, 0xa3];
const WOFF = ascii('wOFF');
const WOFF2 = ascii('wOF2');
const TTF = [0x00, 0x01, 0x00, 0x00];
const OTF = [...ascii('OTTO'), 0x00];
const SQLITE = [...ascii('SQLite format 3'), 0x00];
const MIDI = [...ascii('MThd'), 0x00, 0x00, 0x00, 0x06];
const BMP_HEADER_SIZES = new Set([12, 40, 52, 56, 64, 108, 124]);

/** The media type of a binary format recognized by its magic number, if any. */
function sniffBinary(bytes: Buffer): string | undefined {
  const b0 = bytes[0];
  if (startsWith(bytes, PNG)) return 'image/png';
  if (startsWith(bytes, JPEG)) return 'image/jpeg';
  if (startsWith(bytes, GIF87) || startsWith(bytes, GIF89)) return 'image/gif';
  if (startsWith(bytes, RIFF) && bytes.length >= 12) {
    const form = bytes.toString('latin1', 8, 12);
    if (form === 'WEBP') return 'image/webp';
    if (form === 'WAVE') return 'audio/wav';
    if (form === 'AVI ') return 'video/x-msvideo';
  }
  if (startsWith(bytes, PDF)) return 'application/pdf';
  if (ZIP.some((signature) => startsWith(bytes, signature))) return 'application/zip';
  if (startsWith(bytes, GZIP)) return 'application/gzip';
  if (bytes.length >= 10 && bytes.toString('latin1', 0, 3) === 'BZh' && bytes[3]! >= 0x31 && bytes[3]! <= 0x39 && startsWith(bytes, BZIP2_BLOCK, 4))
    return 'application/x-bzip2';
  if (startsWith(bytes, XZ)) return 'application/x-xz';
  if (startsWith(bytes, ZSTD)) return 'application/zstd';
  if (startsWith(bytes, SEVEN_Z)) return 'application/x-7z-compressed';
  if (startsWith(bytes, USTAR, 257) && bytes.length > 262 && (bytes[262] === 0x00 || bytes[262] === 0x20)) return 'application/x-tar';
  if (b0 === 0x42 && bytes[1] === 0x4d && bytes.length >= 26 && bytes.readUInt32LE(6) === 0 && BMP_HEADER_SIZES.has(bytes.readUInt32LE(14))) return 'image/bmp';
  if (startsWith(bytes, ICO) && bytes.length >= 22 && bytes.readUInt16LE(4) > 0) return 'image/x-icon';
  if (startsWith(bytes, TIFF_LE) || startsWith(bytes, TIFF_BE)) return 'image/tiff';
  if (startsWith(bytes, WASM)) return 'application/wasm';
  if (startsWith(bytes, ID3) && bytes.length >= 10 && bytes[3]! >= 2 && bytes[3]! <= 4) return 'audio/mpeg';
  if (b0 === 0xff && bytes.length >= 4) {
    // An MPEG audio frame header: sync, a version that is not reserved, layer II or III (layer I
    // would also match a UTF-16LE byte order mark), a valid bitrate and sample rate.
    const b1 = bytes[1]!;
    const b2 = bytes[2]!;
    const layer = b1 & 0x06;
    if ((b1 & 0xe0) === 0xe0 && (b1 & 0x18) !== 0x08 && (layer === 0x02 || layer === 0x04) && b2 >> 4 !== 0x0f && (b2 & 0x0c) !== 0x0c) return 'audio/mpeg';
    if ((b1 & 0xf6) === 0xf0) return 'audio/aac';
  }
  if (startsWith(bytes, OGG)) return 'audio/ogg';
  if (startsWith(bytes, FLAC) && bytes.length >= 8 && (bytes[4]! & 0x7f) === 0) return 'audio/flac';
  if (startsWith(bytes, MIDI)) return 'audio/midi';
  if (startsWith(bytes, FTYP, 4) && bytes.length >= 12 && bytes.readUInt32BE(0) >= 8) return isoMediaType(bytes.toString('latin1', 8, 12));
  if (startsWith(bytes, EBML)) return bytes.subarray(0, 64).includes('webm', 0, 'latin1') ? 'video/webm' : 'video/x-matroska';
  if (startsWith(bytes, WOFF) && bytes.length >= 44) return 'font/woff';
  if (startsWith(bytes, WOFF2) && bytes.length >= 48) return 'font/woff2';
  if (startsWith(bytes, TTF) && bytes.length >= 12) return 'font/ttf';
  if (startsWith(bytes, OTF) && bytes.length >= 12) return 'font/otf';
  if (startsWith(bytes, SQLITE)) return 'application/vnd.sqlite3';
  return undefined;
}

function isoMediaType(brand: string): string {
  if (brand === 'M4A ' || brand === 'M4B ') return 'audio/mp4';
  if (brand === 'qt  ') return 'video/quicktime';
  if (brand === 'avif' || brand === 'avis') return 'image/avif';
  if (['heic', 'heix', 'heim', 'heis', 'mif1', 'msf1'].includes(brand)) return 'image/heic';
  if (brand.startsWith('3g')) return 'video/3gpp';
  return 'video/mp4';
}

const TEXT_TYPES: Readonly<Record<string, string>> = {
  md: 'text/markdown',
  markdown: 'text/markdown',
  txt: 'text/plain',
  text: 'text/plain',
  json: 'application/json',
  yaml: 'application/yaml',
  yml: 'application/yaml',
  toml: 'application/toml',
  py: 'text/x-python',
  sh: 'text/x-shellscript',
  bash: 'text/x-shellscript',
  zsh: 'text/x-shellscript',
  js: 'text/javascript',
  mjs: 'text/javascript',
  cjs: 'text/javascript',
  ts: 'text/x-typescript',
  mts: 'text/x-typescript',
  cts: 'text/x-typescript',
  html: 'text/html',
  htm: 'text/html',
  css: 'text/css',
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  xml: 'application/xml',
  sql: 'application/sql',
};

const SVG_ROOT = /^\uFEFF?\s*(?:<\?xml[^>]*\?>\s*)?(?:(?:<!--[\s\S]*?-->|<!DOCTYPE[^>]*>)\s*)*<svg[\s>/]/i;
const SHEBANG = /^#!\s*(?:\/usr)?(?:\/local)?\/bin\/(?:env\s+(?:-\S+\s+)*)?(\w+)/;
const SHEBANG_TYPES: Readonly<Record<string, string>> = {
  sh: 'text/x-shellscript',
  bash: 'text/x-shellscript',
  zsh: 'text/x-shellscript',
  dash: 'text/x-shellscript',
  python: 'text/x-python',
  python3: 'text/x-python',
  node: 'text/javascript',
};

/**
 * The media type of decoded attachment bytes. Known binary magic numbers win; otherwise bytes that
 * are UTF-8 without NUL and with few control characters are text, typed by the path's extension
 * (default text/plain; `.svg` and unknown extensions with an `<svg` root are image/svg+xml; a
 * shebang types an unknown extension). Anything else is application/octet-stream.
 */
export function detectMediaType(bytes: Buffer, path: string): { mediaType: string; digestEncoding: DigestEncoding } {
  const binary = sniffBinary(bytes);
  if (binary !== undefined) return { mediaType: binary, digestEncoding: 'binary' };
  if (!looksLikeText(bytes)) return { mediaType: 'application/octet-stream', digestEncoding: 'binary' };
  const name = path.slice(path.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  const extension = dot > 0 ? name.slice(dot + 1).toLowerCase() : '';
  const mapped = TEXT_TYPES[extension];
  if (mapped !== undefined) return { mediaType: mapped, digestEncoding: 'text' };
  const head = bytes.toString('utf8', 0, Math.min(bytes.length, 4096));
  if (SVG_ROOT.test(head)) return { mediaType: 'image/svg+xml', digestEncoding: 'text' };
  if (extension === '') {
    const interpreter = SHEBANG.exec(head)?.[1];
    const byShebang = interpreter === undefined ? undefined : SHEBANG_TYPES[interpreter];
    if (byShebang !== undefined) return { mediaType: byShebang, digestEncoding: 'text' };
  }
  return { mediaType: 'text/plain', digestEncoding: 'text' };
}

/**
 * Valid UTF-8, no NUL, and at most 10% other control bytes (tab, line breaks, form feed,
 * backspace and escape are text).
 */
function looksLikeText(bytes: Buffer): boolean {
  if (bytes.includes(0) || !isUtf8(bytes)) return false;
  let controls = 0;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!;
    if ((byte < 0x20 && !(byte >= 0x08 && byte <= 0x0d) && byte !== 0x1b) || byte === 0x7f) controls++;
  }
  return controls * 10 <= bytes.length;
}
