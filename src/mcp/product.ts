import type { ConsoleOffer } from '../console/contract.ts';
import type { SignInHook } from '../auth/sessions.ts';
import type { Scope, ScopeDef } from '../kernel/access/scopes.ts';
import type { AccessGate } from './access-gate.ts';
import type { AnonymousTool } from './anonymous.ts';
import type { DialectErrors } from './errors.ts';
import type { RateLimiterDef } from './rates.ts';
import type { ResourceDef } from './resource.ts';
import type { Dialect, ToolDef } from './tool.ts';

/**
 * What a product offers the gateway, declared in its index.ts (src/alignbase/index.ts …): its
 * dialect and endpoint, its tools and resources, how it words refusals, its access gate, rate
 * limiters and guidance. The composition root (src/products.ts) lists the products and builds
 * the endpoints from them; the MCP, HTTP and OAuth layers know no product but through this.
 */
export interface Product {
  readonly dialect: Dialect;
  /** Its own MCP endpoint and how its server introduces itself; `version` omitted, the gateway's build. */
  readonly endpoint: {
    readonly path: string;
    readonly name: string;
    readonly title: string;
    readonly version?: string;
    /** The 401 text where its spec words one; omitted, the gateway's generic text. */
    readonly unauthorizedText?: string;
  };
  /** Its spec's guidance to the agent, served as the endpoint's MCP `instructions`. */
  readonly guidance: string;
  /** How an endpoint serving several products heads this one's guidance (/mcp). */
  readonly guidanceHeading: string;
  readonly tools: readonly ToolDef[];
  readonly resources?: readonly ResourceDef[];
  readonly errors: DialectErrors;
  /** The gate of its tools' minimum roles (ToolDef.minimumRole). */
  readonly gate?: AccessGate;
  /** The rate limiters its tools name (ToolDef.rateLimit). */
  readonly limiters?: readonly RateLimiterDef[];
  /**
   * The scopes its tools use (its endpoint's `scopes_supported`), each declared with what it lets a
   * client do, and those a client is told to ask for when it knows only the endpoint. A product
   * adds their names to ScopeNames (src/kernel/access/scopes.ts) from its index.ts.
   */
  readonly scopes: { readonly declared: readonly ScopeDef[]; readonly defaults: readonly Scope[] };
  /** What it does when a person signs in, in the sign-in's transaction. */
  readonly onSignIn?: readonly SignInHook[];
  /** Its endpoint for connections without credentials, if it has one. */
  readonly anonymous?: AnonymousOffer;
  /** What it adds to the web console (src/console/contract.ts): the decisions it asks of people. */
  readonly console?: ConsoleOffer;
}

/** A product's endpoint for connections without credentials: one tool, at a path per tenant. */
export interface AnonymousOffer {
  readonly tool: AnonymousTool;
  /** The route, with `:tenant` for the tenant's slug. */
  readonly path: string;
  readonly instructions: string;
}
