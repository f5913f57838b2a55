/** One query interface over real PostgreSQL (`pg`) and PGlite: the same SQL runs on both. */
export interface Queryable {
  /** Runs one parameterised statement and returns its rows. */
  query<R = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<R[]>;
}

export interface Transaction extends Queryable {
  /** Runs a script of several statements (no parameters); used by migrations. */
  exec(script: string): Promise<void>;
}

export interface Db extends Queryable {
  readonly kind: 'postgres' | 'pglite';
  // `query` on the Db itself runs read-only statements only; every write goes through `tx`.
  /** Runs `work` in one transaction, committed when it resolves and rolled back when it throws. */
  tx<T>(work: (tx: Transaction) => Promise<T>): Promise<T>;
  close(): Promise<void>;
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
