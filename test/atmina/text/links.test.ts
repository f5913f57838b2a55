import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { linksOf } from '../../../src/atmina/kb/text/links.ts';
import { folderOf, normalKbPath, resolveMarkdownTarget, resolveWikiTarget } from '../../../src/atmina/kb/text/paths.ts';

const FROM = 'guides/setup/intro.md';
const links = (markdown: string) => linksOf(markdown, FROM).links;

describe('linksOf: syntaxes', () => {
  it('reads inline links and images', () => {
    assert.deepStrictEqual(links('See [install](install.md "Install") and ![diagram](img/flow.png).\n'), [
      { kind: 'file', path: 'guides/setup/install.md', line: 1, syntax: 'inline' },
      { kind: 'file', path: 'guides/setup/img/flow.png', line: 1, syntax: 'inline' },
    ]);
  });

  it('reads angle-bracket destinations with spaces and balanced parentheses', () => {
    assert.deepStrictEqual(links('[a](<my notes.md>) [b](v(2).md)\n'), [
      { kind: 'file', path: 'guides/setup/my notes.md', line: 1, syntax: 'inline' },
      { kind: 'file', path: 'guides/setup/v(2).md', line: 1, syntax: 'inline' },
    ]);
  });

  it('reads full, collapsed and shortcut reference links, definitions before or after', () => {
    assert.deepStrictEqual(links('[one][First] [Second][] [third]\n\n[first]: a.md\n[second]: <b.md> "B"\n[THIRD]: c.md\n[unused]: d.md\n'), [
      { kind: 'file', path: 'guides/setup/a.md', line: 1, syntax: 'reference' },
      { kind: 'file', path: 'guides/setup/b.md', line: 1, syntax: 'reference' },
      { kind: 'file', path: 'guides/setup/c.md', line: 1, syntax: 'reference' },
    ]);
  });

  it('keeps the first of two definitions of a label', () => {
    assert.deepStrictEqual(links('[x]\n\n[x]: first.md\n[x]: second.md\n'), [{ kind: 'file', path: 'guides/setup/first.md', line: 1, syntax: 'reference' }]);
  });

  it('reads a definition whose destination is on the next line', () => {
    assert.deepStrictEqual(links('[x]\n\n[x]:\n  next.md\n'), [{ kind: 'file', path: 'guides/setup/next.md', line: 1, syntax: 'reference' }]);
  });

  it('does not take an undefined label or a task box for a link', () => {
    assert.deepStrictEqual(links('- [x] done\n- [ ] open\n[nowhere]\n'), []);
  });

  it('reads autolinks as external', () => {
    assert.deepStrictEqual(links('<https://example.com/docs?q=1#top>\n'), [
      { kind: 'external', url: 'https://example.com/docs?q=1#top', line: 1, syntax: 'autolink' },
    ]);
  });

  it('reads wiki links, labels and embeds, adding .md to a name without an extension', () => {
    assert.deepStrictEqual(links('[[Setup]] [[../faq|FAQ]] [[notes#Heading]] ![[diagram.png]]\n'), [
      { kind: 'file', path: 'guides/setup/Setup.md', line: 1, syntax: 'wiki' },
      { kind: 'file', path: 'guides/faq.md', line: 1, syntax: 'wiki' },
      { kind: 'file', path: 'guides/setup/notes.md', line: 1, syntax: 'wiki' },
      { kind: 'file', path: 'guides/setup/diagram.png', line: 1, syntax: 'wiki' },
    ]);
  });

  it('reads a link whose text spans lines, at the line it starts on', () => {
    assert.deepStrictEqual(links('text\nmore [a\nlink](a.md)\n'), [{ kind: 'file', path: 'guides/setup/a.md', line: 2, syntax: 'inline' }]);
  });

  it('reads links in headings, list items and block quotes', () => {
    assert.deepStrictEqual(
      links('# [h](h.md)\n- [l](l.md)\n> [q](q.md)\n').map((link) => link.kind === 'file' && link.path),
      ['guides/setup/h.md', 'guides/setup/l.md', 'guides/setup/q.md'],
    );
  });
});

describe('linksOf: what is not a link', () => {
  it('ignores links in code spans', () => {
    assert.deepStrictEqual(links('`[a](a.md)` ``[b](b.md) ` `` [c](c.md)\n'), [{ kind: 'file', path: 'guides/setup/c.md', line: 1, syntax: 'inline' }]);
  });

  it('reads past an unmatched backtick', () => {
    assert.deepStrictEqual(links('a ` b [c](c.md)\n'), [{ kind: 'file', path: 'guides/setup/c.md', line: 1, syntax: 'inline' }]);
  });

  it('ignores links in fenced and indented code', () => {
    assert.deepStrictEqual(links('```md\n[a](a.md)\n```\n\n    [b](b.md)\n\n- item\n\n      [c](c.md)\n'), []);
  });

  it('ignores links in HTML comments, inline or block', () => {
    assert.deepStrictEqual(links('a <!-- [a](a.md) --> b\n\n<!--\n[b](b.md)\n-->\n'), []);
  });

  it('ignores links in front matter', () => {
    assert.deepStrictEqual(links('---\nsee: "[a](a.md)"\n---\nbody\n'), []);
  });

  it('ignores escaped brackets', () => {
    assert.deepStrictEqual(links('\\[a](a.md) \\[[b]]\n'), []);
  });

  it('ignores mailto and email autolinks, and script, data and tel URLs', () => {
    assert.deepStrictEqual(
      links('[m](mailto:a@b.example) <a@b.example> <mailto:c@d.example> [j](javascript:alert(1)) [d](data:text/plain,x) [t](tel:+1)\n'),
      [],
    );
  });

  it('ignores links to the file itself (a fragment or a query only) and empty ones', () => {
    assert.deepStrictEqual(links('[a](#section) [b](?x=1) [c]() [[#Heading]]\n'), []);
  });

  it('does not read a link inside the text of another link', () => {
    assert.deepStrictEqual(links('[outer [inner](inner.md)](outer.md)\n'), [{ kind: 'file', path: 'guides/setup/inner.md', line: 1, syntax: 'inline' }]);
  });
});

describe('linksOf: resolution', () => {
  it('resolves relative to the file, ./ and ../ included, and / from the root', () => {
    assert.deepStrictEqual(
      links('[a](./a.md) [b](../b.md) [c](../../c.md) [d](/ref/d.md) [e](x/../e.md)\n').map((link) => link.kind === 'file' && link.path),
      ['guides/setup/a.md', 'guides/b.md', 'c.md', 'ref/d.md', 'guides/setup/e.md'],
    );
  });

  it('drops the #fragment and ?query of a path', () => {
    assert.deepStrictEqual(
      links('[a](a.md#part) [b](b.md?plain=1#L3)\n').map((link) => link.kind === 'file' && link.path),
      ['guides/setup/a.md', 'guides/setup/b.md'],
    );
  });

  it('percent-decodes, keeping sequences that are not UTF-8', () => {
    assert.deepStrictEqual(
      links('[a](my%20notes.md) [b](caf%C3%A9.md) [c](100%25.md) [d](bad%E2%82.md) [e](50%.md)\n').map((link) => link.kind === 'file' && link.path),
      ['guides/setup/my notes.md', 'guides/setup/café.md', 'guides/setup/100%.md', 'guides/setup/bad%E2%82.md', 'guides/setup/50%.md'],
    );
  });

  it('removes backslash escapes from destinations', () => {
    assert.deepStrictEqual(links('[a](a\\_b.md)\n'), [{ kind: 'file', path: 'guides/setup/a_b.md', line: 1, syntax: 'inline' }]);
  });

  it('leaves a target climbing above the root unresolved, encoded or not', () => {
    assert.deepStrictEqual(links('[a](../../../etc/passwd) [b](%2e%2e/%2e%2e/%2E%2E/x.md) [[../../../y]]\n'), [
      { kind: 'unresolved', target: '../../../etc/passwd', reason: 'outside_kb', line: 1, syntax: 'inline' },
      { kind: 'unresolved', target: '%2e%2e/%2e%2e/%2E%2E/x.md', reason: 'outside_kb', line: 1, syntax: 'inline' },
      { kind: 'unresolved', target: '../../../y', reason: 'outside_kb', line: 1, syntax: 'wiki' },
    ]);
  });

  it('leaves a folder unresolved', () => {
    assert.deepStrictEqual(
      links('[a](../) [b](.) [c](/) [[sub/]]\n').map((link) => link.kind === 'unresolved' && link.reason),
      ['folder', 'folder', 'folder', 'folder'],
    );
  });

  it('leaves a path with NUL, controls or bidirectional formatting unresolved', () => {
    assert.deepStrictEqual(
      links('[a](a%00.md) [b](b%1B.md) [c](c%E2%80%AE.md)\n').map((link) => link.kind === 'unresolved' && link.reason),
      ['invalid_path', 'invalid_path', 'invalid_path'],
    );
  });

  it('classifies scheme and network-path URLs as external, as written', () => {
    assert.deepStrictEqual(links('[a](https://example.com/a.md#x) [b](//cdn.example/x.js) [c](obsidian://open?vault=x)\n'), [
      { kind: 'external', url: 'https://example.com/a.md#x', line: 1, syntax: 'inline' },
      { kind: 'external', url: '//cdn.example/x.js', line: 1, syntax: 'inline' },
      { kind: 'external', url: 'obsidian://open?vault=x', line: 1, syntax: 'inline' },
    ]);
  });

  it('drops a URL that does not parse', () => {
    assert.deepStrictEqual(links('[a](http://exa mple.com) [b](https://[::1)\n'), []);
  });
});

describe('linksOf: order and bounds', () => {
  it('reports each target once, at its first occurrence, in order', () => {
    assert.deepStrictEqual(links('[b](b.md)\n\n[a](a.md) [again](./b.md#x) [[b]]\n'), [
      { kind: 'file', path: 'guides/setup/b.md', line: 1, syntax: 'inline' },
      { kind: 'file', path: 'guides/setup/a.md', line: 3, syntax: 'inline' },
    ]);
  });

  it('reports at most maxLinks and flags the rest', () => {
    assert.deepStrictEqual(linksOf('[a](a.md) [b](b.md) [c](c.md)\n', 'x.md', { maxLinks: 2 }), {
      links: [
        { kind: 'file', path: 'a.md', line: 1, syntax: 'inline' },
        { kind: 'file', path: 'b.md', line: 1, syntax: 'inline' },
      ],
      truncated: true,
    });
  });

  it('does not flag repeats of reported targets', () => {
    assert.equal(linksOf('[a](a.md) [a](a.md) [a](a.md)\n', 'x.md', { maxLinks: 1 }).truncated, false);
  });
});

describe('paths', () => {
  it('resolveMarkdownTarget from a root file', () => {
    assert.deepStrictEqual(resolveMarkdownTarget('a/b.md', 'index.md'), { kind: 'file', path: 'a/b.md' });
  });

  it('resolveWikiTarget keeps a name with an extension as it is', () => {
    assert.deepStrictEqual(resolveWikiTarget('report.pdf', 'a/x.md'), { kind: 'file', path: 'a/report.pdf' });
    assert.deepStrictEqual(resolveWikiTarget('v1.2 notes', 'x.md'), { kind: 'file', path: 'v1.2 notes.md' });
  });

  it('folderOf', () => {
    assert.equal(folderOf('a/b/c.md'), 'a/b');
    assert.equal(folderOf('c.md'), '');
  });

  it('normalKbPath refuses what is not a path in normal form', () => {
    assert.deepStrictEqual(
      ['a/b.md', '/a.md', 'a//b.md', 'a/./b.md', '../a.md', 'a/', '', 'a\u0000.md', 'a\u202E.md'].map((path) => normalKbPath(path) ?? null),
      ['a/b.md', null, null, null, null, null, null, null, null],
    );
  });

  it('normalKbPath refuses what a file path may not be: NFD, a 256-byte segment, 33 segments, a backslash', () => {
    assert.deepStrictEqual(
      ['cafe\u0301.md', `${'a'.repeat(253)}.md`, Array.from({ length: 33 }, () => 'a').join('/'), 'a\\b.md', 'caf\u00e9.md'].map(
        (path) => normalKbPath(path) ?? null,
      ),
      [null, null, null, null, 'caf\u00e9.md'],
    );
  });
});

describe('paths: link targets follow the file-path rules (src/atmina/kb/paths.ts)', () => {
  const reason = (destination: string) => {
    const target = resolveMarkdownTarget(destination, 'index.md');
    return target?.kind === 'unresolved' ? target.reason : target?.kind;
  };

  it('resolves a decomposed (NFD) spelling to the NFC path files are stored under', () => {
    assert.deepStrictEqual(resolveMarkdownTarget('cafe%CC%81.md', 'index.md'), { kind: 'file', path: 'caf\u00e9.md' });
    assert.deepStrictEqual(resolveWikiTarget('Cafe\u0301', 'index.md'), { kind: 'file', path: 'Caf\u00e9.md' });
  });

  it('bounds a path in UTF-8 bytes, not UTF-16 units: 600 é are 1200 bytes', () => {
    assert.equal(reason(`${'\u00e9'.repeat(600)}.md`), 'invalid_path');
    assert.equal(reason(`${'a'.repeat(250)}/${'b'.repeat(250)}/${'c'.repeat(250)}/${'d'.repeat(250)}.md`), 'file');
  });

  it('refuses a segment over 255 bytes, more than 32 segments, and a segment with an edge space', () => {
    assert.equal(reason(`${'a'.repeat(253)}.md`), 'invalid_path');
    assert.equal(reason(`${Array.from({ length: 32 }, () => 'a').join('/')}/b.md`), 'invalid_path');
    assert.equal(reason('<a /b.md>'), 'invalid_path');
  });

  it('refuses a backslash, which no file path holds', () => {
    assert.equal(reason('a\\b.md'), 'invalid_path');
  });

  it('measures the resolved path: .. segments written in a long target do not count', () => {
    assert.equal(reason(`${'x/../'.repeat(400)}a.md`), 'file');
  });
});
