import type { SearchBackend } from '../../connectors/search/contract.ts';
import type { Meter } from '../kernel/meter.ts';
import type { Method } from '../kernel/wrap-methods.ts';
import { wrapMethods } from '../kernel/wrap-methods.ts';

/**
 * The engine with its searches timed for the metrics (Meter.search, by engine), whoever calls
 * it (Atmina's search, Company Brain's query_index). Everything else passes through unchanged,
 * and the engine's `search` is looked up at each call, so whatever replaced it since is timed.
 */
export function measuredSearchBackend(backend: SearchBackend, meter: Meter): SearchBackend {
  return wrapMethods(backend, (name, method) => {
    if (name !== 'search') return undefined;
    const timed: SearchBackend['search'] = async (query, signal) => {
      const started = performance.now();
      let ok = false;
      try {
        const result = (await method(query, signal)) as Awaited<ReturnType<SearchBackend['search']>>;
        ok = true;
        return result;
      } finally {
        meter.search(backend.name, ok, (performance.now() - started) / 1000);
      }
    };
    return timed as Method;
  });
}
