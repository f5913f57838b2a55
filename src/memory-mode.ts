import v8 from 'node:v8';
import type { MemoryMode } from './config.ts';

/**
 * What KGW_MEMORY=lean changes in V8, for a gateway sized by its memory.
 *
 * - `--heap-growing-percent=50`: after a full collection the old generation may grow by half
 *   before the next, instead of up to fourfold. A loaded gateway holds about 40 MB of live
 *   objects; the rest of its heap is garbage not yet collected.
 * - `--no-maglev`: no mid-tier compiler, whose code and working memory sit beside the top
 *   tier's; the few hot paths still reach TurboFan.
 * - `--liftoff-only`, on the embedded store only: PGlite's WebAssembly stays with V8's baseline
 *   compiler. The optimising one takes about 600 MB of working memory for a few hundred
 *   milliseconds to compile one function of PostgreSQL's (105 KB of code), which is the peak
 *   of a PGlite gateway (docs/decisions.md, "PGlite's memory").
 *
 * Measured with `npm run bench:serve` and `npm run bench:mix` (docs/decisions.md, "The young
 * generation" and "PGlite's memory").
 */
export function leanFlags(embedded: boolean): readonly string[] {
  return embedded ? [...RUNTIME_FLAGS, '--liftoff-only'] : RUNTIME_FLAGS;
}

/** The flags V8 reads as it goes (the growth at each full collection, the tier at each tier-up), so that setting them at run time works. */
const RUNTIME_FLAGS = ['--heap-growing-percent=50', '--no-maglev'] as const;

/** What of the process applying a mode is read or called: Node's own, or a test's. */
export interface ProcessLike {
  readonly execPath: string;
  readonly execArgv: readonly string[];
  readonly argv: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  /** Node's `process.execve` (Node 23.11 and later, not on Windows): replaces the process, same pid. */
  readonly execve?: (file: string, args: string[], env: NodeJS.ProcessEnv) => never;
}

export interface AppliedMode {
  /** The flags the mode asks for, all in effect once this returns (on Node's command line, or set at run time). */
  readonly flags: readonly string[];
  /** Where they are: on Node's command line, or set at run time where Node cannot restart itself (then without `--liftoff-only`, which V8 reads only as it starts). */
  readonly where: 'command line' | 'run time' | 'none';
}

/**
 * Applies the mode to this process, before the gateway loads its store. Node takes none of the
 * flags from NODE_OPTIONS, and V8 reads `--liftoff-only` only as it starts, so when they are not
 * on Node's command line yet the process replaces itself (`process.execve`, same pid, same
 * environment and descriptors) with Node started with them first: an operator's own flags come
 * after and win. Where Node cannot do that, the flags V8 reads as it goes are set at run time.
 * `throughput` leaves V8 as Node started it. Returns only when the flags are in effect.
 */
export function applyMemoryMode(mode: MemoryMode, embedded: boolean, proc: ProcessLike = process): AppliedMode {
  if (mode === 'throughput') return { flags: [], where: 'none' };
  const flags = leanFlags(embedded);
  const missing = flags.filter((flag) => !proc.execArgv.includes(flag));
  if (missing.length === 0) return { flags, where: 'command line' };
  if (proc.execve !== undefined) proc.execve(proc.execPath, [proc.execPath, ...missing, ...proc.execArgv, ...proc.argv.slice(1)], proc.env);
  for (const flag of RUNTIME_FLAGS) v8.setFlagsFromString(flag);
  return { flags: RUNTIME_FLAGS, where: 'run time' };
}
