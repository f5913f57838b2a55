import { chmodSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import type { Stats } from 'node:fs';
import { chmod, lstat, mkdir, readdir, stat } from 'node:fs/promises';
import path from 'node:path';

/**
 * The data folder holds every tenant's content (PGlite's tables and WAL, file bytes) and the
 * secrets of the lock file and upload tickets, so nobody but its owner may reach any of it:
 * folders 0700, files 0600. The folder itself being 0700 is what keeps the rest private at
 * every moment, because others cannot even look up a name below it; the modes inside are
 * repaired on top of that, because PGlite writes most of its files 0666 (see pglite.ts).
 */
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** A path that group or others could reach, and its mode before it was repaired. */
export interface Exposure {
  readonly path: string;
  readonly mode: number;
}

// Windows has no such modes (stat reports 0666 for every writable file); its ACLs are left alone.
const POSIX = process.platform !== 'win32';

const octal = (mode: number): string => (mode & 0o777).toString(8).padStart(4, '0');

/** A path for a one-line message: a name planted in an open folder cannot drive the terminal. */
const shown = (file: string): string => file.replace(/[\p{Cc}\p{Cf}\u2028\u2029]/gu, (char) => `\\u{${(char.codePointAt(0) ?? 0).toString(16)}}`);

/**
 * Creates `dir` (and any missing parent) private, before anything is written into it. A folder
 * that exists, is open to others and is empty is closed without a word: it was just made by a
 * plain mkdir under the default umask and has nothing to expose. One with contents is left to
 * `checkDataFolder`, which repairs it and says so.
 */
export function makePrivateDir(dir: string): void {
  const created = mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  if (!POSIX) return;
  // The umask may have taken bits away from a folder created just now; set the mode exactly.
  if (created !== undefined) return chmodSync(dir, PRIVATE_DIR_MODE);
  const info = statSync(dir);
  if ((info.mode & 0o077) !== 0 && readdirSync(dir).length === 0) repair(dir, info, () => chmodSync(dir, PRIVATE_DIR_MODE));
}

/**
 * Makes `root` and everything below it private: folders 0700, regular files 0600. Creates
 * `root` when missing. Symbolic links are neither followed nor changed (a link's own mode
 * means nothing, and following one could change a file outside the folder). Returns what group
 * or others had access to before; throws one line naming the path when one cannot be
 * repaired, e.g. because another user owns it (who could open it up again at will).
 */
export async function securePrivateTree(root: string): Promise<Exposure[]> {
  const exposed: Exposure[] = [];
  if (!(await createPrivate(root))) return exposed;
  // The root may be a link to the real folder: that one is followed, nothing below it is.
  await visit(root, await stat(root), exposed, true);
  return exposed;
}

/** What the gateway writes into a data folder (src/app.ts, connectors/blob/disk.ts, folder-lock.ts). */
const OWN_ENTRIES = /^(pgdata|blobs|upload-secret|kgw\.lock(\..*\.tmp)?)$/;

/**
 * The start-up check of a data folder: makes the folder private and, inside it, everything the
 * gateway writes there (the database, file bytes, the upload secret, the lock), and when group
 * or others had access to any of it, warns once, naming the folder and what was repaired. Other
 * files kept in the folder are left as they are: the folder's own 0700 keeps others out.
 */
export async function checkDataFolder(dataDir: string, warn: (message: string) => void): Promise<void> {
  const exposed: Exposure[] = [];
  if (!(await createPrivate(dataDir))) return;
  await visit(dataDir, await stat(dataDir), exposed, false);
  for (const name of await readdir(dataDir)) {
    if (!OWN_ENTRIES.test(name)) continue;
    const info = await lstatIfAny(path.join(dataDir, name));
    if (info !== undefined) await visit(path.join(dataDir, name), info, exposed, true);
  }
  if (exposed.length > 0) warn(describeExposure(dataDir, exposed));
}

/** Creates the folder private when missing; false where modes do not apply. */
async function createPrivate(dir: string): Promise<boolean> {
  const created = await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  if (!POSIX) return false;
  // The umask may have taken bits away from a folder created just now; set the mode exactly.
  if (created !== undefined) await chmod(dir, PRIVATE_DIR_MODE);
  return true;
}

async function visit(file: string, info: Stats, exposed: Exposure[], below: boolean): Promise<void> {
  const folder = info.isDirectory();
  if (!folder && !info.isFile()) return;
  const want = folder ? PRIVATE_DIR_MODE : PRIVATE_FILE_MODE;
  if ((info.mode & 0o777) !== want) {
    if ((info.mode & 0o077) !== 0) exposed.push({ path: file, mode: info.mode & 0o777 });
    await repairAsync(file, info, () => chmod(file, want));
  }
  if (!folder || !below) return;
  for (const name of await readdir(file)) {
    const child = path.join(file, name);
    const childInfo = await lstatIfAny(child);
    if (childInfo !== undefined) await visit(child, childInfo, exposed, true);
  }
}

async function lstatIfAny(file: string): Promise<Stats | undefined> {
  try {
    return await lstat(file);
  } catch (error) {
    // Removed meanwhile (PGlite renames and deletes its own files while it runs).
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * One line: the folder, how many paths were repaired and the first of them with their old
 * modes. Only when the folder itself was open could anyone else actually have reached them.
 */
export function describeExposure(dataDir: string, exposed: readonly Exposure[]): string {
  const named = exposed.slice(0, 5).map((entry) => `${shown(path.relative(dataDir, entry.path) || '.')} ${octal(entry.mode)}`);
  const more = exposed.length > named.length ? `, and ${exposed.length - named.length} more` : '';
  const open = exposed.some((entry) => entry.path === dataDir);
  return (
    `data folder ${shown(dataDir)}: group or others had access to ${exposed.length} path${exposed.length === 1 ? '' : 's'}, ` +
    `now made private (folders 0700, files 0600): ${named.join(', ')}${more}` +
    (open ? '; the folder itself was open, so other local users may already have read or changed its contents' : '')
  );
}

function refusal(file: string, info: Stats, error?: unknown): Error {
  const why = error === undefined ? `it belongs to uid ${info.uid}, not to this user (uid ${process.getuid?.()})` : (error as Error).message;
  return new Error(`cannot make ${shown(file)} private (mode ${octal(info.mode)}): ${why}`, { cause: error });
}

// Another user's file could be opened up again by its owner, so it is refused, not repaired.
const foreign = (info: Stats): boolean => process.getuid !== undefined && info.uid !== process.getuid();

function repair(file: string, info: Stats, change: () => void): void {
  if (foreign(info)) throw refusal(file, info);
  try {
    change();
  } catch (error) {
    throw refusal(file, info, error);
  }
}

async function repairAsync(file: string, info: Stats, change: () => Promise<void>): Promise<void> {
  if (foreign(info)) throw refusal(file, info);
  try {
    await change();
  } catch (error) {
    throw refusal(file, info, error);
  }
}
