import type { Probe } from '../../../connectors/probe.ts';

export type { Probe } from '../../../connectors/probe.ts';

export interface ProbeResult {
  readonly role: Probe['role'];
  readonly backend: string;
  readonly ok: boolean;
  readonly latencyMs: number;
  readonly error?: string;
}

export interface Readiness {
  readonly ok: boolean;
  readonly checks: readonly ProbeResult[];
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    const text = error.message.split('\n')[0] ?? error.name;
    return typeof code === 'string' && !text.includes(code) ? `${code}: ${text}` : text;
  }
  return String(error);
}

/** Runs every probe at once, each bounded by `timeoutMs`; never throws. */
export async function checkReadiness(probes: readonly Probe[], timeoutMs = 3000): Promise<Readiness> {
  const checks = await Promise.all(
    probes.map(async (probe): Promise<ProbeResult> => {
      const started = performance.now();
      const signal = AbortSignal.timeout(timeoutMs);
      try {
        await Promise.race([
          probe.check(signal),
          new Promise<never>((_, reject) => {
            signal.addEventListener('abort', () => reject(new Error(`no answer within ${timeoutMs} ms`)), { once: true });
          }),
        ]);
        return { role: probe.role, backend: probe.backend, ok: true, latencyMs: Math.round(performance.now() - started) };
      } catch (error) {
        return { role: probe.role, backend: probe.backend, ok: false, latencyMs: Math.round(performance.now() - started), error: describe(error) };
      }
    }),
  );
  return { ok: checks.every((c) => c.ok), checks };
}
