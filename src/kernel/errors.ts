/** The error codes every layer understands; each dialect maps them to its own spec's texts. */
export type ErrorCode =
  | 'validation'
  | 'unauthenticated'
  | 'permission_denied'
  | 'not_found'
  | 'conflict'
  | 'content_integrity'
  | 'payload_too_large'
  | 'rate_limited'
  | 'unavailable';

/** The projections whose backend can be down while the store answers. */
export type OutageRole = 'search' | 'graph';

/** The kinds of thing a refusal can be about. */
export type Subject = 'knowledge' | 'skill' | 'memory' | 'artifact';
/** The package rules a refused package or attachment list was checked against. */
export type PackageKind = 'skill' | 'attachments' | 'artifact';

/**
 * The reasons the kernel itself declares: versioned content, messages, activity and projections.
 * A product's own reasons join ReasonFacts below, from the product's side.
 */
export interface KernelReasonFacts {
  // Versioned content: ids, selectors, versions, access.
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
  // Messages.
  recipients_count: { max: number };
  recipient_type: Record<string, never>;
  invalid_recipient_id: Record<string, never>;
  recipient_twice: Record<string, never>;
  send_to_self: Record<string, never>;
  empty_message: Record<string, never>;
  message_too_long: { max: number };
  artifacts_count: { max: number };
  artifact_twice: Record<string, never>;
  invalid_access: Record<string, never>;
  invalid_idempotency_key: Record<string, never>;
  idempotency_key_reused: Record<string, never>;
  invalid_inbox_offset: Record<string, never>;
  offset_without_include_read: Record<string, never>;
  recipient_not_found: { recipientType: 'agent' | 'group'; id: string };
  group_without_agents: { name: string };
  // Activity.
  installation_not_found: Record<string, never>;
  activity_disabled: Record<string, never>;
  /** `what` needs a capability the installation did not report: an event type or a hook. */
  capability_not_reported: { what: { event: string } | { hook: string } | { hookEvent: string }; capability: string };
  invalid_occurred_at: Record<string, never>;
  subject_required: { eventType: string; subject: Subject };
  subject_not_allowed: { eventType: string };
  error_code_without_error: Record<string, never>;
  tool_name_not_allowed: Record<string, never>;
  installation_limit: { max: number };
  // Projections.
  /** The search engine or the graph store a tool reads did not answer; `backend` names it (meilisearch, neo4j). */
  backend_unavailable: { role: OutageRole; backend: string };
}

/**
 * Why the gateway refused, by machine reason, with the facts each dialect needs to word it in its
 * own spec's language. The kernel's `message` is a plain English text for logs and for callers
 * without wording of their own (the CLI, the org file); a dialect words the reason instead.
 * The kernel names no product: a product with reasons of its own declares them beside its code
 * and adds them here by module augmentation (`declare module '…/kernel/errors.ts'`, as
 * src/atmina/kb/refusals.ts and src/brain/refusals.ts do), so every reason stays one `Reason`.
 */
// An interface, not a type, so that products can merge their reasons into it.
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface ReasonFacts extends KernelReasonFacts {}
export type Reason = keyof ReasonFacts;
/** The reasons the kernel declares, without any product's. */
export type KernelReason = keyof KernelReasonFacts;

/** The one base error of the gateway. `message` is safe to show a caller; `cause` is only logged. */
export class KgwError extends Error {
  readonly code: ErrorCode;
  readonly details: Readonly<Record<string, unknown>> | undefined;
  /** The machine reason of a refusal the dialects word themselves; undefined: `message` is the only wording. */
  readonly reason: Reason | undefined;
  readonly facts: Readonly<ReasonFacts[Reason]> | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options: { cause?: unknown; details?: Record<string, unknown>; reason?: Reason; facts?: ReasonFacts[Reason] } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'KgwError';
    this.code = code;
    this.details = options.details;
    this.reason = options.reason;
    this.facts = options.facts;
  }
}

/** A refusal with its machine reason and facts; `message` is the neutral English text. */
export function refusal<R extends Reason>(code: ErrorCode, reason: R, facts: ReasonFacts[R], message: string, details?: Record<string, unknown>): KgwError {
  return new KgwError(code, message, { reason, facts, details });
}

/** The reason and facts of an error, correlated, for a dialect's wording table. */
export function reasonOf(error: KgwError): { [R in Reason]: { reason: R; facts: ReasonFacts[R] } }[Reason] | undefined {
  if (error.reason === undefined) return undefined;
  return { reason: error.reason, facts: error.facts ?? {} } as { [R in Reason]: { reason: R; facts: ReasonFacts[R] } }[Reason];
}

export function isKgwError(error: unknown, code?: ErrorCode): error is KgwError {
  return error instanceof KgwError && (code === undefined || error.code === code);
}

export const validation = (message: string, details?: Record<string, unknown>): KgwError => new KgwError('validation', message, { details });
export const notFound = (message: string, details?: Record<string, unknown>): KgwError => new KgwError('not_found', message, { details });
export const conflict = (message: string, details?: Record<string, unknown>): KgwError => new KgwError('conflict', message, { details });
export const permissionDenied = (message: string, details?: Record<string, unknown>): KgwError => new KgwError('permission_denied', message, { details });

/**
 * The core's words for a projection that did not answer, also Atmina's (`unavailable: …`): what
 * the caller can do meanwhile. Company Brain words the reason itself.
 */
const OUTAGE_MESSAGES: Readonly<Record<OutageRole, string>> = {
  search: 'search is unavailable just now: the search engine did not answer; try again shortly, or list and read files meanwhile',
  graph: 'references are unavailable just now: the graph store did not answer; try again shortly, or read the files themselves meanwhile',
};

/**
 * A projection's backend that did not answer (refused the connection, timed out, answered 5xx):
 * `unavailable`, never an internal error. `cause` is logged as one line naming the backend
 * (src/mcp/errors.ts, warnOutage), never shown.
 */
export function backendUnavailable(role: OutageRole, backend: string, cause: unknown): KgwError {
  return new KgwError('unavailable', OUTAGE_MESSAGES[role], { reason: 'backend_unavailable', facts: { role, backend }, cause });
}
