import type { TokenCache } from './tokens/token-cache.ts';
import type { BlobStore } from '../../connectors/blob/contract.ts';
import type { Embedder } from '../../connectors/embeddings/client.ts';
import type { GraphStore } from '../../connectors/graph/contract.ts';
import type { ProjectionSet } from '../../connectors/projection.ts';
import type { SearchBackend } from '../../connectors/search/contract.ts';
import type { Config } from '../config.ts';
import type { Db } from '../store/db.ts';
import type { AuditLog } from './audit/audit-log.ts';
import type { Probe } from './health/readiness.ts';
import type { Meter } from './meter.ts';

export interface BuildInfo {
  readonly name: string;
  readonly version: string;
  readonly node: string;
}

/** What the core needs at run time, built once by the app factory and passed down. */
export interface Services {
  readonly config: Config;
  readonly db: Db;
  /** File bytes: content-addressed, verified while written. */
  readonly blob: BlobStore;
  /** The graph store: the relations products project (between people and projects, between files), fed by the 'graph' outbox rows. */
  readonly graph: GraphStore;
  /** The search engine: the built-in one in the store, or Meilisearch; fed by the 'search' outbox rows. */
  readonly search: SearchBackend;
  /** The embeddings endpoint of hybrid search (KGW_EMBEDDINGS_URL); undefined when none is configured. */
  readonly embedder?: Embedder;
  readonly probes: readonly Probe[];
  readonly build: BuildInfo;
  readonly audit: AuditLog;
  /** Bearer tokens checked once and reused until the store signals a change (src/kernel/tokens/token-cache.ts). */
  readonly tokens: TokenCache;
  /** The projections the outbox worker feeds, and how to rebuild them. */
  readonly projections: ProjectionSet;
  /** Where the gateway's metrics are counted (src/metrics.ts); undefined, nothing is counted. */
  readonly meter?: Meter;
}
