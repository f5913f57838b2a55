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

/** The reasons every product can meet, raised by the kernel itself: a projection that did not answer. */
export interface KernelReasonFacts {
  /** The search engine or the graph store a tool reads did not answer; `backend` names it (meilisearch, neo4j). */
  backend_unavailable: { role: OutageRole; backend: string };
}

/**
 * Why the gateway refused, by machine reason, with the facts each dialect needs to word it in its
 * own spec's language. The kernel's `message` is a plain English text for logs and for callers
 * without wording of their own (the CLI, the org file); a dialect words the reason instead.
 * The kernel names no product: a product declares its reasons beside the code that refuses so
 * and adds them here by module augmentation (`declare module '…/kernel/errors.ts'`, as
 * src/alignbase/versions/refusals.ts, src/atmina/kb/refusals.ts and src/brain/refusals.ts do),
 * so every reason stays one `Reason`.
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
