import type { Implementation, Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Caller } from '../core/access/caller.ts';
import { hasScopes } from '../core/access/caller.ts';
import type { DialectErrors } from './errors.ts';
import type { Dialect, ToolDef } from './tool.ts';

/** One MCP endpoint: a path, the dialects it speaks and how it introduces itself. */
export interface Endpoint {
  readonly path: string;
  readonly dialects: readonly Dialect[];
  readonly serverInfo: Implementation;
  readonly instructions?: string;
}

interface Prebuilt {
  readonly def: ToolDef;
  readonly descriptor: Tool;
}

function toJsonSchema(schema: z.ZodObject, io: 'input' | 'output'): Tool['inputSchema'] {
  const { $schema: _ignored, ...json } = z.toJSONSchema(schema, { io, target: 'draft-2020-12' }) as Record<string, unknown>;
  return { ...json, type: 'object' };
}

/**
 * Every tool, built once: JSON Schemas are computed at start-up and each filtered tool list is
 * cached by endpoint and scope set, so a request only picks prebuilt pieces.
 */
export class ToolRegistry {
  readonly errors: Readonly<Record<Dialect, DialectErrors>>;
  readonly #byEndpoint = new Map<string, Map<string, Prebuilt>>();
  readonly #lists = new Map<string, Tool[]>();

  constructor(endpoints: readonly Endpoint[], tools: readonly ToolDef[], errors: Readonly<Record<Dialect, DialectErrors>>) {
    this.errors = errors;
    const prebuilt = tools.map((def): Prebuilt => {
      const descriptor: Tool = {
        name: def.name,
        title: def.title,
        description: def.description,
        inputSchema: toJsonSchema(def.input, 'input'),
        annotations: { title: def.title, ...def.annotations },
      };
      if (def.output) descriptor.outputSchema = toJsonSchema(def.output, 'output');
      return { def, descriptor };
    });
    for (const endpoint of endpoints) {
      const tools = new Map<string, Prebuilt>();
      for (const entry of prebuilt.filter((p) => endpoint.dialects.includes(p.def.dialect))) {
        const twin = tools.get(entry.def.name);
        if (twin) throw new Error(`tool "${entry.def.name}" of ${entry.def.dialect} clashes with ${twin.def.dialect} on ${endpoint.path}`);
        tools.set(entry.def.name, entry);
      }
      this.#byEndpoint.set(endpoint.path, tools);
    }
  }

  /** The tool named on this endpoint, whether or not the caller may use it. */
  find(endpoint: Endpoint, name: string): ToolDef | undefined {
    return this.#byEndpoint.get(endpoint.path)?.get(name)?.def;
  }

  /** The tools this caller may see and call on this endpoint; authoritative for tools/call too. */
  listFor(endpoint: Endpoint, caller: Caller): Tool[] {
    const key = `${endpoint.path}\n${[...caller.scopes].sort().join(' ')}`;
    let list = this.#lists.get(key);
    if (!list) {
      list = [...(this.#byEndpoint.get(endpoint.path)?.values() ?? [])].filter((p) => hasScopes(caller, p.def.scopes)).map((p) => p.descriptor);
      this.#lists.set(key, list);
    }
    return list;
  }
}
