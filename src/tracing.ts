import { context, propagation, trace } from '@opentelemetry/api';
import type { TracerProvider } from '@opentelemetry/sdk-trace';
import { BUILD } from './build.ts';
import type { TracesConfig } from './config.ts';
import type { Services } from './kernel/services.ts';
import { traced, tracedStore } from './kernel/tracing.ts';

/**
 * Registers the process's OpenTelemetry tracer provider (docs/architecture.md, "Traces"): spans
 * batched and sent to KGW_TRACES_URL over OTLP/HTTP, new traces sampled at KGW_TRACES_SAMPLE,
 * a request's W3C `traceparent` continued, the active span carried through async calls. Once
 * per process (the API keeps one provider): a second gateway in the same process shares it.
 * Returns how to send what is buffered (a gateway's close awaits it).
 */
let registered: { readonly url: string; readonly provider: Promise<TracerProvider> } | undefined;

export async function startTracing(config: TracesConfig): Promise<{ flush(): Promise<void> }> {
  if (registered === undefined) {
    registered = { url: config.url, provider: registerProvider(config) };
  } else if (registered.url !== config.url) {
    throw new Error(`traces already go to ${registered.url} in this process; one process sends to one collector`);
  }
  const provider = await registered.provider;
  return { flush: () => provider.forceFlush() };
}

/**
 * The SDK and its exporter are loaded only when traces are on: they are a fifth of the modules
 * a process would load otherwise, and every \`kgw\` command would wait for them.
 */
async function registerProvider(config: TracesConfig): Promise<TracerProvider> {
  const [{ AsyncLocalStorageContextManager }, { W3CTraceContextPropagator }, { OTLPTraceExporter }, { resourceFromAttributes }, sdk] = await Promise.all([
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/core'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace'),
  ]);
  const provider = new sdk.TracerProvider({
    resource: resourceFromAttributes({ 'service.name': BUILD.name, 'service.version': BUILD.version }),
    sampler: new sdk.ParentBasedSampler({ root: new sdk.TraceIdRatioBasedSampler(config.sampleRatio) }),
    spanProcessors: [new sdk.BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: config.url }) })],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  return provider;
}

/** The backends' calls a request makes, as spans: the store's statements and transactions, blob, graph and search calls. */
export function tracedServices(services: Services): Services {
  return {
    ...services,
    db: tracedStore(services.db),
    blob: traced(services.blob, 'blob', ['put', 'get', 'head', 'delete', 'presignPut', 'promoteUpload']),
    graph: traced(services.graph, 'graph', ['write', 'neighbours', 'weaklyLinked', 'visibleGraph', 'node', 'components', 'bridges']),
    search: traced(services.search, 'search', ['search', 'stats'], () => ({ 'kgw.search.engine': services.search.name })),
  };
}
