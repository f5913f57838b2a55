import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { instantOf, iso, isoOrNull, utcDay } from '../../src/kernel/instants.ts';

/*
 * `iso` writes most instants by arithmetic of its own (src/kernel/instants.ts); every instant
 * must come out as toISOString writes it, the edges of the fast range and the days it caches included.
 */
describe('iso', () => {
  it('writes the edges as toISOString does', () => {
    const edges = [
      0,
      1,
      999,
      86_399_999,
      86_400_000,
      951_782_400_000, // 2000-02-29
      951_868_799_999,
      4_107_542_400_000, // 2100-03-01, after a century that is not a leap year
      1_767_225_599_999, // 2025-12-31T23:59:59.999
      1_767_225_600_000,
      253_402_300_799_999, // 9999-12-31T23:59:59.999
      253_402_300_800_000, // +010000-01-01
      -1, // 1969
      -62_198_755_200_000, // year 0
      -8.64e15,
      8.64e15,
    ];
    for (const time of edges) assert.equal(iso(new Date(time)), new Date(time).toISOString(), String(time));
  });

  it('agrees with toISOString on many instants, on one day and across days', () => {
    let seed = 7;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let i = 0; i < 20_000; i++) {
      // Alternate far-apart instants with close ones, so the cached day is both hit and missed.
      const time = i % 2 === 0 ? next(2 ** 31) * 117_000 + next(117_000) : 1_767_000_000_000 + next(86_400_000);
      const date = new Date(time);
      assert.equal(iso(date), date.toISOString(), String(time));
    }
  });

  it('refuses an invalid date as toISOString does', () => {
    assert.throws(() => iso(new Date(Number.NaN)), RangeError);
  });

  it('takes an instant as a driver gives it, a Date as it is and text parsed', () => {
    const date = new Date('2026-12-07T08:00:00.123Z');
    assert.equal(instantOf(date), date);
    assert.equal(instantOf('2026-12-07 09:00:00.123+01').getTime(), date.getTime());
  });

  it('writes days and absent instants', () => {
    assert.equal(utcDay(new Date('2026-01-31T23:59:59.999Z')), '2026-01-31');
    assert.equal(isoOrNull(undefined), null);
    assert.equal(isoOrNull(null), null);
    assert.equal(isoOrNull(new Date(0)), '1970-01-01T00:00:00.000Z');
  });
});
