import type { Caller } from '../access/caller.ts';
import type { Queryable } from '../../store/db.ts';
import type { AuditEntry, AuditEvent, AuditLog } from './audit-log.ts';

type Base = Omit<AuditEvent, 'tenantId' | 'action' | 'result' | 'errorCode' | 'resources' | 'details'>;

/** Who an event of a trail outside MCP is about: its tenant and, when known, the person acting. */
export interface TrailSubject {
  readonly tenantId: string;
  readonly principalId?: string | undefined;
}

/**
 * The audit record of one tool call, or of one write outside MCP (the CLI, the org file, OAuth).
 * A read notes what it returned with `touch`; a write records its event inside its own
 * transaction with `recordIn`, and may record more than one. `finish` then writes a tool call's
 * event unless a write already did, and always writes a failure. Every event goes through the
 * trail's one append (#appendIn), so each carries the trail's surface, caller and request.
 */
export class AuditTrail {
  readonly #log: AuditLog;
  readonly #base: Base;
  /** The tenant every event names: the caller's for a tool call; a trail outside MCP learns it with `about`. */
  readonly #tenantId: string | undefined;
  readonly #resources: AuditEntry[] = [];
  #recorded = false;
  #action = 'tool_call';
  #details: Record<string, unknown> | undefined;

  private constructor(log: AuditLog, base: Base, tenantId: string | undefined) {
    this.#log = log;
    this.#base = base;
    this.#tenantId = tenantId;
  }

  static forTool(log: AuditLog, caller: Caller, tool: { name: string; dialect: string }, requestId: string): AuditTrail {
    return new AuditTrail(
      log,
      { surface: 'mcp', principalId: caller.principal.id, tokenId: caller.tokenId, requestId, dialect: tool.dialect, tool: tool.name },
      caller.tenant.id,
    );
  }

  /**
   * The trail of an anonymous connection's tool call (src/mcp/anonymous.ts): MCP, the tenant it
   * connected to, and no principal or token, since there is none.
   */
  static forAnonymous(log: AuditLog, tenantId: string, tool: { name: string; dialect: string }, requestId: string): AuditTrail {
    return new AuditTrail(log, { surface: 'mcp', requestId, dialect: tool.dialect, tool: tool.name }, tenantId);
  }

  /** A trail for a write outside MCP; it names its tenant (and who acts) with `about` once the write knows them. */
  static forSurface(log: AuditLog, surface: 'cli' | 'oauth' | 'console'): AuditTrail {
    return new AuditTrail(log, { surface }, undefined);
  }

  /** This trail's events about a tenant (and, when given, by a person of it). */
  about(subject: TrailSubject): AuditTrail {
    return new AuditTrail(this.#log, { ...this.#base, principalId: subject.principalId ?? this.#base.principalId }, subject.tenantId);
  }

  /** Names what a read did (default `tool_call`), e.g. `context.request`. */
  readAs(action: string): void {
    this.#action = action;
  }

  touch(...resources: AuditEntry[]): void {
    this.#resources.push(...resources);
  }

  /** Details of a read's own event, recorded when the call finishes (a search's query text). */
  detail(details: Record<string, unknown>): void {
    this.#details = { ...this.#details, ...details };
  }

  /**
   * Records a write's event inside its transaction: the call's event, so `finish` writes no other.
   * What the call touched before goes into the first event recorded.
   */
  async recordIn(tx: Queryable, action: string, resources: readonly AuditEntry[], details?: Record<string, unknown>): Promise<void> {
    await this.#appendIn(tx, action, [...this.#resources.splice(0), ...resources], details);
    this.#recorded = true;
  }

  /**
   * Records an event of its own inside `tx`, beside the call's: it takes none of the touched
   * resources, and `finish` still writes the call's event (e.g. a hook session's start beside
   * the context request of its call).
   */
  async recordBesideIn(tx: Queryable, action: string, resources: readonly AuditEntry[], details?: Record<string, unknown>): Promise<void> {
    await this.#appendIn(tx, action, resources, details);
  }

  async finish(outcome: { readonly ok: true } | { readonly ok: false; readonly errorCode: string }): Promise<void> {
    if (outcome.ok && this.#recorded) return;
    await this.#log.append({
      ...this.#base,
      tenantId: this.#requireTenant(),
      action: outcome.ok ? this.#action : 'tool_call',
      result: outcome.ok ? 'ok' : 'error',
      errorCode: outcome.ok ? undefined : outcome.errorCode,
      resources: this.#resources,
      ...(this.#details === undefined ? {} : { details: this.#details }),
    });
  }

  async #appendIn(tx: Queryable, action: string, resources: readonly AuditEntry[], details: Record<string, unknown> | undefined): Promise<void> {
    await this.#log.appendIn(tx, { ...this.#base, tenantId: this.#requireTenant(), action, result: 'ok', resources, details });
  }

  #requireTenant(): string {
    // A programming error, not a refusal: a trail outside MCP must be told its tenant first.
    if (this.#tenantId === undefined) throw new Error('audit trail: no tenant; call about() first');
    return this.#tenantId;
  }
}
