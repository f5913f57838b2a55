import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { pngOf } from '../atmina/assets/fixtures.ts';
import type { CliStore, Served } from './support.ts';
import { cliStoreBackends, kgw, serveWithClient } from './support.ts';

/**
 * kgw export folder: a tenant's Knowledge Bases written to a folder with a manifest of every
 * version, while kgw serve holds the store (the embedded store then goes through the gateway's
 * admin endpoint). The content comes in through the real Atmina tools.
 */

const sha = (bytes: Buffer | string): string => createHash('sha256').update(bytes).digest('hex');

// Escapes a terminal would act on and a leading byte order mark: exported exactly.
const RUNBOOK_V1 = '# Runbook\n\nStep one.\n';
const RUNBOOK_V2 = '\uFEFF# Runbook\n\nStep \u001b[31mone\u001b[0m, then [[Glossary]].\n';
const GLOSSARY = '---\ntags: [terms]\n---\n# Glossary\n';
const IMAGE = pngOf(6, 4);
// A name as long as a file system allows (255 bytes of UTF-8 are a KB segment's bound too).
const LONG = `${'n'.repeat(252)}.md`;

interface ExportReport {
  path: string;
  tenant: string;
  kbs: {
    slug: string;
    files: number;
    bytes: number;
    written: number;
    unchanged: number;
    removed: number;
    kept: { path: string }[];
    failed: { path: string; reason: string }[];
  }[];
}

interface Manifest {
  format: string;
  format_version: number;
  tenant: string;
  kbs: {
    slug: string;
    name: string;
    team: string;
    visibility: string;
    files: {
      path: string;
      kind: string;
      media_type: string;
      sha256: string;
      size_bytes: number;
      version: number;
      versions: { version: number; sha256: string; operation: string; author: string | null }[];
    }[];
  }[];
}

for (const backend of cliStoreBackends()) {
  describe(`kgw export folder on ${backend.name}`, () => {
    let store: CliStore;
    let gateway: Served;
    let client: Client;
    let kbId: string;
    let out: string;
    const run = (...args: string[]) => kgw(args, store.env);
    const exported = async (...args: string[]): Promise<ExportReport> => {
      const result = await run('export', 'folder', out, '--tenant', 'acme', ...args, '--json');
      assert.equal(result.code, 0, result.stderr);
      return JSON.parse(result.stdout) as ExportReport;
    };
    const manifest = async (): Promise<Manifest> => JSON.parse(await readFile(path.join(out, 'manifest.json'), 'utf8')) as Manifest;
    const tool = async (name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> => {
      const result = await client.callTool({ name, arguments: args });
      assert.notEqual(result.isError, true, JSON.stringify(result.content));
      return result.structuredContent as Record<string, unknown>;
    };
    const counts = (report: ExportReport) => report.kbs.map(({ slug, files, written, unchanged, removed }) => ({ slug, files, written, unchanged, removed }));

    before(async () => {
      store = await backend.open();
      out = path.join(store.workDir, 'export');
      ({ gateway, client } = await serveWithClient(store));
      kbId = String((await tool('create_kb', { name: 'Runbooks', team: 'docs' })).kb_id);
      await tool('write_file', { kb_id: kbId, path: 'ops/runbook.md', mode: 'create', content: RUNBOOK_V1 });
      await tool('write_file', { kb_id: kbId, path: 'ops/runbook.md', mode: 'overwrite', content: RUNBOOK_V2 });
      await tool('write_file', { kb_id: kbId, path: 'Glossär.md', mode: 'create', content: GLOSSARY });
      await tool('upload_file', { kb_id: kbId, filename: 'img/diagram.png', content_base64: IMAGE.toString('base64') });
      await tool('write_file', { kb_id: kbId, path: 'old.md', mode: 'create', content: 'to be deleted\n' });
      await tool('write_file', { kb_id: kbId, path: LONG, mode: 'create', content: 'long\n' });
      const empty = String((await tool('create_kb', { name: 'Empty', team: 'docs' })).kb_id);
      assert.ok(empty);
    });
    after(async () => {
      await client?.close();
      await gateway?.stop();
      await store?.dispose();
    });

    it('writes every live file exactly, private, and a manifest with each version, its author and SHA-256', async () => {
      const report = await exported();
      assert.deepEqual(counts(report), [
        { slug: 'empty', files: 0, written: 0, unchanged: 0, removed: 0 },
        { slug: 'runbooks', files: 5, written: 5, unchanged: 0, removed: 0 },
      ]);
      const root = path.join(out, 'kbs', 'runbooks');
      assert.equal(await readFile(path.join(root, 'ops/runbook.md'), 'utf8'), RUNBOOK_V2);
      assert.equal(await readFile(path.join(root, 'Glossär.md'), 'utf8'), GLOSSARY);
      assert.deepEqual(await readFile(path.join(root, 'img/diagram.png')), IMAGE);
      assert.equal(await readFile(path.join(root, LONG), 'utf8'), 'long\n');
      assert.equal((await stat(path.join(root, 'ops/runbook.md'))).mode & 0o777, 0o600);
      assert.equal((await stat(out)).mode & 0o777, 0o700);
      assert.equal((await stat(path.join(root, 'ops'))).mode & 0o777, 0o700);
      const written = await manifest();
      assert.deepEqual(
        { format: written.format, version: written.format_version, tenant: written.tenant },
        { format: 'kgw-export', version: 1, tenant: 'acme' },
      );
      const runbooks = written.kbs.find((kb) => kb.slug === 'runbooks');
      assert.deepEqual(
        { name: runbooks?.name, team: runbooks?.team, visibility: runbooks?.visibility },
        { name: 'Runbooks', team: 'docs', visibility: 'team' },
      );
      const runbook = runbooks?.files.find((file) => file.path === 'ops/runbook.md');
      assert.deepEqual(
        runbook?.versions.map(({ version, sha256, operation, author }) => ({ version, sha256, operation, author })),
        [
          { version: 1, sha256: sha(RUNBOOK_V1), operation: 'create', author: 'alice@acme.test' },
          { version: 2, sha256: sha(RUNBOOK_V2), operation: 'overwrite', author: 'alice@acme.test' },
        ],
      );
      const image = runbooks?.files.find((file) => file.path === 'img/diagram.png');
      assert.deepEqual({ kind: image?.kind, media: image?.media_type, sha: image?.sha256 }, { kind: 'asset', media: 'image/png', sha: sha(IMAGE) });
    });

    it('brings the folder up to date: fetches only what changed, removes what left the KB, keeps what was changed on disk', async () => {
      const again = await exported();
      assert.deepEqual(
        counts(again).find((kb) => kb.slug === 'runbooks'),
        { slug: 'runbooks', files: 5, written: 0, unchanged: 5, removed: 0 },
      );
      await tool('write_file', { kb_id: kbId, path: 'Glossär.md', mode: 'append', content: '\nMore.\n' });
      await tool('delete_file', { kb_id: kbId, path: 'old.md', confirm: 'old.md' });
      // An interrupted export: a file missing on disk is written again.
      await rm(path.join(out, 'kbs', 'runbooks', 'ops', 'runbook.md'));
      const updated = await exported();
      assert.deepEqual(
        counts(updated).find((kb) => kb.slug === 'runbooks'),
        { slug: 'runbooks', files: 4, written: 2, unchanged: 2, removed: 1 },
      );
      assert.equal(await readFile(path.join(out, 'kbs', 'runbooks', 'Glossär.md'), 'utf8'), `${GLOSSARY}\nMore.\n`);
      assert.equal(await readFile(path.join(out, 'kbs', 'runbooks', 'ops', 'runbook.md'), 'utf8'), RUNBOOK_V2);
      assert.deepEqual((await readdir(path.join(out, 'kbs', 'runbooks'))).sort(), ['Glossär.md', 'img', LONG, 'ops']);
      assert.deepEqual(
        (await manifest()).kbs.find((kb) => kb.slug === 'runbooks')?.files.map((file) => [file.path, file.version]),
        [
          ['Glossär.md', 2],
          ['img/diagram.png', 1],
          [LONG, 1],
          ['ops/runbook.md', 2],
        ],
      );
      // A file the KB no longer has, edited on disk since: kept and reported, never removed.
      await tool('write_file', { kb_id: kbId, path: 'scratch.md', mode: 'create', content: 'temporary\n' });
      await exported();
      await tool('delete_file', { kb_id: kbId, path: 'scratch.md', confirm: 'scratch.md' });
      await writeFile(path.join(out, 'kbs', 'runbooks', 'scratch.md'), 'my own notes\n');
      const kept = await exported();
      assert.deepEqual(
        kept.kbs.find((kb) => kb.slug === 'runbooks')?.kept.map((item) => item.path),
        ['scratch.md'],
      );
      assert.equal(await readFile(path.join(out, 'kbs', 'runbooks', 'scratch.md'), 'utf8'), 'my own notes\n');
    });

    it('exports one KB with --kb and leaves the others of the folder as they are', async () => {
      const one = await exported('--kb', 'runbooks');
      assert.deepEqual(
        one.kbs.map((kb) => kb.slug),
        ['runbooks'],
      );
      assert.deepEqual((await manifest()).kbs.map((kb) => kb.slug).sort(), ['empty', 'runbooks']);
    });

    it('reports a file it cannot write (a file and a folder of one name), writes the rest, and exits 1', async () => {
      await tool('write_file', { kb_id: kbId, path: 'ops', mode: 'create', content: 'a file named like the folder\n' });
      try {
        const result = await run('export', 'folder', out, '--tenant', 'acme', '--kb', 'runbooks');
        assert.equal(result.code, 1, result.stderr);
        assert.match(result.stdout, /^ {2}failed ops: a file and a folder of the KB have the same name$/m);
        assert.equal(await readFile(path.join(out, 'kbs', 'runbooks', 'ops', 'runbook.md'), 'utf8'), RUNBOOK_V2);
      } finally {
        await tool('delete_file', { kb_id: kbId, path: 'ops', confirm: 'ops' });
      }
    });

    it('refuses a folder that holds something else, another tenant’s export, a missing tenant and an unknown KB, writing nothing', async () => {
      const other = path.join(store.workDir, 'not-an-export');
      await mkdir(other);
      await writeFile(path.join(other, 'notes.txt'), 'mine\n');
      const foreign = await run('export', 'folder', other, '--tenant', 'acme');
      assert.deepEqual(
        { code: foreign.code, stderr: foreign.stderr },
        {
          code: 2,
          stderr: `kgw: ${other} is not empty and holds no export of kgw (manifest.json); export into a new or empty folder (see "kgw export --help")\n`,
        },
      );
      assert.deepEqual(await readdir(other), ['notes.txt']);
      const tenant = await run('export', 'folder', out, '--tenant', 'globex');
      assert.equal(tenant.code, 2);
      assert.match(tenant.stderr, /holds an export of tenant "acme", not "globex"/);
      const missing = await run('export', 'folder', out);
      assert.deepEqual({ code: missing.code, stderr: missing.stderr }, { code: 2, stderr: 'kgw: --tenant is required (see "kgw export --help")\n' });
      const fresh = path.join(store.workDir, 'fresh');
      const unknown = await run('export', 'folder', fresh, '--tenant', 'acme', '--kb', 'nothing');
      assert.equal(unknown.code, 1);
      assert.match(unknown.stderr, /^kgw: no Knowledge Base "nothing" in tenant "acme"/);
      await assert.rejects(stat(fresh), { code: 'ENOENT' });
      const target = await run('export', 'elsewhere', out, '--tenant', 'acme');
      assert.deepEqual(
        { code: target.code, stderr: target.stderr },
        { code: 2, stderr: 'kgw: unknown export target "elsewhere"; use folder or mcp (see "kgw export --help")\n' },
      );
    });
  });
}
