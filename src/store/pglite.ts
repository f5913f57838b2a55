import { mkdir } from 'node:fs/promises';
import { PGlite, protocol } from '@electric-sql/pglite';
import type { Db, QueryOptions, Transaction } from './db.ts';
import { assertChannel, assertReadOnly, CommitListeners, StatementNames } from './db.ts';
import { PRIVATE_DIR_MODE, securePrivateTree } from './private-dir.ts';

const NUMBER_TYPES = { 20: (value: string) => Number(value), 1700: (value: string) => Number(value) };

/** What PGlite's protocol reader (not exported) offers; `bytes` copies the next bytes of the message. */
interface ProtocolReader {
  string(length: number): string;
  cstring(): string;
  bytes(length: number): ArrayBuffer | Uint8Array;
}

function isProtocolReader(value: unknown): value is ProtocolReader {
  if (typeof value !== 'object' || value === null) return false;
  const reader = value as Record<string, unknown>;
  return typeof reader.string === 'function' && typeof reader.cstring === 'function' && typeof reader.bytes === 'function';
}

/** The fields of one DataRow message that PGlite's protocol parser reads from `fields`. */
function parsedRow(fields: readonly string[]): unknown[] {
  const encoded = fields.map((field) => Buffer.from(field, 'utf8'));
  const body = Buffer.alloc(2 + encoded.reduce((sum, field) => sum + 4 + field.length, 0));
  let at = body.writeInt16BE(encoded.length, 0);
  for (const field of encoded) {
    at = body.writeInt32BE(field.length, at);
    at += field.copy(body, at);
  }
  const message = Buffer.concat([Buffer.from('D'), Buffer.alloc(4), body]);
  message.writeInt32BE(4 + body.length, 1);
  let row: unknown[] = [];
  new protocol.Parser().parse(message, (parsed) => {
    if ('fields' in parsed && Array.isArray(parsed.fields)) row = parsed.fields;
  });
  return row;
}

/**
 * A named statement (QueryOptions.prepare) on PGlite: its protocol layer parses and plans every
 * statement anew (a join of three tables cost 0.65 ms to plan against 0.1 ms to run), and it has
 * no named statements of its own, so the statement is PREPAREd once in SQL and run by EXECUTE,
 * which PostgreSQL plans once for all after a few runs. EXECUTE takes its arguments as literals
 * (a utility statement has no bound parameters): strings, finite numbers and booleans quoted as
 * the server reads them (standard_conforming_strings is on), and null; anything else runs the
 * statement as it is. The name must be a plain identifier; the prefix keeps ours apart.
 */
function preparedName(name: string): string {
  if (!/^[a-z_][a-z0-9_]{0,50}$/.test(name)) throw new Error(`not a statement name: ${JSON.stringify(name)}`);
  return `kgw_p_${name}`;
}

function sqlLiterals(params: readonly unknown[]): string[] | undefined {
  const literals: string[] = [];
  for (const value of params) {
    const text =
      typeof value === 'string' ? value : typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value)) ? String(value) : undefined;
    if (value === null || value === undefined) literals.push('NULL');
    // Quoted, so the parameter's own type reads it (an untyped literal); a NUL cannot be in a
    // PostgreSQL string, so a value with one runs as a plain query, which refuses it as always.
    else if (text !== undefined && !text.includes('\0')) literals.push(`'${text.replaceAll("'", "''")}'`);
    else return undefined;
  }
  return literals;
}

/**
 * PGlite decodes every text value of a result with `new TextDecoder('utf-8')`, which by the
 * Encoding standard removes a leading U+FEFF: a Knowledge, Memory or draft whose content starts
 * with a byte order mark came back without it on the embedded store only (node-postgres keeps
 * it), although content is kept byte for byte. The reader is internal to PGlite's protocol
 * parser, so its decoding is replaced here, once per process, with a decoder that keeps the mark
 * (its prototype is found through the private-field store the parser's constructor writes it
 * to). A PGlite whose parser no longer looks like this fails the check below at start instead
 * of silently dropping bytes again.
 */
function keepByteOrderMarks(): void {
  // The private fields the parser's constructor writes, as (field store, instance, value).
  const created: { store: WeakMap<object, unknown>; key: unknown; value: unknown }[] = [];
  const set = WeakMap.prototype.set; // eslint-disable-line @typescript-eslint/unbound-method
  WeakMap.prototype.set = function <K extends WeakKey, V>(this: WeakMap<K, V>, key: K, value: V): WeakMap<K, V> {
    created.push({ store: this as unknown as WeakMap<object, unknown>, key, value });
    return set.call(this, key, value) as WeakMap<K, V>;
  };
  try {
    new protocol.Parser();
  } finally {
    WeakMap.prototype.set = set;
  }
  const reader = created.map((field) => field.value).find(isProtocolReader);
  if (reader !== undefined) {
    const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
    const prototype = Object.getPrototypeOf(reader) as ProtocolReader;
    // The reader's own `string` copies each value's bytes into a new buffer before decoding
    // (`bytes`): a sixth of a 1,000-row list's time. Its buffer (a DataView over the whole
    // message) and its offset are found among its private fields, so a value is decoded from a
    // view of the bytes in place; when they are not found, from the copy, as PGlite does.
    const own = created.filter((field) => field.key === reader);
    const views = own.find((field) => field.value instanceof DataView)?.store as WeakMap<object, DataView> | undefined;
    const offsets = [...new Set(own.filter((field) => typeof field.value === 'number').map((field) => field.store))];
    const at = offsets.length === 1 ? (offsets[0] as WeakMap<object, number>) : undefined;
    prototype.string = function (this: ProtocolReader, length: number): string {
      const view = views?.get(this);
      const offset = at?.get(this);
      if (view === undefined || offset === undefined) return decoder.decode(this.bytes(length));
      at?.set(this, offset + length);
      return decoder.decode(new Uint8Array(view.buffer, offset, length));
    };
  }
  const sample = ['\uFEFFkept', 'ä\uFEFF', '', 'plain', '𝄞 ü \u202e'];
  const row = parsedRow(sample);
  if (row.length !== sample.length || row.some((field, i) => field !== sample[i]))
    throw new Error('This PGlite build drops a leading U+FEFF from text values and the gateway could not keep it (src/store/pglite.ts)');
}

keepByteOrderMarks();

/** The one row of a packed statement (QueryOptions.packed): its rows as JSON text, null for none. */
interface PackedRow {
  readonly rows: string | null;
}

/**
 * A statement read as one JSON array of its rows, in its order (QueryOptions.packed). Given its
 * columns (a named statement, described once when it is PREPAREd), each row is an array of its
 * values, which PostgreSQL builds and JavaScript parses faster than an object naming each column
 * in every row (`get_current_context`'s statement at 1,000 items: 9.5 → 7.5 ms on PGlite,
 * 7 December); otherwise, or past json_build_array's 100 arguments, an object per row.
 */
function packedStatement(sql: string, columns: readonly string[] | undefined): string {
  if (columns === undefined) return `SELECT json_agg(packed_row)::text AS rows FROM (${sql}) packed_row`;
  const values = columns.map((column) => `packed_row."${column.replaceAll('"', '""')}"`).join(', ');
  return `SELECT json_agg(json_build_array(${values}))::text AS rows FROM (${sql}) packed_row`;
}

/** The columns a named statement's rows are packed by as arrays: undefined (objects) for none or past json_build_array's 100 arguments. */
const arrayColumns = (names: readonly string[]): readonly string[] | undefined => (names.length === 0 || names.length > 100 ? undefined : names);

/** The rows a statement returned, unpacked from its JSON when it was packed (as arrays when `columns` name them). */
function rowsOf<R>(rows: readonly (R | PackedRow)[], packed: boolean, columns?: readonly string[]): R[] {
  if (!packed) return rows as R[];
  const text = (rows[0] as PackedRow | undefined)?.rows ?? null;
  if (text === null) return [];
  if (columns === undefined) return JSON.parse(text) as R[];
  return (JSON.parse(text) as unknown[][]).map((values) => {
    const row: Record<string, unknown> = {};
    for (let i = 0; i < columns.length; i++) row[columns[i] as string] = values[i];
    return row as R;
  });
}

export interface PgliteOptions {
  /**
   * A dump of a database (`dumpPglite`) to start from instead of an empty one: PGlite's initdb
   * takes seconds, unpacking a dump a fraction of that (the test suites open hundreds of stores).
   */
  readonly from?: Blob;
}

/** An uncompressed dump of a whole embedded database, for `openPglite`'s `from`. */
export async function dumpPglite(db: Db): Promise<Blob> {
  const inner = pgliteOf.get(db);
  if (inner === undefined) throw new Error('not an embedded (PGlite) store');
  return inner.dumpDataDir('none');
}

const pgliteOf = new WeakMap<Db, PGlite>();

/** PGlite's shared_buffers: its page cache inside the gateway's memory. */
export const PGLITE_SHARED_BUFFERS = '32MB';

/**
 * Embedded PostgreSQL (WebAssembly) in a data folder, or in memory when `dataDir` is undefined.
 * PGlite runs one statement at a time and serialises transactions itself.
 *
 * File modes: PGlite's file system (Emscripten's NODEFS) creates each file and then chmods it
 * to the mode the C code asked for, unmasked, so the ~970 files initdb writes (catalog, first
 * WAL segment, configuration) are 0666 whatever the process umask, and files written through
 * fopen (pg_internal.init, rewritten at every start) 0644; folders are mkdir'ed 0777 less the
 * umask. What PostgreSQL creates while running (relations, WAL segments) ends up 0600/0700,
 * after an instant at 0777 less the umask. So the folder is created 0700 before PGlite sees
 * it, which keeps everything below out of others' reach at every moment, and the modes below
 * are made 0600/0700 after opening and again after closing.
 *
 * Durability: PGlite starts PostgreSQL with `-F` (fsync off), and NODEFS has no fsync of its
 * own, so nothing is ever flushed to the disk, even with fsync turned back on: a commit is
 * durable against a crash of this process (the kernel holds the written pages), not against
 * an OS crash or power loss (see docs/architecture.md).
 */
export async function openPglite(dataDir: string | undefined, options: PgliteOptions = {}): Promise<Db> {
  if (dataDir !== undefined) await mkdir(dataDir, { recursive: true, mode: PRIVATE_DIR_MODE });
  const db = await PGlite.create({
    parsers: NUMBER_TYPES,
    // PostgreSQL's default shared_buffers (128 MB) is memory of the gateway's own process here,
    // kept once touched: 32 MB leaves the rest to the OS page cache (docs/decisions.md, "PGlite's memory").
    startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${PGLITE_SHARED_BUFFERS}`],
    ...(dataDir === undefined ? {} : { dataDir }),
    ...(options.from === undefined ? {} : { loadDataDir: options.from }),
  });
  if (dataDir !== undefined) {
    try {
      await securePrivateTree(dataDir);
    } catch (error) {
      await db.close();
      throw error;
    }
  }
  // One process holds the database, so `signal` and `wake` need no NOTIFY: the listeners are all here.
  // What SQL itself raises (a trigger's pg_notify) comes through PGlite's own LISTEN, subscribed
  // per channel while it has listeners; `heard` holds the channels whose LISTEN is in place.
  const listeners = new CommitListeners();
  // The statements PREPAREd in the one session, by name (QueryOptions.prepare).
  const named = new StatementNames();
  // The PREPAREs under way or done, by name, with a packed statement's columns.
  const prepared = new Map<string, Promise<readonly string[] | undefined>>();
  const heard = new Set<string>();
  const native = new Map<string, Promise<() => Promise<void>>>();
  const subscribe = (channel: string) => {
    const unlisten = db.listen(channel, () => listeners.emit(channel));
    native.set(channel, unlisten);
    void unlisten.then(
      () => {
        if (native.get(channel) === unlisten) heard.add(channel);
      },
      () => native.delete(channel),
    );
  };
  const unsubscribe = (channel: string) => {
    const unlisten = native.get(channel);
    native.delete(channel);
    heard.delete(channel);
    void unlisten?.then((stop) => stop()).catch(() => undefined);
  };
  const store: Db = {
    kind: 'pglite',
    async query<R>(sql: string, params: readonly unknown[] = [], options?: QueryOptions) {
      assertReadOnly(sql);
      const packed = options?.packed === true;
      const literals = options?.prepare === undefined ? undefined : sqlLiterals(params);
      if (options?.prepare === undefined || literals === undefined) {
        return rowsOf<R>((await db.query<R | PackedRow>(packed ? packedStatement(sql, undefined) : sql, params as unknown[])).rows, packed);
      }
      const name = preparedName(options.prepare);
      named.claim(options.prepare, packed ? `packed: ${sql}` : sql);
      let ready = prepared.get(name);
      if (ready === undefined) {
        // Kept as a promise, so the calls that arrive while it is PREPAREd wait for the one PREPARE.
        ready = (async () => {
          const columns = packed ? arrayColumns((await db.describeQuery(sql)).resultFields.map((field) => field.name)) : undefined;
          await db.exec(`PREPARE ${name} AS ${packed ? packedStatement(sql, columns) : sql}`);
          return columns;
        })();
        prepared.set(name, ready);
        ready.catch(() => prepared.delete(name));
      }
      const columns = await ready;
      return rowsOf<R>(
        (await db.query<R | PackedRow>(literals.length === 0 ? `EXECUTE ${name}` : `EXECUTE ${name}(${literals.join(', ')})`)).rows,
        packed,
        columns,
      );
    },
    async write<R>(sql: string, params: readonly unknown[] = []) {
      return (await db.query<R>(sql, params as unknown[])).rows;
    },
    async tx<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
      const signals = new Set<string>();
      const result = await db.transaction(async (inner) => {
        const tx: Transaction = {
          async query<R>(sql: string, params: readonly unknown[] = [], options?: QueryOptions) {
            const packed = options?.packed === true;
            return rowsOf<R>((await inner.query<R | PackedRow>(packed ? packedStatement(sql, undefined) : sql, params as unknown[])).rows, packed);
          },
          async exec(script: string) {
            await inner.exec(script);
          },
          signal(channel: string) {
            assertChannel(channel);
            signals.add(channel);
            return Promise.resolve();
          },
          wake(channel: string) {
            assertChannel(channel);
            signals.add(channel);
          },
        };
        return work(tx);
      });
      // Resolved means committed.
      for (const channel of signals) listeners.emit(channel);
      return result;
    },
    listen(channel: string, listener: () => void) {
      const { first, remove } = listeners.add(channel, listener);
      if (first) subscribe(channel);
      return () => {
        if (remove()) unsubscribe(channel);
      };
    },
    hears: (channel: string) => heard.has(channel),
    async close() {
      await db.close();
      // Closing writes a shutdown checkpoint: repair whatever was written since opening.
      if (dataDir !== undefined) await securePrivateTree(dataDir);
    },
  };
  pgliteOf.set(store, db);
  return store;
}
