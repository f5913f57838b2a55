import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import type { Caller } from '../kernel/access/caller.ts';
import type { Scope } from '../kernel/access/scopes.ts';
import type { AuditTrail } from '../kernel/audit/trail.ts';
import type { Services } from '../kernel/services.ts';
import type { ToolRate } from './rates.ts';

/**
 * The dialects the gateway speaks, one per product: each product adds its own from its index.ts
 * (`declare module '…/mcp/tool.ts' { interface Dialects { atmina: true } }`), so this layer names
 * none and a tool of an unknown dialect does not compile.
 */
// An interface, not a type, so that products can merge their dialects into it.
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface Dialects {}
export type Dialect = Extract<keyof Dialects, string>;

/** What a tool hands back: a text copy always, and structured content when the tool has an output schema. */
export interface ToolReply<Structured extends Record<string, unknown> = Record<string, unknown>> {
  readonly text: string;
  readonly structured?: Structured;
  /**
   * Advice after the text, each as a text content block of its own: the first block stays the
   * spec's exact text for clients that match it, and the advice is there for those that read on.
   */
  readonly notes?: readonly string[];
  /** Images after the text (an Asset's rendition beside read_file's JSON), as MCP image content. */
  readonly images?: readonly { readonly data: Buffer; readonly mimeType: string }[];
}

export interface ToolContext {
  readonly caller: Caller;
  /** The call's audit record: reads `touch` what they return, writes `recordIn` their transaction. */
  readonly audit: AuditTrail;
  readonly services: Services;
  readonly requestId: string;
}

/**
 * The reply a tool's `run` must give: with an output schema, structured content of exactly
 * that schema's type, so a core result that drifts from the schema fails to compile; without
 * one, a text reply.
 */
export type ReplyFor<Output extends z.ZodObject | undefined> = Output extends z.ZodObject ? StructuredReply<z.infer<Output>> : ToolReply;

/** A reply that carries structured content (a tool with an output schema must give one). */
export interface StructuredReply<Structured extends Record<string, unknown>> extends ToolReply<Structured> {
  readonly structured: Structured;
}

/** One MCP tool of one dialect: schemas at module scope, the work delegated to the core. */
export interface ToolDef<Input extends z.ZodObject = z.ZodObject, Output extends z.ZodObject | undefined = z.ZodObject | undefined> {
  readonly name: string;
  readonly dialect: Dialect;
  readonly title: string;
  readonly description: string;
  readonly input: Input;
  readonly output?: Output;
  readonly annotations: ToolAnnotations;
  /** Every scope listed here is needed to see or call the tool. */
  readonly scopes: readonly Scope[];
  /**
   * The least the caller must hold somewhere in the organisation to see or call the tool, in the
   * terms of its product's access gate (src/mcp/access-gate.ts; Atmina's: a role on some KB or
   * team, Admin of a team for create_kb); omitted, the scopes alone decide. The tool still
   * checks the caller's access on what it is given.
   */
  readonly minimumRole?: string;
  /**
   * The rate limiter that counts the tool's calls per principal (src/mcp/rates.ts), applied by
   * the server before `run`; with `counts`, only the calls that write (an apply, not a preview).
   * Omitted, the tool is not rate-limited.
   */
  readonly rateLimit?: ToolRate<z.infer<Input>>;
  /**
   * A call that reads many documents (a search): at most two run at once per token, later ones
   * wait their turn or are refused `rate_limited` (HeavyCalls, src/mcp/rates.ts).
   */
  readonly heavy?: boolean;
  /**
   * Checks that come before the gateway's own refusal of text it cannot store (NUL, lone
   * surrogates): where the spec gives such text its own error, such as a package path with a
   * null byte (`invalid skill package: …`), the tool says so first. Throws a KgwError.
   */
  readonly checkFirst?: (args: z.infer<Input>) => void;
  run(context: ToolContext, args: z.infer<Input>): Promise<ReplyFor<Output>>;
}

/** Keeps the input type of `run` tied to the input schema, and its reply to the output schema. */
export function defineTool<Input extends z.ZodObject, Output extends z.ZodObject | undefined = undefined>(def: ToolDef<Input, Output>): ToolDef {
  return def;
}

/**
 * A reply whose text is the JSON of its structured content, compact: MCP asks for the text copy
 * for clients that read no structured content, and the answer carries both, so indentation
 * only made every large answer larger (list_knowledge at 1,000 items: 1.78 MB, a third of it
 * spaces and line breaks, serialised twice). docs/decisions.md, "A tool's text copy".
 */
export function jsonReply<Structured extends Record<string, unknown>>(structured: Structured): StructuredReply<Structured> {
  return { text: JSON.stringify(structured), structured };
}
