import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseFrontMatter } from '../../../src/atmina/kb/text/front-matter.ts';
import { hubIndexFor } from '../../../src/atmina/kb/text/hub-index.ts';
import { linksOf } from '../../../src/atmina/kb/text/links.ts';
import { navFor } from '../../../src/atmina/kb/text/nav.ts';
import { outlineOf } from '../../../src/atmina/kb/text/outline.ts';

/*
 * Files are written by anyone with write access and read by every outline, graph update and
 * index: no content may make these functions throw or answer without bound. Their time is
 * linear by construction (one pass over the lines, capped retries); this suite checks the
 * answers on inputs that would take minutes if that broke, and each test's timeout stops a
 * run that hangs. How fast they are is the benchmark's business, not a test's.
 */

const MB = 1024 * 1024;
/** Far above linear work on a loaded machine; only a hang or a quadratic path reaches it. */
const HANG = { timeout: 120_000 };

/** Outline, links and front matter of `markdown`. */
function readAll(markdown: string) {
  return { outline: outlineOf(markdown), links: linksOf(markdown, 'a/b.md'), frontMatter: parseFrontMatter(markdown) };
}

describe('hostile characters', HANG, () => {
  it('reads NUL as text: never in a heading it reports, never in a path', () => {
    const { outline, links } = readAll('# a\u0000b\n\u0000# c\n[x](<y\u0000.md>) [z](z\u0000.md)\n');
    assert.deepStrictEqual(outline.headings, [{ level: 1, text: 'a b', line: 1 }]);
    assert.deepStrictEqual(links.links, [{ kind: 'unresolved', target: 'y .md', reason: 'invalid_path', line: 3, syntax: 'inline' }]);
  });

  it('turns lone surrogates in headings into U+FFFD and leaves paths with them unresolved', () => {
    const { outline, links } = readAll('# a\uD800\n[x](\uDC00.md)\n');
    assert.deepStrictEqual(outline.headings, [{ level: 1, text: 'a\uFFFD', line: 1 }]);
    assert.deepStrictEqual(links.links, [{ kind: 'unresolved', target: '\uFFFD.md', reason: 'invalid_path', line: 2, syntax: 'inline' }]);
  });

  it('removes bidirectional formatting from headings, titles and index entries, and refuses it in paths', () => {
    const { outline, links, frontMatter } = readAll('---\ntitle: "x\\u202Ey"\n---\n# in\u202Evoice\n[[a\u2066b]]\n');
    assert.deepStrictEqual(outline.headings, [{ level: 1, text: 'invoice', line: 4 }]);
    assert.equal(frontMatter.title, 'xy');
    assert.partialDeepStrictEqual(links.links, [{ kind: 'unresolved', reason: 'invalid_path' }]);
    assert.match(hubIndexFor('', [{ path: 'a.md', title: 'ev\u202Eil' }])?.content ?? '', /^- \[evil\]\(a\.md\)$/m);
  });

  it('does not let a bidirectional override in a file name into the hub index or the navigation', () => {
    assert.deepStrictEqual(hubIndexFor('', [{ path: 'invoice\u202Etxt.md' }])?.entries, []);
    assert.deepStrictEqual(navFor([{ path: 'invoice\u202Etxt.md' }]).pages, []);
  });

  it('counts lines the same for LF, CRLF and CR files', () => {
    const lines = ['# One', '[a](a.md)', '', 'Two', '---', '[[b]]'];
    const read = (ending: string) => {
      const markdown = lines.join(ending);
      return { headings: outlineOf(markdown).headings, links: linksOf(markdown, 'x.md').links };
    };
    assert.deepStrictEqual(read('\r\n'), read('\n'));
    assert.deepStrictEqual(read('\r'), read('\n'));
  });
});

describe('hostile sizes', HANG, () => {
  it('reads a 10 MB file in linear time with bounded output', () => {
    const block = '# Heading\n\nSome text with [a link](x.md), `code`, <https://e.example/> and [[Wiki]].\n\n- item\n  > quote [ref]\n\n[ref]: r.md\n';
    const markdown = block.repeat(Math.ceil((10 * MB) / block.length));
    const { outline, links } = readAll(markdown);
    assert.partialDeepStrictEqual(outline, { truncated: true });
    assert.equal(outline.headings.length, 1000);
    assert.equal(links.links.length, 4);
  });

  it('reports 1,000 of 100,000 headings and stops', () => {
    const outline = outlineOf('# h\n'.repeat(100_000));
    assert.equal(outline.headings.length, 1000);
    assert.equal(outline.truncated, true);
  });

  it('reports 1,000 of 300,000 distinct links', () => {
    const links = linksOf(Array.from({ length: 300_000 }, (_, i) => `[x](f${i}.md)`).join(' '), 'a.md');
    assert.equal(links.links.length, 1000);
    assert.equal(links.truncated, true);
  });

  it('bounds a single 10 MB heading to HEADING_MAX_CHARS', () => {
    const outline = outlineOf(`# ${'word '.repeat(2 * MB)}#\n`);
    assert.equal([...(outline.headings[0]?.text ?? '')].length, 300);
  });

  it('reads an unterminated fence of 10 MB', () => {
    const { outline, links } = readAll(`# Top\n\`\`\`\n${'# not\n[a](a.md)\n'.repeat((10 * MB) / 16)}`);
    assert.deepStrictEqual(outline.headings, [{ level: 1, text: 'Top', line: 1 }]);
    assert.deepStrictEqual(links.links, []);
  });

  it('reads unterminated front matter of 4 MB as body', () => {
    const { outline, frontMatter } = readAll(`---\n${'key: value\n'.repeat((4 * MB) / 11)}# Body\n`);
    assert.equal(frontMatter.status, 'unterminated');
    assert.partialDeepStrictEqual(outline, { frontMatter: { status: 'unterminated' }, headings: [{ level: 1, text: 'Body' }] });
  });

  it('does not parse front matter of 4 MB', () => {
    const frontMatter = parseFrontMatter(`---\nk: ${'v'.repeat(4 * MB)}\n---\n`);
    assert.equal(frontMatter.status, 'too_large');
  });

  it('indexes 100,000 files in bounded output', () => {
    const files = Array.from({ length: 100_000 }, (_, i) => ({ path: `g/s${i % 100}/p${i}.md`, title: `Page ${i}` }));
    const index = hubIndexFor('g', files);
    assert.equal(index?.entries.length, 1000);
    assert.equal(index?.omitted, 99_000);
    const nav = navFor(files);
    assert.equal(nav.pages.length, 5000);
    assert.equal(nav.omitted, 95_000);
  });
});

describe('hostile nesting', HANG, () => {
  it('reads 100,000 nested list markers on one line', () => {
    const { outline } = readAll(`${'- '.repeat(100_000)}x\n# After\n`);
    assert.deepStrictEqual(outline.headings, [{ level: 1, text: 'After', line: 2 }]);
  });

  it('reads 3,000 lines each one list level deeper', () => {
    const markdown = `${Array.from({ length: 3000 }, (_, i) => `${'  '.repeat(i)}- [x](x${i}.md)`).join('\n')}\n# After\n`;
    const { outline, links } = readAll(markdown);
    assert.deepStrictEqual(outline.headings, [{ level: 1, text: 'After', line: 3001 }]);
    assert.equal(links.links.length, 1000);
  });

  it('reads block quotes nested 1,000,000 deep', () => {
    const { outline } = readAll(`${'>'.repeat(MB)} # deep\n\n# After\n`);
    assert.partialDeepStrictEqual(outline, { headings: [{ text: 'After', line: 3 }] });
  });

  it('reads 20,000 lines of 200 nested quotes', () => {
    readAll(`${'> '.repeat(200)}x\n`.repeat(20_000));
  });

  it('reads nested lists and quotes mixed on one line with text after them', () => {
    readAll(`${'- > 1. * '.repeat(200_000)}x\n`);
    readAll(`${'- '.repeat(MB)}x\n`);
  });
});

describe('hostile inline text', HANG, () => {
  const cases: Record<string, string> = {
    'open brackets': '['.repeat(2 * MB),
    'close brackets': ']'.repeat(2 * MB),
    'unclosed destinations': '[a]('.repeat(MB / 2),
    'destinations in parentheses': '[]((('.repeat(MB / 2),
    'titles never closed': '[a](b "'.repeat(MB / 4),
    'backtick runs of every length': Array.from({ length: 2000 }, (_, i) => `${'`'.repeat(i + 1)}a`).join(''),
    'unclosed comments': '<!--'.repeat(MB / 2),
    'unclosed autolinks': '<ab:'.repeat(MB / 2),
    'unclosed wiki links': '[[a'.repeat(MB / 2),
    'image openers': '!['.repeat(MB),
    'shortcut references': `${'[a] '.repeat(MB / 2)}\n\n[a]: x.md\n`,
    'long labels': `[${'a'.repeat(998)}]`.repeat(2000),
    backslashes: '\\'.repeat(2 * MB),
    'a long tag line': `<a ${'b '.repeat(MB)}!`,
    'a heading of hashes': '#'.repeat(2 * MB),
    'spaces then text': `${' '.repeat(2 * MB)}x`,
    tabs: `${'\t'.repeat(2 * MB)}# x`,
    'definitions only': '[a]: b\n'.repeat(MB / 4),
    'an HTML block that never ends': `<div>\n${'a\n'.repeat(MB)}`,
  };
  for (const [name, markdown] of Object.entries(cases)) {
    it(`reads ${name} in linear time`, () => {
      readAll(markdown);
    });
  }
});
