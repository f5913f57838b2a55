import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ProbeResult } from '../../src/kernel/health/readiness.ts';
import type { CliStore } from './support.ts';
import { connectClient } from '../support/gateway.ts';
import { NO_GATEWAY_PORT, ORG, cliEnv, cliStoreBackends, kgw, lines, serve, tempDir, writeIn } from './support.ts';

/** Three public KBs and a team one of acme; the tests archive `retired`, so anonymous search covers two. */
const ORG_WITH_KBS = `${ORG}kbs:
  - slug: handbook
    name: Handbook
    team: docs
    visibility: public
  - slug: faq
    name: FAQ
    team: docs
    visibility: public
  - slug: retired
    name: Retired
    team: docs
    visibility: public
  - slug: internal
    name: Internal
    team: docs
`;

interface AnonymousReport {
  ok: boolean;
  anonymousSearch: { tenant: string; exists: boolean; publicKbs: number | null }[];
  warnings: string[];
}

for (const backend of cliStoreBackends()) {
  describe(`kgw doctor on ${backend.name}`, () => {
    let store: CliStore;
    const storeBackend = backend.name === 'embedded' ? 'pglite' : 'postgres';
    const via = backend.name === 'embedded' ? 'embedded store' : 'PostgreSQL';

    before(async () => {
      store = await backend.open({ migrated: false });
    });
    after(() => store.dispose());

    it('exits 0 with a table of the store, the blob backend, the built-in search engine and the graph tables', async () => {
      const run = await kgw(['doctor'], store.env);
      assert.equal(run.code, 0, run.stderr + run.stdout);
      assert.equal(run.stderr, '');
      const [config, where, blank, header, ...rows] = lines(run.stdout);
      assert.equal(
        config,
        `configuration  ok (data folder ${store.dataDir}, public URL http://127.0.0.1:${NO_GATEWAY_PORT}, listening on 127.0.0.1:${NO_GATEWAY_PORT})`,
      );
      assert.equal(where, `checked via    ${via}`);
      assert.equal(blank, '');
      assert.match(header ?? '', /^ROLE +BACKEND +STATUS +LATENCY +DETAIL$/);
      assert.deepEqual(
        rows.map((r) => r.split(/ {2,}/).slice(0, 3)),
        [
          ['store', storeBackend, 'ok'],
          ['blob', 'disk', 'ok'],
          ['search', 'builtin', 'ok'],
          ['graph', 'builtin', 'ok'],
        ],
      );
      for (const row of rows) assert.match(row, / \d+ ms +$/);
    });

    it('--json prints the same checks', async () => {
      const run = await kgw(['doctor', '--json'], store.env);
      assert.equal(run.code, 0, run.stderr);
      const report = JSON.parse(run.stdout) as { ok: boolean; via: string; checks: ProbeResult[] };
      assert.equal(report.ok, true);
      assert.equal(report.via, via);
      assert.deepEqual(
        report.checks.map((c) => ({ role: c.role, backend: c.backend, ok: c.ok, latencyMs: typeof c.latencyMs })),
        [
          { role: 'store', backend: storeBackend, ok: true, latencyMs: 'number' },
          { role: 'blob', backend: 'disk', ok: true, latencyMs: 'number' },
          { role: 'search', backend: 'builtin', ok: true, latencyMs: 'number' },
          { role: 'graph', backend: 'builtin', ok: true, latencyMs: 'number' },
        ],
      );
    });

    it('exits 1 when a configured backend does not answer, and says which', async () => {
      // Nothing listens on port 9 (discard): the connection is refused at once.
      const run = await kgw(['doctor'], { ...store.env, MEILI_URL: 'http://127.0.0.1:9' });
      assert.equal(run.code, 1, run.stderr);
      assert.equal(run.stderr, '');
      const rows = lines(run.stdout)
        .slice(4)
        .map((r) => r.split(/ {2,}/));
      assert.deepEqual(
        rows.map((r) => r.slice(0, 3)),
        [
          ['store', storeBackend, 'ok'],
          ['blob', 'disk', 'ok'],
          ['search', 'meilisearch', 'FAIL'],
          ['graph', 'builtin', 'ok'],
        ],
      );
      assert.match(rows[2]?.[4] ?? '', /127\.0\.0\.1:9/);
    });

    describe('with KGW_ANONYMOUS_SEARCH_TENANTS', () => {
      let env: Record<string, string>;

      before(async () => {
        const applied = await kgw(['apply', await writeIn(store.workDir, 'org.yaml', ORG_WITH_KBS)], store.env);
        assert.equal(applied.code, 0, applied.stderr);
        const shown = await kgw(['kb', 'show', 'retired', '--tenant', 'acme', '--json'], store.env);
        assert.equal(shown.code, 0, shown.stderr);
        const retired = (JSON.parse(shown.stdout) as { kb_id: string }).kb_id;
        const created = await kgw(['token', 'create', '--tenant', 'acme', '--principal', 'alice@acme.test', '--scopes', 'context.write'], store.env);
        assert.equal(created.code, 0, created.stderr);
        // An archived public KB is no longer searched anonymously, so doctor must not count it.
        const gateway = await serve(store.env);
        try {
          const client = await connectClient(`${gateway.url}/atmina/mcp`, created.stdout.trim());
          const deleted = await client.callTool({ name: 'delete_kb', arguments: { kb_id: retired, confirm: 'retired' } });
          assert.notEqual(deleted.isError, true, JSON.stringify(deleted.content));
          await client.close();
        } finally {
          await gateway.stop();
        }
        env = { ...store.env, KGW_ANONYMOUS_SEARCH_TENANTS: 'acme, ghost' };
      });

      it('lists each tenant with whether it exists and its live public KBs, after the checks', async () => {
        const run = await kgw(['doctor'], env);
        assert.equal(run.code, 0, run.stderr + run.stdout);
        const out = lines(run.stdout);
        const header = out.findIndex((l) => l.startsWith('ANONYMOUS SEARCH TENANT'));
        assert.match(out[header] ?? '', /^ANONYMOUS SEARCH TENANT +EXISTS +PUBLIC KBS$/);
        assert.deepEqual(
          out.slice(header + 1, header + 3).map((r) => r.split(/ {2,}/)),
          [
            ['acme', 'yes', '2'],
            ['ghost', 'no', '-'],
          ],
        );
      });

      it('warns for a listed tenant that does not exist, and still exits 0', async () => {
        const run = await kgw(['doctor'], env);
        assert.equal(run.code, 0, run.stderr + run.stdout);
        assert.equal(run.stderr, '');
        assert.deepEqual(
          lines(run.stdout).filter((l) => l.startsWith('warning:')),
          ['warning: KGW_ANONYMOUS_SEARCH_TENANTS names tenant "ghost", which does not exist: its anonymous endpoint answers 404'],
        );
      });

      it('--json gives the tenants and the warnings', async () => {
        const run = await kgw(['doctor', '--json'], env);
        assert.equal(run.code, 0, run.stderr);
        const report = JSON.parse(run.stdout) as AnonymousReport;
        assert.equal(report.ok, true);
        assert.deepEqual(report.anonymousSearch, [
          { tenant: 'acme', exists: true, publicKbs: 2 },
          { tenant: 'ghost', exists: false, publicKbs: null },
        ]);
        assert.deepEqual(report.warnings, ['KGW_ANONYMOUS_SEARCH_TENANTS names tenant "ghost", which does not exist: its anonymous endpoint answers 404']);
      });

      it('prints no tenant table and no warning when the variable is unset', async () => {
        const run = await kgw(['doctor'], store.env);
        assert.equal(run.code, 0, run.stderr);
        const out = lines(run.stdout);
        assert.equal(out.filter((l) => l.startsWith('ANONYMOUS SEARCH TENANT') || l.startsWith('warning:')).length, 0);
        const report = JSON.parse((await kgw(['doctor', '--json'], store.env)).stdout) as AnonymousReport;
        assert.deepEqual(report.anonymousSearch, []);
        assert.deepEqual(report.warnings, []);
      });
    });

    // With DATABASE_URL nothing creates the data folder (src/app.ts openStore makes it for PGlite
    // only), yet without S3 the blob probe requires it: a fresh PostgreSQL deployment is not ready.
    if (backend.name === 'postgres') {
      it('is ready on a data folder that does not exist yet', async () => {
        const run = await kgw(['doctor'], { ...store.env, KGW_DATA_DIR: path.join(store.dataDir, 'fresh') });
        assert.equal(run.code, 0, run.stdout);
      });
    }
  });
}

describe('kgw doctor without a store', () => {
  it('exits 1 and still checks every backend when PostgreSQL does not answer', async () => {
    const dir = await tempDir();
    const run = await kgw(['doctor'], cliEnv({ KGW_DATA_DIR: dir, DATABASE_URL: 'postgres://kgw:kgw@127.0.0.1:9/kgw', MEILI_URL: 'http://127.0.0.1:9' }));
    await rm(dir, { recursive: true, force: true });
    assert.equal(run.code, 1);
    assert.equal(run.stderr, '');
    const rows = lines(run.stdout)
      .slice(4)
      .map((r) => r.split(/ {2,}/));
    assert.deepEqual(
      rows.map((r) => r.slice(0, 3)),
      [
        ['store', 'postgres', 'FAIL'],
        ['blob', 'disk', 'ok'],
        ['search', 'meilisearch', 'FAIL'],
        // The graph tables live in the store: down with it.
        ['graph', 'builtin', 'FAIL'],
      ],
    );
    assert.match(rows[0]?.[4] ?? '', /ECONNREFUSED/);
  });
});
