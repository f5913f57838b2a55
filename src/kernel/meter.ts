/**
 * What the gateway counts for its metrics (`/metrics`, src/metrics.ts), told by the layers that
 * see it happen: the HTTP layer (requests, refused credentials), the call pipeline (tool calls
 * and their outcomes) and the search engine (query time). The kernel names no metrics library;
 * a gateway without metrics (the CLI, tests that build their own Services) has none.
 */
export interface Meter {
  /** A request answered: its route pattern (null when none matched), method, status and seconds. */
  request(route: string | null, method: string, status: number, seconds: number): void;
  /** A tool call finished: its dialect, name, outcome (`ok` or the error code) and seconds. */
  toolCall(dialect: string, tool: string, outcome: string, seconds: number): void;
  /** Credentials refused: a bearer token, a sign-in, an OAuth request. */
  authFailure(kind: 'bearer' | 'sign_in' | 'oauth'): void;
  /** A search the engine answered or failed, and its seconds. */
  search(engine: string, ok: boolean, seconds: number): void;
}
