import { Buffer, isUtf8 } from 'node:buffer';
import type { ReferencedEntry, ReferencedFiles } from './referenced-files.ts';
import { kindMismatch, quotePath, referencePath } from './referenced-files.ts';
import type { Located, Slot, YamlReader } from './yaml-reader.ts';

/**
 * What a section reads from the files sent with the org file (referenced-files.ts): a `file:`,
 * `dir:` or `files_from:` value as a path, the entry sent for it, and its bytes and text.
 * Each problem is reported with the value's line.
 */

/** A `file:` or `dir:` value as a normalised path relative to the org file's folder. */
export function readReference(slot: Slot, reader: YamlReader): Located | undefined {
  const value = reader.string(slot, { expected: 'a path relative to the org file', valid: (text) => text !== '' });
  if (!value) return undefined;
  const normalised = referencePath(value.value);
  if ('problem' in normalised) {
    reader.fail(slot, `${slot.path}: ${quotePath(value.value)} ${normalised.problem}`);
    return undefined;
  }
  return { ...value, value: normalised.path };
}

/** The base64 bytes of the file a `file:` names; undefined (each problem reported) otherwise. */
export function lookUpFile(reference: Located, files: ReferencedFiles, reader: YamlReader): string | undefined {
  const entry = entryOf(reference, files, 'file', reader);
  return entry && 'file' in entry ? entry.file : undefined;
}

/** The files under the folder a `dir:` names; undefined (each problem reported) otherwise. */
export function lookUpFolder(
  reference: Located,
  files: ReferencedFiles,
  reader: YamlReader,
): readonly { readonly path: string; readonly data_base64: string }[] | undefined {
  const entry = entryOf(reference, files, 'folder', reader);
  return entry && 'folder' in entry ? entry.folder : undefined;
}

function entryOf(reference: Located, files: ReferencedFiles, wanted: 'file' | 'folder', reader: YamlReader): ReferencedEntry | undefined {
  const entry = Object.hasOwn(files, reference.value) ? files[reference.value] : undefined;
  if (entry === undefined) {
    reader.fail(reference, `${reference.path}: ${quotePath(reference.value)} is not among the files sent with the org file`);
    return undefined;
  }
  if ('errors' in entry) {
    for (const error of entry.errors) reader.fail(reference, `${reference.path}: ${error}`);
    return undefined;
  }
  if (!(wanted in entry)) {
    reader.fail(reference, `${reference.path}: ${kindMismatch(reference.value, wanted)}`);
    return undefined;
  }
  return entry;
}

/** Decodes base64 sent with the file; undefined when it is not the canonical encoding of some bytes. */
export function decodeBase64(data: string): Buffer | undefined {
  const bytes = Buffer.from(data, 'base64');
  return bytes.toString('base64') === data ? bytes : undefined;
}

/** UTF-8 text, kept exactly (a byte order mark included); undefined when the bytes are not UTF-8. */
export function utf8Text(bytes: Buffer): string | undefined {
  return isUtf8(bytes) ? bytes.toString('utf8') : undefined;
}
