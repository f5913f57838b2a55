import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { TokenInfo } from '../../src/kernel/tokens/tokens.ts';
import type { CliStore } from './support.ts';
import { ORG, TOKEN_LINE, cliStoreBackends, kgw, lines, lookedIn, writeIn } from './support.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const INFO_KEYS = ['createdAt', 'expiresAt', 'id', 'label', 'principal', 'principalKind', 'revokedAt', 'scopes', 'source', 'tenant'];

/** Asserts `iso` lies `ms` from now, within a few minutes (the runs take time). */
function assertIn(iso: string | null, ms: number): void {
  assert.ok(iso !== null, 'an expiry');
  const delta = Date.parse(iso) - (Date.now() + ms);
  assert.ok(Math.abs(delta) < 5 * 60_000, `${iso} is about ${ms} ms from now (off by ${delta} ms)`);
}

for (const backend of cliStoreBackends()) {
  describe(`kgw token on ${backend.name}`, () => {
    let store: CliStore;
    const token = (...args: string[]) => kgw(['token', ...args], store.env);
    const create = (label: string, ...more: string[]) =>
      token('create', '--tenant', 'acme', '--principal', 'release-bot', '--scopes', 'context.read', '--label', label, ...more);
    const list = async (...flags: string[]): Promise<TokenInfo[]> => {
      const run = await token('list', '--json', ...flags);
      assert.equal(run.code, 0, run.stderr);
      return JSON.parse(run.stdout) as TokenInfo[];
    };
    const byLabel = (tokens: readonly TokenInfo[], label: string): TokenInfo => {
      const found = tokens.filter((t) => t.label === label);
      assert.equal(found.length, 1, `one token labelled ${label}`);
      return found[0]!;
    };

    before(async () => {
      store = await backend.open();
      const run = await kgw(['apply', await writeIn(store.workDir, 'org.yaml', ORG)], store.env);
      assert.equal(run.code, 0, run.stderr);
    });
    after(() => store.dispose());

    it('create prints only the token; list shows it without secret or hash', async () => {
      const created = await token('create', '--tenant', 'acme', '--principal', 'release-bot', '--scopes', 'context.read', '--label', 'first');
      assert.equal(created.code, 0, created.stderr);
      assert.equal(created.stderr, '');
      assert.match(created.stdout, TOKEN_LINE);
      assert.equal(lines(created.stdout).length, 1);
      const secret = created.stdout.trim();
      const hash = createHash('sha256').update(secret).digest('hex');

      const json = await token('list', '--json');
      assert.equal(json.code, 0, json.stderr);
      const info = byLabel(JSON.parse(json.stdout) as TokenInfo[], 'first');
      assert.deepEqual(Object.keys(info).sort(), INFO_KEYS);
      assert.equal(info.tenant, 'acme');
      assert.equal(info.principal, 'release-bot');
      assert.equal(info.principalKind, 'agent');
      assert.deepEqual(info.scopes, ['context.read']);
      assert.equal(info.source, 'cli');
      assert.equal(info.revokedAt, null);
      assertIn(info.expiresAt, 90 * DAY);
      assert.match(info.id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);

      const table = await token('list');
      assert.equal(table.code, 0, table.stderr);
      const [header, ...rows] = lines(table.stdout);
      assert.match(header ?? '', /^ID +TENANT +PRINCIPAL +SCOPES +EXPIRES +STATUS +LABEL$/);
      const row = rows.find((r) => r.startsWith(info.id));
      assert.ok(row, `a row for ${info.id}`);
      assert.deepEqual(row.split(/ {2,}/), [info.id, 'acme', 'release-bot', 'context.read', info.expiresAt, 'active', 'first']);

      for (const output of [json.stdout, table.stdout]) {
        assert.ok(!output.includes(secret), 'no secret');
        assert.ok(!output.includes(secret.slice(4)), 'no secret without its prefix');
        assert.ok(!output.includes('kgw_'), 'nothing that looks like a token');
        assert.ok(!output.includes(hash), 'no hash');
        assert.doesNotMatch(output, /[0-9a-f]{64}/, 'nothing that looks like a hash');
        assert.doesNotMatch(output, /secret|hash/i);
      }
    });

    it('--ttl never, --ttl 1h and scope normalisation', async () => {
      for (const [label, ttl] of [
        ['never', 'never'],
        ['hour', '1h'],
      ] as const) {
        const run = await create(label, '--ttl', ttl);
        assert.equal(run.code, 0, run.stderr);
        assert.match(run.stdout, TOKEN_LINE);
      }
      const person = await token(
        'create',
        '--tenant',
        'acme',
        '--principal',
        'Alice@Acme.test',
        '--scopes',
        'documents.write,activity.write',
        '--label',
        'alice',
      );
      assert.equal(person.code, 0, person.stderr);
      assert.match(person.stdout, TOKEN_LINE);

      const tokens = await list('--tenant', 'acme');
      assert.equal(byLabel(tokens, 'never').expiresAt, null);
      assertIn(byLabel(tokens, 'hour').expiresAt, HOUR);
      const alice = byLabel(tokens, 'alice');
      assert.equal(alice.principal, 'alice@acme.test');
      assert.equal(alice.principalKind, 'person');
      assert.deepEqual(alice.scopes, ['context.read', 'context.write', 'activity.write']);
    });

    // The common mistakes run on every store; the rest of the validation only on PostgreSQL, where a run is cheap.
    const FAILURES: { title: string; args: string[]; line: string; everywhere?: boolean; notFound?: boolean }[] = [
      {
        title: 'an unknown scope',
        args: ['--principal', 'release-bot', '--scopes', 'context.read admin'],
        line: 'kgw: unknown scope "admin"; known scopes: context.read, context.write, activity.write, brain:read, brain:propose, outreach:propose',
        everywhere: true,
      },
      { title: 'no scope at all', args: ['--principal', 'release-bot', '--scopes', ' '], line: 'kgw: at least one scope is required' },
      {
        title: 'an unknown principal',
        args: ['--principal', 'carol@acme.test', '--scopes', 'context.read'],
        line: 'kgw: no person or agent "carol@acme.test" in tenant "acme"',
        notFound: true,
        everywhere: true,
      },
      {
        title: 'an unknown agent',
        args: ['--principal', 'deploy-bot', '--scopes', 'context.read'],
        line: 'kgw: no person or agent "deploy-bot" in tenant "acme"',
        notFound: true,
      },
      {
        title: 'an unknown tenant',
        args: ['--tenant', 'globex', '--principal', 'release-bot', '--scopes', 'context.read'],
        line: 'kgw: tenant "globex" not found',
        notFound: true,
        everywhere: true,
      },
      {
        title: 'a bad ttl',
        args: ['--principal', 'release-bot', '--scopes', 'context.read', '--ttl', '5 days'],
        line: 'kgw: invalid duration "5 days"; use e.g. 30m, 12h, 90d, 1w or never',
        everywhere: true,
      },
      {
        title: 'a zero ttl',
        args: ['--principal', 'release-bot', '--scopes', 'context.read', '--ttl', '0h'],
        line: 'kgw: duration "0h" must be longer than zero',
      },
      {
        title: 'a ttl over ten years',
        args: ['--principal', 'release-bot', '--scopes', 'context.read', '--ttl', '522w'],
        line: 'kgw: duration "522w" is longer than ten years',
      },
    ];
    it('create refuses bad input with exit 1 and one line, and creates nothing', async () => {
      for (const { title, args, line, notFound } of FAILURES.filter((f) => f.everywhere === true || backend.name === 'postgres')) {
        const run = await token('create', '--tenant', 'acme', ...args, '--label', 'refused');
        assert.equal(run.code, 1, `${title}: ${run.stderr}`);
        assert.equal(run.stdout, '', title);
        assert.deepEqual(lines(run.stderr), [notFound === true ? `${line}${lookedIn(store)}` : line], title);
      }
      if (backend.name === 'postgres') {
        const listed = await token('list', '--tenant', 'globex');
        assert.equal(listed.code, 1);
        assert.deepEqual(lines(listed.stderr), [`kgw: tenant "globex" not found${lookedIn(store)}`]);
      }
      const all = await list('--all');
      assert.deepEqual(
        all.filter((t) => t.label === 'refused'),
        [],
      );
    });

    it('revoke hides a token from list; --all shows it revoked', async () => {
      assert.equal((await create('doomed')).code, 0);
      const { id } = byLabel(await list(), 'doomed');
      const revoked = await token('revoke', id);
      assert.equal(revoked.code, 0, revoked.stderr);
      assert.equal(revoked.stdout, `revoked ${id} (release-bot in acme)\n`);

      assert.deepEqual(
        (await list()).filter((t) => t.id === id),
        [],
        'list leaves it out',
      );
      const table = await token('list', '--all');
      assert.equal(table.code, 0, table.stderr);
      const rows = lines(table.stdout).map((r) => r.split(/ {2,}/));
      assert.deepEqual(rows.find((r) => r[0] === id)?.slice(5), ['revoked', 'doomed']);
      // The token of the --ttl test, never expiring, is still active.
      assert.deepEqual(rows.find((r) => r[6] === 'never')?.slice(4), ['never', 'active', 'never']);

      const again = await token('revoke', id);
      assert.equal(again.code, 0, 'revoking twice is harmless');
      assert.equal(again.stdout, revoked.stdout);
      if (backend.name === 'postgres') {
        const shown = byLabel(await list('--all'), 'doomed');
        assert.ok(shown.revokedAt !== null && Math.abs(Date.parse(shown.revokedAt) - Date.now()) < 5 * 60_000);
      }
    });

    it('revoke of an unknown id exits 1 with one line', async () => {
      for (const id of backend.name === 'postgres' ? ['6f1c7a52-56a4-4c1e-9a43-0b0d1b8f2a11', 'not-an-id'] : ['6f1c7a52-56a4-4c1e-9a43-0b0d1b8f2a11']) {
        const run = await token('revoke', id);
        assert.equal(run.code, 1, run.stderr);
        assert.deepEqual(lines(run.stderr), [`kgw: no token with id "${id}"${lookedIn(store)}`]);
      }
    });
  });
}
