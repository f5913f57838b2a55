import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, readFile, symlink, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { pngOf, textPdf } from '../atmina/assets/fixtures.ts';
import type { CliStore, Served } from './support.ts';
import { cliStoreBackends, kgw, serveWithClient } from './support.ts';

/**
 * kgw import folder: a Markdown tree in the shape of an Obsidian vault brought into a Knowledge
 * Base through the real CLI while kgw serve holds the store, checked through the real Atmina
 * tools, kgw files get and kgw export (an export imported into another KB keeps every hash).
 */

const sha = (bytes: Buffer | string): string => createHash('sha256').update(bytes).digest('hex');

const WELCOME = '---\ntags: [start]\naliases: [Home]\n---\n# Welcome\n\nSee [[Project Plan]] and ![[diagram.png]].\n';
const PLAN = '# Project Plan\n\nBack to [[Welcome|the start]].\n';
const IMAGE = pngOf(8, 5);
const PDF = textPdf([['Quarterly figures']]);
const BINARY = Buffer.from([0, 1, 2, 3, 254, 255, 0, 7]);

interface Report {
  files: number;
  created: number;
  updated: number;
  unchanged: number;
  renamed: { from: string; to: string }[];
  relinked: { path: string; links: number }[];
  skipped: { path: string; reason: string }[];
  failed: { path: string; reason: string }[];
}

interface Manifest {
  kbs: { slug: string; files: { path: string; kind: string; sha256: string; versions: { author: string | null }[] }[] }[];
}

/** The vault: notes in folders, attachments, a tool's folder, a link, odd names, a file too large and one path too long for a KB. */
async function makeVault(root: string): Promise<{ deep: string }> {
  await mkdir(path.join(root, '.obsidian'), { recursive: true });
  await writeFile(path.join(root, '.obsidian', 'app.json'), '{}');
  await writeFile(path.join(root, '.DS_Store'), 'x');
  await mkdir(path.join(root, 'Notes'));
  await writeFile(path.join(root, 'Notes', 'Welcome.md'), WELCOME);
  await writeFile(path.join(root, 'Notes', 'Project Plan.md'), PLAN);
  await mkdir(path.join(root, 'attachments'));
  await writeFile(path.join(root, 'attachments', 'diagram.png'), IMAGE);
  await writeFile(path.join(root, 'attachments', 'figures.pdf'), PDF);
  await writeFile(path.join(root, 'attachments', 'data.bin'), BINARY);
  // A zero-width space and a right-to-left override: removed from the KB path, and listed.
  await writeFile(path.join(root, 'odd\u200Bname.md'), 'odd\n');
  await writeFile(path.join(root, 'dup.md'), 'first\n');
  await writeFile(path.join(root, 'dup\u202E.md'), 'second, the same KB path\n');
  await symlink(path.join(root, 'Notes', 'Welcome.md'), path.join(root, 'link.md'));
  // Larger than one request carries: staged in pieces, then imported.
  await writeFile(path.join(root, 'huge.txt'), Buffer.alloc(10 * 1024 * 1024 + 1, 0x61));
  // Larger than a KB keeps of a file (sparse, so it costs no disk): left out unread.
  await writeFile(path.join(root, 'enormous.bin'), '');
  await truncate(path.join(root, 'enormous.bin'), 100 * 1024 * 1024 + 1);
  // Five folders of 220 bytes: a path longer than a KB path may be (1,024 bytes).
  const segments = Array.from({ length: 5 }, (_, i) => `${String(i)}${'d'.repeat(219)}`);
  await mkdir(path.join(root, ...segments), { recursive: true });
  await writeFile(path.join(root, ...segments, 'deep.md'), 'deep\n');
  return { deep: [...segments, 'deep.md'].join('/') };
}

for (const backend of cliStoreBackends()) {
  describe(`kgw import folder on ${backend.name}`, () => {
    let store: CliStore;
    let gateway: Served;
    let client: Client;
    let vault: string;
    let deep: string;
    const run = (...args: string[]) => kgw(args, store.env);
    const imported = async (kb: string, folder: string, ...args: string[]): Promise<{ code: number | null; report: Report; stderr: string }> => {
      const result = await run('import', 'folder', folder, '--tenant', 'acme', '--kb', kb, '--as', 'alice@acme.test', ...args, '--json');
      return { code: result.code, report: JSON.parse(result.stdout || '{}') as Report, stderr: result.stderr };
    };
    const tool = async (name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> => {
      const result = await client.callTool({ name, arguments: args });
      assert.notEqual(result.isError, true, JSON.stringify(result.content));
      return result.structuredContent as Record<string, unknown>;
    };
    const fileBytes = async (kb: string, file: string): Promise<Buffer> => {
      const result = await run('files', 'get', kb, file, '--tenant', 'acme', '--out', path.join(store.workDir, 'got'));
      assert.equal(result.code, 0, result.stderr);
      return readFile(path.join(store.workDir, 'got'));
    };
    const counts = ({ files, created, updated, unchanged }: Report) => ({ files, created, updated, unchanged });

    before(async () => {
      store = await backend.open();
      vault = path.join(store.workDir, 'vault');
      ({ deep } = await makeVault(vault));
      ({ gateway, client } = await serveWithClient(store));
      await tool('create_kb', { name: 'Vault', team: 'docs' });
      await tool('create_kb', { name: 'Copy', team: 'docs' });
      await tool('create_kb', { name: 'Race', team: 'docs' });
    });
    after(async () => {
      await client?.close();
      await gateway?.stop();
      await store?.dispose();
    });

    it('says what a dry run would do and writes nothing', async () => {
      const { code, report } = await imported('vault', vault, '--dry-run');
      assert.equal(code, 1);
      assert.deepEqual(counts(report), { files: 9, created: 8, updated: 0, unchanged: 0 });
      const listed = (await tool('list_files', { kb_id: 'vault' })) as { files: unknown[] };
      assert.deepEqual(listed.files, []);
    });

    it('imports text, images, PDFs and other files exactly, leaves out what it lists, maps odd names, and refuses a path too long', async () => {
      const { code, report } = await imported('vault', vault);
      assert.equal(code, 1, 'a refused file makes the command fail');
      assert.deepEqual(counts(report), { files: 9, created: 8, updated: 0, unchanged: 0 });
      // dup.md comes first in byte order, so the other name that maps to it is the one left out.
      assert.deepEqual(report.renamed, [{ from: 'odd\u200Bname.md', to: 'oddname.md' }]);
      assert.deepEqual(
        report.skipped.map((item) => [item.path, item.reason]),
        [
          ['.DS_Store', 'hidden (a tool’s folder or file)'],
          ['.obsidian', 'hidden (a tool’s folder or file)'],
          ['dup\u202E.md', 'the same Knowledge Base path as dup.md'],
          ['enormous.bin', 'larger than 100 MiB'],
          ['link.md', 'a symbolic link (not followed)'],
        ],
      );
      assert.deepEqual(
        report.failed.map((item) => item.path),
        [deep],
      );
      assert.match(report.failed[0]?.reason ?? '', /must be at most 1024 bytes of UTF-8/);
      assert.equal((await fileBytes('vault', 'Notes/Welcome.md')).toString('utf8'), WELCOME);
      assert.deepEqual(await fileBytes('vault', 'attachments/diagram.png'), IMAGE);
      assert.deepEqual(await fileBytes('vault', 'attachments/data.bin'), BINARY);
      assert.deepEqual(await fileBytes('vault', 'huge.txt'), Buffer.alloc(10 * 1024 * 1024 + 1, 0x61));
      const listed = (await tool('list_files', { kb_id: 'vault' })) as { files: { path: string; kind: string; tags?: string[] }[] };
      assert.deepEqual(
        listed.files.map((file) => [file.path, file.kind]),
        [
          ['Notes/Project Plan.md', 'text'],
          ['Notes/Welcome.md', 'text'],
          ['attachments/data.bin', 'asset'],
          ['attachments/diagram.png', 'asset'],
          ['attachments/figures.pdf', 'asset'],
          ['dup.md', 'text'],
          ['huge.txt', 'asset'],
          ['oddname.md', 'text'],
        ],
      );
    });

    it('changes only what changed when run again, as the person named', async () => {
      const again = await imported('vault', vault);
      assert.deepEqual(counts(again.report), { files: 9, created: 0, updated: 0, unchanged: 8 });
      await writeFile(path.join(vault, 'Notes', 'Project Plan.md'), `${PLAN}\nDone.\n`);
      const changed = await imported('vault', vault);
      assert.deepEqual(counts(changed.report), { files: 9, created: 0, updated: 1, unchanged: 7 });
      const history = (await tool('file_history', { kb_id: 'vault', path: 'Notes/Project Plan.md' })) as { versions: unknown[] };
      assert.equal(history.versions.length, 2);
    });

    it('rewrites the wiki links the KB would resolve otherwise than the vault, so related finds what the notes meant; --keep-links leaves them', async () => {
      const linked = path.join(store.workDir, 'linked');
      await mkdir(path.join(linked, 'Notes'), { recursive: true });
      await mkdir(path.join(linked, 'Daily'));
      await mkdir(path.join(linked, 'attachments'));
      await writeFile(path.join(linked, 'Notes', 'Welcome.md'), WELCOME);
      await writeFile(path.join(linked, 'Notes', 'Project Plan.md'), PLAN);
      await writeFile(path.join(linked, 'attachments', 'diagram.png'), IMAGE);
      const today = '# Today\n\nFrom [[Home]] to [[project plan#Goals]], with ![[Diagram.png|200]].\n\n`[[Home]]` is how to link it.\n';
      await writeFile(path.join(linked, 'Daily', 'Today.md'), today);
      await tool('create_kb', { name: 'Linked', team: 'docs' });
      await tool('create_kb', { name: 'Kept', team: 'docs' });
      const kept = await imported('kept', linked, '--keep-links');
      assert.deepEqual([kept.code, kept.report.relinked], [0, []]);
      assert.equal((await fileBytes('kept', 'Daily/Today.md')).toString('utf8'), today);
      const { code, report } = await imported('linked', linked);
      assert.equal(code, 0, JSON.stringify(report.failed));
      assert.deepEqual(report.relinked, [{ path: 'Daily/Today.md', links: 3 }]);
      assert.equal(
        (await fileBytes('linked', 'Daily/Today.md')).toString('utf8'),
        '# Today\n\nFrom [[../Notes/Welcome|Home]] to [[../Notes/Project Plan#Goals|project plan]], with ![[../attachments/diagram.png|200]].\n\n`[[Home]]` is how to link it.\n',
      );
      // Welcome.md's own links resolve in the KB as in the vault: sent byte for byte.
      assert.equal((await fileBytes('linked', 'Notes/Welcome.md')).toString('utf8'), WELCOME);
      const again = await imported('linked', linked);
      assert.deepEqual(counts(again.report), { files: 4, created: 0, updated: 0, unchanged: 4 });
      // The graph is projected after the write: related is asked until it has caught up.
      let related: { outgoing: { path: string; type: string }[]; unresolved: unknown[]; pending: boolean } | undefined;
      for (let attempt = 0; attempt < 300; attempt += 1) {
        related = (await tool('related', { kb_id: 'linked', path: 'Daily/Today.md' })) as typeof related;
        if (related?.pending === false && related.outgoing.length === 3) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.deepEqual(related?.outgoing.map((entry) => [entry.path, entry.type]).sort(), [
        ['Notes/Project Plan.md', 'wiki'],
        ['Notes/Welcome.md', 'wiki'],
        ['attachments/diagram.png', 'wiki'],
      ]);
      assert.deepEqual(related?.unresolved, []);
    });

    it('two imports of one folder at once save each file once', async () => {
      const race = path.join(store.workDir, 'race');
      await mkdir(path.join(race, 'r'), { recursive: true });
      for (let i = 0; i < 20; i++) await writeFile(path.join(race, 'r', `n${String(i).padStart(2, '0')}.md`), `# ${i}\n`);
      const [a, b] = await Promise.all([imported('race', race), imported('race', race)]);
      assert.deepEqual([a.code, b.code], [0, 0], a.stderr + b.stderr + JSON.stringify([a.report.failed, b.report.failed]));
      assert.deepEqual({ created: a.report.created + b.report.created, unchanged: a.report.unchanged + b.report.unchanged }, { created: 20, unchanged: 20 });
      for (const name of ['r/n00.md', 'r/n19.md']) {
        const history = (await tool('file_history', { kb_id: 'race', path: name })) as { versions: unknown[] };
        assert.equal(history.versions.length, 1, name);
      }
    });

    it('imports an export of a KB into another with every hash and kind kept', async () => {
      const out = path.join(store.workDir, 'export');
      const exported = await run('export', 'folder', out, '--tenant', 'acme', '--kb', 'vault');
      assert.equal(exported.code, 0, exported.stderr);
      const { code, report } = await imported('copy', path.join(out, 'kbs', 'vault'));
      assert.equal(code, 0, JSON.stringify(report.failed));
      assert.deepEqual(counts(report), { files: 8, created: 8, updated: 0, unchanged: 0 });
      const again = await run('export', 'folder', out, '--tenant', 'acme');
      assert.equal(again.code, 0, again.stderr);
      const manifest = JSON.parse(await readFile(path.join(out, 'manifest.json'), 'utf8')) as Manifest;
      const files = (slug: string) => manifest.kbs.find((kb) => kb.slug === slug)?.files.map((file) => [file.path, file.kind, file.sha256]);
      assert.deepEqual(files('copy'), files('vault'));
      assert.equal(files('copy')?.find(([file]) => file === 'attachments/figures.pdf')?.[2], sha(PDF));
      assert.deepEqual(
        manifest.kbs.find((kb) => kb.slug === 'copy')?.files.flatMap((file) => file.versions.map((v) => v.author)),
        Array.from({ length: 8 }, () => 'alice@acme.test'),
      );
    });

    it('refuses a person who may not write the KB, an agent, an unknown KB or person, and bad usage, importing nothing', async () => {
      const note = path.join(store.workDir, 'one');
      await mkdir(note);
      await writeFile(path.join(note, 'note.md'), 'one\n');
      const viewer = await run('import', 'folder', note, '--tenant', 'acme', '--kb', 'copy', '--as', 'bob@acme.test');
      assert.equal(viewer.code, 1);
      assert.match(viewer.stderr, /^kgw: no Knowledge Base "copy" is available to you/);
      const agent = await run('import', 'folder', note, '--tenant', 'acme', '--kb', 'copy', '--as', 'release-bot');
      assert.deepEqual({ code: agent.code, stderr: agent.stderr }, { code: 1, stderr: 'kgw: --as must name a person by email, not "release-bot"\n' });
      const nobody = await run('import', 'folder', note, '--tenant', 'acme', '--kb', 'copy', '--as', 'nobody@acme.test');
      assert.equal(nobody.code, 1);
      assert.match(nobody.stderr, /^kgw: no person or agent "nobody@acme.test" in tenant "acme"/);
      const unknown = await run('import', 'folder', note, '--tenant', 'acme', '--kb', 'nothing', '--as', 'alice@acme.test');
      assert.equal(unknown.code, 1);
      const missing = await run('import', 'folder', note, '--tenant', 'acme', '--kb', 'copy');
      assert.deepEqual({ code: missing.code, stderr: missing.stderr }, { code: 2, stderr: 'kgw: --as is required (see "kgw import --help")\n' });
      const notFolder = await run('import', 'folder', path.join(note, 'note.md'), '--tenant', 'acme', '--kb', 'copy', '--as', 'alice@acme.test');
      assert.deepEqual(
        { code: notFolder.code, stderr: notFolder.stderr },
        { code: 2, stderr: `kgw: ${path.join(note, 'note.md')} is not a folder (see "kgw import --help")\n` },
      );
      const listed = (await tool('list_files', { kb_id: 'copy' })) as { files: { path: string }[] };
      assert.ok(!listed.files.some((file) => file.path === 'note.md'));
    });
  });
}
