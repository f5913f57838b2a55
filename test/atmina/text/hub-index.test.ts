import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { escapeMarkdown, HUB_INDEX_MARKER, hubIndexFor, isGeneratedHubIndex } from '../../../src/atmina/kb/text/hub-index.ts';
import { linksOf } from '../../../src/atmina/kb/text/links.ts';
import { outlineOf } from '../../../src/atmina/kb/text/outline.ts';

const FILES = [
  { path: 'guides/setup.md', title: 'Setup', description: 'How to start.' },
  { path: 'guides/advanced/tuning.md', title: 'Tuning' },
  { path: 'guides/advanced/deep/notes.md' },
  { path: 'guides/faq.md', title: 'FAQ' },
  { path: 'guides/index.md', title: 'Old index' },
  { path: 'other/elsewhere.md', title: 'Elsewhere' },
];

describe('hubIndexFor', () => {
  it('writes the folder index in its fixed format', () => {
    assert.deepStrictEqual(hubIndexFor('guides', FILES), {
      path: 'guides/index.md',
      content: [
        '# guides',
        '',
        HUB_INDEX_MARKER,
        '',
        '- [FAQ](faq.md)',
        '- [Setup](setup.md) — How to start.',
        '',
        '## advanced',
        '',
        '- [Tuning](advanced/tuning.md)',
        '',
        '## advanced/deep',
        '',
        '- [notes](advanced/deep/notes.md)',
        '',
      ].join('\n'),
      entries: ['guides/faq.md', 'guides/setup.md', 'guides/advanced/tuning.md', 'guides/advanced/deep/notes.md'],
      omitted: 0,
    });
  });

  it('is the same for the same files in any order', () => {
    assert.equal(hubIndexFor('guides', [...FILES].reverse())?.content, hubIndexFor('guides', FILES)?.content);
  });

  it('writes index.md at the root, headed Index, listing every file', () => {
    assert.partialDeepStrictEqual(hubIndexFor('', FILES), {
      path: 'index.md',
      entries: ['guides/faq.md', 'guides/index.md', 'guides/setup.md', 'guides/advanced/tuning.md', 'guides/advanced/deep/notes.md', 'other/elsewhere.md'],
    });
    assert.ok(hubIndexFor('/', FILES)?.content.startsWith('# Index\n'));
  });

  it('takes a folder with slashes around it as the folder', () => {
    assert.equal(hubIndexFor('/guides/', FILES)?.path, 'guides/index.md');
  });

  it('refuses a folder path that is not one', () => {
    assert.equal(hubIndexFor('guides/../other', FILES), undefined);
    assert.equal(hubIndexFor('a\u0000b', FILES), undefined);
  });

  it('uses the given title', () => {
    assert.ok(hubIndexFor('guides', FILES, { title: 'All *guides*' })?.content.startsWith('# All \\*guides\\*\n'));
  });

  it('does not list files of a folder that merely shares the prefix', () => {
    assert.deepStrictEqual(hubIndexFor('guide', [{ path: 'guides/a.md' }, { path: 'guide/b.md' }])?.entries, ['guide/b.md']);
  });

  it('says so when the folder has no files', () => {
    assert.equal(hubIndexFor('empty', FILES)?.content, `# empty\n\n${HUB_INDEX_MARKER}\n\n_No files yet._\n`);
  });

  it('lists a repeated path once and skips paths not in normal form', () => {
    assert.deepStrictEqual(
      hubIndexFor('g', [{ path: 'g/a.md', title: 'First' }, { path: 'g/a.md', title: 'Second' }, { path: 'g//b.md' }, { path: 'g/../c.md' }])?.entries,
      ['g/a.md'],
    );
  });

  it('escapes Markdown in titles and descriptions and keeps each to one line', () => {
    const index = hubIndexFor('g', [{ path: 'g/a.md', title: '[x](evil.md) *b* <script>', description: 'line\none `code` # h' }]);
    assert.match(index?.content ?? '', /^- \[\\\[x\\\]\(evil\.md\) \\\*b\\\* \\<script\\>\]\(a\.md\) — line one \\`code\\` \\# h$/m);
  });

  it('encodes link destinations so that they resolve back to the files', () => {
    const files = [{ path: 'g/my notes (v2).md' }, { path: 'g/sub dir/100% done.md' }, { path: 'g/café#1.md' }];
    const index = hubIndexFor('g', files);
    const resolved = linksOf(index?.content ?? '', index?.path ?? '').links.map((link) => (link.kind === 'file' ? link.path : link.kind));
    assert.deepStrictEqual(resolved, ['g/café#1.md', 'g/my notes (v2).md', 'g/sub dir/100% done.md']);
  });

  it('has one heading per section, as the outline reads them', () => {
    const index = hubIndexFor('guides', FILES);
    assert.deepStrictEqual(
      outlineOf(index?.content ?? '').headings.map((heading) => heading.text),
      ['guides', 'advanced', 'advanced/deep'],
    );
  });

  it('lists at most maxEntries and counts the rest', () => {
    const index = hubIndexFor('g', [{ path: 'g/a.md' }, { path: 'g/b.md' }, { path: 'g/c.md' }], { maxEntries: 1 });
    assert.partialDeepStrictEqual(index, { entries: ['g/a.md'], omitted: 2 });
    assert.ok(index?.content.endsWith('- [a](a.md)\n\n_2 more files are not listed._\n'));
  });

  it('bounds titles and descriptions', () => {
    const index = hubIndexFor('g', [{ path: 'g/a.md', title: 't'.repeat(10_000), description: 'd'.repeat(10_000) }]);
    assert.ok((index?.content.length ?? Infinity) < 1000);
  });
});

describe('isGeneratedHubIndex', () => {
  it('recognises a generated index by its marker', () => {
    assert.equal(isGeneratedHubIndex(hubIndexFor('g', [])?.content ?? ''), true);
    assert.equal(isGeneratedHubIndex('# Hand-written\n'), false);
  });
});

describe('escapeMarkdown', () => {
  it('escapes the punctuation that can start inline markup', () => {
    assert.equal(escapeMarkdown('a*b_c`d[e]f<g>h&i~j|k#l!m$n\\o'), 'a\\*b\\_c\\`d\\[e\\]f\\<g\\>h\\&i\\~j\\|k\\#l\\!m\\$n\\\\o');
  });
});
