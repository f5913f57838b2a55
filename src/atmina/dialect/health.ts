import { z } from 'zod';
import { checkReadiness } from '../../kernel/health/readiness.ts';
import { searchProvisioning } from '../../kernel/health/search.ts';
import type { Services } from '../../kernel/services.ts';
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
  search: z
    .object({
      backend: z.string().describe('The search engine: builtin (in the store) or meilisearch.'),
      configured: z.boolean(),
      answers: z.boolean().nullable().describe('Whether it answered just now; null when none is configured.'),
      projection_running: z.boolean().describe('Whether this gateway feeds it: writes reach search.'),
      provisioned: z.boolean().describe('Configured, answering and fed.'),
      pending: z.number().int().describe('Writes waiting to reach search (all of the gateway).'),
      failing: z.number().int().describe('Waiting writes that failed at least once.'),
      last_error: z.string().nullable(),
    })
    .describe('Search provisioning: whether search results can include what was written.'),
});

export type HealthReport = z.infer<typeof output>;

/** What health answers, and atmina://status shows. */
export async function healthReport(services: Services): Promise<HealthReport> {
  const readiness = await checkReadiness(services.probes);
  const search = await searchProvisioning(services.db, { configured: true, projections: services.projections.projections.map((p) => p.name) }, readiness);
  return {
    status: readiness.ok ? 'ok' : 'degraded',
    build: { ...services.build },
    backends: readiness.checks.map((c) => ({ role: c.role, backend: c.backend, ok: c.ok, latency_ms: c.latencyMs })),
    search: {
      backend: search.backend,
      configured: search.configured,
      answers: search.answers,
      projection_running: search.projectionRunning,
      provisioned: search.provisioned,
      pending: search.pending,
      failing: search.failing,
      last_error: search.lastError,
    },
  };
}

export const health = defineTool({
  name: 'health',
  dialect: 'atmina',
  title: 'Health',
  description:
    'Build information, the health of each backend (store, file bytes, search, graph) and whether search is provisioned (configured, answering, fed by this gateway, how many writes wait). Use it when results look stale or a call reports unavailable.',
  input,
  output,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  scopes: ['context.read'],
  async run({ services }) {
    return jsonReply(await healthReport(services));
  },
});
