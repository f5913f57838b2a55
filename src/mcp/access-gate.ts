import type { Caller } from '../kernel/access/caller.ts';
import type { Services } from '../kernel/services.ts';
import type { ToolDef, ToolReply } from './tool.ts';

/**
 * What a caller holds in one product's terms, worked out once per request by that product's
 * access gate: whether it reaches the minimum role a tool declares (ToolDef.minimumRole), and
 * how the product words the refusal when it does not.
 */
export interface GateStanding {
  /** Tells standings apart for the cached tool lists: two standings with one key allow the same roles. */
  readonly key: string;
  allows(needed: string): boolean;
  /** The refusal of a tool whose minimum role this standing does not reach, in the product's words. */
  refusal(tool: ToolDef, needed: string): ToolReply;
}

/**
 * An access gate a product declares, beside its tools: the least the caller must hold somewhere
 * in the organisation to see or call a tool of that product at all. tools/list leaves out what
 * the standing does not reach and tools/call refuses it; the tool still checks the caller's
 * access on what it is given. The MCP layer looks a gate up by its product's dialect name.
 */
export interface AccessGate {
  /** Whether `role` is a minimum role this gate decides (checked when the registry is built, so a typo fails at start-up). */
  knows(role: string): boolean;
  standing(services: Services, caller: Caller): Promise<GateStanding>;
}
