import type { Caller } from '../access/caller.ts';
import type { Queryable } from '../../store/db.ts';
import type { AuditEvent, AuditLog, AuditResource } from './audit-log.ts';

type Base = Omit<AuditEvent, 'action' | 'result' | 'errorCode' | 'resources' | 'details'>;

/**
 * The audit record of one tool call. A read notes what it returned with `touch`; a write
 * records its event inside its own transaction with `recordIn`. `finish` then writes the
 * call's event unless the write already did, and always writes a failure.
 */
export class AuditTrail {
  readonly #log: AuditLog;
  readonly #base: Base;
  readonly #resources: AuditResource[] = [];
  #recorded = false;
  #action = 'tool_call';

  constructor(log: AuditLog, base: Base) {
    this.#log = log;
    this.#base = base;
  }

  static forTool(log: AuditLog, caller: Caller, tool: { name: string; dialect: string }, requestId: string): AuditTrail {
    return new AuditTrail(log, {
      tenantId: caller.tenant.id,
      surface: 'mcp',
      principalId: caller.principal.id,
      tokenId: caller.tokenId,
      requestId,
      dialect: tool.dialect,
      tool: tool.name,
    });
  }

  /** Names what a read did (default `tool_call`), e.g. `context.request`. */
  readAs(action: string): void {
    this.#action = action;
  }

  touch(...resources: AuditResource[]): void {
    this.#resources.push(...resources);
  }

  async recordIn(tx: Queryable, action: string, resources: readonly AuditResource[], details?: Record<string, unknown>): Promise<void> {
    await this.#log.appendIn(tx, { ...this.#base, action, result: 'ok', resources: [...this.#resources, ...resources], details });
    this.#recorded = true;
  }

  async finish(outcome: { readonly ok: true } | { readonly ok: false; readonly errorCode: string }): Promise<void> {
    if (outcome.ok && this.#recorded) return;
    await this.#log.append({
      ...this.#base,
      action: outcome.ok ? this.#action : 'tool_call',
      result: outcome.ok ? 'ok' : 'error',
      errorCode: outcome.ok ? undefined : outcome.errorCode,
      resources: this.#resources,
    });
  }
}
