import { validation } from '../errors.ts';

const UNIT_MS: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/**
 * Parses a duration such as `90d`, `12h`, `30m`, `1w` or `1d12h`; `never` means no expiry
 * and returns undefined.
 */
export function parseDuration(text: string): number | undefined {
  const value = text.trim().toLowerCase();
  if (value === 'never') return undefined;
  if (!/^(?:\d+[smhdw])+$/.test(value)) throw validation(`invalid duration "${text}"; use e.g. 30m, 12h, 90d, 1w or never`);
  let total = 0;
  for (const [, amount, unit] of value.matchAll(/(\d+)([smhdw])/g)) total += Number(amount) * (UNIT_MS[unit ?? 's'] ?? 0);
  if (total <= 0) throw validation(`duration "${text}" must be longer than zero`);
  if (total > 10 * 365 * UNIT_MS.d!) throw validation(`duration "${text}" is longer than ten years`);
  return total;
}
