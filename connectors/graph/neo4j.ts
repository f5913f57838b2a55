import type { Driver, ManagedTransaction, Session } from 'neo4j-driver';
import type { Neo4jConfig } from '../../src/config.ts';
import type { Tier } from '../../src/kernel/directory/tiers.ts';
import { backendUnavailable } from '../../src/kernel/errors.ts';
import { bridgesOf, byId, componentsOf } from './analysis.ts';
import { ANALYSIS_NODE_CAP, ANALYSIS_RELATION_CAP, fileNameOf, GraphEndpointMissing, GraphTooLarge, visibilityFilter } from './contract.ts';
import type {
  KbFileRecord,
  KbLinkReads,
  KbLinkRecord,
  KbLinkType,
  GraphChange,
  GraphCounts,
  GraphHealth,
  GraphNode,
  GraphRelation,
  GraphStatus,
  GraphStore,
  GraphVisibility,
  Neighbourhood,
  NeighboursInput,
  UpsertNodeInput,
  UpsertRelationInput,
  WeakNode,
} from './contract.ts';

/**
 * The graph store on Neo4j 5 (Community or Enterprise). Nodes are `:KgwNode` with tenantId and
 * id, relations `:KGW_REL` with tenantId, id and verb as properties (a relationship type cannot
 * be a parameter, so the verb is data). `properties` are stored as a JSON string, because
 * Neo4j properties cannot hold nested maps. Parameterised Cypher only: the only text spliced
 * into a statement is chosen from fixed fragments (direction, depth 1 or 2, the caps).
 * Every transaction has a timeout.
 *
 * Knowledge-Base files are `:KgwKbFile` nodes (tenantId, fileId, kbId, path, name) and each of
 * their references a `:KgwKbLink` node (tenantId, kbId, fromFileId and the paths and name it
 * names): a reference names paths, not files, so it is no relationship; Atmina's
 * kb/graph-links.ts resolves it when `related` reads it.
 */

export interface Neo4jGraphOptions {
  /** Server-side timeout of each transaction, ms. */
  readonly timeoutMs?: number;
  /** Connecting and waiting for a pooled connection, ms. */
  readonly connectTimeoutMs?: number;
  /** How long the driver retries a transaction that failed transiently (server unavailable), ms; default timeoutMs. */
  readonly retryMs?: number;
  /** The database; the server's default when absent. */
  readonly database?: string;
  /**
   * Do not connect when opening: the constraints and indexes are made before the first
   * operation instead (and tried again on the next one if the server was down). A gateway
   * opens the store this way, so it starts while Neo4j is down and /readyz says so.
   */
  readonly lazy?: boolean;
}

const DEFAULT_TIMEOUT_MS = 15_000;
/** Every label the store writes: a clear removes nodes of each. */
const GRAPH_LABELS = ['KgwNode', 'KgwKbFile', 'KgwKbLink'] as const;

/** visibilityFilter as Cypher over a node variable; parameters $levels, $allScoped, $departments, $projects. */
function visibleCypher(v: string): string {
  return `(${v}.access IN $levels AND (NOT ${v}.access IN ['department', 'project'] OR $allScoped
    OR (${v}.access = 'department' AND ${v}.department IN $departments)
    OR (${v}.access = 'project' AND ${v}.project IN $projects)))`;
}

function visibleParams(visible: GraphVisibility): Record<string, unknown> {
  return { ...visibilityFilter(visible) };
}

const NODE_FIELDS = (v: string): string =>
  `${v}.id AS id, ${v}.type AS type, ${v}.props AS props, ${v}.access AS access, ${v}.department AS department, ${v}.project AS project, ${v}.status AS status`;
const RELATION_FIELDS = 'r.id AS id, a.id AS from, b.id AS to, r.verb AS verb, r.status AS status, r.props AS props';

interface Row {
  get(key: string): unknown;
}

function optionalText(row: Row, key: string): string | undefined {
  const value = row.get(key);
  if (value === null || value === undefined) return undefined;
  if (typeof value !== 'string') throw new Error(`graph field ${key} is not a string`);
  return value;
}

function text(row: Row, key: string): string {
  const value = optionalText(row, key);
  if (value === undefined) throw new Error(`graph field ${key} is missing`);
  return value;
}

function props(row: Row): Record<string, unknown> {
  const raw = row.get('props');
  return typeof raw === 'string' ? (JSON.parse(raw) as Record<string, unknown>) : {};
}

function toNode(row: Row): GraphNode {
  return {
    id: text(row, 'id'),
    type: text(row, 'type'),
    properties: props(row),
    access: text(row, 'access') as Tier,
    department: optionalText(row, 'department'),
    project: optionalText(row, 'project'),
    status: text(row, 'status') as GraphStatus,
  };
}

function toRelation(row: Row): GraphRelation {
  return {
    id: text(row, 'id'),
    from: text(row, 'from'),
    to: text(row, 'to'),
    verb: text(row, 'verb'),
    status: text(row, 'status') as GraphStatus,
    properties: props(row),
  };
}

/**
 * Whether the driver says the server could not be reached or dropped the connection (what it
 * would retry), rather than that it refused a statement: only these are an outage.
 */
function unreachable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, retryable } = error as { code?: unknown; retryable?: unknown };
  return code === 'ServiceUnavailable' || code === 'SessionExpired' || retryable === true;
}

function isConstraintRace(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && error.code === 'Neo.ClientError.Schema.ConstraintValidationFailed';
}

const WALK: Record<NeighboursInput['direction'], Record<1 | 2, string>> = {
  out: { 1: '-[:KGW_REL*1..1]->', 2: '-[:KGW_REL*1..2]->' },
  in: { 1: '<-[:KGW_REL*1..1]-', 2: '<-[:KGW_REL*1..2]-' },
  both: { 1: '-[:KGW_REL*1..1]-', 2: '-[:KGW_REL*1..2]-' },
};

/** Connects, checks the server and creates the constraints and indexes (idempotent). */
export async function openNeo4jGraphStore(config: Neo4jConfig, options: Neo4jGraphOptions = {}): Promise<Neo4jGraphStore> {
  const { default: neo4j } = await import('neo4j-driver');
  const connectTimeout = options.connectTimeoutMs ?? 5_000;
  const driver = neo4j.driver(config.url, neo4j.auth.basic(config.user, config.password), {
    connectionTimeout: connectTimeout,
    connectionAcquisitionTimeout: connectTimeout,
    maxTransactionRetryTime: options.retryMs ?? options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    disableLosslessIntegers: true,
  });
  const store = new Neo4jGraphStore(driver, options);
  if (options.lazy === true) return store;
  try {
    await driver.verifyConnectivity();
    await store.ensureSchema();
  } catch (error) {
    await driver.close();
    throw error;
  }
  return store;
}

const KB_FILE_FIELDS = 'f.fileId AS fileId, f.path AS path, f.kind AS kind, f.mediaType AS mediaType';
const KB_LINK_FIELDS = 'l.fromFileId AS fromFileId, l.type AS type, l.key AS key, l.target AS target, l.path AS path, l.altPath AS altPath, l.name AS name';

function toKbFile(row: Row): KbFileRecord {
  return { fileId: text(row, 'fileId'), path: text(row, 'path'), kind: text(row, 'kind') as KbFileRecord['kind'], mediaType: text(row, 'mediaType') };
}

function toKbLink(row: Row): KbLinkRecord {
  const path = optionalText(row, 'path');
  const altPath = optionalText(row, 'altPath');
  return {
    fromFileId: text(row, 'fromFileId'),
    type: text(row, 'type') as KbLinkType,
    key: optionalText(row, 'key'),
    target: text(row, 'target'),
    paths: [path, altPath].filter((p): p is string => p !== undefined),
    name: optionalText(row, 'name'),
  };
}

/** A row bound as Cypher text: the bound is one of the walk's own constants, never a caller's value. */
const limitOf = (limit: number): string => String(Math.max(1, Math.trunc(limit)));

/** Applies one change in a transaction; true when it changed something (deletes: when the item existed). */
async function applyChange(tx: ManagedTransaction, change: GraphChange): Promise<boolean> {
  switch (change.op) {
    case 'putKbFile': {
      const f = change.file;
      const params = {
        tenantId: f.tenantId,
        fileId: f.fileId,
        kbId: f.kbId,
        path: f.path,
        name: fileNameOf(f.path),
        kind: f.kind,
        mediaType: f.mediaType,
        links: change.links.map((l, ord) => ({
          ord,
          type: l.type,
          key: l.key ?? null,
          target: l.target,
          path: l.paths[0] ?? null,
          altPath: l.paths[1] ?? null,
          name: l.name ?? null,
        })),
      };
      await tx.run(
        `MERGE (f:KgwKbFile {tenantId: $tenantId, fileId: $fileId})
         SET f.kbId = $kbId, f.path = $path, f.name = $name, f.kind = $kind, f.mediaType = $mediaType, f.updatedAt = datetime()`,
        params,
      );
      await tx.run('MATCH (l:KgwKbLink {tenantId: $tenantId, fromFileId: $fileId}) DELETE l', params);
      if (params.links.length > 0) {
        await tx.run(
          `UNWIND $links AS link
           CREATE (l:KgwKbLink {tenantId: $tenantId, kbId: $kbId, fromFileId: $fileId, ord: link.ord, type: link.type, target: link.target})
           SET l.key = link.key, l.path = link.path, l.altPath = link.altPath, l.name = link.name`,
          params,
        );
      }
      return true;
    }
    case 'removeKbFile': {
      const params = { tenantId: change.tenantId, fileId: change.fileId };
      await tx.run('MATCH (l:KgwKbLink {tenantId: $tenantId, fromFileId: $fileId}) DELETE l', params);
      const result = await tx.run('MATCH (f:KgwKbFile {tenantId: $tenantId, fileId: $fileId}) DETACH DELETE f RETURN count(*) AS n', params);
      return Number(result.records[0]?.get('n') ?? 0) > 0;
    }
    case 'upsertNode': {
      const n = change.node;
      await tx.run(
        `MERGE (n:KgwNode {tenantId: $tenantId, id: $id})
         SET n.type = $type, n.props = $props, n.access = $access, n.department = $department,
             n.project = $project, n.status = $status, n.updatedAt = datetime()`,
        {
          tenantId: n.tenantId,
          id: n.id,
          type: n.type,
          props: JSON.stringify(n.properties),
          access: n.access,
          department: n.department ?? null,
          project: n.project ?? null,
          status: n.status ?? 'verified',
        },
      );
      return true;
    }
    case 'upsertRelation': {
      const r = change.relation;
      const params = {
        tenantId: r.tenantId,
        id: r.id,
        from: r.from,
        to: r.to,
        verb: r.verb,
        status: r.status ?? 'verified',
        props: JSON.stringify(r.properties),
      };
      // A relationship cannot move to other nodes: one that now joins different nodes is replaced.
      await tx.run(
        `MATCH (a:KgwNode)-[old:KGW_REL {tenantId: $tenantId, id: $id}]->(b:KgwNode)
         WHERE a.id <> $from OR b.id <> $to DELETE old`,
        params,
      );
      const result = await tx.run(
        `MATCH (a:KgwNode {tenantId: $tenantId, id: $from})
         MATCH (b:KgwNode {tenantId: $tenantId, id: $to})
         MERGE (a)-[r:KGW_REL {tenantId: $tenantId, id: $id}]->(b)
         SET r.verb = $verb, r.status = $status, r.props = $props, r.updatedAt = datetime()
         RETURN count(r) AS n`,
        params,
      );
      if (Number(result.records[0]?.get('n') ?? 0) === 0) throw new GraphEndpointMissing(r.id);
      return true;
    }
    case 'deleteNode': {
      const result = await tx.run('MATCH (n:KgwNode {tenantId: $tenantId, id: $id}) DETACH DELETE n RETURN count(*) AS n', {
        tenantId: change.tenantId,
        id: change.id,
      });
      return Number(result.records[0]?.get('n') ?? 0) > 0;
    }
    case 'deleteRelation': {
      const result = await tx.run('MATCH ()-[r:KGW_REL {tenantId: $tenantId, id: $id}]->() DELETE r RETURN count(*) AS n', {
        tenantId: change.tenantId,
        id: change.id,
      });
      return Number(result.records[0]?.get('n') ?? 0) > 0;
    }
  }
}

export class Neo4jGraphStore implements GraphStore {
  readonly backend = 'neo4j' as const;
  readonly #driver: Driver;
  readonly #timeout: number;
  readonly #database: string | undefined;
  #schemaReady = false;
  #ensuring: Promise<void> | undefined;

  constructor(driver: Driver, options: Neo4jGraphOptions = {}) {
    this.#driver = driver;
    this.#timeout = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#database = options.database;
  }

  #session(): Session {
    return this.#database === undefined ? this.#driver.session() : this.#driver.session({ database: this.#database });
  }

  /** Makes the schema once before the first operation of a lazily opened store. */
  async #ready(): Promise<void> {
    if (this.#schemaReady) return;
    this.#ensuring ??= this.ensureSchema().finally(() => {
      this.#ensuring = undefined;
    });
    await this.#ensuring;
  }

  async #write<T>(work: (tx: ManagedTransaction) => Promise<T>): Promise<T> {
    await this.#ready();
    return this.#writeNow(work);
  }

  async #writeNow<T>(work: (tx: ManagedTransaction) => Promise<T>): Promise<T> {
    const session = this.#session();
    try {
      return await session.executeWrite(work, { timeout: this.#timeout });
    } finally {
      await session.close();
    }
  }

  /**
   * One read, tried once: `unavailable` (backend_unavailable) at once when Neo4j cannot be
   * reached, so every tool that reads the graph says so alike and promptly. The driver's
   * managed transactions would retry a refused connection for the whole retry window (2.6 s
   * measured) before the agent hears what it can act on; the spec tells an agent to try again.
   */
  async #read(query: string, params: Record<string, unknown>): Promise<Row[]> {
    try {
      return await this.#readOnce(query, params);
    } catch (error) {
      throw unreachable(error) ? backendUnavailable('graph', 'neo4j', error) : error;
    }
  }

  async #readOnce(query: string, params: Record<string, unknown>): Promise<Row[]> {
    await this.#ready();
    const config = { defaultAccessMode: 'READ' as const, ...(this.#database === undefined ? {} : { database: this.#database }) };
    const session = this.#driver.session(config);
    try {
      return (await session.run(query, params, { timeout: this.#timeout })).records;
    } finally {
      await session.close();
    }
  }

  /**
   * (tenantId, id) unique for nodes and relations. A NODE KEY is Enterprise-only; Community
   * gets a composite uniqueness constraint, which backs MERGE just the same.
   */
  async ensureSchema(): Promise<void> {
    const run = (query: string) => this.#writeNow(async (tx) => void (await tx.run(query)));
    try {
      await run('CREATE CONSTRAINT kgw_node_key IF NOT EXISTS FOR (n:KgwNode) REQUIRE (n.tenantId, n.id) IS NODE KEY');
    } catch (error) {
      // A server that cannot be reached refuses the fallback too: one wait for the caller, not two.
      if (unreachable(error)) throw error;
      await run('CREATE CONSTRAINT kgw_node_unique IF NOT EXISTS FOR (n:KgwNode) REQUIRE (n.tenantId, n.id) IS UNIQUE');
    }
    await run('CREATE CONSTRAINT kgw_rel_unique IF NOT EXISTS FOR ()-[r:KGW_REL]-() REQUIRE (r.tenantId, r.id) IS UNIQUE');
    await run('CREATE INDEX kgw_node_access IF NOT EXISTS FOR (n:KgwNode) ON (n.tenantId, n.access)');
    await run('CREATE INDEX kgw_rel_verb IF NOT EXISTS FOR ()-[r:KGW_REL]-() ON (r.verb)');
    await run('CREATE CONSTRAINT kgw_kb_file_unique IF NOT EXISTS FOR (f:KgwKbFile) REQUIRE (f.tenantId, f.fileId) IS UNIQUE');
    await run('CREATE INDEX kgw_kb_file_path IF NOT EXISTS FOR (f:KgwKbFile) ON (f.tenantId, f.kbId, f.path)');
    await run('CREATE INDEX kgw_kb_file_name IF NOT EXISTS FOR (f:KgwKbFile) ON (f.tenantId, f.kbId, f.name)');
    await run('CREATE INDEX kgw_kb_link_from IF NOT EXISTS FOR (l:KgwKbLink) ON (l.tenantId, l.fromFileId)');
    await run('CREATE INDEX kgw_kb_link_path IF NOT EXISTS FOR (l:KgwKbLink) ON (l.tenantId, l.kbId, l.path)');
    await run('CREATE INDEX kgw_kb_link_alt_path IF NOT EXISTS FOR (l:KgwKbLink) ON (l.tenantId, l.kbId, l.altPath)');
    await run('CREATE INDEX kgw_kb_link_name IF NOT EXISTS FOR (l:KgwKbLink) ON (l.tenantId, l.kbId, l.name)');
    await this.#writeNow(async (tx) => void (await tx.run('CALL db.awaitIndexes(60)')));
    this.#schemaReady = true;
  }

  /** MERGE under the uniqueness constraint; a rare constraint race between two creators is retried. */
  async #merge<T>(work: (tx: ManagedTransaction) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await this.#write(work);
      } catch (error) {
        if (attempt >= 3 || !isConstraintRace(error)) throw error;
      }
    }
  }

  async write(changes: readonly GraphChange[]): Promise<void> {
    if (changes.length === 0) return;
    await this.#merge(async (tx) => {
      for (const change of changes) await applyChange(tx, change);
    });
  }

  async upsertNode(input: UpsertNodeInput): Promise<void> {
    await this.write([{ op: 'upsertNode', node: input }]);
  }

  deleteNode(input: { tenantId: string; id: string }): Promise<boolean> {
    return this.#write((tx) => applyChange(tx, { op: 'deleteNode', ...input }));
  }

  async upsertRelation(input: UpsertRelationInput): Promise<void> {
    await this.write([{ op: 'upsertRelation', relation: input }]);
  }

  deleteRelation(input: { tenantId: string; id: string }): Promise<boolean> {
    return this.#write((tx) => applyChange(tx, { op: 'deleteRelation', ...input }));
  }

  async neighbours(input: NeighboursInput): Promise<Neighbourhood> {
    const walk = WALK[input.direction][input.depth];
    if (walk === undefined) throw new Error(`depth must be 1 or 2, got ${String(input.depth)}`);
    const params = { tenantId: input.tenantId, id: input.id, verbs: input.verbs === undefined ? null : [...input.verbs], ...visibleParams(input.visible) };
    const reached = await this.#read(
      `MATCH (s:KgwNode {tenantId: $tenantId, id: $id}) WHERE ${visibleCypher('s')}
       MATCH p = (s)${walk}(m:KgwNode)
       WHERE m <> s AND all(x IN nodes(p) WHERE x.tenantId = $tenantId AND ${visibleCypher('x')})
         AND ($verbs IS NULL OR all(r IN relationships(p) WHERE r.verb IN $verbs))
       WITH m, min(length(p)) AS depth
       RETURN ${NODE_FIELDS('m')}, depth`,
      params,
    );
    const visibleStart = await this.#read(`MATCH (s:KgwNode {tenantId: $tenantId, id: $id}) WHERE ${visibleCypher('s')} RETURN s.id AS id`, params);
    if (visibleStart.length === 0) return { nodes: [], relations: [] };
    const near = [input.id, ...reached.filter((row) => Number(row.get('depth')) < input.depth).map((row) => text(row, 'id'))];
    const relationParams = { ...params, near };
    const relationRows: Row[] = [];
    const filter = `($verbs IS NULL OR r.verb IN $verbs) AND ${visibleCypher('a')} AND ${visibleCypher('b')}`;
    if (input.direction !== 'in') {
      relationRows.push(
        ...(await this.#read(
          `MATCH (a:KgwNode {tenantId: $tenantId})-[r:KGW_REL]->(b:KgwNode) WHERE a.id IN $near AND ${filter} RETURN ${RELATION_FIELDS}`,
          relationParams,
        )),
      );
    }
    if (input.direction !== 'out') {
      relationRows.push(
        ...(await this.#read(
          `MATCH (a:KgwNode)-[r:KGW_REL]->(b:KgwNode {tenantId: $tenantId}) WHERE b.id IN $near AND ${filter} RETURN ${RELATION_FIELDS}`,
          relationParams,
        )),
      );
    }
    const relations = new Map(relationRows.map((row) => [text(row, 'id'), toRelation(row)]));
    return {
      nodes: reached.map((row) => ({ node: toNode(row), depth: Number(row.get('depth')) })).sort((a, b) => a.depth - b.depth || byId(a.node, b.node)),
      relations: [...relations.values()].sort(byId),
    };
  }

  kbLinks(): KbLinkReads {
    return this.#kbLinkReads();
  }

  /** What `related` reads: parameterised, within one tenant and KB. */
  #kbLinkReads(): KbLinkReads {
    return {
      files: async (input) =>
        (
          await this.#read(
            `MATCH (f:KgwKbFile {tenantId: $tenantId, kbId: $kbId})
             WHERE f.fileId IN $ids OR f.path IN $paths OR f.name IN $names
             RETURN ${KB_FILE_FIELDS} ORDER BY f.path, f.fileId LIMIT ${limitOf(input.limit)}`,
            { tenantId: input.tenantId, kbId: input.kbId, ids: [...(input.ids ?? [])], paths: [...(input.paths ?? [])], names: [...(input.names ?? [])] },
          )
        ).map(toKbFile),
      linksFrom: async (input) =>
        (
          await this.#read(
            `MATCH (l:KgwKbLink {tenantId: $tenantId}) WHERE l.fromFileId IN $fileIds AND l.kbId = $kbId AND l.type IN $types
             RETURN ${KB_LINK_FIELDS} ORDER BY l.fromFileId, l.ord LIMIT ${limitOf(input.limit)}`,
            { tenantId: input.tenantId, kbId: input.kbId, fileIds: [...input.fileIds], types: [...input.types] },
          )
        ).map(toKbLink),
      linksTo: async (input) =>
        (
          await this.#read(
            `MATCH (l:KgwKbLink {tenantId: $tenantId, kbId: $kbId})
             WHERE l.type IN $types AND (l.path IN $paths OR l.altPath IN $paths OR l.name IN $names)
             RETURN ${KB_LINK_FIELDS} ORDER BY l.fromFileId, l.ord LIMIT ${limitOf(input.limit)}`,
            { tenantId: input.tenantId, kbId: input.kbId, paths: [...input.paths], names: [...input.names], types: [...input.types] },
          )
        ).map(toKbLink),
    };
  }

  async weaklyLinked(input: { tenantId: string; maxDegree: number; visible: GraphVisibility }): Promise<WeakNode[]> {
    const rows = await this.#read(
      `MATCH (n:KgwNode {tenantId: $tenantId}) WHERE ${visibleCypher('n')}
       OPTIONAL MATCH (n)-[r:KGW_REL]-(o:KgwNode) WHERE ${visibleCypher('o')}
       WITH n, count(DISTINCT r) AS degree WHERE degree <= $maxDegree
       RETURN ${NODE_FIELDS('n')}, degree`,
      { tenantId: input.tenantId, maxDegree: input.maxDegree, ...visibleParams(input.visible) },
    );
    return rows.map((row) => ({ node: toNode(row), degree: Number(row.get('degree')) })).sort((a, b) => a.degree - b.degree || byId(a.node, b.node));
  }

  async components(input: { tenantId: string; visible: GraphVisibility }): Promise<string[][]> {
    return componentsOf(await this.visibleGraph(input));
  }

  async bridges(input: { tenantId: string; visible: GraphVisibility }): Promise<GraphRelation[]> {
    return bridgesOf(await this.visibleGraph(input));
  }

  async node(input: { tenantId: string; id: string }): Promise<{ node: GraphNode; degree: number } | undefined> {
    const [row] = await this.#read(
      `MATCH (n:KgwNode {tenantId: $tenantId, id: $id}) OPTIONAL MATCH (n)-[r:KGW_REL]-() RETURN ${NODE_FIELDS('n')}, count(DISTINCT r) AS degree`,
      { tenantId: input.tenantId, id: input.id },
    );
    return row === undefined ? undefined : { node: toNode(row), degree: Number(row.get('degree')) };
  }

  async visibleGraph(input: { tenantId: string; visible: GraphVisibility }): Promise<{ nodes: GraphNode[]; relations: GraphRelation[] }> {
    const params = { tenantId: input.tenantId, ...visibleParams(input.visible) };
    const nodes = await this.#read(
      `MATCH (n:KgwNode {tenantId: $tenantId}) WHERE ${visibleCypher('n')} RETURN ${NODE_FIELDS('n')} LIMIT ${ANALYSIS_NODE_CAP + 1}`,
      params,
    );
    if (nodes.length > ANALYSIS_NODE_CAP) throw new GraphTooLarge('nodes', ANALYSIS_NODE_CAP);
    const relations = await this.#read(
      `MATCH (a:KgwNode {tenantId: $tenantId})-[r:KGW_REL]->(b:KgwNode)
       WHERE b.tenantId = $tenantId AND ${visibleCypher('a')} AND ${visibleCypher('b')}
       RETURN ${RELATION_FIELDS} LIMIT ${ANALYSIS_RELATION_CAP + 1}`,
      params,
    );
    if (relations.length > ANALYSIS_RELATION_CAP) throw new GraphTooLarge('relations', ANALYSIS_RELATION_CAP);
    return { nodes: nodes.map(toNode).sort(byId), relations: relations.map(toRelation).sort(byId) };
  }

  async counts(tenantId: string): Promise<GraphCounts> {
    const nodes = await this.#read('MATCH (n:KgwNode {tenantId: $tenantId}) RETURN count(n) AS n', { tenantId });
    const relations = await this.#read('MATCH ()-[r:KGW_REL {tenantId: $tenantId}]->() RETURN count(r) AS n', { tenantId });
    return { nodes: Number(nodes[0]?.get('n') ?? 0), relations: Number(relations[0]?.get('n') ?? 0) };
  }

  async clear(tenantId: string): Promise<void> {
    for (const label of GRAPH_LABELS) {
      await this.#deleteAll(`MATCH (n:${label} {tenantId: $tenantId}) WITH n LIMIT 5000 DETACH DELETE n RETURN count(*) AS n`, { tenantId });
    }
  }

  async clearAll(): Promise<void> {
    for (const label of GRAPH_LABELS) await this.#deleteAll(`MATCH (n:${label}) WITH n LIMIT 5000 DETACH DELETE n RETURN count(*) AS n`, {});
  }

  /** Deletes in batches of 5,000 nodes so a large graph does not need one huge transaction. */
  async #deleteAll(query: string, params: Record<string, unknown>): Promise<void> {
    for (;;) {
      const deleted = await this.#write(async (tx) => Number((await tx.run(query, params)).records[0]?.get('n') ?? 0));
      if (deleted === 0) return;
    }
  }

  async health(): Promise<GraphHealth> {
    // The driver's own error: the outbox worker records it as the projection's last error.
    await this.#readOnce('RETURN 1 AS ok', {});
    return { backend: 'neo4j', ok: true };
  }

  async close(): Promise<void> {
    await this.#driver.close();
  }
}
