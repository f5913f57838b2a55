import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { buffer as collect } from 'node:stream/consumers';
import { createDeflate, deflateSync } from 'node:zlib';

/*
 * Real files made by hand, byte by byte, so that each test says exactly what it feeds the
 * extractors: PNGs of any declared size (their pixels through zlib, their chunks with correct
 * CRCs) and PDF 1.4 documents with text objects and a correct cross-reference table; and the
 * refusals the suites inspect.
 */

// ---------------------------------------------------------------------------------------------
// Refusals

/** The error `promise` rejects with; fails when it resolves. */
export const rejectionOf = async (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => assert.fail('expected a refusal'),
    (error: unknown) => error,
  );

/** The error `work` throws; fails when it returns. */
export function thrownBy(work: () => unknown): unknown {
  try {
    work();
  } catch (error) {
    return error;
  }
  return assert.fail('expected a refusal');
}

// ---------------------------------------------------------------------------------------------
// PNG

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(data: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of data) crc = (CRC_TABLE[(crc ^ byte) & 0xff] ?? 0) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The IHDR chunk of an 8-bit RGB image of this size. */
function ihdr(width: number, height: number): Buffer {
  const data = Buffer.alloc(13);
  data.writeUInt32BE(width, 0);
  data.writeUInt32BE(height, 4);
  data.writeUInt8(8, 8); // bit depth
  data.writeUInt8(2, 9); // colour type: RGB
  return chunk('IHDR', data);
}

/** An 8-bit RGB PNG of `width` × `height`, each pixel's colour given by `colour(x, y)`. */
export function pngOf(width: number, height: number, colour: (x: number, y: number) => [number, number, number] = () => [200, 40, 40]): Buffer {
  const rowBytes = 1 + width * 3;
  const raw = Buffer.alloc(rowBytes * height);
  for (let y = 0; y < height; y += 1) {
    for (let x = 0; x < width; x += 1) {
      const [r, g, b] = colour(x, y);
      raw.set([r, g, b], y * rowBytes + 1 + x * 3);
    }
  }
  return Buffer.concat([PNG_SIGNATURE, ihdr(width, height), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

/** A PNG whose header declares `width` × `height` but whose pixel data is one tiny deflate stream. */
export function pngHeaderClaiming(width: number, height: number): Buffer {
  return Buffer.concat([PNG_SIGNATURE, ihdr(width, height), chunk('IDAT', deflateSync(Buffer.alloc(16))), chunk('IEND', Buffer.alloc(0))]);
}

// ---------------------------------------------------------------------------------------------
// PDF

/** A PDF string literal: backslashes and parentheses escaped. */
const literal = (text: string): string => `(${text.replace(/[\\()]/g, (c) => `\\${c}`)})`;

/** A stream object's body: its dictionary (with /Length) and its bytes. */
export function streamObject(data: Buffer, dictionary = ''): Buffer {
  return Buffer.concat([Buffer.from(`<< /Length ${data.length} ${dictionary}>>\nstream\n`, 'latin1'), data, Buffer.from('\nendstream', 'latin1')]);
}

/**
 * A PDF of these objects (object n is `objects[n - 1]`), with a cross-reference table giving
 * each one's byte offset, and a trailer naming object 1 as the catalog (plus `trailer` entries).
 */
export function pdfOf(objects: readonly (string | Buffer)[], trailer = ''): Buffer {
  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  let offset = parts[0]?.length ?? 0;
  const offsets: number[] = [];
  objects.forEach((body, at) => {
    const bytes = Buffer.concat([
      Buffer.from(`${at + 1} 0 obj\n`, 'latin1'),
      typeof body === 'string' ? Buffer.from(body, 'latin1') : body,
      Buffer.from('\nendobj\n', 'latin1'),
    ]);
    offsets.push(offset);
    parts.push(bytes);
    offset += bytes.length;
  });
  const entries = offsets.map((at) => `${String(at).padStart(10, '0')} 00000 n \n`).join('');
  const xref = `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${entries}`;
  parts.push(Buffer.from(`${xref}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R ${trailer}>>\nstartxref\n${offset}\n%%EOF\n`, 'latin1'));
  return Buffer.concat(parts);
}

/** A content stream writing each line in Helvetica, one below the other. */
export function textContent(lines: readonly string[]): Buffer {
  return Buffer.from(`BT /F1 12 Tf 14 TL 72 720 Td ${lines.map((line) => `${literal(line)} Tj T*`).join(' ')} ET`, 'latin1');
}

/**
 * A PDF of one page per entry of `pages`, each page showing its lines of text, or any content
 * stream given as bytes (objects: 1 catalog, 2 page tree, 3 font, then each page and its content).
 */
export function textPdf(pages: readonly (readonly string[] | Buffer)[], options: { contentDictionary?: string; trailer?: string } = {}): Buffer {
  const kids = pages.map((_, at) => `${4 + at * 2} 0 R`).join(' ');
  const objects: (string | Buffer)[] = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [${kids}] /Count ${pages.length} >>`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  pages.forEach((page, at) => {
    objects.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${5 + at * 2} 0 R >>`);
    objects.push(streamObject(Buffer.isBuffer(page) ? page : textContent(page), options.contentDictionary));
  });
  return pdfOf(objects, options.trailer);
}

/**
 * A trailer entry encrypting the document with a user password that is not empty (its /O and
 * /U are arbitrary): PDF.js cannot open it without that password.
 */
export const ENCRYPTED_TRAILER = `/Encrypt << /Filter /Standard /V 1 /R 2 /O <${'ab'.repeat(32)}> /U <${'cd'.repeat(32)}> /P -4 >> /ID [<${'00'.repeat(16)}> <${'00'.repeat(16)}>] `;

/** A zlib stream of `mebibytes` MiB of spaces, deflated as it is made (about 1000 to 1). */
export async function deflatedSpaces(mebibytes: number): Promise<Buffer> {
  const block = Buffer.alloc(1024 * 1024, ' ');
  const blocks = Readable.from(
    (function* () {
      for (let i = 0; i < mebibytes; i += 1) yield block;
    })(),
  );
  return collect(blocks.pipe(createDeflate({ level: 9 })));
}
