import { loadConfig } from '../config.ts';
import type { Readiness } from '../core/health/readiness.ts';
import { withOps } from './session.ts';
import { parseCommand, table } from './usage.ts';

export const doctorHelp = `Usage: kgw doctor [--json]

Checks the configuration, then reaches the store and every configured backend and prints a
table. Exits non-zero when the configuration is bad or a backend does not answer.`;

export async function doctorCommand(argv: readonly string[]): Promise<void> {
  const { values, help } = parseCommand(argv, { json: { type: 'boolean' } }, { min: 0, max: 0 });
  if (help) return void console.log(doctorHelp);
  const config = loadConfig();
  // Doctor only looks: it never migrates, and an unreachable store is a row of the table.
  const { readiness, where } = await withOps(config, async (run, where) => ({ readiness: (await run('readiness')) as Readiness, where }), { migrate: false });
  const remote = where.startsWith('gateway');
  if (values.json === true) {
    console.log(JSON.stringify({ ok: readiness.ok, via: where, checks: readiness.checks }, null, 2));
  } else {
    console.log(`configuration  ok (data folder ${config.dataDir}, public URL ${config.publicUrl})`);
    console.log(`checked via    ${where}${remote ? " (the gateway's own configuration)" : ''}\n`);
    console.log(
      table(
        ['ROLE', 'BACKEND', 'STATUS', 'LATENCY', 'DETAIL'],
        readiness.checks.map((c) => [c.role, c.backend, c.ok ? 'ok' : 'FAIL', `${c.latencyMs} ms`, c.error ?? '']),
      ),
    );
  }
  if (!readiness.ok) process.exitCode = 1;
}
