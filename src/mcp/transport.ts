import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo, RequestId } from '@modelcontextprotocol/sdk/types.js';

function requestId(message: JSONRPCMessage): RequestId | undefined {
  return 'method' in message && 'id' in message ? message.id : undefined;
}

function responseId(message: JSONRPCMessage): RequestId | undefined {
  return !('method' in message) && 'id' in message ? message.id : undefined;
}

/**
 * A transport for one HTTP request of a stateless server: it hands the request's messages to
 * the SDK's protocol and collects the responses, so the HTTP layer (Fastify) owns the wire
 * and the SDK owns JSON-RPC and MCP semantics. Nothing outlives the request.
 */
export class OneShotTransport implements Transport {
  onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined;
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;

  readonly #responses = new Map<RequestId, JSONRPCMessage>();
  #waiting = new Set<RequestId>();
  #done: (() => void) | undefined;

  start(): Promise<void> {
    return Promise.resolve();
  }

  send(message: JSONRPCMessage): Promise<void> {
    const id = responseId(message);
    // Server-initiated requests and notifications have no place in a JSON response; drop them.
    if (id !== undefined && this.#waiting.delete(id)) {
      this.#responses.set(id, message);
      if (this.#waiting.size === 0) this.#done?.();
    }
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.onclose?.();
    return Promise.resolve();
  }

  /** Delivers the messages and resolves with one response per request, in request order. */
  async exchange(messages: readonly JSONRPCMessage[], extra?: MessageExtraInfo): Promise<JSONRPCMessage[]> {
    const ids = messages.map(requestId).filter((id): id is RequestId => id !== undefined);
    this.#waiting = new Set(ids);
    const finished = ids.length === 0 ? Promise.resolve() : new Promise<void>((resolve) => (this.#done = resolve));
    for (const message of messages) this.onmessage?.(message, extra);
    await finished;
    return ids.map((id) => this.#responses.get(id)).filter((m): m is JSONRPCMessage => m !== undefined);
  }
}
