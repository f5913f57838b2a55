import { validation } from '../errors.ts';

/**
 * The OAuth scopes the gateway understands. Each product adds those its tools need from its
 * index.ts (`declare module '…/kernel/access/scopes.ts' { interface ScopeNames { 'brain:read': true } }`),
 * as it adds its error reasons, so the kernel names none and a tool needing a scope no product
 * declares does not compile.
 */
// An interface, not a type, so that products can merge their scopes into it.
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface ScopeNames {}
export type Scope = Extract<keyof ScopeNames, string>;

/** A scope as a product declares it (Product.scopes in src/mcp/product.ts). */
export interface ScopeDef {
  readonly name: Scope;
  /** What it lets a client do, as the sign-in's consent page shows it. */
  readonly description: string;
  /** Other names accepted for it: a product's legacy names its clients may still send. */
  readonly aliases?: readonly string[];
  /** Scopes that come with it: asking for write alone means read and write. */
  readonly implies?: readonly Scope[];
}

/**
 * Every scope the products declare, in their order: what tokens, OAuth clients and grants may
 * hold. Two products may declare the same scope (Alignbase and Atmina both read and write with
 * `context.*`): it is one scope, its aliases and implications joined, its description the first
 * product's.
 */
export class ScopeCatalogue {
  readonly all: readonly Scope[];
  /** What a client that registers without naming scopes may ask for. */
  readonly registrationDefaults: readonly Scope[];
  readonly #descriptions = new Map<Scope, string>();
  readonly #aliases = new Map<string, Scope>();
  readonly #implies = new Map<Scope, Set<Scope>>();

  constructor(defs: readonly ScopeDef[], registrationDefaults: readonly Scope[]) {
    for (const def of defs) {
      if (!this.#descriptions.has(def.name)) this.#descriptions.set(def.name, def.description);
      for (const alias of def.aliases ?? []) {
        const taken = this.#aliases.get(alias);
        if (taken !== undefined && taken !== def.name) throw new Error(`scope alias "${alias}" is declared for both ${taken} and ${def.name}`);
        this.#aliases.set(alias, def.name);
      }
      const implied = this.#implies.get(def.name) ?? new Set<Scope>();
      for (const scope of def.implies ?? []) implied.add(scope);
      this.#implies.set(def.name, implied);
    }
    this.all = [...this.#descriptions.keys()];
    const undeclared = [...this.#implies.values()]
      .flatMap((set) => [...set])
      .concat(registrationDefaults)
      .find((scope) => !this.#descriptions.has(scope));
    if (undeclared !== undefined) throw new Error(`scope ${undeclared} is named but declared by no product`);
    this.registrationDefaults = this.normalize(registrationDefaults);
  }

  has(value: string): value is Scope {
    return this.#descriptions.has(value as Scope);
  }

  /** What the scope lets a client do, in the consent page's words. */
  describe(scope: Scope): string {
    return this.#descriptions.get(scope) ?? scope;
  }

  /**
   * Turns requested scope names (space or comma separated, or a list) into the canonical set in
   * the catalogue's order: aliases resolved, implied scopes added, unknown names refused.
   */
  normalize(requested: string | readonly string[]): Scope[] {
    const names = (typeof requested === 'string' ? requested.split(/[\s,]+/) : requested).map((s) => s.trim()).filter((s) => s !== '');
    if (names.length === 0) throw validation('at least one scope is required');
    const result = new Set<Scope>();
    for (const name of names) {
      const scope = this.#aliases.get(name) ?? (this.has(name) ? name : undefined);
      if (scope === undefined) throw validation(`unknown scope "${name}"; known scopes: ${this.all.join(', ')}`);
      result.add(scope);
      for (const implied of this.#implies.get(scope) ?? []) result.add(implied);
    }
    return this.all.filter((scope) => result.has(scope));
  }
}
