import type { Dirent, Stats } from 'node:fs';
import { lstat, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'yaml';

/**
 * The files an org file names with `file:` (knowledge, memories) and `dir:` (skills). The process that
 * runs `kgw apply` reads them (readReferencedFiles) and sends them along with the file's text,
 * so that a gateway applying the file for the CLI never reads a path of its own file system:
 * the same code applies them locally and through a running gateway.
 *
 * Paths are relative to the org file's folder, use `/`, and stay inside that folder: no
 * absolute path, drive letter or `..` segment. Keys of ReferencedFiles are the normalised form
 * (referencePath): `./docs//a.md` is `docs/a.md`.
 */

/** What was found at one referenced path. */
export type ReferencedEntry =
  /** A regular file: its bytes, base64. */
  | { readonly file: string }
  /** A folder: every regular file under it, by path relative to the folder (`/`), base64. */
  | { readonly folder: readonly { readonly path: string; readonly data_base64: string }[] }
  /** What is wrong with it, one message per problem (each names its path). */
  | { readonly errors: readonly string[] };

export type ReferencedFiles = Readonly<Record<string, ReferencedEntry>>;

/**
 * Where a section's entries name a file or a folder (`file:`, `dir:`), as OrgSection.files
 * declares it. A folder field may bound how many files a folder holds (`why` ends the message):
 * a folder is read once for every section that names it, so the smallest bound of those
 * sections applies to it (and none to a folder only unbounded fields name).
 */
export interface FileField {
  readonly key: string;
  readonly kind: 'file' | 'folder';
  readonly maxFiles?: { readonly files: number; readonly why: string } | undefined;
}

/** The sections as far as their referenced files go (OrgSection's shape; section.ts imports this file). */
export type FileSections = readonly { readonly key: string; readonly files?: FileField | undefined }[];

/** Together, the files one org file references: so that a request through a gateway stays within its 16 MiB limit. */
export const REFERENCED_FILES_MAX_BYTES = 10 * 1024 * 1024;

/** The normalised path of a `file:` or `dir:` value, or why it is not an acceptable one. */
export function referencePath(value: string): { readonly path: string } | { readonly problem: string } {
  if (value.includes('\\')) return { problem: 'must separate folders with /, not \\' };
  if (value.startsWith('/') || /^[A-Za-z]:/.test(value)) return { problem: "must be relative to the org file's folder, not absolute" };
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(value)) return { problem: 'must not contain control characters' };
  const segments = value.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.includes('..')) return { problem: "must stay inside the org file's folder (no ..)" };
  if (segments.length === 0) return { problem: "must name a file or folder inside the org file's folder" };
  return { path: segments.join('/') };
}

/** A path in a message: quoted, never shortened. */
export const quotePath = (value: string): string => JSON.stringify(value);

/** The message for a referenced path of the other kind than the one `wanted`. */
export function kindMismatch(reference: string, wanted: 'file' | 'folder'): string {
  return wanted === 'file' ? `${quotePath(reference)} is a folder, not a file` : `${quotePath(reference)} is a file, not a folder`;
}

/** The `file:` and `dir:` references of an org file's text (the `sections`' FileFields), by normalised path; nothing when it does not parse. */
export function referencesOf(sections: FileSections, source: string): Map<string, Named> {
  const found = new Map<string, Named>();
  let root: unknown;
  try {
    root = parse(source, { uniqueKeys: false });
  } catch {
    return found;
  }
  const pick = (section: string, field: FileField): void => {
    const entries = isRecord(root) ? root[section] : undefined;
    for (const entry of Array.isArray(entries) ? entries : []) {
      const value = isRecord(entry) ? entry[field.key] : undefined;
      const normalised = typeof value === 'string' ? referencePath(value) : undefined;
      if (!normalised || !('path' in normalised)) continue;
      const named = found.get(normalised.path) ?? { kinds: new Set(), maxFiles: undefined };
      named.kinds.add(field.kind);
      if (field.maxFiles !== undefined && (named.maxFiles === undefined || field.maxFiles.files < named.maxFiles.files)) named.maxFiles = field.maxFiles;
      found.set(normalised.path, named);
    }
  };
  for (const section of sections) if (section.files) pick(section.key, section.files);
  return found;
}

/**
 * Reads what an org file's `file:` and `dir:` values (the `sections`' FileFields) name, relative
 * to `folder` (the org file's own folder). Only regular files and folders are read: a symbolic
 * link anywhere on the way, or any other kind of file, is reported rather than followed or
 * skipped. Reading stops at REFERENCED_FILES_MAX_BYTES in all and at the smallest of the
 * fields' maxFiles in one folder. Values that break the path rules are left out (applying the
 * file reports them).
 */
export async function readReferencedFilesWith(sections: FileSections, source: string, folder: string): Promise<ReferencedFiles> {
  const budget: Budget = { bytes: REFERENCED_FILES_MAX_BYTES };
  const result: Record<string, ReferencedEntry> = {};
  for (const [reference, named] of [...referencesOf(sections, source)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    result[reference] = await readReference(folder, reference, named, budget);
  }
  return result;
}

type FolderLimit = NonNullable<FileField['maxFiles']>;

/** What is left of REFERENCED_FILES_MAX_BYTES, shared by every reference. */
interface Budget {
  bytes: number;
}

/** How the org file names one path: as a file, a folder or both, and the smallest bound on its files of the fields naming it. */
export interface Named {
  readonly kinds: Set<'file' | 'folder'>;
  maxFiles: FolderLimit | undefined;
}

async function readReference(root: string, reference: string, { kinds, maxFiles }: Named, budget: Budget): Promise<ReferencedEntry> {
  const segments = reference.split('/');
  // Every folder on the way must be a real folder: a link could lead out of the org file's folder.
  for (let depth = 1; depth <= segments.length; depth++) {
    const relative = segments.slice(0, depth).join('/');
    const found = await lstatOf(path.join(root, ...segments.slice(0, depth)), relative);
    if ('missing' in found) return { errors: [`${quotePath(reference)} does not exist`] };
    if ('error' in found) return { errors: [found.error] };
    const { stats } = found;
    if (stats.isSymbolicLink()) return { errors: [symlink(relative)] };
    if (depth < segments.length) {
      if (!stats.isDirectory()) return { errors: [`${quotePath(reference)} does not exist (${quotePath(relative)} is not a folder)`] };
      continue;
    }
    if (stats.isFile()) {
      if (!kinds.has('file')) return { errors: [kindMismatch(reference, 'folder')] };
      const read = await readRegular(path.join(root, ...segments), reference, stats.size, budget);
      return 'error' in read ? { errors: [read.error] } : { file: read.bytes.toString('base64') };
    }
    if (stats.isDirectory()) {
      if (!kinds.has('folder')) return { errors: [kindMismatch(reference, 'file')] };
      return readFolder(path.join(root, ...segments), reference, budget, maxFiles);
    }
    return { errors: [special(reference)] };
  }
  return { errors: [`${quotePath(reference)} does not exist`] };
}

async function readFolder(absolute: string, reference: string, budget: Budget, maxFiles: FolderLimit | undefined): Promise<ReferencedEntry> {
  const files: { path: string; data_base64: string }[] = [];
  const errors: string[] = [];
  let count = 0;
  const walk = async (dir: string, prefix: string): Promise<boolean> => {
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (error) {
      errors.push(unreadable(prefix === '' ? reference : `${reference}/${prefix.slice(0, -1)}`, error));
      return true;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const relative = `${prefix}${entry.name}`;
      const shown = `${reference}/${relative}`;
      if (entry.isSymbolicLink()) errors.push(symlink(shown));
      else if (entry.isDirectory()) {
        if (!(await walk(path.join(dir, entry.name), `${relative}/`))) return false;
      } else if (entry.isFile()) {
        if (maxFiles !== undefined && ++count > maxFiles.files) {
          errors.push(`${quotePath(reference)} holds more than ${maxFiles.files} files; ${maxFiles.why}`);
          return false;
        }
        const stats = await lstatOf(path.join(dir, entry.name), shown);
        const read = 'error' in stats ? stats : await readRegular(path.join(dir, entry.name), shown, stats.stats.size, budget);
        if ('error' in read) {
          errors.push(read.error);
          // Over the limit: the rest of a large folder is not worth reading.
          if ('full' in read) return false;
        } else files.push({ path: relative, data_base64: read.bytes.toString('base64') });
      } else errors.push(special(shown));
    }
    return true;
  };
  await walk(absolute, '');
  return errors.length > 0 ? { errors } : { folder: files };
}

async function readRegular(
  absolute: string,
  shown: string,
  size: number,
  budget: { bytes: number },
): Promise<{ bytes: Buffer } | { error: string; full?: true }> {
  if (size > budget.bytes) {
    return { full: true, error: `${quotePath(shown)} takes the files the org file references over ${REFERENCED_FILES_MAX_BYTES / (1024 * 1024)} MiB together` };
  }
  try {
    const bytes = await readFile(absolute);
    budget.bytes -= bytes.length;
    return { bytes };
  } catch (error) {
    return { error: unreadable(shown, error) };
  }
}

async function lstatOf(absolute: string, shown: string): Promise<{ stats: Stats } | { error: string; missing?: true }> {
  try {
    return { stats: await lstat(absolute) };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { missing: true, error: `${quotePath(shown)} does not exist` };
    return { error: unreadable(shown, error) };
  }
}

const symlink = (shown: string): string => `${quotePath(shown)} is a symbolic link; the org file reads only regular files and folders`;
const special = (shown: string): string => `${quotePath(shown)} is not a regular file or folder`;
const unreadable = (shown: string, error: unknown): string =>
  `${quotePath(shown)} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
