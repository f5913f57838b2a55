import type { SearchBackend } from '../../connectors/search/contract.ts';
import type { Meter } from '../kernel/meter.ts';

/**
 * The engine with its searches timed for the metrics (Meter.search, by engine), whoever calls
 * it (Atmina's search, Company Brain's query_index). Everything else passes through unchanged,
 * and the engine's `search` is looked up at each call, so whatever replaced it since is timed.
 */
export function measuredSearchBackend(backend: SearchBackend, meter: Meter): SearchBackend {
  return new Proxy(backend, {
    get(target, property) {
      // Read from the engine itself: its getters and methods may use private fields a proxy lacks.
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      if (property !== 'search') return (value as (...args: unknown[]) => unknown).bind(target);
      const search = value as SearchBackend['search'];
      const timed: SearchBackend['search'] = async (query, signal) => {
        const started = performance.now();
        let ok = false;
        try {
          const result = await search.call(target, query, signal);
          ok = true;
          return result;
        } finally {
          meter.search(target.name, ok, (performance.now() - started) / 1000);
        }
      };
      return timed;
    },
  });
}
