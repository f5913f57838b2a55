import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';

/** What a browser-based MCP client sends: the bearer token, the body's type, and the MCP headers of both protocol eras. */
export const MCP_CORS_ALLOWED_HEADERS = [
  'authorization',
  'content-type',
  'accept',
  'mcp-protocol-version',
  'mcp-session-id',
  'mcp-method',
  'mcp-name',
  'last-event-id',
  'x-request-id',
] as const;

/** What such a client must read: the OAuth challenge of a 401 or 403, the protocol version, a rate refusal's wait, the request id. */
export const MCP_CORS_EXPOSED_HEADERS = ['www-authenticate', 'mcp-protocol-version', 'mcp-session-id', 'retry-after', 'x-request-id'] as const;

/** How long a browser may keep a preflight's answer. */
export const MCP_CORS_MAX_AGE_S = 600;

const escaped = (segment: string): string => segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * CORS on the MCP endpoints (docs/mcp.md, "Browsers"), by @fastify/cors. A page on an origin
 * that may call the gateway (KGW_ALLOWED_ORIGINS, or the gateway's own) gets its preflight
 * answered and may read every answer, a 401 and its WWW-Authenticate included, so a web app can
 * start OAuth. Any other origin gets no CORS header at all (and its POST the Origin check's
 * 403). Credentials are never allowed: MCP authenticates with bearer tokens, not cookies. Only
 * the MCP paths (`:name` segments match one segment): elsewhere the plugin's wildcard OPTIONS
 * route answers 404, as before, and the OAuth routes keep their own rules.
 */
export async function registerMcpCors(scope: FastifyInstance, origins: ReadonlySet<string>, paths: readonly string[]): Promise<void> {
  const patterns = paths.map(
    (path) =>
      new RegExp(
        `^${path
          .split('/')
          .map((segment) => (segment.startsWith(':') ? '[^/]+' : escaped(segment)))
          .join('/')}$`,
      ),
  );
  const isMcpPath = (url: string): boolean => {
    const path = url.split('?', 1)[0] ?? '';
    return patterns.some((pattern) => pattern.test(path));
  };
  await scope.register(cors, {
    hook: 'onRequest',
    delegator: (request, callback) => {
      const origin = request.headers.origin;
      const allowed = origin !== undefined && origins.has(origin) && isMcpPath(request.url);
      callback(null, {
        origin: allowed ? origin : false,
        methods: ['GET', 'POST', 'DELETE'],
        allowedHeaders: [...MCP_CORS_ALLOWED_HEADERS],
        exposedHeaders: [...MCP_CORS_EXPOSED_HEADERS],
        maxAge: MCP_CORS_MAX_AGE_S,
        credentials: false,
        strictPreflight: true,
      });
    },
  });
}
