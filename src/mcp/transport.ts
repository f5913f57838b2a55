import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';

function requestId(message: JSONRPCMessage): RequestId | undefined {
  return 'method' in message && 'id' in message ? message.id : undefined;
}

function responseId(message: JSONRPCMessage): RequestId | undefined {
  return !('method' in message) && 'id' in message ? message.id : undefined;
}

const isCancellation = (message: JSONRPCMessage): boolean => 'method' in message && !('id' in message) && message.method === 'notifications/cancelled';

export interface ExchangeLimits {
  /** How many of the messages' requests run at once; the rest wait for a free place, in order. */
  readonly concurrency: number;
  /** After this long every request still unanswered gets a timeout error and the exchange ends. */
  readonly timeoutMs: number;
}

const duration = (ms: number): string => (ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`);

const timeoutError = (id: RequestId, started: boolean, after: string): JSONRPCMessage => ({
  jsonrpc: '2.0',
  id,
  error: {
    code: ErrorCode.RequestTimeout,
    message: started
      ? `Request timed out after ${after}; a write it made may still be applied: read before retrying`
      : `Request not started: the batch ran out of time after ${after}`,
  },
});

/**
 * A transport for one HTTP request of a stateless server: it hands the request's messages to
 * the SDK's protocol and collects the responses, so the HTTP layer (Fastify) owns the wire
 * and the SDK owns JSON-RPC and MCP semantics. Nothing outlives the request.
 *
 * Every request of the exchange is answered, always: a batch runs at most `concurrency` calls
 * at a time (one POST cannot occupy every database connection or starve other clients), and a
 * request still running at the deadline is answered with a timeout error. A cancellation is
 * not passed on: the SDK would stop waiting for the cancelled request and never answer it, so
 * the POST would hang, while its work (a write, say) runs to its end regardless. The request is
 * answered with what really happened instead, which the MCP specification allows a client to
 * ignore.
 */
export class OneShotTransport implements Transport {
  onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined;
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;

  readonly #responses = new Map<RequestId, JSONRPCMessage>();
  readonly #running = new Set<RequestId>();
  // Resolved (and replaced) whenever a running request is answered.
  #answered: () => void = () => undefined;

  start(): Promise<void> {
    return Promise.resolve();
  }

  send(message: JSONRPCMessage): Promise<void> {
    const id = responseId(message);
    // Server-initiated requests and notifications have no place in a JSON response; drop them.
    if (id !== undefined && this.#running.delete(id)) {
      this.#responses.set(id, message);
      this.#answered();
    }
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.onclose?.();
    return Promise.resolve();
  }

  /** Delivers the messages and resolves with one response per request, in request order. */
  async exchange(messages: readonly JSONRPCMessage[], limits: ExchangeLimits, extra?: MessageExtraInfo): Promise<JSONRPCMessage[]> {
    const ids = messages.map(requestId).filter((id): id is RequestId => id !== undefined);
    const started = new Set<RequestId>();
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        timedOut = true;
        resolve();
      }, limits.timeoutMs);
    });
    const nextAnswer = () => Promise.race([new Promise<void>((resolve) => (this.#answered = resolve)), deadline]);
    try {
      for (const message of messages) {
        if (isCancellation(message)) continue;
        const id = requestId(message);
        if (id !== undefined) {
          while (this.#running.size >= limits.concurrency && !timedOut) await nextAnswer();
          if (timedOut) break;
          this.#running.add(id);
          started.add(id);
        }
        this.onmessage?.(message, extra);
      }
      while (this.#running.size > 0 && !timedOut) await nextAnswer();
    } finally {
      clearTimeout(timer);
    }
    return ids.map((id) => this.#responses.get(id) ?? timeoutError(id, started.has(id), duration(limits.timeoutMs)));
  }
}
