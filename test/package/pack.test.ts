import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from '../cli/support.ts';

/*
 * The installable package as a user gets it (README, "Install the package"): `npm pack` builds
 * and packs it, the tarball is installed into an empty project from the registry's
 * dependencies, and its `kgw` answers --help and serves /readyz on embedded defaults. The
 * tarball carries the built JavaScript, not the sources, tests or benchmarks.
 */

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
// The project's Node 24 and npm first, as `npm test` has them.
const PATH = `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`;
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

async function folderBytes(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += (await stat(path.join(entry.parentPath, entry.name))).size;
  }
  return total;
}

describe('the packed package', () => {
  let work: string;
  let tarball: string;
  let files: string[];

  before(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), 'kgw-pack-'));
    const packed = await run(NPM, ['pack', '--json', '--pack-destination', work], {
      cwd: ROOT,
      env: { ...process.env, PATH },
      maxBuffer: 64 * 1024 * 1024,
      timeout: 600_000,
    });
    const [info] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as { filename: string; files: { path: string }[] }[];
    assert.ok(info, packed.stdout);
    tarball = path.join(work, info.filename);
    files = info.files.map((file) => file.path);
  });
  after(async () => {
    if (work !== undefined) await rm(work, { recursive: true, force: true });
    await rm(path.join(ROOT, 'dist'), { recursive: true, force: true });
  });

  it('holds the built JavaScript, its migrations and stylesheet, the launcher and the docs; no sources, tests or benchmarks', () => {
    for (const file of [
      'bin/kgw.js',
      'dist/src/cli/kgw.js',
      'dist/src/app.js',
      'dist/connectors/search/builtin.js',
      'dist/src/http/pages/oauth.css',
      'dist/src/console/static/console.css',
      'dist/src/console/static/console.js',
      'dist/src/atmina/console/static/kb-upload.js',
      'dist/src/atmina/console/static/kbs.css',
      'dist/src/brain/console/static/graph.js',
      'dist/src/brain/console/static/graph.css',
      'README.md',
      'package.json',
    ])
      assert.ok(files.includes(file), `${file} is packed`);
    assert.ok(
      files.some((file) => /^dist\/src\/store\/migrations\/0001_.*\.sql$/.test(file)),
      'the migrations are packed',
    );
    const stray = files.filter((file) => /^(src|connectors|test|bench|scripts)\//.test(file) || file.endsWith('.ts'));
    assert.deepEqual(stray, []);
  });

  it('installs into an empty project, where kgw answers --help and serves /readyz on embedded defaults', async () => {
    const project = path.join(work, 'project');
    await run(process.execPath, ['-e', `require('node:fs').mkdirSync(${JSON.stringify(project)})`]);
    await writeFile(path.join(project, 'package.json'), JSON.stringify({ name: 'uses-kgw', version: '1.0.0', private: true }));
    await run(NPM, ['install', '--no-audit', '--no-fund', '--omit=dev', tarball], {
      cwd: project,
      env: { ...process.env, PATH },
      maxBuffer: 64 * 1024 * 1024,
      timeout: 900_000,
    });
    const installed = await folderBytes(path.join(project, 'node_modules'));
    // The Node binary package is the clone's, not the installed package's (it was 189 MB of 338).
    assert.equal((await readdir(path.join(project, 'node_modules'))).includes('node'), false, 'the node package is not installed');
    process.stdout.write(`# production install: ${(installed / 2 ** 20).toFixed(0)} MiB\n`);

    const kgw = path.join(project, 'node_modules', '.bin', 'kgw');
    const help = await run(kgw, ['--help'], { cwd: project, env: { PATH, HOME: project } });
    assert.match(help.stdout, /^Usage: kgw COMMAND \[options\]\n/);

    const port = await freePort();
    const child = spawn(kgw, ['serve'], {
      cwd: project,
      env: { PATH, HOME: project, KGW_PORT: String(port), KGW_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
    try {
      let ready: { status: number; body: { status?: string } } | undefined;
      for (let attempt = 0; attempt < 600 && ready?.status !== 200; attempt++) {
        try {
          const response = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2000) });
          ready = { status: response.status, body: (await response.json()) as { status?: string } };
        } catch {
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
      assert.equal(ready?.status, 200, stderr);
      // The console's files and its sections' own, the drawing library among them, are served from the package.
      for (const asset of ['console.js', 'console.css', 'kbs/kb-upload.js', 'kbs/kbs.css', 'graph/graph.js', 'graph/graph.css', 'graph/cytoscape.min.js']) {
        const response = await fetch(`http://127.0.0.1:${port}/console/static/${asset}`);
        assert.equal(response.status, 200, asset);
        assert.ok((await response.arrayBuffer()).byteLength > 0, asset);
      }
      // The embedded data folder is the project's own.
      assert.ok((await readdir(project)).includes('.kgw'), 'the data folder is made in the project');
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });
});
