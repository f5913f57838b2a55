import v8 from 'node:v8';
import type { MemoryMode } from './config.ts';

/**
 * What KGW_MEMORY=lean changes in V8, set by the process on itself when `kgw serve` starts.
 *
 * - `--heap-growing-percent=50`: after a full collection the old generation may grow by half
 *   before the next, instead of up to fourfold. A loaded gateway holds about 40 MB of live
 *   objects; the rest of its heap is garbage not yet collected.
 * - `--no-maglev`: no mid-tier compiler, whose code and working memory sit beside the top
 *   tier's; the few hot paths still reach TurboFan.
 *
 * Measured with `npm run bench:serve` and `npm run bench:mix` (docs/decisions.md, "The young
 * generation"): about 150 instead of 220–270 MiB under cheap calls at the same CPU, 175–185
 * instead of 260–320 under 1,000-item contexts at about two fifths more CPU a call. Node takes
 * neither flag from NODE_OPTIONS, which is why the gateway sets them itself: KGW_MEMORY works
 * wherever the environment can be set (a container, a service manager), and the same flags on
 * Node's command line do the same.
 */
export const LEAN_V8_FLAGS = ['--heap-growing-percent=50', '--no-maglev'] as const;

/**
 * Applies the mode to this process. V8 reads both flags as it goes (the growth at each full
 * collection, the compiler at each function's next tier-up), so set before the gateway loads
 * its store they cover nearly all it runs; `throughput` leaves V8 as Node started it.
 */
export function applyMemoryMode(mode: MemoryMode): readonly string[] {
  if (mode === 'throughput') return [];
  for (const flag of LEAN_V8_FLAGS) v8.setFlagsFromString(flag);
  return LEAN_V8_FLAGS;
}
