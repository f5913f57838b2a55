import { READABLE_CONTEXT_EXISTS, alignbase } from './alignbase/index.ts';
import { atmina } from './atmina/index.ts';
import { brain } from './brain/index.ts';
import { alignbaseContent } from './search-sources.ts';
import type { SignInHook } from './auth/sessions.ts';
import type { ConsoleSection, InboxSource } from './console/contract.ts';
import { ScopeCatalogue } from './kernel/access/scopes.ts';
import type { Scope, ScopeDef } from './kernel/access/scopes.ts';
import type { AccessGate } from './mcp/access-gate.ts';
import type { DialectErrors } from './mcp/errors.ts';
import type { AnonymousOffer, Product } from './mcp/product.ts';
import type { RateLimiterDef } from './mcp/rates.ts';
import type { Endpoint } from './mcp/registry.ts';
import type { ResourceDef } from './mcp/resource.ts';
import type { Dialect, ToolDef } from './mcp/tool.ts';

/*
 * The product catalogue: which products the gateway serves, what crosses them, and the MCP
 * endpoints built from them. Each product says what it offers in its index.ts (src/mcp/product.ts);
 * the MCP, HTTP and OAuth layers get everything product-specific from here.
 */

/**
 * The products, in the order their endpoints and guidance come. Atmina's `search` finds
 * Alignbase's Knowledge, Memories and Artifacts too (src/search-sources.ts), so Atmina's access
 * gate is handed Alignbase's condition for "may read some of them": that crossing is wired here.
 */
const atminaProduct = atmina({ readableContext: READABLE_CONTEXT_EXISTS, searchedContent: alignbaseContent });
export const products: readonly Product[] = [alignbase, atminaProduct, brain];

/** Every tool of every product; each endpoint serves the ones of its dialects, in this order (Company Brain's first, as /mcp has always listed them). */
export const allTools: readonly ToolDef[] = [brain, alignbase, atminaProduct].flatMap((product) => product.tools);

/** Every resource of every product; each endpoint serves the ones of its dialects. */
export const allResources: readonly ResourceDef[] = products.flatMap((product) => product.resources ?? []);

export const dialectErrors: Readonly<Record<Dialect, DialectErrors>> = {
  alignbase: alignbase.errors,
  atmina: atminaProduct.errors,
  brain: brain.errors,
};

/** The access gates of the dialects whose tools declare a minimum role. */
export const accessGates: Readonly<Partial<Record<Dialect, AccessGate>>> = Object.fromEntries(
  products.flatMap((product) => (product.gate === undefined ? [] : [[product.dialect, product.gate]])),
);

/** The rate limiters the tools name (ToolDef.rateLimit). */
export const rateLimiters: readonly RateLimiterDef[] = products.flatMap((product) => product.limiters ?? []);

/** The products' inbox sources for the web console, in the products' order. */
export const consoleInbox: readonly InboxSource[] = products.flatMap((product) => (product.console?.inbox === undefined ? [] : [product.console.inbox]));

/** The products' console sections (Knowledge Bases, the graph …), in the products' order, administrative ones last. */
export const consoleSections: readonly ConsoleSection[] = products
  .flatMap((product) => product.console?.sections ?? [])
  .sort((a, b) => Number(a.administrative === true) - Number(b.administrative === true));

/** What the products do when a person signs in. */
export const signInHooks: readonly SignInHook[] = products.flatMap((product) => product.onSignIn ?? []);

/**
 * Every scope the products declare: what tokens, OAuth clients and grants may hold. A client
 * that registers without naming scopes gets Alignbase's defaults, as it always has.
 */
export const scopeCatalogue = new ScopeCatalogue(
  products.flatMap((product) => product.scopes.declared),
  alignbase.scopes.defaults,
);

const names = (defs: readonly ScopeDef[]): Scope[] => defs.map((def) => def.name);

/** The scopes of the given lists in the catalogue's order, each once. */
const scopesOf = (lists: readonly (readonly Scope[])[]): Scope[] => scopeCatalogue.all.filter((scope) => lists.some((list) => list.includes(scope)));

/** /mcp: every product's guidance, each under the name its tools go by there. */
const COMBINED_GUIDANCE = [
  'This endpoint serves three sets of tools. Follow the guidance of the set a tool belongs to.',
  ...products.map((product) => `## ${product.guidanceHeading}\n\n${product.guidance}`),
].join('\n\n');

/**
 * The MCP endpoints: /mcp, the gateway's own, serving every product (its 401 names the gateway's
 * token in the words Company Brain's spec uses for its own: docs/decisions.md), then one per
 * product, as its original service names itself and with its spec's guidance.
 */
export function mcpEndpoints(version: string): Endpoint[] {
  return [
    {
      path: '/mcp',
      dialects: products.map((product) => product.dialect),
      serverInfo: { name: 'knowledge-gateway', title: 'Knowledge Gateway', version },
      instructions: COMBINED_GUIDANCE,
      scopes: scopesOf(products.map((product) => names(product.scopes.declared))),
      defaultScopes: scopesOf(products.map((product) => product.scopes.defaults)),
      unauthorizedText: 'Unauthorized: the request is missing a valid Knowledge Gateway token.',
    },
    ...products.map(({ dialect, endpoint, guidance, scopes }): Endpoint => {
      const { path, name, title, unauthorizedText } = endpoint;
      return {
        path,
        dialects: [dialect],
        serverInfo: { name, title, version: endpoint.version ?? version },
        instructions: guidance,
        scopes: scopesOf([names(scopes.declared)]),
        defaultScopes: scopesOf([scopes.defaults]),
        ...(unauthorizedText === undefined ? {} : { unauthorizedText }),
      };
    }),
  ];
}

/** The endpoint for connections without credentials, and the product endpoint whose tool it offers, if a product has one. */
export function anonymousOffer(endpoints: readonly Endpoint[]): { offer: AnonymousOffer; endpoint: Endpoint } | undefined {
  for (const product of products) {
    const endpoint = endpoints.find((candidate) => candidate.path === product.endpoint.path);
    if (product.anonymous !== undefined && endpoint !== undefined) return { offer: product.anonymous, endpoint };
  }
  return undefined;
}
