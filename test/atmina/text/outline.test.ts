import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HEADING_MAX_CHARS, outlineOf, summarisePage } from '../../../src/atmina/kb/text/outline.ts';

const headings = (markdown: string) => outlineOf(markdown).headings;

describe('outlineOf: ATX headings', () => {
  it('reports each level with its text and 1-based line', () => {
    assert.deepStrictEqual(headings('# One\ntext\n## Two\n\n###### Six\n'), [
      { level: 1, text: 'One', line: 1 },
      { level: 2, text: 'Two', line: 3 },
      { level: 6, text: 'Six', line: 5 },
    ]);
  });

  it('strips a closing sequence of #s', () => {
    assert.deepStrictEqual(headings('## Two ##\n### Three #####   \n'), [
      { level: 2, text: 'Two', line: 1 },
      { level: 3, text: 'Three', line: 2 },
    ]);
  });

  it('keeps #s that are not a closing sequence', () => {
    assert.deepStrictEqual(headings('# C#\n# a \\#\n'), [
      { level: 1, text: 'C#', line: 1 },
      { level: 1, text: 'a \\#', line: 2 },
    ]);
  });

  it('needs a space after the #s, and at most six', () => {
    assert.deepStrictEqual(headings('#hashtag\n####### seven\n'), []);
  });

  it('reports an empty heading with empty text', () => {
    assert.deepStrictEqual(headings('#\n## ##\n'), [
      { level: 1, text: '', line: 1 },
      { level: 2, text: '', line: 2 },
    ]);
  });

  it('allows up to three spaces of indentation, not four', () => {
    assert.deepStrictEqual(headings('   # three\n\n    # four\n'), [{ level: 1, text: 'three', line: 1 }]);
  });

  it('keeps inline markup as written', () => {
    assert.deepStrictEqual(headings('# The *API* and [links](x.md)\n'), [{ level: 1, text: 'The *API* and [links](x.md)', line: 1 }]);
  });

  it('interrupts a paragraph', () => {
    assert.deepStrictEqual(headings('text\n# Heading\n'), [{ level: 1, text: 'Heading', line: 2 }]);
  });
});

describe('outlineOf: Setext headings', () => {
  it('makes a paragraph a level 1 heading over === and level 2 over ---', () => {
    assert.deepStrictEqual(headings('Title\n=====\n\nPart\n---\n'), [
      { level: 1, text: 'Title', line: 1 },
      { level: 2, text: 'Part', line: 4 },
    ]);
  });

  it('joins a heading of several lines into one, at its first line', () => {
    assert.deepStrictEqual(headings('intro\n\nA long\n  title\n===\n'), [{ level: 1, text: 'A long title', line: 3 }]);
  });

  it('does not take --- without a paragraph above for a heading', () => {
    assert.deepStrictEqual(headings('# A\n---\n\n---\n'), [{ level: 1, text: 'A', line: 1 }]);
  });

  it('does not take an underline with inner spaces for one', () => {
    assert.deepStrictEqual(headings('text\n= =\n'), []);
  });

  it('does not make a list item or a block quote a Setext heading (the underline is not lazy)', () => {
    assert.deepStrictEqual(headings('- item\n---\n\n> quote\n---\n'), []);
  });

  it('starts the heading after the link reference definitions of its paragraph', () => {
    assert.deepStrictEqual(headings('[a]: /url\nTitle\n===\n'), [{ level: 1, text: 'Title', line: 2 }]);
  });
});

describe('outlineOf: code, HTML and containers', () => {
  it('ignores headings in backtick and tilde fences, info strings included', () => {
    assert.deepStrictEqual(headings('```bash\n# comment\n```\n~~~ {.yaml}\n# too\n~~~\n# After\n'), [{ level: 1, text: 'After', line: 7 }]);
  });

  it('closes a fence only with a run at least as long, of the same character', () => {
    assert.deepStrictEqual(headings('````\n```\n# inside\n~~~~\n# inside\n````\n# After\n'), [{ level: 1, text: 'After', line: 7 }]);
  });

  it('does not take a closing run with text after it for a close', () => {
    assert.deepStrictEqual(headings('```\n``` no\n# inside\n```\n# After\n'), [{ level: 1, text: 'After', line: 5 }]);
  });

  it('reads an unterminated fence to the end of the file', () => {
    assert.deepStrictEqual(headings('# Before\n```\n# inside\n# inside\n'), [{ level: 1, text: 'Before', line: 1 }]);
  });

  it('does not take a backtick run with a backtick in its info string for a fence', () => {
    assert.deepStrictEqual(headings('``` a`b\n# Heading\n'), [{ level: 1, text: 'Heading', line: 2 }]);
  });

  it('ignores indented code, but not an indented paragraph continuation', () => {
    assert.deepStrictEqual(headings('    # code\n\ntext\n    # continued\n'), []);
  });

  it('ignores headings in HTML comments and <pre> blocks', () => {
    assert.deepStrictEqual(headings('<!--\n# hidden\n-->\n<pre>\n# raw\n</pre>\n# Shown\n'), [{ level: 1, text: 'Shown', line: 7 }]);
  });

  it('ignores headings in an HTML block up to its blank line', () => {
    assert.deepStrictEqual(headings('<div>\n# raw\n\n# Shown\n</div>\n'), [{ level: 1, text: 'Shown', line: 4 }]);
  });

  it('reports headings in block quotes and list items, as a renderer makes them', () => {
    assert.deepStrictEqual(headings('> ## Note\n\n- # Item\n  ## Nested\n'), [
      { level: 2, text: 'Note', line: 1 },
      { level: 1, text: 'Item', line: 3 },
      { level: 2, text: 'Nested', line: 4 },
    ]);
  });

  it('ignores a fence inside a list item, indented to the item', () => {
    assert.deepStrictEqual(headings('1. Step\n\n       ```bash\n       # install\n       ```\n# After\n'), [{ level: 1, text: 'After', line: 6 }]);
  });

  it('closes a fence of a list item when a line leaves the item', () => {
    assert.deepStrictEqual(headings('- item\n  ```\n  # inside\n# Out\n'), [{ level: 1, text: 'Out', line: 4 }]);
  });

  it('counts tabs to the next multiple of four', () => {
    assert.deepStrictEqual(headings('\t# code\n-\t# item\n'), [{ level: 1, text: 'item', line: 2 }]);
  });
});

describe('outlineOf: front matter', () => {
  it('reports the keys of parsed front matter and starts the headings after it', () => {
    assert.deepStrictEqual(outlineOf('---\ntitle: A\ntags: [x]\n---\n# A\n'), {
      frontMatter: { status: 'parsed', keys: ['title', 'tags'], endLine: 4 },
      headings: [{ level: 1, text: 'A', line: 5 }],
      truncated: false,
    });
  });

  it('flags malformed front matter with no keys, its lines still not body', () => {
    assert.deepStrictEqual(outlineOf('---\ntitle: [unclosed\n---\n# Body\n'), {
      frontMatter: { status: 'malformed', keys: [], endLine: 3 },
      headings: [{ level: 1, text: 'Body', line: 4 }],
      truncated: false,
    });
  });

  it('reads the whole file as body when the front matter is unterminated', () => {
    assert.deepStrictEqual(outlineOf('---\ntitle: x\n# Body\n'), {
      frontMatter: { status: 'unterminated', keys: [] },
      headings: [{ level: 1, text: 'Body', line: 3 }],
      truncated: false,
    });
  });
});

describe('outlineOf: bounds', () => {
  it('reports at most maxHeadings and flags the rest', () => {
    assert.deepStrictEqual(outlineOf('# a\n# b\n# c\n', { maxHeadings: 2 }), {
      frontMatter: { status: 'absent', keys: [] },
      headings: [
        { level: 1, text: 'a', line: 1 },
        { level: 1, text: 'b', line: 2 },
      ],
      truncated: true,
    });
  });

  it('does not flag a file with exactly maxHeadings', () => {
    assert.equal(outlineOf('# a\n# b\n', { maxHeadings: 2 }).truncated, false);
  });

  it('bounds and cleans heading text', () => {
    const [heading] = headings(`# ${'long '.repeat(200)}\n## a\u202Eb\u0000c\n`);
    assert.equal([...(heading?.text ?? '')].length, HEADING_MAX_CHARS);
    assert.deepStrictEqual(headings('## a\u202Eb\u0000c\n'), [{ level: 2, text: 'ab c', line: 1 }]);
  });

  it('counts lines of CRLF and CR files', () => {
    assert.deepStrictEqual(headings('# a\r\n\r\n# b\r# c\n'), [
      { level: 1, text: 'a', line: 1 },
      { level: 1, text: 'b', line: 3 },
      { level: 1, text: 'c', line: 4 },
    ]);
  });
});

describe('summarisePage', () => {
  it('takes the title and description from front matter', () => {
    assert.deepStrictEqual(summarisePage('---\ntitle: Setup\ndescription: How to start.\n---\n# Other\n'), { title: 'Setup', description: 'How to start.' });
  });

  it('falls back to the first heading with text', () => {
    assert.deepStrictEqual(summarisePage('```\n# code\n```\n#\nIntro\n=====\n# Later\n'), { title: 'Intro' });
  });

  it('has no title for a file without headings', () => {
    assert.deepStrictEqual(summarisePage('just text\n'), {});
  });
});
