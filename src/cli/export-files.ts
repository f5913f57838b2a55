import { createHash, randomBytes } from 'node:crypto';
import { lstat, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** What the parts of `kgw export folder` share: hashing, safe paths and whole writes. */

export const sha256Of = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/** The SHA-256 of the regular file at `file`, undefined when there is none (or something else is there). */
export async function diskSha(file: string): Promise<string | undefined> {
  try {
    const stats = await lstat(file);
    return stats.isFile() ? sha256Of(await readFile(file)) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Where a KB path goes under the KB's folder. KB paths are relative, NFC, without empty, `.` or
 * `..` segments (the KB's own rules), checked again here so that nothing is ever written outside
 * the export folder, whatever the store held.
 */
export function destination(kbRoot: string, kbPath: string): string {
  const segments = kbPath.split('/');
  if (segments.some((segment) => segment === '' || segment === '.' || segment === '..' || segment.includes('\0')))
    throw new Error(`the path ${JSON.stringify(kbPath)} is not a Knowledge Base path`);
  const file = path.join(kbRoot, ...segments);
  if (!file.startsWith(kbRoot + path.sep)) throw new Error(`the path ${JSON.stringify(kbPath)} leads outside the export folder`);
  return file;
}

/** Writes `bytes` to `file` whole or not at all: a temporary file beside it, renamed over it. */
export async function writeWhole(file: string, bytes: Buffer): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  // A short name of its own: the file's name may already be as long as a name can be (255 bytes).
  const part = path.join(path.dirname(file), `.kgw-part-${randomBytes(6).toString('hex')}`);
  try {
    await writeFile(part, bytes, { mode: 0o600, flag: 'wx' });
    await rename(part, file);
  } catch (error) {
    await rm(part, { force: true });
    throw error;
  }
}

export function reasonOf(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOTDIR' || code === 'EISDIR' || code === 'EEXIST' || code === 'ENOTEMPTY') return 'a file and a folder of the KB have the same name';
  return error instanceof Error ? error.message : String(error);
}

/**
 * Removes the files an earlier export wrote under `root` (`before`, paths relative to it) that
 * are not in `live` any more, unless someone changed them on disk since (those are kept and
 * reported).
 */
export async function removeGone(
  root: string,
  before: readonly { readonly path: string; readonly sha256: string }[],
  live: ReadonlySet<string>,
  report: { removed: number; kept: { path: string; reason: string }[] },
): Promise<void> {
  for (const old of before) {
    if (live.has(old.path)) continue;
    let target: string;
    try {
      target = destination(root, old.path);
    } catch {
      continue;
    }
    const sha = await diskSha(target);
    if (sha === undefined) continue;
    if (sha !== old.sha256) {
      report.kept.push({ path: old.path, reason: 'no longer exported, but changed on disk since the last export' });
      continue;
    }
    await rm(target);
    report.removed += 1;
  }
}

export { allPages } from '../admin/ops.ts';
