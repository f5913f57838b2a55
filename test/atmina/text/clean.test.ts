import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clip, displayText, splitLines, withoutBom } from '../../../src/atmina/kb/text/clean.ts';

describe('displayText', () => {
  it('makes controls spaces and whitespace runs one space, trimmed', () => {
    assert.equal(displayText('  a\t\tb\r\nc\u0000d\u0085e  ', 100), 'a b c d e');
  });

  it('removes bidirectional formatting characters', () => {
    assert.equal(displayText('invoice\u202Etxt.exe\u2066x\u2069', 100), 'invoicetxt.exex');
  });

  it('turns a lone surrogate into U+FFFD', () => {
    assert.equal(displayText('a\uD800b\uDFFF', 100), 'a\uFFFDb\uFFFD');
  });

  it('keeps text within the bound as it is', () => {
    assert.equal(displayText('Über die Brücke', 15), 'Über die Brücke');
  });

  it('cuts longer text to the bound in code points, ending with an ellipsis', () => {
    assert.equal(displayText('abcdefgh', 5), 'abcd…');
  });
});

describe('clip', () => {
  it('counts a surrogate pair as one code point and never splits it', () => {
    assert.equal(clip('😀😀😀😀', 3), '😀😀…');
  });

  it('answers text of exactly the bound unchanged', () => {
    assert.equal(clip('😀😀😀', 3), '😀😀😀');
  });

  it('drops trailing whitespace before the ellipsis', () => {
    assert.equal(clip('ab cdef', 4), 'ab…');
  });
});

describe('splitLines', () => {
  it('ends a line at CRLF, CR and LF alike', () => {
    assert.deepStrictEqual(splitLines('a\r\nb\rc\nd'), ['a', 'b', 'c', 'd']);
  });

  it('counts a CR before an LF once', () => {
    assert.deepStrictEqual(splitLines('a\r\r\nb'), ['a', '', 'b']);
  });
});

describe('withoutBom', () => {
  it('drops a leading byte order mark only', () => {
    assert.equal(withoutBom('\uFEFFa\uFEFF'), 'a\uFEFF');
  });
});
