/** Any method, as the wrappers below see it. */
export type Method = (...args: unknown[]) => unknown;

/**
 * `target` with the methods `wrap` replaces (it answers undefined for those it leaves alone),
 * for what watches a backend's calls without changing them (src/kernel/tracing.ts,
 * src/search/measured.ts). A method is looked up at each access, so one replaced since is the
 * one wrapped; every method is bound to the target itself, and read from it, because its
 * getters and methods may use private fields a proxy lacks.
 */
export function wrapMethods<T extends object>(target: T, wrap: (name: string, method: Method) => Method | undefined): T {
  return new Proxy(target, {
    get(object, property) {
      const value: unknown = Reflect.get(object, property, object);
      if (typeof value !== 'function') return value;
      const method = (value as Method).bind(object);
      return (typeof property === 'string' ? wrap(property, method) : undefined) ?? method;
    },
  });
}
