import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pg from 'pg';
import { parseTimestamptz } from '../../src/store/postgres.ts';

/*
 * The gateway reads timestamptz with a fast path of its own (src/store/postgres.ts); every
 * text PostgreSQL may write must give what pg's own parser gives, the odd shapes included.
 */
const pgParser = pg.types.getTypeParser(1184, 'text') as (value: string) => unknown;

const time = (value: unknown): unknown => (value instanceof Date ? value.getTime() : value);

describe('timestamptz parsing', () => {
  it('reads every shape as pg does', () => {
    const texts = [
      '2026-12-06 22:13:34.123456+00',
      '2026-12-06 22:13:34+00',
      '2026-12-06 22:13:34.1+00',
      '2026-12-06 22:13:34.999999+00',
      '2026-01-31 00:00:00.5-08',
      '2026-06-30 23:59:59.001+05:30',
      '2026-06-30 23:59:59.001-03:30',
      '1999-12-31 23:59:59.999+14',
      '2000-02-29 12:00:00-12',
      '1970-01-01 00:00:00+00',
      '1000-01-01 00:00:00+00',
      '9999-12-31 23:59:59.999999+00',
      '0099-01-01 00:00:00+00',
      '0044-03-15 12:00:00+00 BC',
      '12026-01-01 00:00:00+00',
      '2026-12-06 22:13:34+01:02:03',
      'infinity',
      '-infinity',
      // Cut short: none is a shape PostgreSQL writes, and none may pass for one.
      '2026-12-06 22:13:3',
      '2026-12-06 22:13:34',
      '2026-12-06 22:13:34.',
      '2026-12-06 22:13:34+0',
      '2026-12-06 22:13:34+01:3',
    ];
    for (const text of texts) assert.equal(time(parseTimestamptz(text)), time(pgParser(text)), text);
  });

  it('agrees with pg on many random instants and offsets', () => {
    let seed = 42;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const pad = (n: number, w = 2) => String(n).padStart(w, '0');
    for (let i = 0; i < 5000; i++) {
      const offset = next(27 * 4) * 15 - 12 * 60;
      const sign = offset < 0 ? '-' : '+';
      const abs = Math.abs(offset);
      const zone = `${sign}${pad(Math.floor(abs / 60))}${abs % 60 === 0 ? '' : `:${pad(abs % 60)}`}`;
      const fraction =
        next(3) === 0
          ? ''
          : `.${String(next(1_000_000))
              .padStart(6, '0')
              .slice(0, 1 + next(6))}`;
      const text = `${1000 + next(9000)}-${pad(1 + next(12))}-${pad(1 + next(28))} ${pad(next(24))}:${pad(next(60))}:${pad(next(60))}${fraction}${zone}`;
      assert.equal(time(parseTimestamptz(text)), time(pgParser(text)), text);
    }
  });
});
