import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyBaseLogger } from 'fastify';
import type { AuditTrail } from '../kernel/audit/trail.ts';
import { KgwError, isKgwError } from '../kernel/errors.ts';
import { findUnstorable } from '../kernel/text.ts';
import { issueLines } from '../kernel/zod-issues.ts';
import type { DialectErrors } from './errors.ts';
import { retryAfterOf, warnOutage } from './errors.ts';
import type { ToolDef, ToolReply } from './tool.ts';

/*
 * The one way a call runs, for a tool call, a resource read and the anonymous endpoint's call
 * alike: admission (scopes, the product's access gate, the anonymous endpoint's rate) → audit
 * record started → arguments parsed → the tool's own first checks → text the store cannot hold
 * refused → rate spent → run → failures worded by the dialect → audit record finished. What
 * differs between the three is handed in (CallSteps); the order and the handling of failures
 * are written once, here.
 */

/** How a call's outcomes are worded: a tool's dialect (DialectErrors), or a resource's JSON-RPC errors. */
export interface CallWords<Out> {
  /** The arguments do not fit: one line per problem. */
  invalid(problems: readonly string[]): Out;
  /** A refusal the gateway reported. */
  fromError(error: KgwError): Out;
  /** Anything unexpected (logged, never shown). */
  internal(): Out;
  /** The audit record could not be written: the call does not count as done. */
  auditFailed(): Out;
}

export interface CallSteps<Args, Out> {
  readonly log: FastifyBaseLogger;
  /** What the call's log lines name: `{ tool }` or `{ resource }`. */
  readonly subject: Readonly<Record<string, string>>;
  /** The tenant's slug, for the log line of an unexpected failure. */
  readonly tenant: string;
  readonly anonymous?: boolean;
  /**
   * Scopes, the access gate and any rate counted before the audit: a refusal here did no work and
   * is neither recorded nor counted. Undefined lets the call in; it may also throw (RateLimitedCall).
   */
  admit(): Promise<Out | undefined> | Out | undefined;
  /** Starts the call's audit record, once it is admitted. */
  startAudit(): AuditTrail;
  /** The arguments as the input schema reads them, or its problems (one line each). */
  parse(): { ok: true; args: Args } | { ok: false; problems: readonly string[] };
  /** The arguments as sent, checked for text the store cannot hold (NUL, lone surrogates, deep nesting); omitted, no arguments. */
  readonly sent?: unknown;
  /** The tool's checks that come before that refusal (ToolDef.checkFirst); throws a KgwError. */
  checkFirst?(args: Args): void;
  /** Spends the call's rate, last, by a call about to run; throws the limiter's refusal. */
  spend?(args: Args): Promise<void> | void;
  run(args: Args, audit: AuditTrail): Promise<Out>;
  readonly words: CallWords<Out>;
  /** Logs the finished call at debug (tool calls). */
  logCall?(ok: boolean): void;
  /**
   * Told how the call ended and how long it took, for the metrics: `ok`, the error code, or
   * `denied` for a call refused at admission (scopes, access gate, the anonymous rate).
   */
  observe?(outcome: string, seconds: number): void;
}

export interface CallOutcome<Out> {
  readonly out: Out;
  readonly ok: boolean;
  /** Set when the call was refused over a rate: the seconds to wait (the transport's to say). */
  readonly retryAfter?: number;
}

export async function runCall<Args, Out>(steps: CallSteps<Args, Out>): Promise<CallOutcome<Out>> {
  const started = performance.now();
  const seconds = () => (performance.now() - started) / 1000;
  const refused = await steps.admit();
  if (refused !== undefined) {
    steps.observe?.('denied', seconds());
    return { out: refused, ok: false };
  }
  const { log, subject, words } = steps;
  const audit = steps.startAudit();
  let out: Out;
  let outcome: { ok: true } | { ok: false; errorCode: string };
  let retryAfter: number | undefined;
  const parsed = steps.parse();
  if (!parsed.ok) {
    out = words.invalid(parsed.problems);
    outcome = { ok: false, errorCode: 'validation' };
  } else {
    try {
      steps.checkFirst?.(parsed.args);
      // Text PostgreSQL cannot store and nesting past 32 levels are refused here, for every call
      // of every dialect, before the product sees them; a tool whose spec words some of it
      // otherwise says so first (checkFirst). Schemas themselves are safe on such text.
      const unstorable = steps.sent === undefined ? undefined : findUnstorable(steps.sent);
      if (unstorable === undefined) {
        // The rate is spent last, by a call about to run: one refused for its scopes, role or
        // arguments did no work and spends nothing. One the product then refuses (a conflict,
        // too low a role on that KB) has spent its unit: it cost a transaction, and a runaway
        // agent retrying such calls is what the rate guards against. The refusal over the rate
        // is answered and audited like any refusal of the call.
        await steps.spend?.(parsed.args);
        out = await steps.run(parsed.args, audit);
        outcome = { ok: true };
      } else {
        out = words.invalid(issueLines([unstorable], 'labelled'));
        outcome = { ok: false, errorCode: 'validation' };
      }
    } catch (error) {
      if (isKgwError(error)) {
        warnOutage(log, error, steps.anonymous === true ? { ...subject, anonymous: true } : subject);
        out = words.fromError(error);
        outcome = { ok: false, errorCode: error.code };
        retryAfter = retryAfterOf(error);
      } else {
        const kind = `${steps.anonymous === true ? 'anonymous ' : ''}${'resource' in subject ? 'resource' : 'tool'}`;
        log.error({ err: error, ...subject, tenant: steps.tenant }, `${kind} failed unexpectedly`);
        out = words.internal();
        outcome = { ok: false, errorCode: 'internal' };
      }
    }
  }
  steps.logCall?.(outcome.ok);
  try {
    await audit.finish(outcome);
  } catch (error) {
    // A call that cannot be audited does not count as done.
    log.error({ err: error, ...subject }, 'audit record failed');
    steps.observe?.('audit_failed', seconds());
    return { out: words.auditFailed(), ok: false };
  }
  steps.observe?.(outcome.ok ? 'ok' : outcome.errorCode, seconds());
  return retryAfter === undefined ? { out, ok: outcome.ok } : { out, ok: outcome.ok, retryAfter };
}

/**
 * A tools/call naming no tool of the endpoint: a JSON-RPC error that echoes the name (a huge one
 * cut) in the SDK's own words, and names the endpoints that serve a tool of that name, if any.
 */
export function unknownTool(name: string, servedAt: readonly string[] = []): McpError {
  const where = servedAt.length === 0 ? '' : `; this endpoint does not serve it, ${servedAt.join(' and ')} ${servedAt.length === 1 ? 'does' : 'do'}`;
  return new McpError(ErrorCode.InvalidParams, `Tool ${name.length > 100 ? `${name.slice(0, 100)}…` : name} not found${where}`);
}

/** A tool's arguments as its input schema reads them, or the schema's problems, one line each. */
export function parseArgs(tool: ToolDef, sent: Record<string, unknown>): { ok: true; args: Record<string, unknown> } | { ok: false; problems: string[] } {
  const parsed = tool.input.safeParse(sent);
  return parsed.success ? { ok: true, args: parsed.data } : { ok: false, problems: issueLines(parsed.error.issues, 'labelled') };
}

/** How a tool call's outcomes are worded: by its dialect. */
export function toolWords(errors: DialectErrors, tool: ToolDef, requestId: string): CallWords<ToolReply> {
  return {
    invalid: (problems) => errors.invalidArguments(tool, problems),
    fromError: (error) => errors.fromError(tool, error),
    internal: () => errors.internal(tool, requestId),
    auditFailed: () => errors.fromError(tool, new KgwError('unavailable', 'the audit log is unavailable; try again')),
  };
}
