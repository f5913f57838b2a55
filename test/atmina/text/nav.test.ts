import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { NAV_FILE, NAV_MARKER, navFor } from '../../../src/atmina/kb/text/nav.ts';

const FILES = [
  { path: 'index.md', title: 'Home' },
  { path: 'guides/setup.md', title: 'Setup' },
  { path: 'guides/advanced/tuning.md', title: 'Tuning' },
  { path: 'guides/a.md' },
  { path: 'about.md', title: 'About' },
  { path: NAV_FILE },
];

describe('navFor', () => {
  it('writes wiki/nav.yaml in its fixed format', () => {
    assert.deepStrictEqual(navFor(FILES), {
      path: 'wiki/nav.yaml',
      content: [
        `#${NAV_MARKER}`,
        '',
        'nav:',
        '  - title: "About"',
        '    path: "about.md"',
        '  - title: "Home"',
        '    path: "index.md"',
        '  - title: "guides"',
        '    folder: "guides"',
        '    children:',
        '      - title: "a"',
        '        path: "guides/a.md"',
        '      - title: "Setup"',
        '        path: "guides/setup.md"',
        '      - title: "advanced"',
        '        folder: "guides/advanced"',
        '        children:',
        '          - title: "Tuning"',
        '            path: "guides/advanced/tuning.md"',
        '',
      ].join('\n'),
      nav: [
        { title: 'About', path: 'about.md' },
        { title: 'Home', path: 'index.md' },
        {
          title: 'guides',
          folder: 'guides',
          children: [
            { title: 'a', path: 'guides/a.md' },
            { title: 'Setup', path: 'guides/setup.md' },
            { title: 'advanced', folder: 'guides/advanced', children: [{ title: 'Tuning', path: 'guides/advanced/tuning.md' }] },
          ],
        },
      ],
      pages: ['about.md', 'guides/a.md', 'guides/advanced/tuning.md', 'guides/setup.md', 'index.md'],
      omitted: 0,
    });
  });

  it('is the same for the same files in any order', () => {
    assert.equal(navFor([...FILES].reverse()).content, navFor(FILES).content);
  });

  it('parses back to its tree, titles that look like other YAML values staying strings', () => {
    const files = ['no', 'null', '1e3', 'a: "b" # c', '- x', '{y}', '@z', 'line\nbreak'].map((title, i) => ({ path: `p${i}.md`, title }));
    const nav = navFor(files);
    assert.deepStrictEqual(parse(nav.content, { version: '1.1' }), { nav: nav.nav });
    assert.deepStrictEqual(
      nav.nav.map((node) => node.title),
      ['no', 'null', '1e3', 'a: "b" # c', '- x', '{y}', '@z', 'line break'],
    );
  });

  it('keeps long titles on one line', () => {
    const content = navFor([{ path: 'a.md', title: 'word '.repeat(40) }]).content;
    assert.equal(content.split('\n').length, 6);
  });

  it('lists at most maxPages, the first in path order, and says how many were left out', () => {
    const nav = navFor([{ path: 'c.md' }, { path: 'a.md' }, { path: 'b.md' }], { maxPages: 2 });
    assert.partialDeepStrictEqual(nav, { pages: ['a.md', 'b.md'], omitted: 1 });
    assert.deepStrictEqual(parse(nav.content), { nav: nav.nav, omitted: 1 });
  });

  it('nests folders at most 16 deep, listing deeper pages in the deepest folder', () => {
    const deep = `${Array.from({ length: 20 }, (_, i) => `d${i}`).join('/')}/page.md`;
    let node = navFor([{ path: deep }]).nav[0];
    let depth = 0;
    while (node !== undefined && 'children' in node) {
      depth += 1;
      node = node.children[0];
    }
    assert.equal(depth, 16);
    assert.deepStrictEqual(node, { title: 'page', path: deep });
  });

  it('writes an empty navigation for no pages', () => {
    assert.equal(navFor([]).content, `#${NAV_MARKER}\n\nnav: []\n`);
  });
});
