import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import type { Metadata, Sharp } from 'sharp';
import { IMAGE_MAX_PIXELS, MEDIUM_EDGE, THUMBNAIL_EDGE, readImageInfo, rendition, thumbnail } from '../../../src/atmina/kb/assets/image.ts';
import type { Rendition } from '../../../src/atmina/kb/assets/image.ts';
import { assertKgwError } from '../../support/fixtures.ts';
import { PNG_SIGNATURE, pngHeaderClaiming, pngOf, rejectionOf, textPdf } from './fixtures.ts';

const solid = (width: number, height: number): Sharp => sharp({ create: { width, height, channels: 3, background: '#2a6f4e' } });

/** A gradient, so that a cut through its compressed pixels leaves the decoder short of data. */
const GRADIENT = pngOf(400, 200, (x, y) => [x % 256, y % 256, (x * y) % 256]);

/** A rendition that must have been made, and what its bytes decode to. */
async function made(outcome: Rendition | { state: 'failed' }): Promise<{ mimeType: string; width: number; height: number; decoded: Metadata }> {
  assert.equal(outcome.state, 'ready');
  assert.ok('data' in outcome);
  return { mimeType: outcome.mimeType, width: outcome.width, height: outcome.height, decoded: await sharp(outcome.data).metadata() };
}

describe('readImageInfo', () => {
  it('reads the format and size of a PNG written by hand', async () => {
    assert.deepStrictEqual(await readImageInfo(pngOf(40, 20)), { state: 'ready', format: 'png', width: 40, height: 20 });
  });

  it('reads JPEG, GIF and WebP', async () => {
    assert.deepStrictEqual(
      {
        jpeg: await readImageInfo(await solid(30, 10).jpeg().toBuffer()),
        gif: await readImageInfo(await solid(30, 10).gif().toBuffer()),
        webp: await readImageInfo(await solid(30, 10).webp().toBuffer()),
      },
      {
        jpeg: { state: 'ready', format: 'jpeg', width: 30, height: 10 },
        gif: { state: 'ready', format: 'gif', width: 30, height: 10 },
        webp: { state: 'ready', format: 'webp', width: 30, height: 10 },
      },
    );
  });

  it('gives the size as displayed, after the EXIF orientation', async () => {
    const turned = await solid(300, 200).jpeg().withMetadata({ orientation: 6 }).toBuffer();
    assert.deepStrictEqual(await readImageInfo(turned), { state: 'ready', format: 'jpeg', width: 200, height: 300 });
  });

  it('refuses a header claiming 100000 × 100000 pixels, without decoding it', async () => {
    const error = await rejectionOf(readImageInfo(pngHeaderClaiming(100_000, 100_000)));
    assertKgwError(error, 'validation', 'The image is 100000 × 100000 pixels; an image may have at most 50 megapixels.');
    assert.deepStrictEqual(error.details, { width: 100_000, height: 100_000, maxPixels: IMAGE_MAX_PIXELS });
  });

  it('refuses a GIF whose header claims 65535 × 65535 pixels', async () => {
    const screen = [0xff, 0xff, 0xff, 0xff];
    const gif = Buffer.concat([
      Buffer.from('GIF89a'),
      Buffer.from([...screen, 0x00, 0x00, 0x00]), // logical screen, no global colour table
      Buffer.from([0x2c, 0, 0, 0, 0, ...screen, 0x80, 0, 0, 0, 255, 255, 255]), // one image of that size, its two colours
      Buffer.from([0x02, 0x02, 0x44, 0x01, 0x00, 0x3b]), // a few bytes of LZW data, the trailer
    ]);
    assertKgwError(await rejectionOf(readImageInfo(gif)), 'validation', 'The image is 65535 × 65535 pixels; an image may have at most 50 megapixels.');
  });

  it('takes an image of exactly 50 megapixels by its header', async () => {
    assert.deepStrictEqual(await readImageInfo(pngHeaderClaiming(10_000, 5_000)), { state: 'ready', format: 'png', width: 10_000, height: 5_000 });
  });

  it('reports a file cut inside its header as corrupt', async () => {
    assert.deepStrictEqual(await readImageInfo(pngOf(40, 20).subarray(0, 20)), { state: 'failed', reason: 'corrupt' });
  });

  it('reports a header declaring an impossible size as corrupt', async () => {
    assert.deepStrictEqual(await readImageInfo(pngHeaderClaiming(2 ** 31 - 1, 1)), { state: 'failed', reason: 'corrupt' });
  });

  it('refuses bytes that are not an image', async () => {
    assertKgwError(await rejectionOf(readImageInfo(textPdf([['not a picture']]))), 'validation', 'The file is not a PNG, JPEG, GIF or WebP image.');
  });

  it('refuses an empty buffer', async () => {
    assertKgwError(await rejectionOf(readImageInfo(Buffer.alloc(0))), 'validation', 'The file is not a PNG, JPEG, GIF or WebP image.');
  });

  it('refuses an image above the 25 MiB Asset ceiling', async () => {
    const huge = Buffer.concat([PNG_SIGNATURE, Buffer.alloc(25 * 1024 * 1024)]);
    assertKgwError(await rejectionOf(readImageInfo(huge)), 'payload_too_large', /^A PNG image may be at most 26214400 bytes/);
  });
});

describe('rendition', () => {
  it('shrinks a wide PNG to a 1024-pixel longest edge, keeping its aspect', async () => {
    const { decoded, ...rest } = await made(await rendition(pngOf(2048, 683)));
    assert.deepStrictEqual(rest, { mimeType: 'image/png', width: MEDIUM_EDGE, height: 342 });
    assert.partialDeepStrictEqual(decoded, { format: 'png', width: MEDIUM_EDGE, height: 342 });
  });

  it('shrinks a tall image by its height', async () => {
    const { decoded: _decoded, ...rest } = await made(await rendition(pngOf(600, 3000)));
    assert.deepStrictEqual(rest, { mimeType: 'image/png', width: 205, height: MEDIUM_EDGE });
  });

  it('never enlarges a small image', async () => {
    const { decoded, ...rest } = await made(await rendition(pngOf(40, 20)));
    assert.deepStrictEqual(rest, { mimeType: 'image/png', width: 40, height: 20 });
    assert.partialDeepStrictEqual(decoded, { width: 40, height: 20 });
  });

  it('makes a thumbnail of the edge asked for', async () => {
    const { decoded: _decoded, ...rest } = await made(await rendition(pngOf(1000, 500), { maxEdge: THUMBNAIL_EDGE }));
    assert.deepStrictEqual(rest, { mimeType: 'image/png', width: THUMBNAIL_EDGE, height: 128 });
  });

  it('keeps JPEG as JPEG and WebP as WebP', async () => {
    const jpeg = await made(await rendition(await solid(2000, 1000).jpeg().toBuffer()));
    const webp = await made(await rendition(await solid(2000, 1000).webp().toBuffer()));
    assert.deepStrictEqual(
      { jpeg: { mimeType: jpeg.mimeType, format: jpeg.decoded.format }, webp: { mimeType: webp.mimeType, format: webp.decoded.format } },
      { jpeg: { mimeType: 'image/jpeg', format: 'jpeg' }, webp: { mimeType: 'image/webp', format: 'webp' } },
    );
  });

  it('renders a GIF as a PNG', async () => {
    const { decoded, ...rest } = await made(await rendition(await solid(64, 32).gif().toBuffer()));
    assert.deepStrictEqual(rest, { mimeType: 'image/png', width: 64, height: 32 });
    assert.equal(decoded.format, 'png');
  });

  it('turns a JPEG upright and drops its EXIF', async () => {
    const turned = await solid(300, 200).jpeg().withMetadata({ orientation: 6 }).toBuffer();
    const { decoded, ...rest } = await made(await rendition(turned, { maxEdge: 150 }));
    assert.deepStrictEqual(rest, { mimeType: 'image/jpeg', width: 100, height: 150 });
    assert.deepStrictEqual({ orientation: decoded.orientation, exif: decoded.exif }, { orientation: undefined, exif: undefined });
  });

  it('reports pixel data cut short as corrupt', async () => {
    const cut = GRADIENT.subarray(0, 2000);
    assert.deepStrictEqual(await readImageInfo(cut), { state: 'ready', format: 'png', width: 400, height: 200 });
    assert.deepStrictEqual(await rendition(cut), { state: 'failed', reason: 'corrupt' });
  });

  it('reports a JPEG cut short as corrupt', async () => {
    const jpeg = await sharp(GRADIENT).jpeg().toBuffer();
    assert.deepStrictEqual(await rendition(jpeg.subarray(0, Math.floor(jpeg.length * 0.6))), { state: 'failed', reason: 'corrupt' });
  });

  it('refuses a header claiming 100000 × 100000 pixels', async () => {
    assertKgwError(await rejectionOf(rendition(pngHeaderClaiming(100_000, 100_000))), 'validation', /^The image is 100000 × 100000 pixels/);
  });

  it('reports a 50-megapixel header over a few bytes of pixels as corrupt', async () => {
    assert.deepStrictEqual(await rendition(pngHeaderClaiming(10_000, 5_000)), { state: 'failed', reason: 'corrupt' });
  });

  it('refuses an edge outside 1 to 4096', async () => {
    await assert.rejects(rendition(pngOf(4, 4), { maxEdge: 0 }), RangeError);
  });
});

describe('thumbnail', () => {
  it('shrinks a PNG to a 256-pixel longest edge as WebP, keeping its aspect', async () => {
    const { decoded, ...rest } = await made(await thumbnail(pngOf(1000, 400)));
    assert.deepStrictEqual(rest, { mimeType: 'image/webp', width: THUMBNAIL_EDGE, height: 102 });
    assert.partialDeepStrictEqual(decoded, { format: 'webp', width: THUMBNAIL_EDGE, height: 102 });
  });

  it('never enlarges a small image', async () => {
    const { decoded, ...rest } = await made(await thumbnail(pngOf(100, 60)));
    assert.deepStrictEqual(rest, { mimeType: 'image/webp', width: 100, height: 60 });
    assert.partialDeepStrictEqual(decoded, { format: 'webp', width: 100, height: 60 });
  });

  it('keeps the transparency of a PNG', async () => {
    const clear = await sharp({ create: { width: 300, height: 300, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } })
      .png()
      .toBuffer();
    const { decoded } = await made(await thumbnail(clear));
    assert.partialDeepStrictEqual(decoded, { format: 'webp', hasAlpha: true });
  });

  it('turns a JPEG upright and drops its EXIF', async () => {
    const turned = await solid(600, 400).jpeg().withMetadata({ orientation: 6 }).toBuffer();
    const { decoded, ...rest } = await made(await thumbnail(turned));
    assert.deepStrictEqual(rest, { mimeType: 'image/webp', width: 171, height: THUMBNAIL_EDGE });
    assert.deepStrictEqual({ orientation: decoded.orientation, exif: decoded.exif }, { orientation: undefined, exif: undefined });
  });

  it('reports pixel data cut short as corrupt', async () => {
    assert.deepStrictEqual(await thumbnail(GRADIENT.subarray(0, 2000)), { state: 'failed', reason: 'corrupt' });
  });
});
