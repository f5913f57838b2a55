import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { analyzer } from '../../../src/search-text/analyzer.ts';
import type { ContextFile, ScoredPassage } from '../../../src/atmina/context-package.ts';
import { choosePassages, scorePassages } from '../../../src/atmina/context-package.ts';
import { PASSAGE_MIN_CHARS, charCount, splitPassages } from '../../../src/atmina/context-passages.ts';

/*
 * get_context's core without a gateway: how a text is cut into passages, how passages are
 * scored against a question, and how the best are chosen within a budget.
 */

const texts = (text: string, maxChars = 1500) => splitPassages(text, { markdown: true, maxChars }).map((p) => text.slice(p.start, p.end));

function contextFile(path: string, text: string, rank = 0, maxChars = 1500): ContextFile {
  return { path, rank, prior: 1, text, passages: splitPassages(text, { markdown: true, maxChars }) };
}

// Paragraphs long enough (over PASSAGE_MIN_CHARS) to be passages of their own.
const paragraph = (word: string) => `${word} ${'filler words that say nothing much '.repeat(8)}`.trim();

describe('splitPassages', () => {
  it('starts a passage at each heading and keeps a heading with the paragraph after it', () => {
    const text = `# Alpha\n\n${paragraph('one')}\n\n# Beta\n\n${paragraph('two')}\n`;
    assert.deepEqual(texts(text), [`# Alpha\n\n${paragraph('one')}`, `# Beta\n\n${paragraph('two')}`]);
  });

  it('gives each passage the path of the headings above it', () => {
    const text = `# Guide\n\n## Setup\n\n### Linux\n\n${paragraph('apt')}\n`;
    const [first] = splitPassages(text, { markdown: true, maxChars: 1500 });
    assert.equal(first?.heading, 'Guide > Setup > Linux');
  });

  it('joins short paragraphs until a passage holds the minimum', () => {
    const text = 'One.\n\nTwo.\n\nThree.\n';
    assert.deepEqual(texts(text), ['One.\n\nTwo.\n\nThree.']);
  });

  it('keeps paragraphs over the minimum apart', () => {
    const text = `${paragraph('one')}\n\n${paragraph('two')}\n`;
    assert.equal(texts(text).length, 2);
  });

  it('leaves the front matter out', () => {
    const text = '---\ntitle: Secret title\n---\n# Body\n\nText.\n';
    const [first] = splitPassages(text, { markdown: true, maxChars: 1500 });
    assert.equal(first?.startLine, 4);
  });

  it('does not end a paragraph at a blank line inside fenced code', () => {
    const text = `${'x '.repeat(PASSAGE_MIN_CHARS)}\n\n\`\`\`\nfirst\n\nsecond\n\`\`\`\n`;
    assert.equal(texts(text)[1], '```\nfirst\n\nsecond\n```');
  });

  it('does not read a heading inside fenced code as one', () => {
    const text = '# Real\n\n```\n# not a heading\n```\n';
    const passages = splitPassages(text, { markdown: true, maxChars: 1500 });
    assert.deepEqual(
      passages.map((p) => p.heading),
      ['Real'],
    );
  });

  it('cuts a paragraph longer than the bound on sentence ends, none longer than the bound', () => {
    const text = 'This is one sentence of the paragraph. '.repeat(100).trim();
    const pieces = texts(text, 500);
    assert.ok(
      pieces.every((p) => p.length <= 500 && p.endsWith('.')),
      JSON.stringify(pieces.map((p) => [p.length, p.slice(-10)])),
    );
  });

  it('cuts a paragraph without spaces at the bound, never inside a surrogate pair', () => {
    const text = '😀'.repeat(400);
    const pieces = texts(text, 501);
    assert.equal(pieces.join(''), text);
    assert.ok(pieces.every((p) => p.isWellFormed()));
  });

  it('ends on a bound too small for a character outside the BMP, cutting nothing away', () => {
    const text = '😀😀';
    assert.equal(texts(text, 1).join(''), text);
  });

  it('numbers lines from 1 and spans the lines of the passage', () => {
    const text = `intro\n\n# Head\n\n${paragraph('body')}\n`;
    const passages = splitPassages(text, { markdown: true, maxChars: 1500 });
    assert.deepEqual(
      passages.map((p) => [p.startLine, p.endLine]),
      [
        [1, 1],
        [3, 5],
      ],
    );
  });

  it('reads CRLF line endings as lines', () => {
    const text = 'intro\r\n\r\n# Head\r\n\r\nbody\r\n';
    assert.deepEqual(
      splitPassages(text, { markdown: true, maxChars: 1500 }).map((p) => [p.startLine, p.endLine]),
      [
        [1, 1],
        [3, 5],
      ],
    );
  });

  it('reads a text that is not Markdown without headings', () => {
    const passages = splitPassages('# comment\n\nvalue = 1\n', { markdown: false, maxChars: 1500 });
    assert.deepEqual(
      passages.map((p) => p.heading),
      [''],
    );
  });

  it('gives nothing for a blank text', () => {
    assert.deepEqual(splitPassages(' \n\n\t\n', { markdown: true, maxChars: 1500 }), []);
  });
});

describe('charCount', () => {
  it('counts a character outside the BMP once and a lone surrogate once', () => {
    assert.equal(charCount('a😀\ud800b'), 4);
  });
});

describe('scorePassages', () => {
  const en = analyzer('english');

  it('ranks the passage holding the question’s words first', () => {
    const file = contextFile('a.md', `# Intro\n\n${paragraph('welcome')}\n\n# Retention\n\nWe keep customer data for thirty days ${paragraph('retention')}\n`);
    const [best] = scorePassages(en, [file], 'How long do we keep customer data?', []).sort((a, b) => b.score - a.score);
    assert.equal(best?.index, 1);
  });

  it('scores nothing for a question of stop words only', () => {
    const file = contextFile('a.md', 'The what and the why.');
    assert.deepEqual(scorePassages(en, [file], 'what is the', []), []);
  });

  it('counts the heading path towards the score of a passage', () => {
    const text = `# Zeppelin\n\n${paragraph('first')}\n\n## Field\n\n${paragraph('zeppelin mast')}\n\n## Hangar\n\n${paragraph('zeppelin mast')}\n`;
    const scored = scorePassages(en, [contextFile('a.md', text)], 'zeppelin hangar', []).sort((a, b) => b.score - a.score);
    assert.equal(scored[0]?.index, 2);
  });

  it('scores by the added terms only when no passage holds a term of the question', () => {
    const file = contextFile('a.md', `${paragraph('retention')}\n\n${paragraph('other')}\n`);
    assert.deepEqual(
      scorePassages(en, [file], 'retnetion', ['retent']).map((s) => s.index),
      [0],
    );
  });

  it('does not score a passage holding only added terms when another holds the question’s', () => {
    const file = contextFile('a.md', `${paragraph('retention')}\n\n${paragraph('zeppelin')}\n`);
    assert.deepEqual(
      scorePassages(en, [file], 'zeppelin', ['retent']).map((s) => s.index),
      [1],
    );
  });

  it('scores no passage whose words match only through the headings above it', () => {
    const file = contextFile('a.md', `# Zeppelin\n\n${paragraph('first')}\n\n## Other\n\n${paragraph('second')}\n`);
    assert.deepEqual(
      scorePassages(en, [file], 'zeppelin', []).map((s) => s.index),
      [0],
    );
  });
});

describe('choosePassages', () => {
  const scoredAll = (file: ContextFile, scores: readonly number[]): ScoredPassage[] => scores.map((score, index) => ({ file, index, score }));
  const body = [paragraph('p0'), paragraph('p1'), paragraph('p2'), paragraph('p3')].join('\n\n');

  it('never uses more characters than the budget', () => {
    const file = contextFile('a.md', body);
    const choice = choosePassages(scoredAll(file, [4, 3, 2, 1]), 600, 20);
    assert.ok(choice.usedChars <= 600, String(choice.usedChars));
  });

  it('says it was truncated when a scored passage did not fit', () => {
    const file = contextFile('a.md', body);
    assert.equal(choosePassages(scoredAll(file, [4, 3, 2, 1]), 600, 20).truncated, true);
  });

  it('merges consecutive passages of a file into one, the text between them once', () => {
    const file = contextFile('a.md', body);
    const choice = choosePassages(scoredAll(file, [4, 3, 0.5, 0.1]).slice(0, 2), 8000, 20);
    assert.equal(choice.passages.length, 1);
    assert.equal(body.slice(choice.passages[0]?.start, choice.passages[0]?.end), `${paragraph('p0')}\n\n${paragraph('p1')}`);
  });

  it('counts the characters of a merged passage as its text holds them', () => {
    const file = contextFile('a.md', body);
    const choice = choosePassages(scoredAll(file, [4, 3]), 8000, 20);
    assert.equal(choice.usedChars, charCount(body.slice(choice.passages[0]?.start, choice.passages[0]?.end)));
  });

  it('bridges two chosen passages with the one between them into one', () => {
    const file = contextFile('a.md', body);
    const choice = choosePassages([...scoredAll(file, [4, 1, 3])], 8000, 20);
    assert.deepEqual(
      choice.passages.map((p) => [p.start, p.end]),
      [[0, body.indexOf(paragraph('p2')) + paragraph('p2').length]],
    );
  });

  it('keeps passages that do not touch apart, in file order', () => {
    const file = contextFile('a.md', body);
    const choice = choosePassages([...scoredAll(file, [1, 0, 4]).filter((s) => s.score > 0)], 8000, 20);
    assert.deepEqual(
      choice.passages.map((p) => p.startLine),
      [1, 5],
    );
  });

  it('stops at max_passages and says so', () => {
    const files = ['a.md', 'b.md', 'c.md'].map((path, rank) => contextFile(path, paragraph(path), rank));
    const choice = choosePassages(
      files.map((file) => ({ file, index: 0, score: 1 })),
      8000,
      2,
    );
    assert.deepEqual([choice.passages.map((p) => p.file.path), choice.truncated], [['a.md', 'b.md'], true]);
  });

  it('orders files by their best passage, breaking ties by search’s rank', () => {
    const files = ['b.md', 'a.md', 'c.md'].map((path, rank) => contextFile(path, paragraph(path), rank));
    const choice = choosePassages(
      files.map((file, i) => ({ file, index: 0, score: i === 2 ? 5 : 1 })),
      8000,
      20,
    );
    assert.deepEqual(
      choice.passages.map((p) => p.file.path),
      ['c.md', 'b.md', 'a.md'],
    );
  });

  it('chooses the same passages whatever order they were scored in', () => {
    const file = contextFile('a.md', body);
    const scored = scoredAll(file, [2, 2, 2, 2]);
    const forward = choosePassages(scored, 600, 20);
    const backward = choosePassages([...scored].reverse(), 600, 20);
    assert.deepEqual(
      backward.passages.map((p) => [p.start, p.end]),
      forward.passages.map((p) => [p.start, p.end]),
    );
  });
});
