import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { OpArgs } from '../../src/admin/ops.ts';
import type { OpRunner } from '../../src/cli/session.ts';
import { withOps } from '../../src/cli/session.ts';
import { loadConfig } from '../../src/config.ts';
import { isKgwError } from '../../src/kernel/errors.ts';
import { pngOf, textPdf } from '../atmina/assets/fixtures.ts';
import type { CliStore, Served } from './support.ts';
import { cliStoreBackends, hostileEndpoint, kgw, openPeers, serve } from './support.ts';

/**
 * kgw import mcp --dialect atmina: a second gateway (its own store and kgw serve) stands in for
 * a hosted Atmina; the import reads it through its MCP tools with a real token and writes into
 * this gateway's store, checked through this gateway's tools. A hostile source, which no real
 * service would be, is an SDK McpServer in this process that lies about hashes and sizes,
 * names paths a KB cannot hold, points downloads elsewhere, rate-limits and never ends paging.
 */

const sha = (bytes: Buffer | string): string => createHash('sha256').update(bytes).digest('hex');
const IMAGE = pngOf(12, 7);
const PDF = textPdf([['Imported figures']]);
/** More than one request to a running gateway carries (16 MiB of JSON, base64): staged. */
const LARGE = Buffer.from(Array.from({ length: 12 * 1024 * 1024 }, (_, i) => (i * 7919) % 251));

interface KbReport {
  source: string;
  local: string;
  files: number;
  created: number;
  updated: number;
  unchanged: number;
  only_local: string[];
  skipped: { path: string; reason: string }[];
  failed: { path: string; reason: string }[];
  moved: { from: string; to: string }[];
}

interface TeamSettingsReport {
  updated: { team: string; changed: string[] }[];
  unchanged: string[];
  refused: { team: string | null; setting?: string; reason: string }[];
  not_visible: { team: string | null; reason: string }[];
}

interface Report {
  protocol: string | null;
  kbs: KbReport[];
  failed: { kb: string; reason: string }[];
  team_settings?: TeamSettingsReport;
}

type Listed = { files: { path: string; sha256: string; kind: string }[]; next_cursor: string | null };

for (const backend of cliStoreBackends()) {
  describe(`kgw import mcp --dialect atmina on ${backend.name}`, () => {
    let sourceStore: CliStore;
    let source: Served;
    let sourceClient: Client;
    let sourceToken: string;
    let store: CliStore;
    let client: Client;
    const run = (...args: string[]) => kgw(args, store.env, { timeoutMs: 120_000 });
    const imported = async (from: string, token: string, ...args: string[]): Promise<{ code: number | null; report: Report; stderr: string }> => {
      const result = await run(
        'import',
        'mcp',
        '--from',
        from,
        '--dialect',
        'atmina',
        '--token',
        token,
        '--tenant',
        'acme',
        '--as',
        'alice@acme.test',
        ...args,
        '--json',
      );
      return { code: result.code, report: JSON.parse(result.stdout || '{}') as Report, stderr: result.stderr };
    };
    const call = async (on: Client, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> => {
      const result = await on.callTool({ name, arguments: args });
      assert.notEqual(result.isError, true, JSON.stringify(result.content));
      return result.structuredContent as Record<string, unknown>;
    };
    const listAll = async (on: Client, kb: string): Promise<[string, string, string][]> => {
      const found: [string, string, string][] = [];
      let cursor: string | null = null;
      do {
        const page = (await call(on, 'list_files', { kb_id: kb, limit: 500, ...(cursor === null ? {} : { cursor }) })) as Listed;
        found.push(...page.files.map((f): [string, string, string] => [f.path, f.kind, f.sha256]));
        cursor = page.next_cursor;
      } while (cursor !== null);
      return found;
    };
    const kbOf = (report: Report, slug: string) => report.kbs.find((kb) => kb.source === slug);
    const counts = (kb: KbReport | undefined) => kb && { files: kb.files, created: kb.created, updated: kb.updated, unchanged: kb.unchanged };
    const sourceUrl = () => `${source.url}/atmina/mcp`;

    let peers: Awaited<ReturnType<typeof openPeers>>;
    before(async () => {
      peers = await openPeers(backend);
      ({ store: sourceStore, gateway: source, client: sourceClient, token: sourceToken } = peers.other);
      ({ store, client } = peers.local);
      await call(sourceClient, 'create_kb', { name: 'Handbook', team: 'docs' });
      await call(sourceClient, 'create_kb', { name: 'Secret', team: 'docs', visibility: 'private' });
      await call(sourceClient, 'write_files', {
        kb_id: 'handbook',
        items: [
          { path: 'README.md', mode: 'create', content: '# Handbook\n\nSee [[policies/leave]].\n' },
          { path: 'policies/leave.md', mode: 'create', content: '---\ntags: [hr]\n---\n# Leave\n\nTwenty days.\n' },
          { path: 'notes/ünïcödé name.md', mode: 'create', content: 'Ünïcödé\n' },
        ],
      });
      await call(sourceClient, 'upload_file', { kb_id: 'handbook', filename: 'img/chart.png', content_base64: IMAGE.toString('base64') });
      await call(sourceClient, 'upload_file', { kb_id: 'handbook', filename: 'docs/figures.pdf', content_base64: PDF.toString('base64') });
      await call(sourceClient, 'write_file', { kb_id: 'secret', path: 'plans.md', mode: 'create', content: '# Plans\n' });
      for (let start = 0; start < 600; start += 50) {
        if (start === 0) await call(sourceClient, 'create_kb', { name: 'Bulk', team: 'docs' });
        const items = Array.from({ length: 50 }, (_, i) => ({
          path: `n/${String(start + i).padStart(4, '0')}.md`,
          mode: 'create',
          content: `# Note ${start + i}\n`,
        }));
        await call(sourceClient, 'write_files', { kb_id: 'bulk', items });
      }
      // A file larger than one request to a gateway carries, uploaded in stages at the source.
      await call(sourceClient, 'create_kb', { name: 'Large', team: 'docs' });
      const batch = (await call(sourceClient, 'request_uploads', {
        kb_id: 'large',
        items: [{ path: 'archive.bin', mime_type: 'application/octet-stream', size_bytes: LARGE.length, sha256: sha(LARGE) }],
      })) as { batch_token: string; uploads: { url: string; headers: Record<string, string> }[] };
      const upload = batch.uploads[0]!;
      const put = await fetch(new URL(new URL(upload.url).pathname + new URL(upload.url).search, source.url), {
        method: 'PUT',
        headers: upload.headers,
        body: LARGE,
      });
      assert.equal(put.status < 300, true, await put.text());
      await call(sourceClient, 'confirm_uploads', { kb_id: 'large', batch_token: batch.batch_token });
      for (const name of ['Handbook', 'Secret', 'Bulk', 'Large']) await call(client, 'create_kb', { name, team: 'docs' });
    });
    after(async () => {
      await peers?.close();
    });

    it('says what a dry run would do and writes nothing', async () => {
      const { code, report } = await imported(sourceUrl(), sourceToken, '--dry-run', '--kb', 'handbook');
      assert.equal(code, 0, JSON.stringify(report));
      assert.deepEqual(counts(kbOf(report, 'handbook')), { files: 5, created: 5, updated: 0, unchanged: 0 });
      assert.deepEqual(await listAll(client, 'handbook'), []);
    });

    it('copies every file the token sees, text and Assets, byte for byte', async () => {
      const { code, report } = await imported(sourceUrl(), sourceToken, '--kb', 'handbook', '--kb', 'secret');
      assert.equal(code, 0, JSON.stringify(report));
      // This gateway offers the 2026-07-28 revision, so the import speaks it (a legacy source below gets the legacy handshake).
      assert.equal(report.protocol, '2026-07-28');
      assert.deepEqual(counts(kbOf(report, 'handbook')), { files: 5, created: 5, updated: 0, unchanged: 0 });
      assert.deepEqual(counts(kbOf(report, 'secret')), { files: 1, created: 1, updated: 0, unchanged: 0 });
      for (const kb of ['handbook', 'secret']) assert.deepEqual(await listAll(client, kb), await listAll(sourceClient, kb), kb);
      const got = await run('files', 'get', 'handbook', 'img/chart.png', '--tenant', 'acme', '--out', path.join(store.workDir, 'chart.png'));
      assert.equal(got.code, 0, got.stderr);
      assert.deepEqual(await readFile(path.join(store.workDir, 'chart.png')), IMAGE);
      type History = { file_id: string; versions: { version: number; created_at: string; author: { name: string }; imported_from?: unknown }[] };
      const history = (await call(client, 'file_history', { kb_id: 'handbook', path: 'policies/leave.md' })) as History;
      const there = (await call(sourceClient, 'file_history', { kb_id: 'handbook', path: 'policies/leave.md' })) as History;
      assert.equal(history.versions.length, 1);
      // The version keeps where it came from: the source, the file's id, version, author and time there.
      assert.deepEqual(history.versions[0]?.imported_from, {
        source: sourceUrl(),
        source_id: there.file_id,
        source_version: 1,
        author: 'Alice',
        at: there.versions[0]?.created_at,
      });
      assert.equal(there.versions[0]?.imported_from, undefined);
    });

    it('copies a file larger than one request carries, staged in pieces, byte for byte', async () => {
      const { code, report } = await imported(sourceUrl(), sourceToken, '--kb', 'large');
      assert.equal(code, 0, JSON.stringify(report));
      assert.deepEqual(counts(kbOf(report, 'large')), { files: 1, created: 1, updated: 0, unchanged: 0 });
      const got = await run('files', 'get', 'large', 'archive.bin', '--tenant', 'acme', '--out', path.join(store.workDir, 'archive.bin'));
      assert.equal(got.code, 0, got.stderr);
      assert.equal(sha(await readFile(path.join(store.workDir, 'archive.bin'))), sha(LARGE));
    });

    it('reads and changes nothing when run again; a changed file gets a version, a local-only one is listed', async () => {
      const again = await imported(sourceUrl(), sourceToken, '--kb', 'handbook');
      assert.deepEqual(counts(kbOf(again.report, 'handbook')), { files: 5, created: 0, updated: 0, unchanged: 5 });
      await call(sourceClient, 'write_file', { kb_id: 'handbook', path: 'policies/leave.md', mode: 'append', content: 'Plus holidays.\n' });
      await call(client, 'write_file', { kb_id: 'handbook', path: 'local.md', mode: 'create', content: 'only here\n' });
      const changed = await imported(sourceUrl(), sourceToken, '--kb', 'handbook');
      assert.deepEqual(counts(kbOf(changed.report, 'handbook')), { files: 5, created: 0, updated: 1, unchanged: 4 });
      assert.deepEqual(kbOf(changed.report, 'handbook')?.only_local, ['local.md']);
    });

    it('moves a file here that the source moved since the last import, keeping its history', async () => {
      await call(sourceClient, 'move_file', { kb_id: 'handbook', path: 'notes/ünïcödé name.md', to_path: 'notes/renamed.md' });
      const dry = await imported(sourceUrl(), sourceToken, '--kb', 'handbook', '--dry-run');
      assert.deepEqual(kbOf(dry.report, 'handbook')?.moved, [{ from: 'notes/ünïcödé name.md', to: 'notes/renamed.md' }]);
      assert.equal(
        (await listAll(client, 'handbook')).some(([p]) => p === 'notes/renamed.md'),
        false,
        'a dry run moves nothing',
      );
      const { code, report } = await imported(sourceUrl(), sourceToken, '--kb', 'handbook');
      assert.equal(code, 0, JSON.stringify(report));
      assert.deepEqual(kbOf(report, 'handbook')?.moved, [{ from: 'notes/ünïcödé name.md', to: 'notes/renamed.md' }]);
      assert.deepEqual(counts(kbOf(report, 'handbook')), { files: 5, created: 0, updated: 0, unchanged: 5 });
      const paths = (await listAll(client, 'handbook')).map(([p]) => p);
      assert.equal(paths.includes('notes/ünïcödé name.md'), false);
      const history = (await call(client, 'file_history', { kb_id: 'handbook', path: 'notes/renamed.md' })) as { versions: { operation: string }[] };
      assert.deepEqual(
        history.versions.map((v) => v.operation),
        ['move', 'upload'],
      );
      const again = await imported(sourceUrl(), sourceToken, '--kb', 'handbook');
      assert.deepEqual(kbOf(again.report, 'handbook')?.moved, []);
    });

    it('imports only what a token sees: an Editor’s token does not see a private KB', async () => {
      const created = await kgw(['token', 'create', '--tenant', 'acme', '--principal', 'release-bot', '--scopes', 'context.read'], sourceStore.env);
      assert.equal(created.code, 0, created.stderr);
      const { code, report } = await imported(sourceUrl(), created.stdout.trim(), '--kb', 'secret', '--kb', 'handbook=bulk', '--dry-run');
      assert.equal(code, 1);
      assert.deepEqual(report.failed, [{ kb: 'secret', reason: 'the source shows no Knowledge Base of that slug to this token' }]);
      assert.deepEqual(
        report.kbs.map((kb) => [kb.source, kb.local]),
        [['handbook', 'bulk']],
      );
    });

    it('resumes after the source stops answering mid-import, reading only what it had not saved', async () => {
      const running = run(
        'import',
        'mcp',
        '--from',
        sourceUrl(),
        '--dialect',
        'atmina',
        '--token',
        sourceToken,
        '--tenant',
        'acme',
        '--as',
        'alice@acme.test',
        '--kb',
        'bulk',
        '--json',
      );
      // The first batch (200 files) saved: the source goes away while the next ones are read.
      for (let seen = 0; seen === 0;) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        seen = (await listAll(client, 'bulk')).length;
      }
      await source.stop();
      const cut = await running;
      assert.equal(cut.code, 1);
      const report = JSON.parse(cut.stdout) as Report;
      const saved = (await listAll(client, 'bulk')).length;
      assert.ok(saved >= 200 && saved < 600, `saved ${saved}`);
      assert.equal(report.failed[0]?.kb, 'bulk', cut.stdout);
      source = peers.other.gateway = await serve(sourceStore.env, { port: Number(new URL(sourceUrl()).port) });
      const resumed = await imported(sourceUrl(), sourceToken, '--kb', 'bulk');
      assert.equal(resumed.code, 0, JSON.stringify(resumed.report));
      assert.deepEqual(counts(kbOf(resumed.report, 'bulk')), { files: 600, created: 600 - saved, updated: 0, unchanged: saved });
      assert.deepEqual(await listAll(client, 'bulk'), await listAll(sourceClient, 'bulk'));
    });

    it('refuses bad usage and an unreachable source, writing nothing', async () => {
      const dialect = await run('import', 'mcp', '--from', sourceUrl(), '--dialect', 'brainz', '--token', 'x', '--tenant', 'acme', '--as', 'alice@acme.test');
      assert.equal(dialect.code, 2);
      assert.match(dialect.stderr, /--dialect must be one of .*atmina/);
      const url = await run('import', 'mcp', '--from', 'ftp://x', '--dialect', 'atmina', '--token', 'x', '--tenant', 'acme', '--as', 'alice@acme.test');
      assert.equal(url.code, 2);
      const noToken = await run('import', 'mcp', '--from', sourceUrl(), '--dialect', 'atmina', '--tenant', 'acme', '--as', 'alice@acme.test');
      assert.equal(noToken.code, 2);
      assert.match(noToken.stderr, /KGW_IMPORT_TOKEN/);
      const badToken = await imported(sourceUrl(), 'kgw_not-a-token');
      assert.equal(badToken.code, 1);
      assert.match(badToken.stderr, /cannot connect to .*\/atmina\/mcp/);
      const down = await imported('http://127.0.0.1:1/atmina/mcp', sourceToken);
      assert.equal(down.code, 1);
    });

    describe('team settings', () => {
      type Settings = { audit_query_text: string; contribution_note_days: number; default_kb_visibility: string };
      const settingsOf = async (on: Client): Promise<Settings> => {
        const { audit_query_text, contribution_note_days, default_kb_visibility } = (await call(on, 'get_team_settings', { team: 'docs' })) as Settings;
        return { audit_query_text, contribution_note_days, default_kb_visibility };
      };
      const CARRIED: Settings = { audit_query_text: 'omit', contribution_note_days: 30, default_kb_visibility: 'private' };
      const ALL = ['audit_query_text', 'contribution_note_days', 'default_kb_visibility'];
      const ops = <T>(work: (run: OpRunner) => Promise<T>): Promise<T> => withOps(loadConfig(store.env), work);
      let defaults: Settings;

      before(async () => {
        defaults = await settingsOf(client);
        assert.notDeepEqual(defaults, CARRIED);
        await call(sourceClient, 'update_team_settings', { team: 'docs', ...CARRIED });
      });

      it('says what a dry run would change and changes nothing', async () => {
        const { code, report } = await imported(sourceUrl(), sourceToken, '--kb', 'handbook', '--only', 'settings', '--dry-run');
        assert.equal(code, 0, JSON.stringify(report));
        assert.deepEqual(report.kbs, [], '--only settings reads no files');
        assert.deepEqual(report.team_settings, { updated: [{ team: 'docs', changed: ALL }], unchanged: [], refused: [], not_visible: [] });
        assert.deepEqual(await settingsOf(client), defaults);
      });

      it('carries the settings of the imported KBs’ team where the token is its Admin at the source; a second run finds them unchanged', async () => {
        const { code, report } = await imported(sourceUrl(), sourceToken, '--kb', 'handbook', '--only', 'settings');
        assert.equal(code, 0, JSON.stringify(report));
        assert.deepEqual(report.team_settings, { updated: [{ team: 'docs', changed: ALL }], unchanged: [], refused: [], not_visible: [] });
        assert.deepEqual(await settingsOf(client), CARRIED);
        const again = await imported(sourceUrl(), sourceToken, '--kb', 'handbook');
        assert.equal(again.code, 0, JSON.stringify(again.report));
        assert.deepEqual(again.report.team_settings, { updated: [], unchanged: ['docs'], refused: [], not_visible: [] });
        assert.deepEqual(counts(kbOf(again.report, 'handbook')), { files: 5, created: 0, updated: 0, unchanged: 5 });
        const text = await run(
          'import',
          'mcp',
          '--from',
          sourceUrl(),
          '--dialect',
          'atmina',
          '--token',
          sourceToken,
          '--tenant',
          'acme',
          '--as',
          'alice@acme.test',
          '--only',
          'settings',
        );
        assert.equal(text.code, 0, text.stderr);
        assert.match(text.stdout, /^team settings: 0 updated, 1 unchanged, 0 refused, 0 not visible at the source$/m);
        const kbsOnly = await imported(sourceUrl(), sourceToken, '--kb', 'handbook', '--only', 'kbs');
        assert.equal(kbsOnly.report.team_settings, undefined, '--only kbs leaves the settings alone');
      });

      it('counts a team whose settings the source does not show the token as not visible, and imports the rest', async () => {
        await call(sourceClient, 'update_team_settings', { team: 'docs', contribution_note_days: 45 });
        const created = await kgw(['token', 'create', '--tenant', 'acme', '--principal', 'release-bot', '--scopes', 'context.read'], sourceStore.env);
        assert.equal(created.code, 0, created.stderr);
        const { code, report } = await imported(sourceUrl(), created.stdout.trim(), '--kb', 'handbook');
        assert.equal(code, 0, JSON.stringify(report));
        assert.deepEqual(counts(kbOf(report, 'handbook')), { files: 5, created: 0, updated: 0, unchanged: 5 });
        assert.deepEqual(
          report.team_settings?.not_visible.map((item) => item.team),
          ['docs'],
          JSON.stringify(report.team_settings),
        );
        assert.match(report.team_settings?.not_visible[0]?.reason ?? '', /^get_team_settings at the source: permission_denied: .*Admin role/);
        assert.deepEqual({ ...report.team_settings, not_visible: [] }, { updated: [], unchanged: [], refused: [], not_visible: [] });
        assert.deepEqual(await settingsOf(client), CARRIED);
      });

      it('refuses the settings for a local --as who is not the team’s Admin, changing nothing', async () => {
        const result = await run(
          'import',
          'mcp',
          '--from',
          sourceUrl(),
          '--dialect',
          'atmina',
          '--token',
          sourceToken,
          '--tenant',
          'acme',
          '--as',
          'bob@acme.test',
          '--kb',
          'handbook',
          '--only',
          'settings',
          '--json',
        );
        assert.equal(result.code, 1, result.stderr);
        const report = JSON.parse(result.stdout) as Report;
        assert.deepEqual(report.team_settings, {
          updated: [],
          unchanged: [],
          refused: [{ team: 'docs', reason: 'the settings of team "docs" need the Admin role there' }],
          not_visible: [],
        });
        assert.deepEqual(await settingsOf(client), CARRIED);
      });

      it('the operation refuses a person who is not the team’s Admin and values the tools do not admit, changing nothing', async () => {
        const base = { tenant: 'acme', as: 'alice@acme.test', team: 'docs' };
        // Hostile values are what the operation's types forbid: sent as a source could make them.
        const refused = async (args: Record<string, unknown>, code: string, pattern: RegExp): Promise<void> => {
          for (const dryRun of [false, true])
            await assert.rejects(
              ops((run) => run('team.settings', { ...args, dry_run: dryRun } as OpArgs<'team.settings'>)),
              (error: unknown) => isKgwError(error) && error.code === code && pattern.test(error.message),
            );
        };
        await refused(
          { ...base, as: 'bob@acme.test', contribution_note_days: 7 },
          'permission_denied',
          /the settings of team "docs" need the Admin role there/,
        );
        await refused({ ...base, team: 'do\u0000cs', contribution_note_days: 7 }, 'validation', /team must not contain NUL/);
        await refused({ ...base, contribution_note_days: 0 }, 'validation', /contribution_note_days must be at least 1/);
        await refused({ ...base, contribution_note_days: 366 }, 'validation', /contribution_note_days must be at most 365/);
        await refused({ ...base, contribution_note_days: 7.5 }, 'validation', /contribution_note_days must be a whole number/);
        await refused({ ...base, audit_query_text: 'sometimes' }, 'validation', /audit_query_text/);
        await refused({ ...base, default_kb_visibility: 'everyone' }, 'validation', /default_kb_visibility/);
        await refused({ ...base, team: 'nowhere', contribution_note_days: 7 }, 'validation', /no team "nowhere"/);
        await refused(base, 'validation', /give at least one of/);
        assert.deepEqual(await settingsOf(client), CARRIED);
        // What it admits, it changes, in update_team_settings's words; a dry run only says so.
        assert.deepEqual(await ops((run) => run('team.settings', { ...base, contribution_note_days: 7, dry_run: true })), {
          team: 'docs',
          changed: ['contribution_note_days'],
          settings: { ...CARRIED, contribution_note_days: 7 },
        });
        assert.deepEqual(await settingsOf(client), CARRIED);
      });
    });

    describe('from a hostile source', () => {
      let hostile: Awaited<ReturnType<typeof hostileEndpoint>>;
      let hostileUrl: string;
      let rateLimited = 1;

      before(async () => {
        await call(client, 'create_kb', { name: 'Endless', team: 'docs' });
        hostile = await hostileEndpoint(
          () => hostileServer(hostileUrl),
          (req, res) => {
            if (req.url?.startsWith('/download/')) {
              res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.alloc(1000, 1));
              return true;
            }
            if (rateLimited <= 0) return false;
            rateLimited -= 1;
            res.writeHead(429, { 'retry-after': '1' }).end();
            return true;
          },
        );
        hostileUrl = hostile.origin;
      });
      after(async () => {
        await hostile?.close();
      });

      it('waits out a rate limit, refuses each lie item by item, saves the honest file, and stops paging that does not end', async () => {
        const { code, report } = await imported(`${hostileUrl}/mcp`, 'any-token');
        assert.equal(code, 1);
        assert.match(report.protocol ?? '', /^2025-/, 'an SDK 1.x server: the legacy handshake');
        const kb = kbOf(report, 'handbook');
        const reasons = new Map(kb?.failed.map((item) => [item.path, item.reason]));
        assert.ok(kb !== undefined, JSON.stringify(report));
        assert.deepEqual([...reasons.keys()].sort(), ['../../etc/passwd', 'big.png', 'elsewhere.png', 'lies.md', 'no-hash.md', 'nul\u0000.md', 'twice.md']);
        assert.equal(reasons.get('../../etc/passwd'), 'path: must not have . or .. segments');
        assert.equal(reasons.get('nul\u0000.md'), 'path: must not contain control characters');
        assert.equal(reasons.get('big.png'), 'the source sent more than 5 bytes for it');
        assert.equal(reasons.get('elsewhere.png'), "the source's download link is on another origin (http://127.0.0.2:9)");
        assert.equal(reasons.get('lies.md'), 'the bytes the source sent do not match the SHA-256 it gave');
        assert.equal(reasons.get('no-hash.md'), 'the source gave a SHA-256 that is not 64 hexadecimal digits');
        assert.equal(reasons.get('twice.md'), 'the source listed this path twice');
        assert.deepEqual(kb?.skipped, [{ path: 'huge.bin', reason: 'larger than 100 MiB' }]);
        assert.ok(kb?.created === 2, JSON.stringify(kb));
        assert.deepEqual(
          (await listAll(client, 'handbook')).map(([p]) => p).filter((p) => p.startsWith('hostile/')),
          ['hostile/ok.md'],
        );
        assert.deepEqual(report.failed, [{ kb: 'endless', reason: "the source's paging did not end within 100000 files" }]);
      });

      it('refuses each team setting the tools do not admit, not sending it, and carries the others', async () => {
        await call(client, 'update_team_settings', { team: 'docs', audit_query_text: 'omit' });
        const before = await call(client, 'get_team_settings', { team: 'docs' });
        const { code, report } = await imported(`${hostileUrl}/mcp`, 'any-token', '--only', 'settings');
        assert.equal(code, 1);
        assert.deepEqual(report.team_settings, {
          updated: [{ team: 'docs', changed: ['audit_query_text'] }],
          unchanged: [],
          refused: [
            { team: 'docs', setting: 'contribution_note_days', reason: 'the source gave 0, not a whole number of days from 1 to 365' },
            { team: 'docs', setting: 'default_kb_visibility', reason: 'the source gave "everyone\\u0000", not one of private, team, public' },
          ],
          not_visible: [],
        });
        const after = await call(client, 'get_team_settings', { team: 'docs' });
        assert.deepEqual({ ...after, updated_at: null }, { ...before, audit_query_text: 'record', updated_at: null });
      });
    });
  });
}

/** The lying source: one KB of files each wrong in its own way, and one whose paging never ends. */
function hostileServer(origin: string): McpServer {
  const server = new McpServer({ name: 'hostile', version: '1.0.0' });
  const json = (value: unknown) => ({ content: [{ type: 'text' as const, text: JSON.stringify(value) }], structuredContent: value as Record<string, unknown> });
  const file = (id: string, path: string, body: string, kind = 'text', size = Buffer.byteLength(body)) => ({
    file_id: id,
    path,
    sha256: sha(body),
    size_bytes: size,
    kind,
  });
  const files = [
    file('1', '../../etc/passwd', 'root'),
    file('2', 'lies.md', 'the truth'),
    file('3', 'nul\u0000.md', 'nul'),
    file('4', 'big.png', 'small', 'asset', 5),
    file('5', 'elsewhere.png', 'far', 'asset'),
    file('6', 'hostile/ok.md', 'fine\n'),
    file('7', 'twice.md', 'one'),
    file('8', 'twice.md', 'two'),
    file('9', 'huge.bin', 'x', 'asset', 100 * 1024 * 1024 + 1),
    { file_id: '10', path: 'no-hash.md', sha256: 'nope', size_bytes: 1, kind: 'text' },
  ];
  server.registerTool('list_kbs', { inputSchema: {} }, () =>
    json({
      kbs: [
        { kb_id: 'k1', slug: 'handbook' },
        { kb_id: 'k2', slug: 'endless' },
      ],
    }),
  );
  // Its team's settings (list_kbs names no team: the current one), two of them values no team can have.
  server.registerTool('get_team_settings', { inputSchema: {} }, () =>
    json({
      team: { team_id: 't1', slug: 'docs', name: 'Docs' },
      audit_query_text: 'record',
      contribution_note_days: 0,
      default_kb_visibility: 'everyone\u0000',
    }),
  );
  server.registerTool('list_files', { inputSchema: { kb_id: z.string(), limit: z.number().optional(), cursor: z.string().optional() } }, (args) => {
    if (args.kb_id === 'k2') {
      const page = Number(args.cursor ?? '0');
      return json({ files: Array.from({ length: 100 }, (_, i) => file(`e${page}-${i}`, `e/${page}/${i}.md`, 'e')), next_cursor: String(page + 1) });
    }
    return json({ files, next_cursor: null });
  });
  server.registerTool('read_file', { inputSchema: { kb_id: z.string(), file_id: z.string(), include_image: z.boolean().optional() } }, (args) => {
    const bodies: Record<string, { content: string; sha256: string; kind?: string; download_url?: string }> = {
      '1': { content: 'root', sha256: sha('root') },
      '2': { content: 'lies', sha256: sha('the truth') },
      '3': { content: 'nul', sha256: sha('nul') },
      '4': { content: '', sha256: sha('small'), kind: 'asset', download_url: `${origin}/download/4` },
      '5': { content: '', sha256: sha('far'), kind: 'asset', download_url: 'http://127.0.0.2:9/download/5' },
      '6': { content: 'fine\n', sha256: sha('fine\n') },
      '7': { content: 'one', sha256: sha('one') },
    };
    const body = bodies[args.file_id] ?? { content: '', sha256: sha('') };
    return json({ kb_id: args.kb_id, file_id: args.file_id, kind: body.kind ?? 'text', ...body });
  });
  return server;
}
