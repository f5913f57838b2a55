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

/** The one base error of the gateway. `message` is safe to show a caller; `cause` is only logged. */
export class KgwError extends Error {
  readonly code: ErrorCode;
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(code: ErrorCode, message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'KgwError';
    this.code = code;
    this.details = options.details;
  }
}

export function isKgwError(error: unknown, code?: ErrorCode): error is KgwError {
  return error instanceof KgwError && (code === undefined || error.code === code);
}

export const validation = (message: string, details?: Record<string, unknown>): KgwError => new KgwError('validation', message, { details });
export const notFound = (message: string, details?: Record<string, unknown>): KgwError => new KgwError('not_found', message, { details });
export const conflict = (message: string, details?: Record<string, unknown>): KgwError => new KgwError('conflict', message, { details });
export const permissionDenied = (message: string, details?: Record<string, unknown>): KgwError => new KgwError('permission_denied', message, { details });
