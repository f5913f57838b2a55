import type { VersionSelector } from '../access/context-decisions.ts';
import type { ContextType } from '../access/context-roles.ts';
import { isCalendarDay } from '../../kernel/instants.ts';
import { isUuid } from '../../kernel/text.ts';
import { refuse } from './refusals.ts';

/**
 * What callers name versioned content with, checked: resource ids, version selectors and the
 * staleness dates. A bad one is refused with a machine reason (refusals.ts) each dialect words.
 */

export type VersionedType = 'knowledge' | 'skill';

// The check is the kernel's (ids are UUIDs everywhere); the context tools take it from here.
export { isUuid };

/** A resource id as the tools receive it: a UUID, compared in lower case. */
export function parseId(type: ContextType, value: string): string {
  if (!isUuid(value)) throw refuse.invalidId(type);
  return value.toLowerCase();
}

/** A positive version number, as an integer or a numeric string; undefined for anything else. */
export function positiveVersion(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value > 0 ? value : undefined;
  if (typeof value === 'string' && /^[1-9][0-9]{0,8}$/.test(value)) return Number(value);
  return undefined;
}

/** Read tools: omitted or latest, published, or an exact positive version. */
export function parseReadSelector(value: unknown): VersionSelector {
  if (value === undefined || value === 'latest') return 'latest';
  if (value === 'published') return 'published';
  const exact = positiveVersion(value);
  if (exact === undefined) throw refuse.invalidSelector('latest_published_exact');
  return { exact };
}

/** Publish tools and Artifacts (which have no published selector): omitted or latest, or an exact positive version. */
export function parsePublishSelector(value: unknown): 'latest' | { exact: number } {
  if (value === undefined || value === 'latest') return 'latest';
  const exact = positiveVersion(value);
  if (exact === undefined) throw refuse.invalidSelector('latest_exact');
  return { exact };
}

/** A YYYY-MM-DD calendar date that exists; `field` names it in the spec's error text. */
export function parseDate(field: 'review_by' | 'expires_at', value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!isCalendarDay(value)) throw refuse.invalidDate(field);
  return value;
}

/** Both dates checked and in order (either may stay as it is: pass the kept one in). */
export function parseDates(
  input: { reviewBy?: string | undefined; expiresAt?: string | undefined },
  kept: { reviewBy?: string | undefined; expiresAt?: string | undefined } = {},
): {
  reviewBy: string | undefined;
  expiresAt: string | undefined;
} {
  const reviewBy = parseDate('review_by', input.reviewBy);
  const expiresAt = parseDate('expires_at', input.expiresAt);
  const effectiveReview = reviewBy ?? kept.reviewBy;
  const effectiveExpiry = expiresAt ?? kept.expiresAt;
  if (effectiveReview !== undefined && effectiveExpiry !== undefined && effectiveExpiry < effectiveReview) throw refuse.datesOutOfOrder();
  return { reviewBy, expiresAt };
}
