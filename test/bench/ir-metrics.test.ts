import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { averagePrecisionAt, distinct, gradedGain, mean, ndcgAt, recallAt } from '../../bench/ir-metrics.ts';

/*
 * The search-quality bench's measures on hand-made rankings, each expected value worked out by
 * hand from the collection README's definitions: gain 2^g - 1 with g = 5 - code for codes
 * 1..4, discount log2(rank + 1), the ideal from the judged documents cut at rank 10, and
 * average precision over the top 100 divided by the query's relevant judged documents.
 */

/** Floating-point sums of logarithms differ from the hand value in the last digits only. */
const EPSILON = 1e-12;

function close(actual: number, expected: number): void {
  assert.ok(Math.abs(actual - expected) < EPSILON, `${actual} is not ${expected}`);
}

const judged = (entries: Record<string, number>) => new Map(Object.entries(entries));

describe('graded gain', () => {
  it('is 5 - code for codes 1..4', () => {
    assert.deepEqual([1, 2, 3, 4].map(gradedGain), [4, 3, 2, 1]);
  });

  it('is 0 for -1, 5 and an unjudged document', () => {
    assert.deepEqual([-1, 5, undefined].map(gradedGain), [0, 0, 0]);
  });
});

describe('nDCG@10', () => {
  it('is 1 for the judged documents in ideal order', () => {
    const judgments = judged({ a: 1, b: 2, c: 3, d: 4 });
    assert.equal(ndcgAt(['a', 'b', 'c', 'd'], judgments), 1);
  });

  it('is 1 / log2(3) for the one relevant document at rank 2', () => {
    // DCG = (2^4 - 1) / log2(3); ideal = (2^4 - 1) / log2(2) = 15; their ratio is 1 / log2(3) ≈ 0.6309.
    const judgments = judged({ a: 1 });
    close(ndcgAt(['x', 'a'], judgments), 0.6309297535714575);
  });

  it('cuts the ideal at rank 10 when more than 10 documents are judged', () => {
    // Eleven documents of code 4 (gain 1 each): any ten of them in the top 10 are as good as it gets.
    const judgments = judged(Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`d${i}`, 4])));
    const ranking = Array.from({ length: 10 }, (_, i) => `d${i + 1}`);
    close(ndcgAt(ranking, judgments), 1);
  });

  it('gives the higher-graded documents that do not fit in the top 10 their place in the ideal', () => {
    // Judged: two of code 1 (gain 4) and ten of code 4 (gain 1); the ranking holds the ten of code 4.
    // DCG = sum over ranks 1..10 of 1 / log2(r + 1) ≈ 4.5436; the ideal puts the two of gain 4 first:
    // 15 + 15 / log2(3) + sum over ranks 3..10 of 1 / log2(r + 1) ≈ 27.3766; nDCG ≈ 0.16597.
    const low = Array.from({ length: 10 }, (_, i) => `low${i}`);
    const judgments = judged({ top1: 1, top2: 1, ...Object.fromEntries(low.map((d) => [d, 4])) });
    close(ndcgAt(low, judgments), 0.16596521627327393);
  });

  it('counts codes -1 and 5 as not relevant', () => {
    // Only c (code 2, gain 3) counts: DCG = 7 / log2(4) = 3.5; ideal = 7 / log2(2) = 7.
    const judgments = judged({ a: -1, b: 5, c: 2 });
    close(ndcgAt(['a', 'b', 'c'], judgments), 0.5);
  });

  it('looks at the top 10 only', () => {
    const judgments = judged({ a: 1 });
    const ranking = [...Array.from({ length: 10 }, (_, i) => `x${i}`), 'a'];
    assert.equal(ndcgAt(ranking, judgments), 0);
  });

  it('is 0 for a query without a relevant judged document', () => {
    assert.equal(ndcgAt(['a'], judged({ a: -1 })), 0);
  });

  it('refuses a ranking that names a document twice', () => {
    assert.throws(() => ndcgAt(['a', 'a'], judged({ a: 1 })), /names document a twice/);
  });
});

describe('average precision over the top 100', () => {
  it('is 1 for every relevant document ahead of the rest', () => {
    assert.equal(averagePrecisionAt(['a', 'b', 'x'], judged({ a: 1, b: 4, x: -1 })), 1);
  });

  it('is 1/2 for the one relevant document at rank 2', () => {
    assert.equal(averagePrecisionAt(['x', 'a'], judged({ a: 1 })), 0.5);
  });

  it('divides by every relevant judged document, found or not', () => {
    // Relevant at ranks 1 and 3 of three relevant judged: (1/1 + 2/3) / 3 = 5/9.
    close(averagePrecisionAt(['a', 'x', 'b'], judged({ a: 2, b: 3, c: 4 })), 5 / 9);
  });

  it('counts codes -1 and 5 as not relevant', () => {
    // Only c is relevant, at rank 3: (1/3) / 1.
    close(averagePrecisionAt(['a', 'b', 'c'], judged({ a: -1, b: 5, c: 2 })), 1 / 3);
  });

  it('looks at the top 100 only', () => {
    const ranking = [...Array.from({ length: 100 }, (_, i) => `x${i}`), 'a'];
    assert.equal(averagePrecisionAt(ranking, judged({ a: 1 })), 0);
  });
});

describe('distinct', () => {
  it('keeps each document at its first rank', () => {
    assert.deepEqual(distinct(['a', 'b', 'a', 'c', 'b']), ['a', 'b', 'c']);
  });
});

describe('mean', () => {
  it('is 0 for no values', () => {
    assert.equal(mean([]), 0);
  });
});

describe('recall@10', () => {
  it('is the share of the relevant documents in the top 10', () => {
    // Two of three relevant documents at ranks 1 and 10; the third at rank 11 does not count.
    const ranking = ['a', ...Array.from({ length: 8 }, (_, i) => `x${i}`), 'b', 'c'];
    close(recallAt(ranking, new Set(['a', 'b', 'c'])), 2 / 3);
  });

  it('is 1 when every relevant document is found, and 0 for a query without one', () => {
    assert.deepEqual([recallAt(['a', 'b'], new Set(['b'])), recallAt(['a'], new Set())], [1, 0]);
  });

  it('refuses a ranking that names a document twice', () => {
    assert.throws(() => recallAt(['a', 'a'], new Set(['a'])), /names document a twice/);
  });
});
