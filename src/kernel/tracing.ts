import { SpanKind, SpanStatusCode, context, propagation, trace } from '@opentelemetry/api';
import type { Attributes, Context } from '@opentelemetry/api';
import type { Db, Transaction } from '../store/db.ts';
import type { Method } from './wrap-methods.ts';
import { wrapMethods } from './wrap-methods.ts';

/*
 * OpenTelemetry spans (docs/architecture.md, "Traces"), through the API alone: until the
 * composition root registers a provider (src/tracing.ts, when KGW_TRACES_URL is set) every call
 * here is the API's no-op, and the backends are not wrapped at all.
 */

const tracer = trace.getTracer('knowledge-gateway');

/** Longest statement text a store span carries: enough to know the query, never a whole script. */
const STATEMENT_CHARS = 300;

/** Runs `work` in a span named `name`, its child spans below it; a throw marks the span failed and is rethrown. */
export function inSpan<T>(name: string, attributes: Attributes, work: () => Promise<T>, options: { parent?: Context; kind?: SpanKind } = {}): Promise<T> {
  return tracer.startActiveSpan(name, { attributes, kind: options.kind ?? SpanKind.INTERNAL }, options.parent ?? context.active(), async (span) => {
    try {
      return await work();
    } catch (error) {
      span.recordException(error instanceof Error ? error : String(error));
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** A request's span, continuing the trace its W3C `traceparent` names (a new one otherwise). */
export function inRequestSpan<T>(
  name: string,
  headers: Readonly<Record<string, string | string[] | undefined>>,
  attributes: Attributes,
  work: () => Promise<T>,
): Promise<T> {
  return inSpan(name, attributes, work, { parent: propagation.extract(context.active(), headers), kind: SpanKind.SERVER });
}

/** Names a span's call and what it carries: `what` for a store statement, nothing else of the arguments. */
type Describe = (method: string, args: readonly unknown[]) => Attributes;

/**
 * `target` with each of its methods named in `methods` run in a span `${kind}.${method}` (each
 * answers a promise); the others pass through.
 */
export function traced<T extends object>(target: T, kind: string, methods: readonly string[], describe: Describe = () => ({})): T {
  const wanted = new Set(methods);
  return wrapMethods(target, (name, method) => (wanted.has(name) ? spanned(`${kind}.${name}`, (args) => describe(name, args), method) : undefined));
}

/** `method` run in a span named `name` at each call. */
function spanned(name: string, attributes: (args: readonly unknown[]) => Attributes, method: Method): Method {
  return (...args) => inSpan<unknown>(name, attributes(args), async () => await method(...args));
}

/** A store statement's attributes: the system and the statement's first characters (its parameters never). */
function statementOf(system: string): Describe {
  return (method, args) => {
    const text = typeof args[0] === 'string' && method !== 'tx' ? args[0] : undefined;
    return { 'db.system.name': system, ...(text === undefined ? {} : { 'db.query.text': text.replace(/\s+/g, ' ').slice(0, STATEMENT_CHARS) }) };
  };
}

/** A store whose statements and transactions are spans, a transaction's statements below it. */
export function tracedStore(db: Db): Db {
  const describe = statementOf(db.kind === 'postgres' ? 'postgresql' : 'pglite');
  const tx: Db['tx'] = (work) => inSpan('db.tx', describe('tx', []), () => db.tx((open) => work(traced<Transaction>(open, 'db', ['query', 'exec'], describe))));
  return wrapMethods(db, (name, method) =>
    name === 'query' ? spanned('db.query', (args) => describe(name, args), method) : name === 'tx' ? (tx as Method) : undefined,
  );
}
