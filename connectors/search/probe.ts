import type { MeiliConfig } from '../../src/config.ts';
import type { Probe } from '../probe.ts';

/**
 * Meilisearch answers its health route, and the gateway's index has the settings the search
 * backend applies (`kgw doctor` and the readiness route show a drifted index: a filter on an
 * attribute that is no longer filterable fails every search). An index that does not exist
 * yet is no failure: the backend makes it when the gateway starts.
 */
export function meiliProbe(meili: MeiliConfig, options: { index?: string } = {}): Probe {
  return {
    role: 'search',
    backend: 'meilisearch',
    async check() {
      const { Meilisearch } = await import('meilisearch');
      await new Meilisearch({ host: meili.url, apiKey: meili.apiKey, timeout: 2500 }).health();
      const { DEFAULT_INDEX_UID, checkSettings } = await import('./meilisearch.ts');
      const index = options.index ?? meili.index ?? DEFAULT_INDEX_UID;
      const differences = await checkSettings(meili, { index, missingOk: true });
      if (differences.length > 0) throw new Error(`index ${index} has drifted from the settings the gateway applies: ${differences.join('; ')}`);
    },
  };
}
