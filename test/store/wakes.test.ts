import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Wakes } from '../../src/store/db.ts';

/*
 * The coalescing of the NOTIFYs sent after commits (Transaction.wake): every wake is followed by
 * a NOTIFY that starts after it, a channel never has two under way, and a failure stops nothing.
 * The sender here is a promise the test settles by hand, so each interleaving is exact.
 */

interface Send {
  readonly channel: string;
  settle(failed?: boolean): void;
}

function recorder(): { wakes: Wakes; sends: Send[]; underWay: () => number } {
  const sends: Send[] = [];
  let open = 0;
  const wakes = new Wakes(
    (channel) =>
      new Promise<void>((resolve, reject) => {
        open += 1;
        sends.push({
          channel,
          settle: (failed = false) => {
            open -= 1;
            if (failed) reject(new Error('connection lost'));
            else resolve();
          },
        });
      }),
  );
  return { wakes, sends, underWay: () => open };
}

/** Lets the sender's settled promise reach the Wakes' own continuation. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('Wakes', () => {
  it('sends one NOTIFY for a wake', async () => {
    const { wakes, sends } = recorder();
    wakes.wake('kgw_outbox');
    assert.deepEqual(
      sends.map((s) => s.channel),
      ['kgw_outbox'],
    );
    sends[0]?.settle();
    await turn();
    assert.equal(sends.length, 1, 'nothing more was asked for');
  });

  it('answers the wakes that arrive during a send with one more NOTIFY after it, never two at once', async () => {
    const { wakes, sends, underWay } = recorder();
    wakes.wake('kgw_outbox');
    for (let i = 0; i < 50; i++) wakes.wake('kgw_outbox');
    assert.equal(sends.length, 1, 'the wakes during the send wait for it');
    assert.equal(underWay(), 1);
    sends[0]?.settle();
    await turn();
    assert.equal(sends.length, 2, 'one more NOTIFY covers the 50 wakes');
    assert.equal(underWay(), 1);
    sends[1]?.settle();
    await turn();
    assert.equal(sends.length, 2, 'no wake came during the second send');
  });

  it('keeps channels apart', async () => {
    const { wakes, sends } = recorder();
    wakes.wake('a');
    wakes.wake('b');
    wakes.wake('a');
    assert.deepEqual(
      sends.map((s) => s.channel),
      ['a', 'b'],
    );
    sends[1]?.settle();
    await turn();
    assert.equal(sends.length, 2, "b's send asked for nothing more");
    sends[0]?.settle();
    await turn();
    assert.deepEqual(
      sends.map((s) => s.channel),
      ['a', 'b', 'a'],
    );
  });

  it('goes on after a NOTIFY fails, without an unhandled rejection', async () => {
    const { wakes, sends } = recorder();
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      wakes.wake('kgw_outbox');
      wakes.wake('kgw_outbox');
      sends[0]?.settle(true);
      await turn();
      assert.equal(sends.length, 2, 'the wake that came during the failed send is still sent');
      sends[1]?.settle(true);
      await turn();
      wakes.wake('kgw_outbox');
      assert.equal(sends.length, 3, 'a later wake sends again');
      sends[2]?.settle();
      await turn();
      await turn();
      assert.deepEqual(unhandled, []);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('closes once the NOTIFYs under way have settled, and sends nothing after', async () => {
    const { wakes, sends } = recorder();
    wakes.wake('kgw_outbox');
    wakes.wake('kgw_outbox');
    let closed = false;
    const closing = wakes.close().then(() => (closed = true));
    await turn();
    assert.equal(closed, false, 'a NOTIFY is under way');
    sends[0]?.settle();
    await closing;
    assert.equal(sends.length, 1, 'the wake asked for during the send is dropped once closing');
    wakes.wake('kgw_outbox');
    assert.equal(sends.length, 1);
  });
});
