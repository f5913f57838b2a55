import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallToolResult, JSONRPCMessage, ReadResourceResult, ServerCapabilities } from '@modelcontextprotocol/sdk/types.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  InitializeRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import type { FastifyBaseLogger } from 'fastify';
import type { Caller } from '../kernel/access/caller.ts';
import { missingScopes } from '../kernel/access/caller.ts';
import type { Scope } from '../kernel/access/scopes.ts';
import { AuditTrail } from '../kernel/audit/trail.ts';
import { MAX_JSON_VALUES, holdsMoreValues } from '../kernel/text.ts';
import type { Services } from '../kernel/services.ts';
import { issuesText } from '../kernel/zod-issues.ts';
import type { Rejection } from './modern.ts';
import { MODERN_VERSIONS, methodNotFound, modernAnswer, servedMethod } from './modern.ts';
import type { GateStanding } from './access-gate.ts';
import type { RateLimiterDef } from './rates.ts';
import { StoreCallSlots } from './call-slots.ts';
import { HEAVY_CALL_LIMITS, HeavyCalls, ToolRates } from './rates.ts';
import type { Endpoint, ToolRegistry } from './registry.ts';
import { RateLimitedCall } from './errors.ts';
import { parseArgs, runCall, toolWords, unknownTool } from './pipeline.ts';
import { inSpan } from '../kernel/tracing.ts';
import type { Dialect, ToolReply } from './tool.ts';
import type { ExchangeLimits } from './transport.ts';
import { OneShotTransport } from './transport.ts';

export interface McpRequest {
  readonly endpoint: Endpoint;
  readonly caller: Caller;
  readonly requestId: string;
  readonly log: FastifyBaseLogger;
}

/** How one POST's calls run: 4 at a time, and every call answered within 60 s. */
export const MCP_LIMITS: ExchangeLimits = { concurrency: 4, timeoutMs: 60_000 };

/**
 * The requests this server answers, with the SDK's schema of each. Their params are checked
 * before the SDK sees them, because the SDK answers a request whose params do not parse with
 * -32603 Internal error; JSON-RPC calls that -32602 Invalid params.
 */
const REQUEST_SCHEMAS: ReadonlyMap<
  string,
  { safeParse(value: unknown): { success: true } | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } } }
> = new Map<
  string,
  | typeof CallToolRequestSchema
  | typeof ListToolsRequestSchema
  | typeof InitializeRequestSchema
  | typeof PingRequestSchema
  | typeof ListResourcesRequestSchema
  | typeof ListResourceTemplatesRequestSchema
  | typeof ReadResourceRequestSchema
>([
  ['initialize', InitializeRequestSchema],
  ['tools/list', ListToolsRequestSchema],
  ['tools/call', CallToolRequestSchema],
  ['ping', PingRequestSchema],
  ['resources/list', ListResourcesRequestSchema],
  ['resources/templates/list', ListResourceTemplatesRequestSchema],
  ['resources/read', ReadResourceRequestSchema],
]);

/**
 * A JSON-RPC error whose message is exactly the text given: the SDK answers a handler's error
 * with its `code` and `message`, and McpError would prefix the message with "MCP error <code>:".
 */
class RpcRefusal extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.code = code;
  }
}

/**
 * The JSON-RPC error of a refused resource read. MCP names -32002 for a resource not found; a
 * KB out of reach reads as one, like a missing one. Bad input is -32602; a role or scope too
 * low -32600 (the request is not one this caller may make); the rest -32603.
 */
const RESOURCE_ERROR_CODES: Readonly<Record<string, number>> = {
  not_found: -32002,
  validation: ErrorCode.InvalidParams,
  permission_denied: ErrorCode.InvalidRequest,
  unauthenticated: ErrorCode.InvalidRequest,
};

/** The answer for a request the SDK would answer -32603 (params that do not fit the method, a task), or undefined. */
export function refusedBeforeTheSdk(message: JSONRPCMessage): JSONRPCMessage | undefined {
  if (!('method' in message) || !('id' in message)) return undefined;
  if (holdsMoreValues(message.params)) {
    return {
      jsonrpc: '2.0',
      id: message.id,
      error: { code: ErrorCode.InvalidParams, message: `Invalid params for ${message.method}: must not hold more than ${MAX_JSON_VALUES} values` },
    };
  }
  // No tool runs as a task (none declares execution.taskSupport), so a task-augmented call is
  // answered as MCP 2025-11-25 says for a tool that forbids it: -32601, not the SDK's -32603.
  if (message.method === 'tools/call' && typeof message.params === 'object' && message.params !== null && 'task' in message.params) {
    return {
      jsonrpc: '2.0',
      id: message.id,
      error: {
        code: ErrorCode.MethodNotFound,
        message: 'Method not found: tools/call as a task; this server runs tools directly, so call the tool without task',
      },
    };
  }
  const schema = REQUEST_SCHEMAS.get(message.method);
  const parsed = schema?.safeParse({ method: message.method, params: message.params });
  if (parsed === undefined || parsed.success) return undefined;
  const problems = issuesText(
    parsed.error.issues.map((issue) => ({ ...issue, path: issue.path.slice(issue.path[0] === 'params' ? 1 : 0) })),
    'labelled',
    { max: 5 },
  );
  return { jsonrpc: '2.0', id: message.id, error: { code: ErrorCode.InvalidParams, message: `Invalid params for ${message.method}: ${problems}` } };
}

/**
 * MCP 2025-11-25: a receiver that does not declare tasks for a method processes the request
 * normally and ignores its task metadata. This server declares tasks for nothing, so `task` is
 * dropped from every request but `tools/call` (whose tools forbid tasks: -32601 above). The
 * SDK would otherwise answer -32603 "Server does not support task creation".
 */
export function withoutTaskAugmentation(message: JSONRPCMessage): JSONRPCMessage {
  if (!('method' in message) || message.method === 'tools/call' || typeof message.params !== 'object' || message.params === null || !('task' in message.params))
    return message;
  const { task: _ignored, ...params } = message.params;
  return { ...message, params };
}

/**
 * The answers to one POST's messages, in request order: task metadata dropped, the messages the
 * gateway refuses itself answered here, the rest handed to `exchange` (one SDK server), and the
 * refusals put back in request order among the SDK's answers.
 */
export async function answerPost(
  received: readonly JSONRPCMessage[],
  exchange: (messages: readonly JSONRPCMessage[]) => Promise<JSONRPCMessage[]>,
): Promise<JSONRPCMessage[]> {
  const messages = received.map(withoutTaskAugmentation);
  const refused = new Map<JSONRPCMessage, JSONRPCMessage>();
  for (const message of messages) {
    const answer = refusedBeforeTheSdk(message);
    if (answer !== undefined) refused.set(message, answer);
  }
  if (refused.size === 0) return exchange(messages);
  const answered = await exchange(messages.filter((m) => !refused.has(m)));
  const byId = new Map(answered.map((response) => ['id' in response ? response.id : undefined, response]));
  return messages.flatMap((message) => refused.get(message) ?? ('method' in message && 'id' in message ? (byId.get(message.id) ?? []) : []));
}

export function toResult(reply: ToolReply, isError: boolean): CallToolResult {
  const result: CallToolResult = {
    content: [
      { type: 'text', text: reply.text },
      ...(reply.notes ?? []).map((text) => ({ type: 'text' as const, text })),
      ...(reply.images ?? []).map((image) => ({ type: 'image' as const, data: image.data.toString('base64'), mimeType: image.mimeType })),
    ],
  };
  if (reply.structured) result.structuredContent = reply.structured;
  if (isError) result.isError = true;
  return result;
}

/**
 * Serves MCP requests statelessly. Each HTTP request gets a fresh SDK `Server`, which is cheap
 * because everything costly is shared: the tool registry (schemas, JSON Schemas, filtered lists)
 * and one JSON Schema validator.
 */
export class McpService {
  readonly #registry: ToolRegistry;
  readonly #services: Services;
  // The SDK builds a new Ajv per Server unless one is passed in; one is enough for the process.
  readonly #validator = new AjvJsonSchemaValidator();

  readonly #limits: ExchangeLimits;
  /** The tools' rate limiters: one set per gateway process, as this service is. */
  readonly #rates: ToolRates;
  /** Heavy calls running and waiting per token (ToolDef.heavy). */
  readonly #heavy: HeavyCalls;

  /** `limiters`: the rate limiters the products declare, which their tools name (ToolDef.rateLimit). */
  constructor(registry: ToolRegistry, services: Services, limiters: readonly RateLimiterDef[], limits: ExchangeLimits = MCP_LIMITS) {
    this.#registry = registry;
    this.#services = services;
    this.#limits = limits;
    const declared = new Set(limiters.map((limiter) => limiter.name));
    const undeclared = registry.tools.find((tool) => tool.rateLimit !== undefined && !declared.has(tool.rateLimit.limiter));
    if (undeclared !== undefined)
      throw new Error(`tool "${undeclared.name}" names the rate limiter ${undeclared.rateLimit?.limiter}, which no product declares`);
    this.#rates = new ToolRates(limiters, services.config, services.db);
    // Replicas share PostgreSQL; PGlite has one process, whose own queue is the whole bound.
    this.#heavy = new HeavyCalls(HEAVY_CALL_LIMITS, services.db.kind === 'postgres' ? new StoreCallSlots(services.db) : undefined);
  }

  handle(request: McpRequest, received: readonly JSONRPCMessage[]): Promise<JSONRPCMessage[]> {
    return answerPost(received, (messages) => this.#exchange(request, messages));
  }

  /**
   * One request or notification of the 2026-07-28 era (src/mcp/modern.ts classified it): the
   * same handlers as the legacy era, its answer in the revision's form; `server/discover`
   * answered here; a method the revision does not have here refused with HTTP 404.
   */
  async handleModern(request: McpRequest, message: JSONRPCMessage, method: string): Promise<JSONRPCMessage | Rejection | undefined> {
    const { endpoint } = request;
    if (!servedMethod(method, this.#registry.hasResources(endpoint))) return 'id' in message ? methodNotFound(message, method) : undefined;
    if (method === 'server/discover') {
      if (!('id' in message) || message.id === undefined) return undefined;
      const result = {
        supportedVersions: [...MODERN_VERSIONS],
        capabilities: this.capabilities(endpoint),
        ...(endpoint.instructions === undefined ? {} : { instructions: endpoint.instructions }),
      };
      return modernAnswer({ jsonrpc: '2.0', id: message.id, result }, method, endpoint.serverInfo);
    }
    const [answer] = await this.handle(request, [message]);
    if (answer === undefined) return undefined;
    const uri = method === 'resources/read' ? (message as { params?: { uri?: unknown } }).params?.uri : undefined;
    return modernAnswer(answer, method, endpoint.serverInfo, typeof uri === 'string' ? uri : undefined);
  }

  /** What the endpoint offers, the same in both eras: tools, and resources where it has some; nothing changes during a request. */
  capabilities(endpoint: Endpoint): ServerCapabilities {
    const capabilities: ServerCapabilities = { tools: { listChanged: false } };
    if (this.#registry.hasResources(endpoint)) capabilities.resources = { listChanged: false, subscribe: false };
    return capabilities;
  }

  async #exchange(request: McpRequest, messages: readonly JSONRPCMessage[]): Promise<JSONRPCMessage[]> {
    if (messages.length === 0) return [];
    const { endpoint } = request;
    const withResources = this.#registry.hasResources(endpoint);
    const server = new Server(endpoint.serverInfo, {
      capabilities: this.capabilities(endpoint),
      instructions: endpoint.instructions,
      jsonSchemaValidator: this.#validator,
    });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: this.#registry.listFor(endpoint, request.caller, await this.#standings(request, this.#registry.gatedDialects(endpoint))),
    }));
    server.setRequestHandler(CallToolRequestSchema, (call) => this.#call(request, call.params.name, call.params.arguments));
    if (withResources) {
      server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: this.#registry.resourcesFor(endpoint, request.caller) }));
      server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: this.#registry.templatesFor(endpoint, request.caller) }));
      server.setRequestHandler(ReadResourceRequestSchema, (read) => this.#read(request, read.params.uri));
    }
    const transport = new OneShotTransport();
    await server.connect(transport);
    // No close(): the one-shot transport holds no timers or sockets, and the SDK's close builds
    // an error and aborts the finished requests, a quarter of the per-request MCP cost (bench/).
    return transport.exchange(messages, this.#limits);
  }

  /**
   * The first `tools/call` in the messages whose tool this endpoint has but the caller's scopes
   * do not allow, with the scopes missing and the dialect's refusal text. The HTTP layer answers
   * it with 403 insufficient_scope, so OAuth clients can step up.
   */
  insufficientScope(
    endpoint: Endpoint,
    caller: Caller,
    messages: readonly JSONRPCMessage[],
  ): { id: string | number; missing: Scope[]; text: string } | undefined {
    for (const message of messages) {
      if (!('method' in message) || message.method !== 'tools/call' || !('id' in message)) continue;
      const name = (message.params as { name?: unknown } | undefined)?.name;
      const tool = typeof name === 'string' ? this.#registry.find(endpoint, name) : undefined;
      if (!tool) continue;
      const missing = missingScopes(caller, tool.scopes);
      if (missing.length > 0) return { id: message.id, missing, text: this.#registry.errors[tool.dialect].forbidden(tool, missing).text };
    }
    return undefined;
  }

  async #call(request: McpRequest, name: string, args: Record<string, unknown> | undefined): Promise<CallToolResult> {
    const { endpoint, caller, requestId, log } = request;
    const tool = this.#registry.find(endpoint, name);
    if (!tool) throw unknownTool(name, this.#registry.servedElsewhere(endpoint, name));
    const errors = this.#registry.errors[tool.dialect];
    const sent = args ?? {};
    const spanAttributes = { 'kgw.dialect': tool.dialect, 'kgw.tool': tool.name, 'kgw.tenant': caller.tenant.slug, 'kgw.principal': caller.principal.id };
    const { out, ok, retryAfter } = await inSpan(`tool ${tool.name}`, spanAttributes, () =>
      runCall<Record<string, unknown>, ToolReply>({
        log,
        subject: { tool: tool.name },
        tenant: caller.tenant.slug,
        admit: async () => {
          const missing = missingScopes(caller, tool.scopes);
          if (missing.length > 0) return errors.forbidden(tool, missing);
          // The tool list is authoritative: a tool left out for the caller's standing is refused too.
          if (tool.minimumRole === undefined) return undefined;
          const standing = (await this.#standings(request, [tool.dialect])).get(tool.dialect);
          // A dialect without a gate has no standing to reach the role: refused as for a scope.
          if (standing === undefined) return errors.forbidden(tool, []);
          return standing.allows(tool.minimumRole) ? undefined : standing.refusal(tool, tool.minimumRole);
        },
        startAudit: () => AuditTrail.forTool(this.#services.audit, caller, tool, requestId),
        parse: () => parseArgs(tool, sent),
        sent,
        checkFirst: (parsed) => tool.checkFirst?.(parsed),
        spend: async (parsed) => {
          if (tool.rateLimit !== undefined) await this.#rates.spend(tool.rateLimit, caller, parsed);
        },
        run: (parsed, audit) => {
          const run = () => tool.run({ caller, services: this.#services, requestId, audit }, parsed);
          return tool.heavy === true ? this.#heavy.run(caller.tokenId, run) : run();
        },
        words: toolWords(errors, tool, requestId),
        logCall: (done) => log.debug({ tool: tool.name, tenant: caller.tenant.slug, principal: caller.principal.id, ok: done }, 'tool call'),
        observe: (outcome, seconds) => this.#services.meter?.toolCall(tool.dialect, tool.name, outcome, seconds),
      }),
    );
    // Over a rate, the wait is the transport's (HTTP 429 with Retry-After, and the JSON-RPC
    // error's data), as Atmina's spec tells agents to respect it; the text is the dialect's.
    if (retryAfter !== undefined) throw new RateLimitedCall(out.text, retryAfter);
    return toResult(out, !ok);
  }

  /** The caller's standing in each of the dialects' access gates (src/mcp/access-gate.ts), by dialect. */
  async #standings(request: McpRequest, dialects: readonly Dialect[]): Promise<Map<Dialect, GateStanding>> {
    const standings = new Map<Dialect, GateStanding>();
    for (const dialect of dialects) {
      const gate = this.#registry.gates[dialect];
      if (gate !== undefined) standings.set(dialect, await gate.standing(this.#services, request.caller));
    }
    return standings;
  }

  /** resources/read: the resource's text, or a JSON-RPC error in the dialect's words. Audited like a tool call. */
  async #read(request: McpRequest, uri: string): Promise<ReadResourceResult> {
    const { endpoint, caller, requestId, log } = request;
    const found = this.#registry.findResource(endpoint, uri);
    const shown = uri.length > 200 ? `${uri.slice(0, 200)}…` : uri;
    if (found === undefined)
      throw new RpcRefusal(-32002, `not_found: no resource ${shown}; resources/list and resources/templates/list name the ones there are`);
    const { def, params } = found;
    const internal = () => new RpcRefusal(ErrorCode.InternalError, `unavailable: internal error; request id ${requestId}`);
    const { out } = await runCall<Readonly<Record<string, string>>, ReadResourceResult | RpcRefusal>({
      log,
      subject: { resource: def.name },
      tenant: caller.tenant.slug,
      admit: () => {
        const missing = missingScopes(caller, def.scopes);
        return missing.length > 0
          ? new RpcRefusal(ErrorCode.InvalidRequest, `permission_denied: ${def.name} needs the ${missing.join(' and ')} scope`)
          : undefined;
      },
      startAudit: () => {
        const audit = AuditTrail.forTool(this.#services.audit, caller, { name: `resource:${def.name}`, dialect: def.dialect }, requestId);
        audit.readAs('resource.read');
        return audit;
      },
      // The template's values are the resource's arguments; the resource checks them itself.
      parse: () => ({ ok: true, args: params }),
      run: async (values, audit) => ({
        contents: [{ uri, mimeType: def.mimeType, text: await def.read({ caller, services: this.#services, requestId, audit }, values) }],
      }),
      words: {
        invalid: internal,
        fromError: (error) => new RpcRefusal(RESOURCE_ERROR_CODES[error.code] ?? ErrorCode.InternalError, def.errorText(error)),
        internal,
        auditFailed: () => new RpcRefusal(ErrorCode.InternalError, 'unavailable: the audit log is unavailable; try again'),
      },
    });
    if (out instanceof RpcRefusal) throw out;
    return out;
  }
}
