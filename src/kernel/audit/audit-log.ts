import { randomUUID } from 'node:crypto';
import type { Db, Queryable } from '../../store/db.ts';
import { valuesList } from '../../store/db.ts';

/** A resource an event touched, by identifier and version only; never its content. */
export interface AuditResource {
  readonly type: string;
  readonly id: string;
  readonly version?: number;
  readonly version_id?: string;
  readonly before_version?: number | null;
  readonly after_version?: number | null;
  readonly changed?: boolean;
}

/**
 * Resources of one type a read touched, by id and version, in the order it touched them: the
 * `ids` and `versions` side by side. A list or a context bundle names each item it showed, and
 * one entry per item repeated its type and keys: at 1,000 items 129 KB of JSON, which PGlite
 * took 7.3–8.2 ms to store, against 41 KB and 2.9–3.4 ms as a group (docs/decisions.md,
 * "Audit resources in groups").
 */
export interface AuditResourceGroup {
  readonly type: string;
  readonly ids: readonly string[];
  readonly versions: readonly number[];
}

/** What an event's `resources` holds: single resources and groups. */
export type AuditEntry = AuditResource | AuditResourceGroup;

/** The group of `items` of `type`; none for no items (an event names what it touched). */
export const auditGroup = (type: string, items: readonly { readonly id: string; readonly version: number }[]): AuditResourceGroup[] =>
  items.length === 0 ? [] : [{ type, ids: items.map((item) => item.id), versions: items.map((item) => item.version) }];

/** The single resources among `entries` (a group names no single resource). */
export const singleResources = (entries: readonly AuditEntry[]): AuditResource[] => entries.filter((entry): entry is AuditResource => 'id' in entry);

export interface AuditEvent {
  readonly tenantId: string;
  readonly surface: 'mcp' | 'cli' | 'oauth' | 'console';
  readonly principalId?: string | undefined;
  readonly tokenId?: string | undefined;
  readonly requestId?: string | undefined;
  readonly dialect?: string | undefined;
  readonly tool?: string | undefined;
  readonly action: string;
  readonly result: 'ok' | 'error';
  readonly errorCode?: string | undefined;
  readonly resources?: readonly AuditEntry[];
  readonly details?: Readonly<Record<string, unknown>>;
}

const COLUMNS = 'tenant_id, id, surface, principal_id, token_id, request_id, dialect, tool, action, result, error_code, resources, details';
const WIDTH = 13;

function values(event: AuditEvent): unknown[] {
  return [
    event.tenantId,
    randomUUID(),
    event.surface,
    event.principalId ?? null,
    event.tokenId ?? null,
    event.requestId ?? null,
    event.dialect ?? null,
    event.tool ?? null,
    event.action,
    event.result,
    event.errorCode ?? null,
    JSON.stringify(event.resources ?? []),
    JSON.stringify(event.details ?? {}),
  ];
}

function insertSql(count: number): string {
  return `INSERT INTO audit_events (${COLUMNS}) VALUES ${valuesList(count, WIDTH)}`;
}

interface Pending {
  readonly event: AuditEvent;
  resolve(): void;
  reject(error: unknown): void;
}

const MAX_BATCH = 200;

/**
 * The append-only audit log. A write records its event with `appendIn` inside its own
 * transaction, so the event exists exactly when the change does. Other events (reads, refusals,
 * failures) go through `append`, which group-commits: events arriving together are inserted by
 * one statement (one round trip), and each caller is answered only once its event is stored.
 */
export class AuditLog {
  readonly #db: Db;
  #queue: Pending[] = [];
  /** Whether a batch is being stored: events arriving meanwhile wait for it and go in the next one. */
  #flushing = false;

  constructor(db: Db) {
    this.#db = db;
  }

  async appendIn(tx: Queryable, event: AuditEvent): Promise<void> {
    await tx.query(insertSql(1), values(event));
  }

  append(event: AuditEvent): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ event, resolve, reject });
      if (!this.#flushing) {
        this.#flushing = true;
        setImmediate(() => void this.#flush());
      }
    });
  }

  /**
   * Stores what is queued, one batch at a time: while one is stored (a commit, the store's
   * flush to disk) the events of the calls answered meanwhile gather for the next, so under load
   * a commit carries many events instead of each call paying for its own, and an idle log
   * stores an event on the next turn of the event loop.
   */
  async #flush(): Promise<void> {
    while (this.#queue.length > 0) {
      const batch = this.#queue.splice(0, MAX_BATCH);
      try {
        // One statement, its own transaction: the batch is stored whole or not at all.
        await this.#db.write(
          insertSql(batch.length),
          batch.flatMap((p) => values(p.event)),
        );
        for (const pending of batch) pending.resolve();
      } catch (error) {
        for (const pending of batch) pending.reject(error);
      }
    }
    this.#flushing = false;
  }
}
