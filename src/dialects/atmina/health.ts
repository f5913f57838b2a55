import { z } from 'zod';
import { checkReadiness } from '../../core/health/readiness.ts';
import type { Services } from '../../core/services.ts';
import { defineTool, jsonReply } from '../../mcp/tool.ts';

const input = z.object({}).strict();

const output = z.object({
  status: z.enum(['ok', 'degraded']).describe('ok when every backend answers; degraded otherwise.'),
  build: z.object({
    name: z.string().describe('Server name.'),
    version: z.string().describe('Server version.'),
    node: z.string().describe('Node.js version the server runs on.'),
  }),
  backends: z
    .array(
      z.object({
        role: z.enum(['store', 'blob', 'search', 'graph']).describe('What the backend is for.'),
        backend: z.string().describe('Which implementation serves it.'),
        ok: z.boolean().describe('Whether it answered.'),
        latency_ms: z.number().describe('How long the check took.'),
      }),
    )
    .describe('One entry per configured backend.'),
});

export type HealthReport = z.infer<typeof output>;

/** What health answers, and atmina://status shows. */
export async function healthReport(services: Services): Promise<HealthReport> {
  const readiness = await checkReadiness(services.probes);
  return {
    status: readiness.ok ? 'ok' : 'degraded',
    build: { ...services.build },
    backends: readiness.checks.map((c) => ({ role: c.role, backend: c.backend, ok: c.ok, latency_ms: c.latencyMs })),
  };
}

export const health = defineTool({
  name: 'health',
  dialect: 'atmina',
  title: 'Health',
  description:
    'Build information and the health of each backend (store, file bytes, search, graph). Use it when results look stale or a call reports unavailable.',
  input,
  output,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  scopes: ['context.read'],
  async run({ services }) {
    return jsonReply(await healthReport(services));
  },
});
