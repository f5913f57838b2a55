import type { Scope } from '../kernel/access/scopes.ts';
import type { KgwError } from '../kernel/errors.ts';
import type { Dialect, ToolContext } from './tool.ts';

/** What a resource read gets: the same context as a tool call (its audit trail records the read). */
export type ResourceContext = ToolContext;

/**
 * One MCP resource of one dialect: a fixed `uri`, or a `uriTemplate` (RFC 6570 level 1:
 * `{name}` stands for one path segment). Access is the resource's own business, as a tool's
 * is; the scopes decide, as for tools, whether the caller sees it at all.
 */
export interface ResourceDef {
  readonly dialect: Dialect;
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly mimeType: 'application/json' | 'text/markdown';
  readonly scopes: readonly Scope[];
  /** Exactly one of the two. */
  readonly uri?: string;
  readonly uriTemplate?: string;
  /** The resource's text; throws a KgwError to refuse. `params` holds the template's values, decoded. */
  read(context: ResourceContext, params: Readonly<Record<string, string>>): Promise<string>;
  /** How the dialect words a refusal (it becomes the JSON-RPC error's message). */
  errorText(error: KgwError): string;
}

/** A resource's JSON text: the same two-space indentation as the tools' text copies. */
export function jsonText(value: unknown): string {
  return JSON.stringify(value, null, 2);
}
