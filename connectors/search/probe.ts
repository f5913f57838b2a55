import type { MeiliConfig } from '../../src/config.ts';
import type { Probe } from '../probe.ts';

/** Meilisearch answers its health route. */
export function meiliProbe(meili: MeiliConfig): Probe {
  return {
    role: 'search',
    backend: 'meilisearch',
    async check() {
      const { Meilisearch } = await import('meilisearch');
      await new Meilisearch({ host: meili.url, apiKey: meili.apiKey, timeout: 2500 }).health();
    },
  };
}
