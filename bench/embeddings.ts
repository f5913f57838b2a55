/**
 * The embeddings endpoint a bench hands its gateway for hybrid retrieval. The names are those
 * test/services/embeddings.sh prints (`eval "$(bash test/services/embeddings.sh)"` starts
 * all-MiniLM-L6-v2 and sets them), so the benches and the hybrid test suite use one model the
 * same way. Unset URL: no endpoint, and the benches measure lexical retrieval only.
 */

export interface BenchEmbeddings {
  readonly url: string;
  readonly model: string;
  readonly dimensions: number;
}

/** KGW_TEST_EMBEDDINGS_URL, _MODEL (all-MiniLM-L6-v2) and _DIMENSIONS (384), or undefined without a URL. */
export function benchEmbeddings(env: NodeJS.ProcessEnv = process.env): BenchEmbeddings | undefined {
  const url = env.KGW_TEST_EMBEDDINGS_URL || undefined;
  if (url === undefined) return undefined;
  const dimensions = Number(env.KGW_TEST_EMBEDDINGS_DIMENSIONS || '384');
  if (!Number.isInteger(dimensions) || dimensions <= 0)
    throw new Error(`KGW_TEST_EMBEDDINGS_DIMENSIONS must be a positive integer, got "${env.KGW_TEST_EMBEDDINGS_DIMENSIONS}"`);
  return { url, model: env.KGW_TEST_EMBEDDINGS_MODEL || 'all-MiniLM-L6-v2', dimensions };
}

/** The gateway's settings for the endpoint (README, "Configuration"); none without one. */
export function embeddingsGatewayEnv(embeddings: BenchEmbeddings | undefined): Record<string, string> {
  if (embeddings === undefined) return {};
  return { KGW_EMBEDDINGS_URL: embeddings.url, KGW_EMBEDDINGS_MODEL: embeddings.model, KGW_EMBEDDINGS_DIMENSIONS: String(embeddings.dimensions) };
}
