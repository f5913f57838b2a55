import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { ASSET_MAX_BYTES, detectAsset, normaliseMimeType, sniffFormat } from '../../../src/atmina/kb/assets/detect.ts';
import { assertKgwError } from '../../support/fixtures.ts';
import { PNG_SIGNATURE, pngOf, textPdf, thrownBy } from './fixtures.ts';

const blank = sharp({ create: { width: 8, height: 4, channels: 3, background: '#336699' } });
const PNG = pngOf(8, 4);
const JPEG = await blank.clone().jpeg().toBuffer();
const GIF = await blank.clone().gif().toBuffer();
const WEBP = await blank.clone().webp().toBuffer();
const PDF = textPdf([['Hello']]);

const refusal = (buffer: Buffer, declared: string | undefined): unknown => thrownBy(() => detectAsset(buffer, declared));

describe('sniffFormat', () => {
  it('knows each Asset format by its first bytes', () => {
    assert.deepStrictEqual(
      { png: sniffFormat(PNG), jpeg: sniffFormat(JPEG), gif: sniffFormat(GIF), webp: sniffFormat(WEBP), pdf: sniffFormat(PDF) },
      { png: 'png', jpeg: 'jpeg', gif: 'gif', webp: 'webp', pdf: 'pdf' },
    );
  });

  it('knows no format in text, an empty buffer, a RIFF file that is not WebP, or %PDF- after the first byte', () => {
    const wave = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WAVEfmt ')]);
    assert.deepStrictEqual(
      {
        text: sniffFormat(Buffer.from('# Notes\n')),
        empty: sniffFormat(Buffer.alloc(0)),
        wave: sniffFormat(wave),
        late: sniffFormat(Buffer.from(' %PDF-1.4')),
      },
      { text: undefined, empty: undefined, wave: undefined, late: undefined },
    );
  });
});

describe('normaliseMimeType', () => {
  it('lower-cases, drops parameters and resolves aliases', () => {
    assert.deepStrictEqual(
      { jpg: normaliseMimeType('IMAGE/JPG; q=0.9'), pdf: normaliseMimeType(' application/x-pdf '), text: normaliseMimeType('text/markdown; charset=utf-8') },
      { jpg: 'image/jpeg', pdf: 'application/pdf', text: 'text/markdown' },
    );
  });
});

describe('detectAsset', () => {
  it('classifies images and PDFs whose declared type matches their bytes', () => {
    assert.deepStrictEqual(
      {
        png: detectAsset(PNG, 'image/png'),
        jpeg: detectAsset(JPEG, 'image/jpg'),
        gif: detectAsset(GIF, 'image/gif'),
        webp: detectAsset(WEBP, 'image/webp'),
        pdf: detectAsset(PDF, 'application/pdf'),
      },
      {
        png: { kind: 'image', format: 'png', mimeType: 'image/png' },
        jpeg: { kind: 'image', format: 'jpeg', mimeType: 'image/jpeg' },
        gif: { kind: 'image', format: 'gif', mimeType: 'image/gif' },
        webp: { kind: 'image', format: 'webp', mimeType: 'image/webp' },
        pdf: { kind: 'pdf', format: 'pdf', mimeType: 'application/pdf' },
      },
    );
  });

  it('lets the bytes decide when no type, an empty one or application/octet-stream is declared', () => {
    assert.deepStrictEqual(
      { none: detectAsset(PDF), empty: detectAsset(PNG, ''), octet: detectAsset(JPEG, 'application/octet-stream') },
      {
        none: { kind: 'pdf', format: 'pdf', mimeType: 'application/pdf' },
        empty: { kind: 'image', format: 'png', mimeType: 'image/png' },
        octet: { kind: 'image', format: 'jpeg', mimeType: 'image/jpeg' },
      },
    );
  });

  it('classifies other files as other, with their declared type', () => {
    assert.deepStrictEqual(
      { markdown: detectAsset(Buffer.from('# Notes\n'), 'text/markdown; charset=utf-8'), undeclared: detectAsset(Buffer.from([1, 2, 3])) },
      { markdown: { kind: 'other', mimeType: 'text/markdown' }, undeclared: { kind: 'other', mimeType: 'application/octet-stream' } },
    );
  });

  it('keeps an SVG as an ordinary file, never an image Asset', () => {
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>');
    assert.deepStrictEqual(detectAsset(svg, 'image/svg+xml'), { kind: 'other', mimeType: 'image/svg+xml' });
  });

  it('refuses a declared image type over bytes of another format', () => {
    const error = refusal(PDF, 'image/png');
    assertKgwError(error, 'validation', 'mime_type image/png does not match the file: the bytes are a PDF document.');
    assert.deepStrictEqual(error.details, { declared: 'image/png', detected: 'pdf' });
  });

  it('refuses a declared PDF whose bytes are no Asset format', () => {
    assertKgwError(
      refusal(Buffer.from('plain text'), 'application/pdf'),
      'validation',
      'mime_type application/pdf does not match the file: the bytes are not a PDF document.',
    );
  });

  it('refuses an empty file declared as an image', () => {
    assertKgwError(refusal(Buffer.alloc(0), 'image/jpeg'), 'validation', 'mime_type image/jpeg does not match the file: the file is empty.');
  });

  it('refuses image bytes declared as another kind of file', () => {
    assertKgwError(refusal(PNG, 'text/plain'), 'validation', 'mime_type text/plain does not match the file: the bytes are a PNG image (image/png).');
  });

  it('refuses an SVG type over PNG bytes', () => {
    assertKgwError(refusal(PNG, 'image/svg+xml'), 'validation', /^mime_type image\/svg\+xml does not match the file: the bytes are a PNG image/);
  });

  it('refuses an image above the 25 MiB Asset ceiling as payload_too_large', () => {
    const huge = Buffer.concat([PNG_SIGNATURE, Buffer.alloc(ASSET_MAX_BYTES)]);
    const error = refusal(huge, 'image/png');
    assertKgwError(error, 'payload_too_large', `A PNG image may be at most ${ASSET_MAX_BYTES} bytes (25 MiB); this one has ${ASSET_MAX_BYTES + 8}.`);
    assert.deepStrictEqual(error.details, { maxBytes: ASSET_MAX_BYTES, bytes: ASSET_MAX_BYTES + 8 });
  });

  it('takes an Asset of exactly 25 MiB', () => {
    const atCeiling = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(ASSET_MAX_BYTES - 9)]);
    assert.equal(detectAsset(atCeiling, 'application/pdf').kind, 'pdf');
  });
});
