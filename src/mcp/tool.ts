import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import type { Caller } from '../core/access/caller.ts';
import type { Scope } from '../core/access/scopes.ts';
import type { AuditTrail } from '../core/audit/trail.ts';
import type { Services } from '../core/services.ts';

export const DIALECTS = ['alignbase', 'atmina', 'brain'] as const;
export type Dialect = (typeof DIALECTS)[number];

/** What a tool hands back: a text copy always, and structured content when the tool has an output schema. */
export interface ToolReply {
  readonly text: string;
  readonly structured?: Record<string, unknown>;
  /**
   * Advice after the text, each as a text content block of its own: the first block stays the
   * spec's exact text for clients that match it, and the advice is there for those that read on.
   */
  readonly notes?: readonly string[];
}

export interface ToolContext {
  readonly caller: Caller;
  /** The call's audit record: reads `touch` what they return, writes `recordIn` their transaction. */
  readonly audit: AuditTrail;
  readonly services: Services;
  readonly requestId: string;
}

/** One MCP tool of one dialect: schemas at module scope, the work delegated to the core. */
export interface ToolDef<Input extends z.ZodObject = z.ZodObject> {
  readonly name: string;
  readonly dialect: Dialect;
  readonly title: string;
  readonly description: string;
  readonly input: Input;
  readonly output?: z.ZodObject;
  readonly annotations: ToolAnnotations;
  /** Every scope listed here is needed to see or call the tool. */
  readonly scopes: readonly Scope[];
  /**
   * Checks that come before the gateway's own refusal of text it cannot store (NUL, lone
   * surrogates): where the spec gives such text its own error, such as a package path with a
   * null byte (`invalid skill package: …`), the tool says so first. Throws a KgwError.
   */
  readonly checkFirst?: (args: z.infer<Input>) => void;
  run(context: ToolContext, args: z.infer<Input>): Promise<ToolReply>;
}

/** Keeps the input type of `run` tied to the input schema. */
export function defineTool<Input extends z.ZodObject>(def: ToolDef<Input>): ToolDef {
  return def;
}

/** A reply whose text is the JSON of its structured content. */
export function jsonReply(structured: Record<string, unknown>): ToolReply {
  return { text: JSON.stringify(structured, null, 2), structured };
}
