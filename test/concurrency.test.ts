import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { mapInParallel } from '../src/kernel/concurrency.ts';

describe('mapInParallel', () => {
  it('answers in the items order with at most inFlight items running at once', async () => {
    let running = 0;
    let most = 0;
    const answers = await mapInParallel([30, 5, 20, 1, 10, 2], 3, async (ms, index) => {
      running++;
      most = Math.max(most, running);
      await sleep(ms);
      running--;
      return `${index}:${ms}`;
    });
    assert.deepEqual(answers, ['0:30', '1:5', '2:20', '3:1', '4:10', '5:2']);
    assert.equal(most, 3);
  });

  it('starts no item after one fails, and rejects with that failure', async () => {
    const started: number[] = [];
    await assert.rejects(
      mapInParallel([0, 1, 2, 3, 4, 5], 2, async (item) => {
        started.push(item);
        await sleep(item === 1 ? 1 : 20);
        if (item === 1) throw new Error('item 1 failed');
        return item;
      }),
      { message: 'item 1 failed' },
    );
    await sleep(50);
    // 0 and 1 start at once; 1 fails before 0 finishes, so nothing after them starts.
    assert.deepEqual(started, [0, 1]);
  });

  it('answers nothing for no items without calling the work', async () => {
    assert.deepEqual(
      await mapInParallel([], 4, () => {
        throw new Error('not called');
      }),
      [],
    );
  });
});
