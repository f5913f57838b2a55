import type { Scope } from '../kernel/access/scopes.ts';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { KgwError } from '../kernel/errors.ts';
import { isKgwError, reasonOf } from '../kernel/errors.ts';
import type { ToolDef, ToolReply } from './tool.ts';

/** How one dialect words its failures; each dialect keeps its spec's texts in one table. */
export interface DialectErrors {
  /** The caller's token lacks a scope the tool needs. */
  forbidden(tool: ToolDef, missing: readonly Scope[]): ToolReply;
  /** The arguments do not match the tool's input schema; one line per issue (issueLines, 'labelled'). */
  invalidArguments(tool: ToolDef, problems: readonly string[]): ToolReply;
  /** A failure the core reported. */
  fromError(tool: ToolDef, error: KgwError): ToolReply;
  /** Anything unexpected; the details are logged, never shown. */
  internal(tool: ToolDef, requestId: string): ToolReply;
}

/**
 * Said after every version conflict: optimistic writers that retry at once collide again, and
 * two of them retrying as fast as they could let one fail 109 times in a row. docs/alignbase.md
 * ("Concurrent writers") has the numbers the gateway's own clients use.
 */
export const CONFLICT_ADVICE =
  'Another writer saved first. Read the latest version, merge your change, and write again with that version; if it conflicts again, wait a random time that doubles with each retry (full jitter) before the next try, so that concurrent writers stop colliding.';

/** An error's first line and its causes' (a driver's error wraps the socket's), joined: no stack. */
export function causeLine(error: unknown): string {
  const parts: string[] = [];
  for (let at: unknown = error, depth = 0; at !== undefined && at !== null && depth < 4; depth += 1) {
    const code = (at as { code?: unknown }).code;
    const text = at instanceof Error ? (at.message.split('\n')[0] ?? at.name) : typeof at === 'string' ? at : JSON.stringify(at);
    const part = typeof code === 'string' && code !== '' && !text.includes(code) ? `${code}: ${text}` : text;
    if (part !== '' && !parts.some((p) => p.includes(part))) parts.push(part);
    at = at instanceof Error ? at.cause : undefined;
  }
  return parts.join(' ← ').slice(0, 500);
}

const ROLE_NAMES = { search: 'the search engine', graph: 'the graph store' } as const;

/**
 * Logs a call refused as `unavailable` (any other refusal is the caller's and is not logged):
 * one warning line that names the backend and what it said, without a stack (an outage is no
 * bug), with `context` (the tool or resource) beside it.
 */
export function warnOutage(log: { warn(fields: Record<string, unknown>, message: string): void }, error: KgwError, context: Record<string, unknown>): void {
  if (error.code !== 'unavailable') return;
  const cause = error.cause === undefined ? undefined : causeLine(error.cause);
  const why = reasonOf(error);
  if (why?.reason === 'backend_unavailable') {
    const { role, backend } = why.facts;
    log.warn({ role, backend, cause, ...context }, `backend outage: ${ROLE_NAMES[role]} (${backend}) did not answer`);
  } else log.warn({ cause, ...context }, `backend unavailable: ${error.message}`);
}

/**
 * The JSON-RPC error of a call refused over a rate: the server-error code the gateway's other
 * HTTP refusals use, and `data` naming the reason and the seconds to wait, which the HTTP
 * layer also sends as 429 with Retry-After (src/http/rate-limited.ts). docs/mcp.md, Rate limits.
 */
export const RATE_LIMITED_CODE = -32000;

export interface RateLimitedData {
  readonly reason: 'rate_limited';
  readonly retryAfterSeconds: number;
}

/** The seconds a `rate_limited` refusal asks the caller to wait; undefined for any other error. */
export function retryAfterOf(error: unknown): number | undefined {
  if (!isKgwError(error, 'rate_limited')) return undefined;
  const seconds = error.details?.retryAfterSeconds;
  return typeof seconds === 'number' && Number.isFinite(seconds) ? Math.max(1, Math.ceil(seconds)) : undefined;
}

/**
 * Thrown from a tools/call handler: the SDK answers it as a JSON-RPC error with exactly this
 * code, message (the dialect's refusal text, as the tool result said it) and data.
 */
export class RateLimitedCall extends Error {
  readonly code = RATE_LIMITED_CODE;
  readonly data: RateLimitedData;
  constructor(text: string, retryAfterSeconds: number) {
    super(text);
    this.name = 'RateLimitedCall';
    this.data = { reason: 'rate_limited', retryAfterSeconds };
  }
}

/** The wait a rate-limited answer asks for, or undefined when the answer is none. */
export function rateLimitedWait(answer: JSONRPCMessage): number | undefined {
  if (!('error' in answer) || answer.error.code !== RATE_LIMITED_CODE) return undefined;
  const data = answer.error.data as Partial<RateLimitedData> | undefined;
  return data?.reason === 'rate_limited' && typeof data.retryAfterSeconds === 'number' ? data.retryAfterSeconds : undefined;
}
