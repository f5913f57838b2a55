import { loadConfig } from '../config.ts';
import type { AnonymousTenantStatus } from '../admin/ops.ts';
import type { ProjectionStatus } from '../kernel/outbox/outbox.ts';
import { withOps } from './session.ts';
import { jsonText, print } from './terminal.ts';
import { parseCommand, table } from './usage.ts';

export const doctorHelp = `Usage: kgw doctor [--json]

Checks the configuration, then reaches the store and every configured backend and prints a
table, then a second table of the projections (search, graph) when there are any: rows
waiting in the outbox, the age of the oldest, and the latest failure (marked past, with its
time, once the projection has applied rows since and none waits failing). Exits non-zero when
the configuration is bad or a backend does not answer; a backlog alone is not a failure.
The search row of Meilisearch also fails when the index's settings differ from the ones the
gateway applies (someone changed them), and names the differences.
When KGW_ANONYMOUS_SEARCH_TENANTS names tenants, a last table lists each with whether it
exists and how many live public KBs anonymous search would cover, and a warning line names
each listed tenant that does not exist (its anonymous endpoint answers 404); a warning alone
is not a failure.`;

/**
 * Whether a projection's latest failure is over: a batch applied after it and no waiting row
 * has failed. The error stays visible, marked past with its time, so an outage that healed
 * overnight is still seen, but no longer reads as the current state.
 */
export function errorIsPast(p: ProjectionStatus): boolean {
  return p.lastError !== null && p.failing === 0 && p.lastAppliedAt !== null && (p.lastErrorAt === null || p.lastAppliedAt > p.lastErrorAt);
}

function lastError(p: ProjectionStatus): string {
  if (p.lastError === null) return '';
  return errorIsPast(p) ? `past (${p.lastErrorAt ?? '?'}, applied since): ${p.lastError}` : `${p.lastError} (${p.lastErrorAt ?? ''})`;
}

function age(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 120_000) return `${Math.round(ms / 1000)} s`;
  return `${Math.round(ms / 60_000)} min`;
}

export async function doctorCommand(argv: readonly string[]): Promise<void> {
  const { values, help } = parseCommand(argv, { json: { type: 'boolean' } }, { min: 0, max: 0 });
  if (help) return void print(doctorHelp);
  const config = loadConfig();
  // Doctor only looks: it never migrates, and an unreachable store is a row of the table.
  const { readiness, projections, anonymous, where, served } = await withOps(
    config,
    async (run, where) => {
      // Through a gateway, its own configuration: the data folder and URL it serves, not this command's.
      const served = await run('config.summary');
      const readiness = await run('readiness');
      // An unreachable store (already a FAIL row) or one not yet migrated has no projection table.
      const projections = await run('projections.status').catch((): ProjectionStatus[] => []);
      // Likewise: without a store the tenants cannot be looked up, and the store row already says why.
      const anonymous = await run('anonymous.tenants').catch((): AnonymousTenantStatus[] => []);
      return { readiness, projections, anonymous, where, served };
    },
    { migrate: false },
  );
  const remote = where.startsWith('gateway');
  const warnings = anonymous
    .filter((t) => !t.exists)
    .map((t) => `KGW_ANONYMOUS_SEARCH_TENANTS names tenant "${t.tenant}", which does not exist: its anonymous endpoint answers 404`);
  if (values.json === true) {
    const shown = projections.map((p) => ({ ...p, lastErrorPast: errorIsPast(p) }));
    print(
      jsonText({ ok: readiness.ok, via: where, configuration: served, checks: readiness.checks, projections: shown, anonymousSearch: anonymous, warnings }),
    );
  } else {
    print(`configuration  ok (data folder ${served.dataDir}, public URL ${served.publicUrl}, listening on ${served.listen})`);
    print(`checked via    ${where}${remote ? " (the gateway's own configuration)" : ''}\n`);
    print(
      table(
        ['ROLE', 'BACKEND', 'STATUS', 'LATENCY', 'DETAIL'],
        readiness.checks.map((c) => [c.role, c.backend, c.ok ? 'ok' : 'FAIL', `${c.latencyMs} ms`, c.error ?? '']),
      ),
    );
    if (projections.length > 0) {
      print('');
      print(
        table(
          ['PROJECTION', 'BACKLOG', 'OLDEST', 'FAILING', 'LAST ERROR'],
          projections.map((p) => [p.projection, String(p.backlog), p.backlog === 0 ? '-' : age(p.oldestAgeMs), String(p.failing), lastError(p)]),
        ),
      );
    }
    if (anonymous.length > 0) {
      print('');
      print(
        table(
          ['ANONYMOUS SEARCH TENANT', 'EXISTS', 'PUBLIC KBS'],
          anonymous.map((t) => [t.tenant, t.exists ? 'yes' : 'no', t.publicKbs === null ? '-' : String(t.publicKbs)]),
        ),
      );
    }
    if (warnings.length > 0) print(['', ...warnings.map((w) => `warning: ${w}`)].join('\n'));
  }
  if (!readiness.ok) process.exitCode = 1;
}
