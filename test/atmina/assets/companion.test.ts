import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DESCRIPTION_MAX_BYTES, buildCompanion, checkDescription } from '../../../src/atmina/kb/assets/companion.ts';
import { detectAsset } from '../../../src/atmina/kb/assets/detect.ts';
import type { DetectedAsset } from '../../../src/atmina/kb/assets/detect.ts';
import { assertKgwError } from '../../support/fixtures.ts';
import { ENCRYPTED_TRAILER, pngHeaderClaiming, pngOf, rejectionOf, textPdf, thrownBy } from './fixtures.ts';

const PNG: DetectedAsset = { kind: 'image', format: 'png', mimeType: 'image/png' };
const PDF: DetectedAsset = { kind: 'pdf', format: 'pdf', mimeType: 'application/pdf' };

/** The Asset detectAsset finds in these bytes; fails when it finds another kind of file. */
function assetOf(buffer: Buffer, mimeType: string): DetectedAsset {
  const detected = detectAsset(buffer, mimeType);
  return detected.kind === 'other' ? assert.fail(`not an Asset: ${detected.mimeType}`) : detected;
}

describe('buildCompanion: PDFs', () => {
  it("holds a PDF's text, page count and ready state", async () => {
    const pdf = textPdf([['Retention policy', 'Keep records seven years.'], ['Appendix']]);
    assert.deepStrictEqual(await buildCompanion(pdf, assetOf(pdf, 'application/pdf')), {
      text: 'Retention policy\nKeep records seven years.\n\nAppendix',
      truncated: false,
      meta: { format: 'pdf', pages: 2, state: 'ready' },
    });
  });

  it('marks a PDF whose text was cut as truncated', async () => {
    const companion = await buildCompanion(textPdf([['0123456789']]), PDF, { pdf: { maxTextBytes: 4 } });
    assert.partialDeepStrictEqual(companion, { text: '0123', truncated: true, meta: { state: 'ready' } });
  });

  it('gives an encrypted PDF empty text and a failed state with its reason', async () => {
    assert.deepStrictEqual(await buildCompanion(textPdf([['secret']], { trailer: ENCRYPTED_TRAILER }), PDF), {
      text: '',
      truncated: false,
      meta: { format: 'pdf', state: 'failed', reason: 'encrypted' },
    });
  });

  it('refuses a description for a PDF', async () => {
    const error = await rejectionOf(buildCompanion(textPdf([['x']]), PDF, { description: 'A report' }));
    assertKgwError(error, 'validation', "A PDF's Companion is the text extracted from it: a description is taken only for images.");
  });
});

describe('buildCompanion: images', () => {
  it("holds an image's description, format, size and ready state", async () => {
    const png = pngOf(64, 48);
    assert.deepStrictEqual(await buildCompanion(png, assetOf(png, 'image/png'), { description: 'A red square on white.' }), {
      text: 'A red square on white.',
      truncated: false,
      meta: { format: 'png', width: 64, height: 48, state: 'ready' },
    });
  });

  it('has empty text for an image without a description', async () => {
    assert.partialDeepStrictEqual(await buildCompanion(pngOf(8, 8), PNG), { text: '', meta: { state: 'ready' } });
  });

  it('keeps the size of an image whose pixels do not decode, in a failed state', async () => {
    const cut = pngOf(400, 200, (x, y) => [x % 256, y % 256, (x * y) % 256]).subarray(0, 2000);
    assert.deepStrictEqual(await buildCompanion(cut, PNG, { description: 'Half a chart' }), {
      text: 'Half a chart',
      truncated: false,
      meta: { format: 'png', width: 400, height: 200, state: 'failed', reason: 'corrupt' },
    });
  });

  it('reports an image whose header cannot be read as failed, without a size', async () => {
    assert.deepStrictEqual(await buildCompanion(pngOf(8, 8).subarray(0, 20), PNG), {
      text: '',
      truncated: false,
      meta: { format: 'png', state: 'failed', reason: 'corrupt' },
    });
  });

  it('refuses an image above the pixel bound', async () => {
    assertKgwError(await rejectionOf(buildCompanion(pngHeaderClaiming(100_000, 100_000), PNG)), 'validation', /^The image is 100000 × 100000 pixels/);
  });

  it('refuses a description holding NUL', async () => {
    assertKgwError(
      await rejectionOf(buildCompanion(pngOf(8, 8), PNG, { description: 'a\u0000b' })),
      'validation',
      'The description must not contain NUL (U+0000).',
    );
  });
});

describe('checkDescription', () => {
  it('takes storable text up to its bound', () => {
    const longest = 'é'.repeat(DESCRIPTION_MAX_BYTES / 2);
    assert.equal(checkDescription(longest), longest);
  });

  it('refuses a lone surrogate', () => {
    assertKgwError(
      thrownBy(() => checkDescription('broken \ud800')),
      'validation',
      'The description must be well-formed Unicode (it has a lone surrogate).',
    );
  });

  it('refuses a description above 16 KiB of UTF-8', () => {
    const error = thrownBy(() => checkDescription('é'.repeat(DESCRIPTION_MAX_BYTES / 2) + 'x'));
    assertKgwError(error, 'validation', `The description may be at most ${DESCRIPTION_MAX_BYTES} bytes of UTF-8; it has ${DESCRIPTION_MAX_BYTES + 1}.`);
    assert.deepStrictEqual(error.details, { maxBytes: DESCRIPTION_MAX_BYTES, bytes: DESCRIPTION_MAX_BYTES + 1 });
  });
});
