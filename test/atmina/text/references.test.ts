import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { REFERENCES_MAX, REFERENCE_TARGET_MAX_BYTES, hasReferences, referencesOf } from '../../../src/atmina/kb/text/references.ts';

/* The references `related` reads from a Markdown file: Markdown links, wiki links and front-matter paths. */

const targets = (markdown: string, path = 'notes/a.md') =>
  referencesOf(markdown, path).references.map((r) => `${r.type}${r.key === undefined ? '' : `:${r.key}`} ${r.target}`);

describe('references of a Markdown file', () => {
  it('resolves a Markdown link from the file’s folder', () => {
    assert.deepEqual(targets('[b](b.md)'), ['markdown notes/b.md']);
  });

  it('resolves a link with a leading / from the KB’s root', () => {
    assert.deepEqual(targets('[t](/top.md)'), ['markdown top.md']);
  });

  it('strips the anchor and query and percent-decodes the path', () => {
    assert.deepEqual(targets('[s](my%20notes.md?x=1#part)'), ['markdown notes/my notes.md']);
  });

  it('ignores external URLs, mailto: and a pure #anchor', () => {
    assert.deepEqual(targets('[e](https://example.com/a.md) [m](mailto:a@b.example) [h](#here)'), []);
  });

  it('keeps a link that climbs out of the KB as a reference naming no path', () => {
    const [reference] = referencesOf('[x](../../x.md)', 'notes/a.md').references;
    assert.deepEqual({ target: reference?.target, paths: reference?.paths }, { target: '../../x.md', paths: [] });
  });

  it('gives a wiki link its path as written, then with .md, then its file name', () => {
    const [reference] = referencesOf('[[Setup|the setup]]', 'notes/a.md').references;
    assert.deepEqual({ paths: reference?.paths, name: reference?.name }, { paths: ['notes/Setup', 'notes/Setup.md'], name: 'Setup.md' });
  });

  it('gives a wiki link with a folder no file name to fall back on', () => {
    const [reference] = referencesOf('[[guides/Setup]]', 'a.md').references;
    assert.equal(reference?.name, undefined);
  });

  it('keeps a wiki link with an extension as written', () => {
    const [reference] = referencesOf('[[chart.png]]', 'a.md').references;
    assert.deepEqual(reference?.paths, ['chart.png']);
  });

  it('reads front-matter values naming paths, with their key', () => {
    assert.deepEqual(targets('---\nparent: ../index.md\nrelated:\n  - b.md\n  - "[[Setup]]"\n---\n# A\n'), [
      'front_matter:parent index.md',
      'front_matter:related notes/b.md',
      'front_matter:related notes/Setup.md',
    ]);
  });

  it('reads no references from the title, description, tags or prose values', () => {
    assert.deepEqual(targets('---\ntitle: notes.md\ndescription: x.md\ntags: [a.md]\nstatus: version 1.2\nsource: https://e.example/a.md\n---\n'), []);
  });

  it('skips a front-matter value longer than the target bound', () => {
    assert.deepEqual(targets(`---\nrelated: ${'a'.repeat(REFERENCE_TARGET_MAX_BYTES)}.md\n---\n`), []);
  });

  it('reads no links in code', () => {
    assert.deepEqual(targets('`[[code]]`\n\n    [b](b.md)\n'), []);
  });

  it('lists a wiki and a Markdown link to one file as two references', () => {
    assert.deepEqual(targets('[b](b.md) [[b]]'), ['markdown notes/b.md', 'wiki notes/b.md']);
  });

  it('keeps at most REFERENCES_MAX and says it cut', () => {
    const many = Array.from({ length: REFERENCES_MAX + 5 }, (_, i) => `[x](f${i}.md)`).join(' ');
    const found = referencesOf(many, 'a.md');
    assert.deepEqual({ count: found.references.length, truncated: found.truncated }, { count: REFERENCES_MAX, truncated: true });
  });

  it('reads Markdown text files only', () => {
    assert.deepEqual(
      [
        hasReferences({ kind: 'text', path: 'a.md', mediaType: 'text/markdown' }),
        hasReferences({ kind: 'text', path: 'a.txt', mediaType: 'text/plain' }),
        hasReferences({ kind: 'asset', path: 'a.png', mediaType: 'image/png' }),
      ],
      [true, false, false],
    );
  });

  it('never throws on hostile text', () => {
    const hostile = [
      '[[',
      ']]'.repeat(10_000),
      '---\n' + 'a: &a [*a]\n'.repeat(100) + '---\n',
      '[x](\u0000.md) [[\u202e.md]] [y](%ff%fe.md)',
      '[['.repeat(50_000),
    ];
    for (const text of hostile) assert.equal(typeof referencesOf(text, 'a.md').truncated, 'boolean');
  });
});
