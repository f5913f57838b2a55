/** One query interface over real PostgreSQL (`pg`) and PGlite: the same SQL runs on both. */
export interface Queryable {
  /** Runs one parameterised statement and returns its rows. */
  query<R = Record<string, unknown>>(sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<R[]>;
}

export interface QueryOptions {
  /**
   * A name (unique to this statement's text) under which PostgreSQL keeps the statement parsed
   * on each connection and, after a few runs, planned once: for statements run on most
   * requests whose planning costs more than running them (the caller's standing took 1 to 3 ms
   * to plan and well under 1 to run) and whose best plan does not depend on the values. PGlite
   * PREPAREs it once in SQL and runs it by EXECUTE (src/store/pglite.ts).
   */
  readonly prepare?: string;
  /**
   * The rows may travel as one JSON value. PGlite pays for each value a statement returns (a
   * protocol message per row, decoded a value at a time in JavaScript): a list's 1,000 rows of
   * 12 columns took 12.5–13.4 ms as rows and 8.8–10.5 as one JSON array the database built.
   * So PGlite reads the statement as `SELECT json_agg(packed_row) FROM (statement) packed_row`,
   * which aggregates in the statement's order, and parses its rows from that; PostgreSQL returns
   * rows, as building the JSON cost it more than it saved (13–15 ms against 9–11). Only for
   * statements whose every column reads alike both ways: text, uuid, int4, boolean, dates cast
   * to text, and timestamps, which come as a Date or as ISO 8601 text (`instantOf` takes both).
   */
  readonly packed?: boolean;
}

export interface Transaction extends Queryable {
  /** Runs a script of several statements (no parameters); used by migrations. */
  exec(script: string): Promise<void>;
  /**
   * Tells the listeners of `channel` once this transaction commits, and nobody when it rolls
   * back: this process's listeners right after the commit, and on PostgreSQL every other
   * process's through NOTIFY (delivered at commit). Signalling a channel twice in one
   * transaction tells once.
   */
  signal(channel: string): Promise<void>;
  /**
   * Like `signal`, for a hint whose listeners also poll (the outbox workers): other processes
   * hear it through a NOTIFY sent after the commit, outside the transaction, and coalesced (see
   * `Wakes`). A wake is lost if the process stops between its commit and the NOTIFY, and `hears`
   * does not promise it. Why not `signal`: a NOTIFY inside a transaction takes PostgreSQL's one
   * notification lock at commit and holds it through the commit's WAL flush, so every writer
   * that signals commits one after the other (20 writers on the test machine: 3,800
   * transactions/s with the NOTIFY inside, 8,300 with it coalesced after the commit, 8,500 with
   * none; docs/decisions.md).
   */
  wake(channel: string): void;
}

export interface Db extends Queryable {
  readonly kind: 'postgres' | 'pglite';
  // `query` on the Db itself runs read-only statements only; every write goes through `tx` (or,
  // for a lone append, `write`).
  /** Runs `work` in one transaction, committed when it resolves and rolled back when it throws. */
  tx<T>(work: (tx: Transaction) => Promise<T>): Promise<T>;
  /**
   * Runs one statement that writes as a transaction of its own: PostgreSQL commits a lone
   * statement by itself, all of it or nothing, without the two round trips BEGIN and COMMIT
   * cost. Only for a write that reads nothing first and signals nobody (the audit log's batched
   * appends); whatever reads and then writes, or writes twice, goes through `tx`.
   */
  write<R = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<R[]>;
  /**
   * Calls `listener` after every commit of a transaction that signalled or woke `channel` (or raised a
   * NOTIFY on it in SQL, as a trigger does), in this process or (on PostgreSQL, through LISTEN)
   * another one on the same database; returns the
   * unsubscribe. Delivery across processes is best effort (a lost connection is re-opened
   * after a pause, and signals in between are missed), so a listener still polls.
   */
  listen(channel: string, listener: () => void): () => void;
  /**
   * Whether every commit that signals `channel` (through `signal`, or PostgreSQL's own NOTIFY, as
   * a trigger raises it) reaches this process's listeners now: false before a listener's
   * subscription is in place and while a lost LISTEN connection is being replaced. Whoever keeps
   * something in memory on the strength of the signals (the token cache) keeps it only while
   * this holds; losing it also calls every listener once, as signals may have been missed.
   */
  hears(channel: string): boolean;
  /** The connection pool's figures (PostgreSQL; an embedded store has no pool). */
  poolStats?(): PoolStats;
  close(): Promise<void>;
}

export interface PoolStats {
  /** Connections open, idle among them, and queries waiting for one. */
  readonly total: number;
  readonly idle: number;
  readonly waiting: number;
  readonly max: number;
}

/**
 * The text of each statement name in use (QueryOptions.prepare): a name stands for one statement,
 * and a second text under it is refused rather than answered by the first (`pg` would, silently).
 */
export class StatementNames {
  readonly #texts = new Map<string, string>();

  /** Records `name` for `sql`, or throws when it already stands for another statement. */
  claim(name: string, sql: string): void {
    const known = this.#texts.get(name);
    if (known === undefined) this.#texts.set(name, sql);
    else if (known !== sql) throw new Error(`statement name "${name}" is used for two statements`);
  }
}

/** A channel name: a plain lower-case identifier, so it can be written into LISTEN unquoted. */
const CHANNEL = /^[a-z_][a-z0-9_]{0,62}$/;

export function assertChannel(channel: string): void {
  if (!CHANNEL.test(channel)) throw new Error(`not a signal channel name: ${JSON.stringify(channel)}`);
}

/**
 * The NOTIFYs of `Transaction.wake`, sent after the commits, at most one per channel at a time:
 * a wake that arrives while its channel's NOTIFY is being sent asks for one more after it, which
 * then covers every commit that came meanwhile. So each commit is followed by a NOTIFY sent
 * after it, however many writers commit at once, and a busy process sends a few hundred a second
 * rather than one per write. A NOTIFY that fails is dropped: the listeners poll.
 */
export class Wakes {
  readonly #send: (channel: string) => Promise<unknown>;
  /** Channels whose NOTIFY is being sent, and whether another was asked for meanwhile. */
  readonly #sending = new Map<string, boolean>();
  readonly #inFlight = new Set<Promise<void>>();
  #closed = false;

  constructor(send: (channel: string) => Promise<unknown>) {
    this.#send = send;
  }

  wake(channel: string): void {
    if (this.#closed) return;
    if (this.#sending.has(channel)) {
      this.#sending.set(channel, true);
      return;
    }
    this.#sending.set(channel, false);
    const sent: Promise<void> = this.#send(channel).then(
      () => undefined,
      () => undefined,
    );
    this.#inFlight.add(sent);
    void sent.then(() => {
      this.#inFlight.delete(sent);
      const again = this.#sending.get(channel) === true;
      this.#sending.delete(channel);
      if (again) this.wake(channel);
    });
  }

  /** Sends nothing more, and settles once the NOTIFYs under way have. */
  async close(): Promise<void> {
    this.#closed = true;
    while (this.#inFlight.size > 0) await Promise.all(this.#inFlight);
  }
}

/** This process's listeners of each channel, for one Db. */
export class CommitListeners {
  readonly #byChannel = new Map<string, Set<() => void>>();

  /** Adds a listener; returns the unsubscribe and whether it was the channel's first. */
  add(channel: string, listener: () => void): { first: boolean; remove: () => boolean } {
    assertChannel(channel);
    const set = this.#byChannel.get(channel) ?? new Set();
    const first = set.size === 0;
    // Wrapped, so the same function added twice is two subscriptions.
    const entry = () => listener();
    set.add(entry);
    this.#byChannel.set(channel, set);
    return {
      first,
      /** Whether that was the channel's last listener. */
      remove: () => {
        set.delete(entry);
        if (set.size > 0) return false;
        this.#byChannel.delete(channel);
        return true;
      },
    };
  }

  get channels(): string[] {
    return [...this.#byChannel.keys()];
  }

  /** Calls the channel's listeners; one that throws does not keep the others from hearing. */
  emit(channel: string): void {
    for (const listener of [...(this.#byChannel.get(channel) ?? [])]) {
      try {
        listener();
      } catch {
        // A listener's failure is its own business; the commit it heard of stands.
      }
    }
  }
}

const READ_ONLY = /^\s*(?:select|with|show|explain|values)\b/i;
const DATA_CHANGE = /\b(?:insert|update|delete|merge|truncate|create|alter|drop|grant|revoke)\b/i;

/** Guards `Db.query`: a statement that could change data must run inside `tx`. */
/** `($1, $2), ($3, $4)`: the numbered parameters of a multi-row VALUES list of `rows` rows of `width` columns. */
export function valuesList(rows: number, width: number): string {
  return Array.from({ length: rows }, (_, row) => `(${Array.from({ length: width }, (_, col) => `$${row * width + col + 1}`).join(', ')})`).join(', ');
}

export function assertReadOnly(sql: string): void {
  const body = sql.replace(/'(?:[^']|'')*'/g, "''");
  if (!READ_ONLY.test(body) || (/^\s*with\b/i.test(body) && DATA_CHANGE.test(body))) {
    throw new Error('Db.query only runs read-only statements; use Db.tx for writes');
  }
}

/** Postgres error codes worth retrying the whole transaction for. */
const RETRYABLE = new Set(['40001', '40P01']);

export function isRetryable(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && RETRYABLE.has(String(error.code));
}

export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  if (typeof error !== 'object' || error === null || !('code' in error) || error.code !== '23505') return false;
  return constraint === undefined || (error as { constraint?: unknown }).constraint === constraint;
}
