import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jsonShapeProblem } from '../../src/http/json-shape.ts';

const limits = { maxValues: 5, maxDepth: 3 };

describe('jsonShapeProblem', () => {
  it('lets through what fits, strings with brackets, commas and escaped quotes included', () => {
    assert.equal(jsonShapeProblem('{"a":[1,2],"b":"[[[[,,,,,,\\"[[[["}', limits), undefined);
    assert.equal(jsonShapeProblem('[[[1]]]', limits), undefined);
  });

  it('refuses nesting past the limit', () => {
    assert.equal(jsonShapeProblem('[[[[1]]]]', limits), 'is nested more than 3 levels deep');
  });

  it('refuses more values than the limit, counting items and members', () => {
    assert.equal(jsonShapeProblem('[1,2,3,4,5,6,7]', limits), 'holds more than 5 values');
    assert.equal(jsonShapeProblem('{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6}', limits), 'holds more than 5 values');
  });

  it('does not count what is inside strings, escaped backslashes included', () => {
    assert.equal(jsonShapeProblem(`["\\\\",${'"x,[",'.repeat(2)}1]`, limits), undefined);
  });
});
