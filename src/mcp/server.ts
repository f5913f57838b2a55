import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallToolResult, JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import type { FastifyBaseLogger } from 'fastify';
import type { Caller } from '../core/access/caller.ts';
import { missingScopes } from '../core/access/caller.ts';
import type { Scope } from '../core/access/scopes.ts';
import { AuditTrail } from '../core/audit/trail.ts';
import { KgwError, isKgwError } from '../core/errors.ts';
import type { Services } from '../core/services.ts';
import { describeIssues } from './errors.ts';
import type { Endpoint, ToolRegistry } from './registry.ts';
import type { ToolDef, ToolReply } from './tool.ts';
import { OneShotTransport } from './transport.ts';

export interface McpRequest {
  readonly endpoint: Endpoint;
  readonly caller: Caller;
  readonly requestId: string;
  readonly log: FastifyBaseLogger;
}

function toResult(reply: ToolReply, isError: boolean): CallToolResult {
  const result: CallToolResult = { content: [{ type: 'text', text: reply.text }] };
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

  constructor(registry: ToolRegistry, services: Services) {
    this.#registry = registry;
    this.#services = services;
  }

  async handle(request: McpRequest, messages: readonly JSONRPCMessage[]): Promise<JSONRPCMessage[]> {
    const { endpoint } = request;
    const server = new Server(endpoint.serverInfo, {
      capabilities: { tools: { listChanged: false } },
      instructions: endpoint.instructions,
      jsonSchemaValidator: this.#validator,
    });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: this.#registry.listFor(endpoint, request.caller) }));
    server.setRequestHandler(CallToolRequestSchema, (call) => this.#call(request, call.params.name, call.params.arguments));
    const transport = new OneShotTransport();
    await server.connect(transport);
    // No close(): the one-shot transport holds no timers or sockets, and the SDK's close builds
    // an error and aborts the finished requests, a quarter of the per-request MCP cost (bench/).
    return transport.exchange(messages);
  }

  /**
   * The first `tools/call` in the messages whose tool this endpoint has but the caller's scopes
   * do not allow, with the scopes missing and the dialect's refusal text. The HTTP layer answers
   * it with 403 insufficient_scope, so OAuth clients can step up.
   */
  insufficientScope(endpoint: Endpoint, caller: Caller, messages: readonly JSONRPCMessage[]): { id: string | number; missing: Scope[]; text: string } | undefined {
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
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Tool ${name} not found`);
    const errors = this.#registry.errors[tool.dialect];
    const missing = missingScopes(caller, tool.scopes);
    if (missing.length > 0) return toResult(errors.forbidden(tool, missing), true);
    const audit = AuditTrail.forTool(this.#services.audit, caller, tool, requestId);
    let reply: ToolReply;
    let outcome: { ok: true } | { ok: false; errorCode: string };
    const parsed = tool.input.safeParse(args ?? {});
    if (!parsed.success) {
      reply = errors.invalidArguments(tool, describeIssues(parsed.error.issues));
      outcome = { ok: false, errorCode: 'validation' };
    } else {
      try {
        reply = await tool.run({ caller, services: this.#services, requestId, audit }, parsed.data);
        outcome = { ok: true };
      } catch (error) {
        reply = this.#failure(tool, error, request);
        outcome = { ok: false, errorCode: isKgwError(error) ? error.code : 'internal' };
      }
    }
    log.debug({ tool: tool.name, tenant: caller.tenant.slug, principal: caller.principal.id, ok: outcome.ok }, 'tool call');
    try {
      await audit.finish(outcome);
    } catch (error) {
      // A call that cannot be audited does not count as done.
      log.error({ err: error, tool: tool.name }, 'audit record failed');
      return toResult(errors.fromError(tool, new KgwError('unavailable', 'the audit log is unavailable; try again')), true);
    }
    return toResult(reply, !outcome.ok);
  }

  #failure(tool: ToolDef, error: unknown, request: McpRequest): ToolReply {
    const errors = this.#registry.errors[tool.dialect];
    if (isKgwError(error)) {
      if (error.code === 'unavailable') request.log.warn({ err: error, tool: tool.name }, 'tool failed: backend unavailable');
      return errors.fromError(tool, error);
    }
    request.log.error({ err: error, tool: tool.name, tenant: request.caller.tenant.slug }, 'tool failed unexpectedly');
    return errors.internal(tool, request.requestId);
  }
}
