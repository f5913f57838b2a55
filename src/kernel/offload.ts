import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

/**
 * Pure text work (tokenising a large body, reading its links) run on worker threads instead of
 * the thread that answers requests: one caller's large document then costs the others nothing
 * but a share of the machine's cores. A task names a module and one of its exports, a function
 * of plain data (arguments and result cross by structured clone); the worker imports the module
 * once and calls the export of the task's name. Work below OFFLOAD_MIN_CHARS runs in place: a round trip to a
 * worker costs more than the work.
 *
 * Workers are started on first use, at most OFFLOAD_WORKERS of them, kept while tasks come and
 * unreferenced so they never keep the process alive; one that fails (out of memory, a crash) is
 * replaced and its tasks fail with its error.
 */

/** Texts shorter than this are worked on in place. */
export const OFFLOAD_MIN_CHARS = 32 * 1024;
/** Worker threads at most: one fewer than the cores, at least one. */
export const OFFLOAD_WORKERS = Math.max(1, Math.min(4, availableParallelism() - 1));
/** Heap a worker may use: a task holds at most a few copies of a 1 MiB text and its statistics. */
const WORKER_HEAP_MB = 256;

interface Pending {
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: Error) => void;
}

interface Slot {
  readonly worker: Worker;
  readonly pending: Map<number, Pending>;
}

const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const modules = new Map();
parentPort.on('message', async ({ id, module, name, args }) => {
  try {
    let loaded = modules.get(module);
    if (loaded === undefined) { loaded = import(module); modules.set(module, loaded); }
    const fn = (await loaded)[name];
    if (typeof fn !== 'function') throw new Error(module + ' has no export ' + name);
    parentPort.postMessage({ id, ok: true, value: await fn(...args) });
  } catch (error) {
    parentPort.postMessage({ id, ok: false, message: error instanceof Error ? error.message : String(error) });
  }
});
`;

const slots: Slot[] = [];
let next = 0;
let sequence = 0;

function start(): Slot {
  const worker = new Worker(WORKER_SOURCE, { eval: true, resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } });
  const slot: Slot = { worker, pending: new Map() };
  worker.unref();
  worker.on('message', (message: { id: number; ok: boolean; value?: unknown; message?: string }) => {
    const waiting = slot.pending.get(message.id);
    if (waiting === undefined) return;
    slot.pending.delete(message.id);
    if (slot.pending.size === 0) worker.unref();
    if (message.ok) waiting.resolve(message.value);
    else waiting.reject(new Error(message.message ?? 'the worker task failed'));
  });
  const fail = (error: Error) => {
    const at = slots.indexOf(slot);
    if (at !== -1) slots.splice(at, 1);
    for (const waiting of slot.pending.values()) waiting.reject(error);
    slot.pending.clear();
  };
  worker.on('error', fail);
  worker.on('exit', (code) => fail(new Error(`the worker stopped (exit code ${code})`)));
  return slot;
}

function pick(): Slot {
  // A new worker while there are fewer than the bound, then in turn.
  if (slots.length < OFFLOAD_WORKERS) {
    const slot = start();
    slots.push(slot);
    return slot;
  }
  next = (next + 1) % slots.length;
  return slots[next] ?? start();
}

/**
 * Calls `task`, an export of `module` (a file URL) under its own name, with `args`: on a worker
 * thread, or here when `size` (the characters of the text it works on) is small.
 */
export function offload<A extends unknown[], R>(module: URL, task: (...args: A) => R, size: number, ...args: A): Promise<R> {
  if (size < OFFLOAD_MIN_CHARS) return Promise.resolve(task(...args));
  const name = task.name;
  const slot = pick();
  const id = ++sequence;
  return new Promise<R>((resolve, reject) => {
    slot.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
    slot.worker.ref();
    slot.worker.postMessage({ id, module: module.href, name, args });
  });
}

/** Stops the workers (tests, and a gateway that closes). */
export async function stopOffloadWorkers(): Promise<void> {
  const stopping = slots.splice(0);
  await Promise.all(stopping.map((slot) => slot.worker.terminate()));
}
