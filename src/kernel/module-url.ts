import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The URL of a module beside `base` (an `import.meta.url`), named without its extension: the
 * extension is the caller's own, `.ts` when the sources run directly (a clone of the
 * repository) and `.js` in the built package (dist/). For what is loaded by URL rather than
 * imported (a worker's script, a module a worker thread imports), which the compiler's rewriting
 * of import specifiers does not reach.
 */
export function siblingModule(base: string, relative: string): URL {
  return new URL(`${relative}${path.extname(fileURLToPath(base))}`, base);
}
