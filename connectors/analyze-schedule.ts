import type { Db, Queryable } from '../src/store/db.ts';

/** Rows written (PGlite) before a connector's tables are first analysed (README, Hardening). */
export const ANALYZE_AFTER_MIN = 1_000;

/**
 * PGlite runs no autovacuum, so nothing else ever gives its planner a connector's table
 * statistics: without them it plans a table of thousands of rows as if it held one. A question
 * of the built-in search at 10 k files planned its postings as if tiny (p50 438 ms against
 * 125 ms once analysed); the graph's visible-graph read at 5,000 nodes and 20,000 relations
 * became a cross join (110 s against 0.34 s). So, as autovacuum's analyse threshold does on
 * PostgreSQL, the tables are analysed after ANALYZE_AFTER_MIN rows were written, and then after
 * a tenth of the rows `sizeTable` holds. ANALYZE samples a bounded number of rows (about 30,000
 * per table), so its cost does not grow with the data. On PostgreSQL it does nothing:
 * autovacuum does it there.
 */
export class AnalyzeSchedule {
  readonly #db: Db;
  readonly #tables: readonly string[];
  readonly #sizeTable: string;
  /** Rows written since this process last analysed the tables, and how many call for the next. */
  #written = 0;
  #after = ANALYZE_AFTER_MIN;

  /** `tables`: analysed together; `sizeTable`: the one whose size sets the next threshold. Names are the connector's own constants. */
  constructor(db: Db, tables: readonly string[], sizeTable: string) {
    this.#db = db;
    this.#tables = tables;
    this.#sizeTable = sizeTable;
  }

  /** Counts `written` rows, and analyses the tables in `tx` when due. */
  async wrote(tx: Queryable, written: number): Promise<void> {
    if (this.#db.kind !== 'pglite') return;
    this.#written += written;
    if (this.#written < this.#after) return;
    await tx.query(`ANALYZE ${this.#tables.join(', ')}`);
    const [row] = await tx.query<{ rows: number }>('SELECT greatest(reltuples, 0)::float8 AS rows FROM pg_class WHERE relname = $1', [this.#sizeTable]);
    this.#written = 0;
    this.#after = Math.max(ANALYZE_AFTER_MIN, Math.round(Number(row?.rows ?? 0) * 0.1));
  }
}
