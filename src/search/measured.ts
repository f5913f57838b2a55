import type { SearchBackend } from '../../connectors/search/contract.ts';
import type { Meter } from '../kernel/meter.ts';

/**
 * The engine with its searches timed for the metrics (Meter.search, by engine), whoever calls
 * it (Atmina's search, Company Brain's query_index). Everything else passes through unchanged.
 */
export function measuredSearchBackend(backend: SearchBackend, meter: Meter): SearchBackend {
  const search: SearchBackend['search'] = async (query, signal) => {
    const started = performance.now();
    let ok = false;
    try {
      const result = await backend.search(query, signal);
      ok = true;
      return result;
    } finally {
      meter.search(backend.name, ok, (performance.now() - started) / 1000);
    }
  };
  return new Proxy(backend, {
    get(target, property) {
      if (property === 'search') return search;
      // Read from the engine itself: its getters and methods may use private fields a proxy lacks.
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
