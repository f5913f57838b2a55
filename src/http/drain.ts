import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * How long closing the gateway waits (README "Shutdown"): requests in flight get `graceMs` to
 * finish and answer; then their connections are closed, and the handlers still running get
 * `settleMs` more before the store is closed under them. Together they stay well inside the
 * 30 s an orchestrator usually allows between SIGTERM and SIGKILL, with room for the store and
 * the backends to close. A tool call may take longer (its deadline is 60 s): one still running
 * at the end of the grace period is cut off, as it would be by the SIGKILL that follows.
 */
export const SHUTDOWN_LIMITS: ShutdownLimits = { graceMs: 10_000, settleMs: 5_000 };

export interface ShutdownLimits {
  readonly graceMs: number;
  readonly settleMs: number;
}

/** A request from its first hook on: it is done when its answer went out (onSend) and its response closed. */
interface InFlight {
  sent: boolean;
  closed: boolean;
}

/**
 * Counts the requests in flight so that closing can wait for them, and refuses the ones that
 * arrive while it does. Fastify's own close only stops listening and waits for the sockets; it
 * knows nothing of a handler that keeps running, and uses the store, after its socket is gone.
 *
 * A request's lifecycle always ends in `reply.send` (a handler's answer, a hook's refusal, an
 * error handler, a body that could not be read when its client went away), and so in the onSend
 * hooks; its response closes when the answer was written or its socket was destroyed. A request
 * is in flight until both happened: a handler whose socket was closed under it is still counted
 * until it answers into the void.
 */
export class RequestDrain {
  #draining = false;
  #running = 0;
  #waiters: (() => void)[] = [];
  readonly #requests = new WeakMap<FastifyRequest, InFlight>();

  /**
   * Adds the root hooks; call before any route or plugin is registered so that they run first.
   * The MCP endpoints answer a refusal as JSON-RPC, as they answer every HTTP refusal.
   */
  register(app: FastifyInstance, mcpEndpoints: readonly { readonly path: string }[]): void {
    const rpc = new Set(mcpEndpoints.map((endpoint) => endpoint.path));
    app.addHook('onRequest', async (request, reply) => {
      // A request reaches the gateway while it closes only on a connection that was busy when
      // closing began (Fastify marks it `Connection: close`); new connections are refused.
      if (this.#draining) return refuse(request, reply, rpc);
      const entry: InFlight = { sent: false, closed: false };
      this.#requests.set(request, entry);
      this.#running += 1;
      reply.raw.once('close', () => {
        entry.closed = true;
        this.#settle(entry);
      });
      return undefined;
    });
    // A client that left while the earlier hooks ran leaves a body stream that has already
    // ended its life: Fastify's body parser would listen to it for ever, so the request would
    // never answer and would hold closing back for its whole grace period. It is refused here,
    // which ends it through the route's error handler like a body cut off while it was read.
    app.addHook('preParsing', async (request, _reply, payload) => {
      if (request.raw.destroyed && !request.raw.complete) throw Object.assign(new Error('the connection closed before the body arrived'), { statusCode: 400 });
      return payload;
    });
    app.addHook('onSend', async (request, reply, payload) => {
      // An answer given while closing ends its connection, so Fastify's close need not wait for
      // the client's keep-alive to lapse.
      if (this.#draining) reply.header('connection', 'close');
      const entry = this.#requests.get(request);
      if (entry !== undefined && !entry.sent) {
        entry.sent = true;
        this.#settle(entry);
      }
      return payload;
    });
  }

  /**
   * Closes `app`: stops listening and closes idle connections at once (Fastify's close), refuses
   * what arrives on the busy ones, waits up to `graceMs` for the requests in flight to answer,
   * then closes every connection left and waits up to `settleMs` for the handlers still running.
   * Resolves when the server is closed; a handler may still run only after both bounds passed.
   */
  async close(app: FastifyInstance, limits: ShutdownLimits): Promise<void> {
    this.#draining = true;
    const closed = app.close();
    const answered = await this.#idle(limits.graceMs);
    if (!answered)
      app.log.warn({ requests: this.#running, graceMs: limits.graceMs }, 'shutdown: requests still running after the grace period; closing their connections');
    // What is left has no request in flight: idle keep-alive sockets and requests whose headers
    // never arrived, or the requests past the grace period.
    app.server.closeAllConnections();
    if (!answered && !(await this.#idle(limits.settleMs)))
      app.log.error({ requests: this.#running, settleMs: limits.settleMs }, 'shutdown: request handlers still running; closing the store under them');
    await closed;
  }

  #settle(entry: InFlight): void {
    if (!entry.sent || !entry.closed) return;
    this.#running -= 1;
    if (this.#running > 0) return;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }

  /** True once no request is in flight, false if that did not happen within `ms`. */
  #idle(ms: number): Promise<boolean> {
    if (this.#running === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w !== wake);
        resolve(false);
      }, ms);
      const wake = () => {
        clearTimeout(timer);
        resolve(true);
      };
      this.#waiters.push(wake);
    });
  }
}

/** 503 in the body the route would use for its other refusals: JSON-RPC on an MCP endpoint, the gateway's JSON error elsewhere. */
function refuse(request: FastifyRequest, reply: FastifyReply, rpc: ReadonlySet<string>): FastifyReply {
  reply.code(503).header('connection', 'close').header('cache-control', 'no-store').type('application/json');
  const path = request.url.split('?', 1)[0] ?? '';
  if (rpc.has(path)) return reply.send({ jsonrpc: '2.0', error: { code: -32000, message: 'Service Unavailable: the gateway is shutting down' }, id: null });
  return reply.send({ error: { code: 'unavailable', message: 'the gateway is shutting down' } });
}
