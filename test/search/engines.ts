import { randomBytes } from 'node:crypto';
import { Meilisearch } from 'meilisearch';

/**
 * The search engines the endpoint suites run on: the built-in one always, and Meilisearch when
 * KGW_TEST_MEILI_URL names a server (required in CI). Each Meilisearch suite gets its own
 * index, deleted after it, so suites running side by side never share documents.
 */
export interface SearchEngine {
  readonly name: string;
  /** The gateway environment that selects it. */
  readonly env: Readonly<Record<string, string>>;
  dispose(): Promise<void>;
}

export function searchEngines(): { readonly name: string; open(): SearchEngine }[] {
  const engines = [{ name: 'builtin', open: (): SearchEngine => ({ name: 'builtin', env: {}, dispose: () => Promise.resolve() }) }];
  const url = process.env.KGW_TEST_MEILI_URL;
  if (url === undefined || url === '') {
    if (process.env.CI === 'true') throw new Error('KGW_TEST_MEILI_URL must be set in CI (eval "$(bash test/services/meilisearch.sh)")');
    return engines;
  }
  const apiKey = process.env.KGW_TEST_MEILI_KEY ?? '';
  return [
    ...engines,
    {
      name: 'meilisearch',
      open: (): SearchEngine => {
        const index = `kgw_test_${randomBytes(6).toString('hex')}`;
        return {
          name: 'meilisearch',
          env: { MEILI_URL: url, MEILI_API_KEY: apiKey, MEILI_INDEX: index },
          async dispose() {
            const client = new Meilisearch({ host: url, apiKey });
            await client.index(index).delete().waitTask({ timeout: 60_000 });
          },
        };
      },
    },
  ];
}
