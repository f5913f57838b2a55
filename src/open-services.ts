import { TokenCache } from './kernel/tokens/token-cache.ts';
import { openBlobStore } from '../connectors/blob/index.ts';
import type { Embedder } from '../connectors/embeddings/client.ts';
import { EmbeddingsClient } from '../connectors/embeddings/client.ts';
import type { GraphStore } from '../connectors/graph/contract.ts';
import { openNeo4jGraphStore } from '../connectors/graph/neo4j.ts';
import { PostgresGraphStore } from '../connectors/graph/postgres.ts';
import { graphProjection } from '../connectors/graph/projection.ts';
import type { BlobStore } from '../connectors/blob/contract.ts';
import type { ProjectionSet } from '../connectors/projection.ts';
import type { SearchBackend } from '../connectors/search/contract.ts';
import { searchProjection } from '../connectors/search/contract.ts';
import { openSearchBackend } from '../connectors/search/index.ts';
import { BUILD } from './build.ts';
import type { Config } from './config.ts';
import type { Db, Queryable } from './store/db.ts';
import { CONTEXT_KEY_PREFIXES, contextSearchRebuilder, contextSearchSource } from './alignbase/index.ts';
import { KB_FILE_KEY_PREFIX, kbFileGraphSource, kbFileRebuilders, kbFileSearchSource } from './atmina/index.ts';
import { BRAIN_NODE_KEY_PREFIX, brainSearchRebuilder, brainSearchSource, orgGraphRebuilder } from './brain/index.ts';
import { AuditLog } from './kernel/audit/audit-log.ts';
import { configuredProbes } from './kernel/health/probes.ts';
import { composeSearchSources } from './search/sources.ts';
import { vectorEntries, vectorsProjection, vectorsRebuilder } from './search/vectors.ts';
import { insertOutboxRows } from './kernel/outbox/outbox.ts';
import type { Services } from './kernel/services.ts';

// The outbox retries with backoff; the driver itself only rides out a brief blip.
const NEO4J_RETRY_MS = 2_000;

/**
 * The graph store the configuration names: Neo4j when NEO4J_URL is set (opened lazily, so the
 * gateway starts while Neo4j is down), otherwise the tables in the gateway's own store.
 */
async function openGraphStore(config: Config, db: Db): Promise<GraphStore> {
  return config.neo4j === undefined ? new PostgresGraphStore(db) : openNeo4jGraphStore(config.neo4j, { lazy: true, retryMs: NEO4J_RETRY_MS });
}

/**
 * The projections a gateway feeds from the outbox, and how each is rebuilt from the store.
 * Search is left out only where a caller asks for the graph alone (rebuilds run only the
 * configured projections). The graph keeps KB files and their references when it can read
 * their bytes: from `blob`, else the search's; without either it keeps the Company Brain graph
 * alone. With an embedder (KGW_EMBEDDINGS_URL), the vectors projection embeds what the
 * search projection indexed: each search apply enqueues a `vectors` row per upserted document
 * in its own transaction (a deleted document's vector goes with it, by foreign key).
 */
export function configuredProjections(
  graph: GraphStore,
  search?: {
    readonly backend: SearchBackend;
    readonly blob: BlobStore;
    readonly vectors?: { readonly embedder: Embedder; readonly db: Db };
    /** One process, one worker applies the rows (PGlite): a remote engine confirms them before each claim (see SearchProjectionOptions). */
    readonly singleWorker?: boolean;
  },
  blob: BlobStore | undefined = search?.blob,
): ProjectionSet {
  const files = blob === undefined ? undefined : kbFileGraphSource(blob);
  // Search documents come from KB files and from Alignbase resources, told apart by key prefix.
  const searchSource = (blob: BlobStore) =>
    composeSearchSources([
      { prefixes: [KB_FILE_KEY_PREFIX], source: kbFileSearchSource(blob) },
      { prefixes: CONTEXT_KEY_PREFIXES, source: contextSearchSource },
      { prefixes: [BRAIN_NODE_KEY_PREFIX], source: brainSearchSource },
    ]);
  const vectors = search?.vectors;
  const searchOptions = {
    prepareRemote: search?.singleWorker === true,
    ...(vectors === undefined
      ? {}
      : {
          changed: (tx: Queryable, docs: readonly { tenantId: string; id: string; operation: 'upsert' | 'delete' }[]) =>
            insertOutboxRows(tx, vectorEntries(docs.filter((d) => d.operation === 'upsert'))),
        }),
  };
  const projections = [
    graphProjection(graph, files),
    ...(search === undefined ? [] : [searchProjection(search.backend, searchSource(search.blob), searchOptions)]),
    ...(vectors === undefined ? [] : [vectorsProjection(vectors.embedder, vectors.db)]),
  ];
  return {
    projections,
    rebuilders: [orgGraphRebuilder, ...kbFileRebuilders, contextSearchRebuilder, brainSearchRebuilder, ...(vectors === undefined ? [] : [vectorsRebuilder])],
  };
}

export interface OpenedServices {
  readonly services: Services;
  /** Closes the backends opened here (never the store, which the caller opened). */
  close(): Promise<void>;
}

/**
 * Opens every backend the configuration names around an open store: the one place the gateway
 * and the CLI's local operations get their Services from. `projections` replaces the
 * configured set (tests run the worker against their own).
 */
export async function openServices(config: Config, db: Db, options: { projections?: ProjectionSet } = {}): Promise<OpenedServices> {
  const blob = await openBlobStore(config);
  let graph: GraphStore;
  try {
    graph = await openGraphStore(config, db);
  } catch (error) {
    await blob.close();
    throw error;
  }
  const search: SearchBackend = openSearchBackend(config.meili, db);
  const embedder = config.embeddings === undefined ? undefined : new EmbeddingsClient(config.embeddings);
  const services: Services = Object.freeze({
    config,
    db,
    blob,
    graph,
    search,
    ...(embedder === undefined ? {} : { embedder }),
    probes: configuredProbes(config, db),
    build: BUILD,
    audit: new AuditLog(db),
    tokens: new TokenCache(db),
    projections:
      options.projections ??
      configuredProjections(graph, {
        backend: search,
        blob,
        singleWorker: db.kind === 'pglite',
        ...(embedder === undefined ? {} : { vectors: { embedder, db } }),
      }),
  });
  return {
    services,
    async close() {
      services.tokens.close();
      await search.close?.();
      await graph.close();
      await blob.close();
    },
  };
}
