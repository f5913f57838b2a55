import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { threadId } from 'node:worker_threads';
import { indexDoc, INDEX_DOC_MODULE, SEARCH_TERMS_PER_DOC_MAX } from '../../connectors/search/index-doc.ts';
import { DEFAULT_RANKING } from '../../connectors/search/builtin-options.ts';
import type { SearchDocument } from '../../connectors/search/contract.ts';
import { OFFLOAD_MIN_CHARS, offload, stopOffloadWorkers } from '../../src/kernel/offload.ts';
import { referencesOf } from '../../src/atmina/kb/text/references.ts';
import { exits, fails, whereAmI } from '../fixtures/offload-task.ts';

const TASKS = new URL('../fixtures/offload-task.ts', import.meta.url);
const REFERENCES = new URL('../../src/atmina/kb/text/references.ts', import.meta.url);

const doc = (body: string): SearchDocument => ({
  tenantId: '00000000-0000-4000-8000-000000000001',
  id: 'kb_file:00000000-0000-4000-8000-000000000002',
  kind: 'kb_file',
  scope: 'kb:00000000-0000-4000-8000-000000000003',
  language: 'english',
  path: 'notes/heavy.md',
  title: 'Heavy',
  body,
  tags: [],
  mediaType: 'text/markdown',
  contentKind: 'text',
  updatedAt: '2026-01-01T00:00:00.000Z',
  ref: { version: 1 },
});

describe('text work off the request thread', () => {
  after(async () => {
    await stopOffloadWorkers();
  });

  it('runs a large text on a worker thread and a small one in place, with the same answer', async () => {
    const small = await offload(TASKS, whereAmI, 10, 'short');
    assert.deepEqual(small, { thread: threadId, length: 5 });
    const large = 'x'.repeat(OFFLOAD_MIN_CHARS);
    const away = await offload(TASKS, whereAmI, large.length, large);
    assert.notEqual(away.thread, threadId);
    assert.equal(away.length, large.length);
  });

  it('passes a task’s failure back, and replaces a worker that stops', async () => {
    await assert.rejects(offload(TASKS, fails, OFFLOAD_MIN_CHARS, 'no good'), /no good/);
    await assert.rejects(offload(TASKS, exits, OFFLOAD_MIN_CHARS), /the worker stopped \(exit code 3\)/);
    const again = await offload(TASKS, whereAmI, OFFLOAD_MIN_CHARS, 'after');
    assert.notEqual(again.thread, threadId);
  });

  it('indexes a large body on a worker exactly as in place', async () => {
    const body = Array.from({ length: 8_000 }, (_, n) => `deploy service ${n.toString(36)} [link](other-${n % 50}.md)`).join('\n');
    const inPlace = indexDoc(doc(body), DEFAULT_RANKING);
    const away = await offload(INDEX_DOC_MODULE, indexDoc, body.length, doc(body), DEFAULT_RANKING);
    assert.deepEqual(away, inPlace);
  });

  it(`posts at most ${SEARCH_TERMS_PER_DOC_MAX} distinct terms a document, keeping the most frequent`, () => {
    // 120,000 distinct words, and one that every line repeats.
    const words = Array.from({ length: 120_000 }, (_, n) => `w${n.toString(36)}x`);
    const body = words.map((word, n) => (n % 10 === 0 ? `${word} deploy` : word)).join(' ');
    const indexed = indexDoc(doc(body), DEFAULT_RANKING);
    assert.equal(indexed.terms.length, SEARCH_TERMS_PER_DOC_MAX);
    assert.ok(indexed.terms.includes('deploy'));
    assert.ok(indexed.terms.includes('heavi'), 'the title’s term, weighted above the body');
    // Sorted, as the postings are written.
    assert.deepEqual([...indexed.terms].sort(), indexed.terms);
    // Phrases still match on every word: the stems keep them all.
    assert.ok(indexed.stems.includes(` ${words[119_999]} `));
  });

  it('reads the references of a large Markdown file on a worker exactly as in place', async () => {
    const markdown = Array.from({ length: 5_000 }, (_, n) => `See [note ${n}](notes/${n}.md) and [[Page ${n % 30}]].`).join('\n');
    const away = await offload(REFERENCES, referencesOf, markdown.length, markdown, 'index.md');
    assert.deepEqual(away, referencesOf(markdown, 'index.md'));
    assert.ok(away.references.length > 0);
  });
});
