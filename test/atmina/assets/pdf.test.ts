import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PDF_MAX_TEXT_BYTES, extractPdf } from '../../../src/atmina/kb/assets/pdf.ts';
import { assertKgwError } from '../../support/fixtures.ts';
import { ENCRYPTED_TRAILER, deflatedSpaces, pdfOf, pngOf, rejectionOf, streamObject, textContent, textPdf } from './fixtures.ts';

/** 512 MiB of spaces in half a megabyte: PDF.js inflates the whole content stream into one buffer. */
const BOMB = textPdf([await deflatedSpaces(512)], { contentDictionary: '/Filter /FlateDecode ' });

describe('extractPdf: text and pages', () => {
  it('reads the text of each page, lines kept, pages a blank line apart', async () => {
    const pdf = textPdf([['Hello world', 'Second line (with parens)'], ['Page two']]);
    assert.deepStrictEqual(await extractPdf(pdf), { state: 'ready', pages: 2, text: 'Hello world\nSecond line (with parens)\n\nPage two', truncated: false });
  });

  it("leaves the caller's buffer as it was", async () => {
    const pdf = textPdf([['Kept']]);
    const copy = Buffer.from(pdf);
    await extractPdf(pdf);
    assert.deepStrictEqual(pdf, copy);
  });

  it('reads a document without text as ready with empty text', async () => {
    assert.deepStrictEqual(await extractPdf(textPdf([Buffer.from('0 0 m 100 100 l S')])), { state: 'ready', pages: 1, text: '', truncated: false });
  });

  it('cuts the text at its byte bound and marks it truncated', async () => {
    const outcome = await extractPdf(textPdf([['0123456789', 'abcdefghij']]), { maxTextBytes: 15 });
    assert.deepStrictEqual(outcome, { state: 'ready', pages: 1, text: '0123456789\nabcd', truncated: true });
  });

  it('holds the text of a long document to 1 MiB', async () => {
    // PDF.js reads only the text inside the page: 300 pages of 48 lines of 80 characters hold 1.1 MiB.
    const page = Array.from({ length: 48 }, () => 'x'.repeat(80));
    const outcome = await extractPdf(textPdf(Array.from({ length: 300 }, () => page)));
    assert.ok(outcome.state === 'ready');
    assert.deepStrictEqual({ bytes: Buffer.byteLength(outcome.text), truncated: outcome.truncated }, { bytes: PDF_MAX_TEXT_BYTES, truncated: true });
  });

  it('reads text from the first maxPages pages only, counting them all', async () => {
    const outcome = await extractPdf(textPdf([['one'], ['two'], ['three'], ['four']]), { maxPages: 2 });
    assert.deepStrictEqual(outcome, { state: 'ready', pages: 4, text: 'one\n\ntwo', truncated: true });
  });

  it('counts the pages a page tree has, not the billion it claims', async () => {
    const pdf = pdfOf([
      '<< /Type /Catalog /Pages 2 0 R >>',
      '<< /Type /Pages /Kids [4 0 R] /Count 1000000000 >>',
      '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents 5 0 R >>',
      streamObject(textContent(['only page'])),
    ]);
    assert.deepStrictEqual(await extractPdf(pdf), { state: 'ready', pages: 1, text: 'only page', truncated: false });
  });
});

describe('extractPdf: documents that cannot be read', () => {
  it('reports a document that needs a password as encrypted', async () => {
    assert.deepStrictEqual(await extractPdf(textPdf([['secret']], { trailer: ENCRYPTED_TRAILER })), { state: 'failed', reason: 'encrypted' });
  });

  it('reports a document cut short as corrupt', async () => {
    const pdf = textPdf([['Hello world'], ['Page two']]);
    assert.deepStrictEqual(await extractPdf(pdf.subarray(0, Math.floor(pdf.length * 0.6))), { state: 'failed', reason: 'corrupt' });
  });

  it('reports a bare header as corrupt', async () => {
    assert.deepStrictEqual(await extractPdf(Buffer.from('%PDF-1.7\n')), { state: 'failed', reason: 'corrupt' });
  });

  it('ends a parse that passes its memory budget', async () => {
    const outcome = await extractPdf(BOMB, { memoryBudgetBytes: 64 * 1024 * 1024 });
    assert.deepStrictEqual(outcome, { state: 'failed', reason: 'memory' });
  });

  it('ends a parse that passes its deadline', async () => {
    const outcome = await extractPdf(BOMB, { deadlineMs: 500 });
    assert.deepStrictEqual(outcome, { state: 'failed', reason: 'deadline' });
  });
});

describe('extractPdf: refusals', () => {
  it('refuses bytes that are not a PDF', async () => {
    assertKgwError(await rejectionOf(extractPdf(pngOf(2, 2))), 'validation', 'The file is not a PDF document: it does not begin with %PDF-.');
  });

  it('refuses an empty buffer', async () => {
    assertKgwError(await rejectionOf(extractPdf(Buffer.alloc(0))), 'validation', 'The file is not a PDF document: it does not begin with %PDF-.');
  });

  it('refuses a PDF above the 25 MiB Asset ceiling before parsing it', async () => {
    const huge = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(25 * 1024 * 1024)]);
    assertKgwError(await rejectionOf(extractPdf(huge)), 'payload_too_large', /^A PDF document may be at most 26214400 bytes/);
  });
});
