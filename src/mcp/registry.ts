import type { Implementation, Resource, ResourceTemplate, Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Caller } from '../kernel/access/caller.ts';
import { hasScopes } from '../kernel/access/caller.ts';
import type { CallerStanding } from '../atmina/kb/standing.ts';
import { standingAllows } from '../atmina/kb/standing.ts';
import type { DialectErrors } from './errors.ts';
import { portableSchema } from './portable-schema.ts';
import type { ResourceDef } from './resource.ts';
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
  readonly #byEndpoint = new Map<string, Map<string, Prebuilt>>();
  readonly #lists = new Map<string, Tool[]>();
  readonly #resources = new Map<string, EndpointResources>();
  /** Endpoints with a tool that has a minimum role, by path. */
  readonly #roleBound = new Set<string>();

  constructor(
    endpoints: readonly Endpoint[],
    tools: readonly ToolDef[],
    errors: Readonly<Record<Dialect, DialectErrors>>,
    resources: readonly ResourceDef[] = [],
  ) {
    this.errors = errors;
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
      if ([...tools.values()].some((p) => p.def.minimumRole !== undefined)) this.#roleBound.add(endpoint.path);
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

  /** Whether some tool of the endpoint has a minimum role, so its list depends on the caller's standing. */
  needsStanding(endpoint: Endpoint): boolean {
    return this.#roleBound.has(endpoint.path);
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

  /** The prebuilt descriptor of the tool named on this endpoint (the anonymous connection's list: src/mcp/anonymous.ts). */
  descriptor(endpoint: Endpoint, name: string): Tool | undefined {
    return this.#byEndpoint.get(endpoint.path)?.get(name)?.descriptor;
  }

  /**
   * The tools this caller may see and call on this endpoint; authoritative for tools/call too.
   * A tool with a minimum role is listed only with a `standing` that reaches it (none given:
   * such tools are left out). Cached per scope set and standing, which have few values.
   */
  listFor(endpoint: Endpoint, caller: Caller, standing?: CallerStanding): Tool[] {
    const reach =
      standing === undefined ? '-' : `${standing.highest}${standing.teamAdmin ? '+team_admin' : ''}${standing.contextReader === true ? '+context' : ''}`;
    const key = `${endpoint.path}\n${[...caller.scopes].sort().join(' ')}\n${reach}`;
    let list = this.#lists.get(key);
    if (!list) {
      list = [...(this.#byEndpoint.get(endpoint.path)?.values() ?? [])]
        .filter((p) => hasScopes(caller, p.def.scopes))
        .filter((p) => p.def.minimumRole === undefined || (standing !== undefined && standingAllows(standing, p.def.minimumRole)))
        .map((p) => p.descriptor);
      this.#lists.set(key, list);
    }
    return list;
  }
}
