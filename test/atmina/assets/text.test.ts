import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { boundedText, tidyText } from '../../../src/atmina/kb/assets/text.ts';

describe('tidyText', () => {
  it('drops NUL and stray controls, keeping tabs as spaces and line feeds', () => {
    assert.equal(tidyText('a\u0000b\u0007c\td\r\ne'), 'abc d\ne');
  });

  it('replaces a lone surrogate with U+FFFD', () => {
    assert.equal(tidyText('x\ud800y'), 'x\ufffdy');
  });

  it('collapses runs of spaces and keeps at most one blank line', () => {
    assert.equal(tidyText('  one   two  \n\n\n\n three \n'), 'one two\n\nthree');
  });
});

describe('boundedText', () => {
  it('keeps pieces that fit whole', () => {
    const text = boundedText(10);
    assert.deepStrictEqual(
      { added: [text.add('abc'), text.add('defg')], text: text.text, bytes: text.bytes, truncated: text.truncated },
      {
        added: [true, true],
        text: 'abcdefg',
        bytes: 7,
        truncated: false,
      },
    );
  });

  it('cuts the piece that does not fit between characters, and takes nothing after it', () => {
    // 'é' is 2 bytes and '😀' 4: 5 bytes hold 'aé' and not half of the emoji.
    const text = boundedText(5);
    assert.deepStrictEqual(
      { added: [text.add('aé😀b'), text.add('c')], text: text.text, bytes: text.bytes, truncated: text.truncated },
      {
        added: [false, false],
        text: 'aé',
        bytes: 3,
        truncated: true,
      },
    );
  });

  it('fills the budget exactly when a character ends on it', () => {
    const text = boundedText(4);
    text.add('é');
    text.add('éé');
    assert.deepStrictEqual({ text: text.text, bytes: text.bytes, truncated: text.truncated }, { text: 'éé', bytes: 4, truncated: true });
  });
});
