import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallToolResult, JSONRPCMessage, Tool } from '@modelcontextprotocol/sdk/types.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import type { FastifyBaseLogger } from 'fastify';
import { RateLimiter } from '../auth/rate-limit.ts';
import type { AnonymousSearchConfig } from '../config.ts';
import type { AnonymousCaller } from '../kernel/access/anonymous.ts';
import { AuditTrail } from '../kernel/audit/trail.ts';
import { KgwError } from '../kernel/errors.ts';
import type { Services } from '../kernel/services.ts';
import { RateLimitedCall, retryAfterOf } from './errors.ts';
import { parseArgs, runCall, toolWords, unknownTool } from './pipeline.ts';
import type { Endpoint, ToolRegistry } from './registry.ts';
import { MCP_LIMITS, answerPost, toResult } from './server.ts';
import type { ToolDef, ToolReply } from './tool.ts';
import type { ExchangeLimits } from './transport.ts';
import { OneShotTransport } from './transport.ts';

/*
 * MCP for a connection without credentials, which a product may offer (Atmina: docs/atmina.md,
 * "Anonymous search"). It has no principal, so it has no tool context of its own: it may list
 * and call exactly one tool (Atmina's `search`, over the public KBs of the tenant it connected
 * to). Every other tool of the endpoint is listed nowhere and refused as permission_denied;
 * there are no resources. Its calls are rate-limited per client address and per tenant, and
 * audited with no principal.
 */

/** What an anonymous tool runs with: the connection, the store and its audit trail. */
export interface AnonymousContext {
  readonly caller: AnonymousCaller;
  readonly services: Services;
  readonly audit: AuditTrail;
}

/** The one tool an anonymous connection may call: its definition (name, input, descriptor) and its work. */
export interface AnonymousTool {
  readonly def: ToolDef;
  run(context: AnonymousContext, args: unknown): Promise<ToolReply>;
}

export interface AnonymousRequest {
  /** The endpoint whose server it announces and whose tool it offers (/atmina/mcp). */
  readonly endpoint: Endpoint;
  readonly caller: AnonymousCaller;
  /** The client's address, which its rate is counted by. */
  readonly address: string;
  readonly requestId: string;
  readonly log: FastifyBaseLogger;
}

export class AnonymousMcp {
  readonly #registry: ToolRegistry;
  readonly #services: Services;
  readonly #tool: AnonymousTool;
  readonly #instructions: string;
  readonly #limits: ExchangeLimits;
  readonly #validator = new AjvJsonSchemaValidator();
  /** Searches per client address and per tenant a minute, counted in this process (like every rate of the gateway). */
  readonly #perAddress: RateLimiter;
  readonly #perTenant: RateLimiter;

  /** `tool` and `instructions`: what the product offers a connection without credentials (Product.anonymous). */
  constructor(
    registry: ToolRegistry,
    services: Services,
    offer: { readonly tool: AnonymousTool; readonly instructions: string },
    config: AnonymousSearchConfig,
    limits: ExchangeLimits = MCP_LIMITS,
  ) {
    this.#registry = registry;
    this.#services = services;
    this.#tool = offer.tool;
    this.#instructions = offer.instructions;
    this.#limits = limits;
    this.#perAddress = new RateLimiter(config.perAddressPerMinute, 60_000);
    this.#perTenant = new RateLimiter(config.perTenantPerMinute, 60_000);
  }

  /** The answers to one POST's messages, in request order. */
  handle(request: AnonymousRequest, received: readonly JSONRPCMessage[]): Promise<JSONRPCMessage[]> {
    return answerPost(received, (messages) => this.#exchange(request, messages));
  }

  async #exchange(request: AnonymousRequest, messages: readonly JSONRPCMessage[]): Promise<JSONRPCMessage[]> {
    if (messages.length === 0) return [];
    const { endpoint } = request;
    // Tools only: no resources capability, so resources/* are "Method not found".
    const server = new Server(endpoint.serverInfo, {
      capabilities: { tools: { listChanged: false } },
      instructions: this.#instructions,
      jsonSchemaValidator: this.#validator,
    });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: this.#listed(endpoint) }));
    server.setRequestHandler(CallToolRequestSchema, (call) => this.#call(request, call.params.name, call.params.arguments));
    const transport = new OneShotTransport();
    await server.connect(transport);
    return transport.exchange(messages, this.#limits);
  }

  #listed(endpoint: Endpoint): Tool[] {
    const descriptor = this.#registry.descriptor(endpoint, this.#tool.def.name);
    return descriptor === undefined ? [] : [descriptor];
  }

  async #call(request: AnonymousRequest, name: string, args: Record<string, unknown> | undefined): Promise<CallToolResult> {
    const { endpoint, caller, requestId, log } = request;
    const tool = this.#registry.find(endpoint, name);
    if (!tool) throw unknownTool(name);
    const errors = this.#registry.errors[tool.dialect];
    const sent = args ?? {};
    const { out, ok } = await runCall<Record<string, unknown>, ToolReply>({
      log,
      subject: { tool: tool.name },
      tenant: caller.tenant.slug,
      anonymous: true,
      admit: () => {
        // Refused before anything is counted or stored: it did no work.
        if (tool.name !== this.#tool.def.name)
          return { text: `permission_denied: ${tool.name} needs a signed-in connection; an anonymous connection may call ${this.#tool.def.name} only` };
        // The rate comes before the audit: a call over it is answered and not recorded, or a
        // flood of them would write the unbounded rows the rate is there to stop. Its wait is
        // the transport's, as for a signed-in call (McpService).
        const wait = this.#spend(request);
        if (wait !== undefined) throw new RateLimitedCall(errors.fromError(tool, wait).text, retryAfterOf(wait) ?? 1);
        return undefined;
      },
      startAudit: () => {
        const audit = AuditTrail.forAnonymous(this.#services.audit, caller.tenant.id, tool, requestId);
        audit.detail({ anonymous: true });
        return audit;
      },
      parse: () => parseArgs(tool, sent),
      sent,
      run: (parsed, audit) => this.#tool.run({ caller, services: this.#services, audit }, parsed),
      words: toolWords(errors, tool, requestId),
      logCall: (done) => log.debug({ tool: tool.name, tenant: caller.tenant.slug, anonymous: true, ok: done }, 'tool call'),
      observe: (outcome, seconds) => this.#services.meter?.toolCall(tool.dialect, tool.name, outcome, seconds),
    });
    return toResult(out, !ok);
  }

  /** Counts one search of the address and the tenant, or the refusal when either is over its rate (a refused call counts for neither). */
  #spend(request: AnonymousRequest): KgwError | undefined {
    const address = request.address;
    const tenant = request.caller.tenant.id;
    const byAddress = this.#perAddress.wait(address);
    if (byAddress !== undefined)
      return new KgwError('rate_limited', `too many anonymous searches from your address; retry in ${byAddress} s`, {
        details: { retryAfterSeconds: byAddress },
      });
    const byTenant = this.#perTenant.wait(tenant);
    if (byTenant !== undefined)
      return new KgwError('rate_limited', `too many anonymous searches of this organisation just now; retry in ${byTenant} s`, {
        details: { retryAfterSeconds: byTenant },
      });
    this.#perAddress.hit(address);
    this.#perTenant.hit(tenant);
    return undefined;
  }
}
