import assert from 'node:assert/strict';
import { readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { jsonText, visible } from '../../src/cli/terminal.ts';
import { table } from '../../src/cli/usage.ts';
import { ROOT, cliEnv, kgw, lines, tempDir } from './support.ts';

/** Every character a terminal could act on, or that hides or reorders text, in an output. */
// eslint-disable-next-line no-control-regex -- the control characters are what is looked for
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b\u200e-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\u{e0000}-\u{e007f}]/u;

describe('terminal output', () => {
  it('shows C0 controls (but line feed and tab), DEL and C1 controls as \\xNN', () => {
    assert.equal(visible('a\x1b[2Jb'), 'a\\x1b[2Jb');
    assert.equal(visible('\x1b]0;title\x07'), '\\x1b]0;title\\x07');
    assert.equal(visible('\x1b]8;;http://evil.test\x1b\\link\x1b]8;;\x1b\\'), '\\x1b]8;;http://evil.test\\x1b\\link\\x1b]8;;\\x1b\\');
    assert.equal(visible('over\rwrite'), 'over\\x0dwrite');
    assert.equal(visible('\0\b\v\f\x7f'), '\\x00\\x08\\x0b\\x0c\\x7f');
    assert.equal(visible('\u009b31mred \u0085 \u0090'), '\\x9b31mred \\x85 \\x90');
    assert.equal(visible('one\n\ttwo\n'), 'one\n\ttwo\n');
  });

  it('shows the bidi and other format characters and the line separators as \\uNNNN', () => {
    const bidi = [0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069, 0x200e, 0x200f, 0x061c];
    for (const code of bidi) assert.equal(visible(`x${String.fromCodePoint(code)}y`), `x\\u${code.toString(16).padStart(4, '0')}y`);
    assert.equal(visible('invoice\u202efdp.exe'), 'invoice\\u202efdp.exe');
    assert.equal(visible('zero\u200bwidth\ufeff soft\u00adhyphen'), 'zero\\u200bwidth\\ufeff soft\\xadhyphen');
    assert.equal(visible('a\u2028b\u2029c'), 'a\\u2028b\\u2029c');
    // Tag characters hide text from a reader entirely.
    assert.equal(visible('ok\u{e0041}\u{e0042}'), 'ok\\u{e0041}\\u{e0042}');
  });

  it('keeps ordinary text as it is: letters of every script, emoji with joiners, backslashes', () => {
    for (const text of ['Release checklist', 'Größe é ñ', '发布清单', 'مرحبا', '👩‍💻 🚀 👨‍👩‍👧', 'می‌خواهم', 'C:\\path\\x1b and \\u202e as typed', '   spaced   ']) {
      assert.equal(visible(text), text);
    }
  });

  it('inline also shows line feeds and tabs, so that a name or a cell stays on its line', () => {
    assert.equal(visible('a\nb\tc\r\n', { inline: true }), 'a\\x0ab\\x09c\\x0d\\x0a');
    assert.equal(visible('👩‍💻', { inline: true }), '👩‍💻');
  });

  it('leaves nothing to act on, and changes nothing on a second pass', () => {
    const every = Array.from({ length: 0x3100 }, (_, code) => String.fromCodePoint(code)).join('') + '\u{e0001}\u{e0041}\u{e007f}\ufeff\ufff9';
    for (const inline of [false, true]) {
      const once = visible(every, { inline });
      assert.doesNotMatch(once, RAW);
      assert.equal(visible(once, { inline }), once);
      if (inline) assert.ok(!once.includes('\n') && !once.includes('\t'));
    }
  });

  it('table() lays out the visible form of each cell on one line', () => {
    const text = table(
      ['NAME', 'NOTE'],
      [
        ['a\nforged row', '\x1b[31mred'],
        ['b', 'ok'],
      ],
    );
    assert.deepEqual(lines(text), ['NAME             NOTE', 'a\\x0aforged row  \\x1b[31mred', 'b                ok']);
  });

  it('jsonText is valid JSON of the same value with C1, DEL, format characters and separators as \\u escapes', () => {
    const value = { title: 'a\x1b[2J\x07\u009b31m\u0085\x7f\u202e\u2066\u2028\u200b\u{e0041}b\n', plain: 'é 🚀 👩‍💻', n: 1, none: null };
    const text = jsonText(value);
    assert.deepEqual(JSON.parse(text), value);
    assert.doesNotMatch(text, RAW);
    for (const escape of ['\\u001b[2J', '\\u0007', '\\u009b31m', '\\u0085', '\\u007f', '\\u202e', '\\u2066', '\\u2028', '\\u200b', '\\udb40\\udc41', '\\n'])
      assert.ok(text.includes(escape), escape);
    assert.ok(text.includes('"plain": "é 🚀 👩‍💻"'));
    assert.equal(jsonText([1, { a: 'b' }]), JSON.stringify([1, { a: 'b' }], null, 2), 'ordinary JSON is unchanged');
    assert.equal(visible(text), text, 'printing it changes nothing');
  });

  it('every command writes through terminal.ts: no other file of src/cli writes to the console or the streams', async () => {
    const dir = path.join(ROOT, 'src', 'cli');
    // connect-snippets.ts holds the programs `kgw connect` prints for users (a TypeScript one
    // logs the tools it lists): text, not a write of the CLI's.
    const files = (await readdir(dir)).filter((name) => name.endsWith('.ts') && name !== 'terminal.ts' && name !== 'connect-snippets.ts');
    assert.ok(files.includes('review.ts') && files.includes('kgw.ts'));
    for (const name of files) {
      const source = await readFile(path.join(dir, name), 'utf8');
      assert.doesNotMatch(source, /\bconsole\.|process\.(stdout|stderr)\b/, `${name} writes around terminal.ts`);
    }
  });

  it('an error line naming what the caller typed shows its escapes', async () => {
    const dir = await tempDir();
    try {
      const run = await kgw(['review', 'list', '--\x1b]0;pwned\x07\u009b2J\u202e'], cliEnv({ KGW_DATA_DIR: path.join(dir, 'data') }));
      assert.equal(run.code, 2);
      assert.equal(run.stdout, '');
      assert.doesNotMatch(run.stderr, RAW);
      assert.match(run.stderr, /^kgw: unknown option --\\x1b\]0;pwned\\x07\\x9b2J\\u202e; the options are /);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
