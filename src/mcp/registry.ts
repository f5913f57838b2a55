import type { Implementation, Resource, ResourceTemplate, Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Caller } from '../kernel/access/caller.ts';
import type { Scope } from '../kernel/access/scopes.ts';
import { hasScopes } from '../kernel/access/caller.ts';
import type { AccessGate, GateStanding } from './access-gate.ts';
import type { DialectErrors } from './errors.ts';
import { portableSchema } from './portable-schema.ts';
import type { ResourceDef } from './resource.ts';
import type { Dialect, ToolDef } from './tool.ts';

/** One MCP endpoint, built from the product catalogue (src/products.ts): a path, the dialects it speaks and how it introduces itself. */
export interface Endpoint {
  readonly path: string;
  readonly dialects: readonly Dialect[];
  readonly serverInfo: Implementation;
  readonly instructions?: string;
  /** Every scope its tools can use (`scopes_supported`), and those its 401 challenge names. */
  readonly scopes: readonly Scope[];
  readonly defaultScopes: readonly Scope[];
  /** Its 401 text, where a spec words one; omitted, the gateway's generic text. */
  readonly unauthorizedText?: string;
}

interface Prebuilt {
  readonly def: ToolDef;
  readonly descriptor: Tool;
}

/** A resource of a fixed URI with its descriptor. */
interface FixedResource {
  readonly def: ResourceDef;
  readonly descriptor: Resource;
}

/** A resource template with its descriptor and the pattern its URIs match: one capture per `{name}`, in the order of `names`. */
interface TemplateResource {
  readonly def: ResourceDef;
  readonly descriptor: ResourceTemplate;
  readonly pattern: RegExp;
  readonly names: readonly string[];
}

/** The endpoint's resources, fixed ones and templates apart. */
interface EndpointResources {
  readonly fixed: readonly FixedResource[];
  readonly templates: readonly TemplateResource[];
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function prebuildResource(def: ResourceDef): { fixed: FixedResource } | { template: TemplateResource } {
  const common = { name: def.name, title: def.title, description: def.description, mimeType: def.mimeType };
  if (def.uri !== undefined) return { fixed: { def, descriptor: { uri: def.uri, ...common } } };
  const template = def.uriTemplate ?? '';
  const names: string[] = [];
  // Each {name} is one path segment: never a slash, so kb/{kb_id} does not swallow kb/x/files.
  const source = template
    .split(/(\{[a-z_]+\})/)
    .map((part) => {
      const name = /^\{([a-z_]+)\}$/.exec(part)?.[1];
      if (name === undefined) return escapeRegExp(part);
      names.push(name);
      return '([^/?#]+)';
    })
    .join('');
  return { template: { def, descriptor: { uriTemplate: template, ...common }, pattern: new RegExp(`^${source}$`), names } };
}

function decoded(value: string): string | undefined {
  try {
    return decodeURIComponent(value);
  } catch {
    return undefined;
  }
}

function toJsonSchema(schema: z.ZodObject, io: 'input' | 'output'): Tool['inputSchema'] {
  const { $schema: _ignored, ...json } = z.toJSONSchema(schema, { io, target: 'draft-2020-12' }) as Parameters<typeof portableSchema>[0];
  return { ...portableSchema(json), type: 'object' };
}

/**
 * Every tool, built once: JSON Schemas are computed at start-up and each filtered tool list is
 * cached by endpoint and scope set, so a request only picks prebuilt pieces.
 */
export class ToolRegistry {
  readonly errors: Readonly<Record<Dialect, DialectErrors>>;
  /** The access gate of each dialect whose products declare one (src/mcp/access-gate.ts). */
  readonly gates: Readonly<Partial<Record<Dialect, AccessGate>>>;
  /** Every tool of every endpoint. */
  readonly tools: readonly ToolDef[];
  readonly #byEndpoint = new Map<string, Map<string, Prebuilt>>();
  readonly #lists = new Map<string, Tool[]>();
  readonly #resources = new Map<string, EndpointResources>();
  /** The dialects of each endpoint with a tool that has a minimum role, by path: their gates decide the tool list. */
  readonly #gated = new Map<string, readonly Dialect[]>();

  /**
   * `gates` holds the access gate of each dialect whose tools declare a minimum role; a tool of a
   * dialect without one is never listed and always refused (a registry built only for the
   * tools' schemas may leave them out), and one naming a role its gate does not know stops the
   * start.
   */
  constructor(
    endpoints: readonly Endpoint[],
    tools: readonly ToolDef[],
    errors: Readonly<Record<Dialect, DialectErrors>>,
    options: { readonly resources?: readonly ResourceDef[]; readonly gates?: Readonly<Partial<Record<Dialect, AccessGate>>> } = {},
  ) {
    this.errors = errors;
    this.gates = options.gates ?? {};
    this.tools = tools;
    const resources = options.resources ?? [];
    for (const tool of tools) {
      const gate = this.gates[tool.dialect];
      if (tool.minimumRole !== undefined && gate !== undefined && !gate.knows(tool.minimumRole))
        throw new Error(`tool "${tool.name}" of ${tool.dialect} needs the role ${tool.minimumRole}, which its access gate does not know`);
    }
    const prebuiltResources = resources.map(prebuildResource);
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
      const gated = new Set([...tools.values()].filter((p) => p.def.minimumRole !== undefined).map((p) => p.def.dialect));
      this.#gated.set(
        endpoint.path,
        [...gated].filter((dialect) => this.gates[dialect] !== undefined),
      );
      const mine = (r: { def: ResourceDef }) => endpoint.dialects.includes(r.def.dialect);
      this.#resources.set(endpoint.path, {
        fixed: prebuiltResources.flatMap((r) => ('fixed' in r ? [r.fixed] : [])).filter(mine),
        templates: prebuiltResources.flatMap((r) => ('template' in r ? [r.template] : [])).filter(mine),
      });
    }
  }

  /** Whether the endpoint serves any resource (its server declares the capability only then). */
  hasResources(endpoint: Endpoint): boolean {
    const resources = this.#resources.get(endpoint.path);
    return resources !== undefined && resources.fixed.length + resources.templates.length > 0;
  }

  /** The dialects with a tool of the endpoint that has a minimum role: the list depends on the caller's standing in each. */
  gatedDialects(endpoint: Endpoint): readonly Dialect[] {
    return this.#gated.get(endpoint.path) ?? [];
  }

  /** The fixed resources the caller's scopes allow (resources/list). */
  resourcesFor(endpoint: Endpoint, caller: Caller): Resource[] {
    return (this.#resources.get(endpoint.path)?.fixed ?? []).filter((r) => hasScopes(caller, r.def.scopes)).map((r) => r.descriptor);
  }

  /** The resource templates the caller's scopes allow (resources/templates/list). */
  templatesFor(endpoint: Endpoint, caller: Caller): ResourceTemplate[] {
    return (this.#resources.get(endpoint.path)?.templates ?? []).filter((r) => hasScopes(caller, r.def.scopes)).map((r) => r.descriptor);
  }

  /** The resource a URI names on this endpoint, with the template's values, or undefined. */
  findResource(endpoint: Endpoint, uri: string): { def: ResourceDef; params: Record<string, string> } | undefined {
    const resources = this.#resources.get(endpoint.path);
    if (resources === undefined) return undefined;
    const fixed = resources.fixed.find((r) => r.def.uri === uri);
    if (fixed) return { def: fixed.def, params: {} };
    for (const template of resources.templates) {
      const match = template.pattern.exec(uri);
      if (!match) continue;
      const values = match.slice(1).map(decoded);
      if (values.some((v) => v === undefined)) return undefined;
      return { def: template.def, params: Object.fromEntries(template.names.map((name, i) => [name, values[i] ?? ''])) };
    }
    return undefined;
  }

  /** The tool named on this endpoint, whether or not the caller may use it. */
  find(endpoint: Endpoint, name: string): ToolDef | undefined {
    return this.#byEndpoint.get(endpoint.path)?.get(name)?.def;
  }

  /**
   * The other endpoints that serve a tool of this name, the product's own before /mcp: what a
   * call naming a tool its endpoint lacks is told (unknownTool), so an agent pointed at the wrong
   * endpoint learns where the tool is.
   */
  servedElsewhere(endpoint: Endpoint, name: string): string[] {
    const paths = [...this.#byEndpoint].filter(([path, tools]) => path !== endpoint.path && tools.has(name)).map(([path]) => path);
    return paths.sort((a, b) => Number(a === '/mcp') - Number(b === '/mcp'));
  }

  /** The prebuilt descriptor of the tool named on this endpoint (the anonymous connection's list: src/mcp/anonymous.ts). */
  descriptor(endpoint: Endpoint, name: string): Tool | undefined {
    return this.#byEndpoint.get(endpoint.path)?.get(name)?.descriptor;
  }

  /**
   * The tools this caller may see and call on this endpoint; authoritative for tools/call too.
   * A tool with a minimum role is listed only with a standing in its dialect (`standings`, by
   * dialect) that reaches it; none given, such tools are left out. Cached per scope set and
   * standings, which have few values.
   */
  listFor(endpoint: Endpoint, caller: Caller, standings: ReadonlyMap<Dialect, GateStanding> = new Map()): Tool[] {
    const reach = this.gatedDialects(endpoint)
      .map((dialect) => `${dialect}=${standings.get(dialect)?.key ?? '-'}`)
      .join(' ');
    const key = `${endpoint.path}\n${[...caller.scopes].sort().join(' ')}\n${reach}`;
    let list = this.#lists.get(key);
    if (!list) {
      list = [...(this.#byEndpoint.get(endpoint.path)?.values() ?? [])]
        .filter((p) => hasScopes(caller, p.def.scopes))
        .filter((p) => p.def.minimumRole === undefined || standings.get(p.def.dialect)?.allows(p.def.minimumRole) === true)
        .map((p) => p.descriptor);
      this.#lists.set(key, list);
    }
    return list;
  }
}
