import type { ContextType } from '../access/context-roles.ts';
import type { KgwError, ReasonFacts } from '../../kernel/errors.ts';
import { refusal } from '../../kernel/errors.ts';

/**
 * The refusals of versioned content, each with its machine reason and facts; the messages are
 * plain English for logs, the CLI and the org file. Each dialect words the reasons itself.
 */

/** The kinds of Alignbase content a refusal can be about. */
export type Subject = 'knowledge' | 'skill' | 'memory' | 'artifact';
/** The package rules a refused package or attachment list was checked against. */
export type PackageKind = 'skill' | 'attachments' | 'artifact';

/** The reasons of versioned content (ids, selectors, versions, access), merged into the kernel's ReasonFacts below. */
export interface VersionReasonFacts {
  invalid_id: { type: Subject | 'draft' };
  not_found: { type: Subject | 'draft' | 'attachment' };
  no_published_version: { type: Subject };
  version_not_found: { type: Subject };
  version_conflict: { type: Subject; latestVersion: number };
  /** The caller may see the resource but not do this; `type` when the refusal has its own words (writing Memory). */
  forbidden: { type?: Subject };
  /** A version selector that is none of what `accepts` lists. */
  invalid_selector: { accepts: 'latest_published_exact' | 'latest_exact' | 'exact' };
  invalid_date: { field: 'review_by' | 'expires_at' };
  dates_out_of_order: Record<string, never>;
  /** expected_version is not a whole number of 0 (when `create` is allowed) or more. */
  invalid_expected_version: { create: boolean };
  /** The id is needed (a write of an existing resource) or must be left out (a create). */
  id_required: { type: Subject };
  id_omitted: { type: Subject };
  title_required: Record<string, never>;
  title_too_long: { max: number };
  name_required: Record<string, never>;
  name_too_long: Record<string, never>;
  content_required: { type: Subject };
  content_too_large: { type: Subject; maxBytes: number };
  invalid_package: { package: PackageKind; problem: string };
  invalid_base_version: Record<string, never>;
  text_too_long: { field: 'rationale' | 'note'; max: number };
  invalid_context_type: Record<string, never>;
  /** An attachment offset below 0, or past the attachment's `size`. */
  invalid_offset: { size?: number | undefined };
  context_too_large: { bytes: number; limit: number };
}

// The kernel's ReasonFacts gains these reasons, so a KgwError carries them as one `Reason`.
declare module '../../kernel/errors.ts' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface ReasonFacts extends VersionReasonFacts {}
}

/** How a resource is named inside a sentence. */
const NAMED: Readonly<Record<ContextType, string>> = { knowledge: 'Knowledge', skill: 'skill', memory: 'Memory', artifact: 'Artifact' };

/** The start of every package refusal's message, per rule set. */
export const PACKAGE_PREFIX: Readonly<Record<PackageKind, string>> = {
  skill: 'invalid skill package: ',
  attachments: 'invalid attachments: ',
  artifact: 'invalid artifact package: ',
};

const SELECTOR_MESSAGE: Readonly<Record<ReasonFacts['invalid_selector']['accepts'], string>> = {
  latest_published_exact: 'the version must be latest, published, or a positive version number',
  latest_exact: 'the version must be latest or a positive version number',
  exact: 'the version must be an exact positive version number',
};

export const refuse = {
  invalidId: (type: ContextType | 'draft'): KgwError => refusal('validation', 'invalid_id', { type }, `invalid ${type} id: not a UUID`),
  notFound: (type: ContextType | 'draft' | 'attachment'): KgwError =>
    refusal('not_found', 'not_found', { type }, type === 'draft' || type === 'attachment' ? `${type} not found` : `${NAMED[type]} not found`),
  noPublishedVersion: (type: ContextType): KgwError => refusal('not_found', 'no_published_version', { type }, `this ${NAMED[type]} has no published version`),
  versionNotFound: (type: ContextType): KgwError => refusal('not_found', 'version_not_found', { type }, `${NAMED[type]} version not found`),
  versionConflict: (type: ContextType, latestVersion: number): KgwError =>
    refusal('conflict', 'version_conflict', { type, latestVersion }, `version conflict: read the ${NAMED[type]} again before writing`, {
      latest_version: latestVersion,
    }),
  forbidden: (type?: ContextType): KgwError =>
    refusal(
      'permission_denied',
      'forbidden',
      type === undefined ? {} : { type },
      type === undefined ? 'forbidden' : `forbidden: no Editor role on this ${NAMED[type]}`,
    ),
  invalidSelector: (accepts: ReasonFacts['invalid_selector']['accepts']): KgwError =>
    refusal('validation', 'invalid_selector', { accepts }, SELECTOR_MESSAGE[accepts]),
  invalidDate: (field: 'review_by' | 'expires_at'): KgwError => refusal('validation', 'invalid_date', { field }, `${field} must use YYYY-MM-DD format`),
  datesOutOfOrder: (): KgwError => refusal('validation', 'dates_out_of_order', {}, 'expires_at cannot be before review_by'),
  invalidExpectedVersion: (create: boolean): KgwError =>
    refusal(
      'validation',
      'invalid_expected_version',
      { create },
      create ? 'expected_version must be 0 for create or positive for write' : 'expected_version must be positive',
    ),
  idRequired: (type: ContextType): KgwError =>
    refusal('validation', 'id_required', { type }, `the ${type} id is required when expected_version is greater than 0`),
  idOmitted: (type: ContextType): KgwError => refusal('validation', 'id_omitted', { type }, `the ${type} id must be omitted when expected_version is 0`),
  titleRequired: (): KgwError => refusal('validation', 'title_required', {}, 'title required'),
  titleTooLong: (max: number): KgwError => refusal('validation', 'title_too_long', { max }, 'title too long'),
  nameRequired: (): KgwError => refusal('validation', 'name_required', {}, 'name required'),
  nameTooLong: (): KgwError => refusal('validation', 'name_too_long', {}, 'name too long'),
  contentRequired: (type: ContextType): KgwError =>
    refusal('validation', 'content_required', { type }, type === 'artifact' ? 'markdown is required' : 'content is required'),
  contentTooLarge: (type: ContextType, maxBytes: number, message: string): KgwError => refusal('validation', 'content_too_large', { type, maxBytes }, message),
  invalidPackage: (kind: PackageKind, problem: string, prefix: string = PACKAGE_PREFIX[kind]): KgwError =>
    refusal('validation', 'invalid_package', { package: kind, problem }, `${prefix}${problem}`),
  invalidBaseVersion: (): KgwError => refusal('validation', 'invalid_base_version', {}, 'base_version must be positive'),
  textTooLong: (field: 'rationale' | 'note', max: number): KgwError =>
    refusal('validation', 'text_too_long', { field, max }, `${field} cannot exceed ${max} characters`),
};
