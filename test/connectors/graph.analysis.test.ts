import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bridgeSplits, connectedComponents, findBridges } from '../../connectors/graph/analysis.ts';
import type { GraphRelation } from '../../connectors/graph/contract.ts';

function rel(id: string, from: string, to: string): GraphRelation {
  return { id, from, to, verb: 'x', status: 'verified', properties: {} };
}

describe('graph analysis (components and bridges in memory)', () => {
  it('handles a chain of 100,000 nodes without recursion', () => {
    const n = 100_000;
    const ids = Array.from({ length: n }, (_, i) => `n${String(i).padStart(6, '0')}`);
    const relations = ids.slice(1).map((id, i) => rel(`r${String(i).padStart(6, '0')}`, ids[i] as string, id));
    assert.equal(findBridges(ids, relations).length, n - 1);
    assert.equal(connectedComponents(ids, relations).length, 1);
    // Closing the chain into a ring leaves no bridge.
    relations.push(rel('ring', ids[n - 1] as string, ids[0] as string));
    assert.equal(findBridges(ids, relations).length, 0);
  });

  it('ignores relations to nodes outside the given set, self-relations and counts parallels', () => {
    const relations = [rel('ab', 'a', 'b'), rel('ba', 'b', 'a'), rel('bc', 'b', 'c'), rel('cc', 'c', 'c'), rel('cx', 'c', 'hidden')];
    assert.deepEqual(
      findBridges(['a', 'b', 'c'], relations).map((r) => r.id),
      ['bc'],
    );
    assert.deepEqual(connectedComponents(['c', 'b', 'a', 'd'], relations), [['a', 'b', 'c'], ['d']]);
    assert.deepEqual(connectedComponents([], []), []);
  });

  it('gives each bridge the sizes of the two parts it holds together', () => {
    // A triangle a-b-c, a tail c-d-e, and a separate pair x-y.
    const relations = [rel('ab', 'a', 'b'), rel('bc', 'b', 'c'), rel('ca', 'c', 'a'), rel('cd', 'c', 'd'), rel('de', 'd', 'e'), rel('xy', 'x', 'y')];
    assert.deepEqual(
      bridgeSplits(['a', 'b', 'c', 'd', 'e', 'x', 'y'], relations).map((s) => [s.relation.id, [...s.sides].sort((p, q) => p - q)]),
      [
        ['cd', [2, 3]],
        ['de', [1, 4]],
        ['xy', [1, 1]],
      ],
    );
  });
});
