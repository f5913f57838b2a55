/**
 * What an error may put in a log line. Database drivers attach the statement and its
 * parameters to their errors (PGlite's `query` and `params`, pg's `detail` with key values),
 * and pino would print every enumerable field: a failed write would log the tenant's content.
 * Only the kind, the code and a bounded message and stack are kept.
 */
const MESSAGE_MAX = 300;
const STACK_MAX = 4000;
const CAUSE_DEPTH = 3;

const clip = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max)}… (${text.length} characters)` : text);

// The shape pino's error serializers have (an index signature and a stack, empty when unknown).
export interface LoggedError {
  [key: string]: unknown;
  type: string;
  message: string;
  stack: string;
  code?: string | number;
  cause?: LoggedError;
}

/**
 * A database error's message can quote a value (`invalid input syntax for type uuid: "…"`); the
 * quoted parts that are not plain identifiers (a constraint's or column's name) are replaced.
 */
function databaseMessage(message: string): string {
  return message.replace(/"([^"]*)"/g, (quoted, inner: string) => (/^[A-Za-z_][A-Za-z0-9_.]{0,62}$/.test(inner) ? quoted : '"[value]"'));
}

/** pg's and PGlite's errors carry the server's severity next to the SQLSTATE code. */
const isDatabaseError = (error: Error): boolean => typeof (error as { severity?: unknown }).severity === 'string';

export function serializeError(error: unknown, depth = 0): LoggedError {
  if (!(error instanceof Error)) return { type: typeof error, message: clip(String(error), MESSAGE_MAX), stack: '' };
  const message = isDatabaseError(error) ? databaseMessage(error.message) : error.message;
  const logged: LoggedError = { type: error.name, message: clip(message, MESSAGE_MAX), stack: '' };
  const { code } = error as { code?: unknown };
  if (typeof code === 'string' || typeof code === 'number') logged.code = typeof code === 'string' ? clip(code, 64) : code;
  if (error.stack !== undefined) {
    // The stack's first line repeats the message: keep the frames only.
    const frames = error.stack
      .split('\n')
      .filter((line) => line.startsWith('    at '))
      .join('\n');
    logged.stack = clip(frames, STACK_MAX);
  }
  if (error.cause !== undefined && depth < CAUSE_DEPTH) logged.cause = serializeError(error.cause, depth + 1);
  return logged;
}
