import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyReply } from 'fastify';
import { rateLimitedWait } from '../mcp/errors.ts';

/**
 * The status of a POST's answers, and their Retry-After: a call refused over a rate
 * (RateLimitedCall) makes the answer 429 with `Retry-After` (its seconds; the longest of
 * several), so a client's HTTP layer sees the wait as well as the JSON-RPC error's data. A batch
 * where some requests were served keeps 200, so its other answers are not lost to a client that
 * drops the body of an error status; the header still says how long the refused ones wait.
 */
export function answerStatus(reply: FastifyReply, answers: readonly JSONRPCMessage[]): 200 | 429 {
  const requests = answers.filter((answer) => 'result' in answer || 'error' in answer);
  const waits = requests.map(rateLimitedWait);
  const limited = waits.filter((wait): wait is number => wait !== undefined);
  if (limited.length === 0) return 200;
  reply.header('retry-after', String(Math.max(...limited)));
  return limited.length === requests.length ? 429 : 200;
}
