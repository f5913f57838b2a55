import { createHash, randomBytes } from 'node:crypto';
import { mkdir, open, readFile, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { MAX_PRESIGNED_PUT_BYTES } from '../../connectors/blob/contract.ts';
import { notFound, validation } from '../kernel/errors.ts';

/**
 * Bytes staged for an operator's command in pieces (`stage.begin`, `stage.append`), for a file
 * too large for one request to a running gateway (16 MiB of JSON): `kgw import` stages a file
 * over 8 MiB, then names the stage in `kb.import` instead of sending the bytes. The stage is a
 * file in the data folder's `staging/` (0600), written at the offset the caller says it is at,
 * bounded by the size declared at the start, and checked against the declared SHA-256 when it
 * is taken. A stage is taken once; one left over is removed an hour after it was begun.
 */

/** The largest file a stage holds: what a KB keeps of one file. */
export const STAGE_MAX_BYTES = MAX_PRESIGNED_PUT_BYTES;
/** A piece of one `stage.append` call (before base64). */
export const STAGE_PIECE_MAX_BYTES = 8 * 1024 * 1024;
/** Stages open at once; a command stages one file at a time. */
export const STAGES_OPEN_MAX = 16;
/** A stage not taken within this long is removed. */
export const STAGE_TTL_MS = 60 * 60_000;

const ID = /^[A-Za-z0-9_-]{22}$/;

interface Declared {
  readonly size: number;
  readonly sha256: string;
}

const folderOf = (dataDir: string): string => path.join(dataDir, 'staging');
const fileOf = (dataDir: string, id: string): string => {
  if (!ID.test(id)) throw validation('stage_id must be the id stage.begin gave');
  return path.join(folderOf(dataDir), id);
};
const declaredOf = (dataDir: string, id: string): string => `${fileOf(dataDir, id)}.json`;

/** Removes the stages begun more than STAGE_TTL_MS ago; the number still open. */
async function sweep(dataDir: string): Promise<number> {
  let names: string[];
  try {
    names = await readdir(folderOf(dataDir));
  } catch {
    return 0;
  }
  let open = 0;
  for (const name of names.filter((n) => n.endsWith('.json'))) {
    const declared = path.join(folderOf(dataDir), name);
    const begun = await stat(declared).catch(() => undefined);
    if (begun !== undefined && Date.now() - begun.mtimeMs > STAGE_TTL_MS) {
      await rm(declared, { force: true });
      await rm(declared.slice(0, -'.json'.length), { force: true });
    } else open += 1;
  }
  return open;
}

/** Begins a stage of `size` bytes with SHA-256 `sha256`; its id. */
export async function beginStage(dataDir: string, declared: Declared): Promise<string> {
  if (!Number.isSafeInteger(declared.size) || declared.size < 0 || declared.size > STAGE_MAX_BYTES)
    throw validation(`size must be a whole number of bytes up to ${STAGE_MAX_BYTES}`);
  if (!/^[0-9a-f]{64}$/.test(declared.sha256)) throw validation('sha256 must be 64 lower-case hexadecimal digits');
  if ((await sweep(dataDir)) >= STAGES_OPEN_MAX) throw validation(`at most ${STAGES_OPEN_MAX} stages may be open at once`);
  await mkdir(folderOf(dataDir), { recursive: true, mode: 0o700 });
  const id = randomBytes(16).toString('base64url');
  await (await open(fileOf(dataDir, id), 'wx', 0o600)).close();
  await (await open(declaredOf(dataDir, id), 'wx', 0o600)).writeFile(JSON.stringify(declared)).then(() => undefined);
  return id;
}

async function declaredStage(dataDir: string, id: string): Promise<Declared> {
  const file = declaredOf(dataDir, id);
  try {
    return JSON.parse(await readFile(file, 'utf8')) as Declared;
  } catch {
    throw notFound(`no stage "${id}" (it was taken, or is over an hour old)`);
  }
}

/** Writes `piece` at `offset`, which must be where the stage ends; the bytes it holds then. */
export async function appendToStage(dataDir: string, id: string, offset: number, piece: Buffer): Promise<number> {
  const declared = await declaredStage(dataDir, id);
  if (piece.length > STAGE_PIECE_MAX_BYTES) throw validation(`a piece may be at most ${STAGE_PIECE_MAX_BYTES} bytes`);
  const file = await open(fileOf(dataDir, id), 'r+');
  try {
    const { size } = await file.stat();
    if (offset !== size) throw validation(`offset must be ${size}, where the stage ends`);
    if (size + piece.length > declared.size) throw validation(`the stage was declared with ${declared.size} bytes`);
    await file.write(piece, 0, piece.length, offset);
    return size + piece.length;
  } finally {
    await file.close();
  }
}

/** The staged bytes, checked against what was declared, and the stage removed. */
export async function takeStage(dataDir: string, id: string): Promise<Buffer> {
  const declared = await declaredStage(dataDir, id);
  try {
    const bytes = await readFile(fileOf(dataDir, id));
    if (bytes.length !== declared.size) throw validation(`the stage holds ${bytes.length} of the ${declared.size} bytes declared`);
    if (createHash('sha256').update(bytes).digest('hex') !== declared.sha256) throw validation('the staged bytes do not match the SHA-256 declared');
    return bytes;
  } finally {
    await rm(fileOf(dataDir, id), { force: true });
    await rm(declaredOf(dataDir, id), { force: true });
  }
}
