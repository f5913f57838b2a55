/** One backend the gateway depends on, and how to see whether it answers. */
export interface Probe {
  /** What the backend is for: store, blob, search or graph. */
  readonly role: 'store' | 'blob' | 'search' | 'graph';
  /** Which implementation serves it, e.g. postgres, pglite, s3, meilisearch, neo4j. */
  readonly backend: string;
  check(signal: AbortSignal): Promise<void>;
}
