import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import type { JsonSchemaType, JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';

/**
 * The SDK client's output-schema validation, compiled once per distinct schema for the whole
 * test process: each client compiles every listed tool's output schema again at tools/list
 * (the schemas arrive as new objects, so Ajv's own cache misses), and the suites connect
 * hundreds of clients. Validation itself is the SDK's own, unchanged.
 */
class SharedValidators implements jsonSchemaValidator {
  readonly #ajv = new AjvJsonSchemaValidator();
  readonly #compiled = new Map<string, JsonSchemaValidator<unknown>>();

  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    const key = JSON.stringify(schema);
    let validator = this.#compiled.get(key);
    if (validator === undefined) {
      validator = this.#ajv.getValidator<unknown>(schema);
      this.#compiled.set(key, validator);
    }
    return validator as JsonSchemaValidator<T>;
  }
}

const validators = new SharedValidators();

/** The MCP SDK's own client, not yet connected. */
export function sdkClient(name: string, version = '1.0.0'): Client {
  return new Client({ name, version }, { jsonSchemaValidator: validators });
}

/**
 * One `tools/call` as a plain HTTP POST with a bearer token (legacy revision 2025-06-18), the
 * answer read whole: for suites and benches that look at the wire or time the call itself.
 */
export function postToolCall(endpoint: string, token: string, name: string, args: Readonly<Record<string, unknown>> = {}): Promise<Response> {
  return fetch(endpoint, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
}
