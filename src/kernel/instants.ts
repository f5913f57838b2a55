/**
 * Instants and calendar days as text. The core keeps instants as `Date`s; the wires (the
 * dialects, the admin operations' JSON) write them as ISO 8601 in UTC with milliseconds, and
 * calendar days (review_by, expires_at) as YYYY-MM-DD. One place, so every wire writes them alike.
 */

/** An instant as ISO 8601 in UTC, e.g. 2026-01-31T09:30:00.000Z. */
export const iso = (instant: Date): string => instant.toISOString();

/** `iso`, or null for none: what the wires write for an absent instant. */
export const isoOrNull = (instant: Date | null | undefined): string | null => (instant === null || instant === undefined ? null : iso(instant));

/** The UTC calendar day of an instant, YYYY-MM-DD. */
export const utcDay = (instant: Date): string => iso(instant).slice(0, 10);

/** Whether `value` is a calendar day that exists, written YYYY-MM-DD (2026-02-30 is not). */
export function isCalendarDay(value: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  return match !== null && utcDay(new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])))) === value;
}
