import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { chmodSync, chownSync, lstatSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { DiskBlobStore } from '../../connectors/blob/disk.ts';
import { openStore } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import type { Config } from '../../src/config.ts';
import type { Db } from '../../src/store/db.ts';
import { tryLockFolder } from '../../src/store/folder-lock.ts';
import type { FolderLock } from '../../src/store/folder-lock.ts';
import { migrate } from '../../src/store/migrate.ts';
import { openPglite } from '../../src/store/pglite.ts';
import { checkDataFolder } from '../../src/store/private-dir.ts';

interface Entry {
  readonly path: string;
  readonly mode: number;
  readonly kind: 'folder' | 'file' | 'other';
}

/** Every path under `root`, the root included, with its permission bits. */
function walk(root: string): Entry[] {
  const entries: Entry[] = [];
  const visit = (file: string) => {
    const info = lstatSync(file);
    const kind = info.isDirectory() ? 'folder' : info.isFile() ? 'file' : 'other';
    entries.push({ path: path.relative(root, file) || '.', mode: info.mode & 0o777, kind });
    if (kind === 'folder') for (const name of readdirSync(file)) visit(path.join(file, name));
  };
  visit(root);
  return entries;
}

/** Asserts folders 0700 and files 0600 throughout, listing every path that is not. */
function assertPrivate(root: string, when: string): Entry[] {
  const entries = walk(root);
  const wrong = entries.filter((e) => e.kind === 'other' || e.mode !== (e.kind === 'folder' ? 0o700 : 0o600));
  assert.deepEqual(
    wrong.map((e) => `${e.path} ${e.kind} ${e.mode.toString(8)}`),
    [],
    `${when}: ${wrong.length} of ${entries.length} paths are not private`,
  );
  return entries;
}

function withUmask<T>(mask: number, work: () => Promise<T>): Promise<T> {
  const previous = process.umask(mask);
  return work().finally(() => process.umask(previous));
}

async function tempBase(): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), 'kgw-private-'));
}

const configFor = (dataDir: string, base: string): Config => loadConfig({ KGW_DATA_DIR: dataDir }, base);

const walSegments = (dataDir: string): number => readdirSync(path.join(dataDir, 'pgdata', 'pg_wal')).filter((name) => /^[0-9A-F]{24}$/.test(name)).length;

/** Enough rows (about 40 MiB, incompressible) to make PostgreSQL start new WAL segments. */
async function writeRows(db: Db): Promise<void> {
  await db.tx((tx) => tx.exec('CREATE TABLE private_dir_probe (id serial PRIMARY KEY, body text NOT NULL)'));
  for (let round = 0; round < 40; round++) {
    await db.tx((tx) =>
      tx.exec(
        `INSERT INTO private_dir_probe (body) SELECT string_agg(md5(g::text || random()::text), '') FROM generate_series(1, 32) g, generate_series(1, 1000) r GROUP BY r`,
      ),
    );
  }
}

async function writeBlobs(dataDir: string): Promise<void> {
  const blobs = new DiskBlobStore({ dataDir, publicUrl: 'http://127.0.0.1:8787' });
  const bytes = Buffer.from('tenant content\n');
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  await blobs.put({ body: bytes, size: bytes.length, sha256 });
  // A presigned upload: makes the upload secret and records the used ticket.
  const other = Buffer.from('uploaded content\n');
  const otherSha = createHash('sha256').update(other).digest('hex');
  const put = await blobs.presignPut({ size: other.length, sha256: otherSha, contentType: 'text/plain', expiresInSeconds: 60 });
  const ticket = put.url.slice(put.url.lastIndexOf('/') + 1);
  await blobs.receiveUpload(ticket, {
    contentLength: put.headers['content-length'],
    contentType: put.headers['content-type'],
    checksumSha256: put.headers['x-amz-checksum-sha256'],
    body: Readable.from([other]),
  });
}

function lockFolder(dataDir: string): FolderLock {
  const attempt = tryLockFolder(dataDir, { pid: process.pid, role: 'cli', startedAt: new Date().toISOString() });
  assert.ok('lock' in attempt);
  return attempt.lock;
}

const posix = process.platform !== 'win32';

describe('the data folder is private', { skip: posix ? false : 'POSIX modes only' }, () => {
  for (const mask of [0o022, 0o000]) {
    it(`keeps every folder 0700 and file 0600 through open, writes and close (umask ${mask.toString(8).padStart(3, '0')})`, async () => {
      const base = await tempBase();
      try {
        await withUmask(mask, async () => {
          const dataDir = path.join(base, 'data');
          const lock = lockFolder(dataDir);
          lock.update({ pid: process.pid, role: 'gateway', startedAt: new Date().toISOString(), adminUrl: 'http://127.0.0.1:1', adminSecret: 'secret' });
          const warnings: string[] = [];
          const db = await openStore(configFor(dataDir, base), { warn: (message) => warnings.push(message) });
          try {
            assertPrivate(dataDir, 'after opening');
            await migrate(db);
            const before = walSegments(dataDir);
            await writeRows(db);
            assert.ok(walSegments(dataDir) > before, 'the writes made new WAL segments');
            await writeBlobs(dataDir);
            const running = assertPrivate(dataDir, 'after the writes');
            assert.ok(running.some((e) => e.path === 'kgw.lock'));
            assert.ok(running.some((e) => e.path === 'upload-secret'));
            assert.ok(running.some((e) => e.path.startsWith(path.join('blobs', 'sha256')) && e.kind === 'file'));
          } finally {
            await db.close();
          }
          const closed = assertPrivate(dataDir, 'after closing');
          assert.ok(closed.length > 1000, `PGlite's files are all there (${closed.length})`);
          lock.release();
          assert.deepEqual(warnings, [], 'a folder this process created is no news');
        });
      } finally {
        await rm(base, { recursive: true, force: true });
      }
    });
  }

  it('repairs a world-readable data folder at start and names it in the warning', async () => {
    const base = await tempBase();
    try {
      await withUmask(0o022, async () => {
        const dataDir = path.join(base, 'data');
        // A folder left by an earlier version: PGlite's modes, the folder open to everyone.
        mkdirSync(dataDir);
        await (await openPglite(path.join(dataDir, 'pgdata'))).close();
        writeFileSync(path.join(dataDir, 'upload-secret'), Buffer.alloc(32, 1));
        for (const entry of walk(dataDir)) {
          chmodSync(path.join(dataDir, entry.path), entry.kind === 'folder' ? 0o777 : 0o666);
        }
        // Not the gateway's: left as it is, the folder's own mode keeps others out.
        const notes = path.join(dataDir, 'notes.txt');
        writeFileSync(notes, 'kept by the operator');
        const warnings: string[] = [];
        const db = await openStore(configFor(dataDir, base), { warn: (message) => warnings.push(message) });
        try {
          assert.deepEqual(
            walk(dataDir)
              .filter((e) => e.mode !== (e.kind === 'folder' ? 0o700 : 0o600))
              .map((e) => e.path),
            ['notes.txt'],
          );
        } finally {
          await db.close();
        }
        assert.equal(lstatSync(notes).mode & 0o777, 0o644);
        assert.equal(warnings.length, 1, warnings.join('\n'));
        const [warning = ''] = warnings;
        assert.ok(!warning.includes('\n'), 'one line');
        assert.ok(warning.startsWith(`data folder ${dataDir}: group or others had access to `), warning);
        assert.match(warning, /paths, now made private \(folders 0700, files 0600\): \. 0777, /, 'names the folder itself with its old mode');
        assert.match(warning, /pgdata 0777/);
        assert.match(warning, /, and \d+ more; the folder itself was open, so other local users may already have read or changed its contents$/);

        // Repaired once: the next start has nothing to say.
        const again: string[] = [];
        await (await openStore(configFor(dataDir, base), { warn: (message) => again.push(message) })).close();
        assert.deepEqual(again, []);

        // Open modes inside a private folder are repaired and named too, without the alarm.
        chmodSync(path.join(dataDir, 'pgdata'), 0o755);
        chmodSync(path.join(dataDir, 'pgdata', 'PG_VERSION'), 0o644);
        const inside: string[] = [];
        await checkDataFolder(dataDir, (message) => inside.push(message));
        assert.deepEqual(inside, [
          `data folder ${dataDir}: group or others had access to 2 paths, now made private (folders 0700, files 0600): pgdata 0755, ${path.join('pgdata', 'PG_VERSION')} 0644`,
        ]);
        assertPrivate(path.join(dataDir, 'pgdata'), 'after the second check');
      });
    } finally {
      await rm(base, { recursive: true, force: true });
    }
  });

  it('closes an empty folder a plain mkdir just made, without a warning', async () => {
    const base = await tempBase();
    try {
      await withUmask(0o022, async () => {
        const dataDir = path.join(base, 'data');
        // What a caller does that creates the folder with the default umask before locking it.
        mkdirSync(dataDir, { recursive: true });
        assert.equal(lstatSync(dataDir).mode & 0o777, 0o755);
        const lock = lockFolder(dataDir);
        assert.equal(lstatSync(dataDir).mode & 0o777, 0o700);
        // The start-up check that opening the store runs next finds nothing to report.
        const warnings: string[] = [];
        await checkDataFolder(dataDir, (message) => warnings.push(message));
        assert.deepEqual(warnings, []);
        assertPrivate(dataDir, 'after the check');
        lock.release();
      });
    } finally {
      await rm(base, { recursive: true, force: true });
    }
  });

  it(
    'refuses, in one line naming the path, what another user owns and others can reach',
    { skip: process.getuid?.() === 0 ? false : 'needs root to give a file to another user' },
    async () => {
      const base = await tempBase();
      try {
        const dataDir = path.join(base, 'data');
        const planted = path.join(dataDir, 'blobs', 'planted');
        mkdirSync(path.dirname(planted), { recursive: true, mode: 0o700 });
        writeFileSync(planted, 'x');
        chmodSync(planted, 0o644);
        chownSync(planted, 65534, 65534);
        const warnings: string[] = [];
        await assert.rejects(openStore(configFor(dataDir, base), { warn: (message) => warnings.push(message) }), (error: Error) => {
          assert.equal(error.message, `cannot make ${planted} private (mode 0644): it belongs to uid 65534, not to this user (uid 0)`);
          return true;
        });
        assert.equal(lstatSync(planted).mode & 0o777, 0o644, 'left as it was');
      } finally {
        await rm(base, { recursive: true, force: true });
      }
    },
  );
});
