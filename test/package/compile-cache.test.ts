import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

/*
 * `kgw` from a clone (and so `npm start`) keeps Node's compile cache in the project's .cache/:
 * the stripped TypeScript and V8's bytecode, so a start neither loads the type stripper nor
 * compiles again (docs/decisions.md, "The compile cache"). Checked by effect: a module loaded
 * before bin/kgw.js prints, as the process exits, the cache folder Node used.
 */
const KGW = fileURLToPath(new URL('../../bin/kgw.js', import.meta.url));
const PROJECT_CACHE = fileURLToPath(new URL('../../.cache/node-compile', import.meta.url));
const PROBE = `data:text/javascript,${encodeURIComponent(
  "import m from 'node:module'; process.on('exit', () => process.stderr.write('cache:' + String(m.getCompileCacheDir()) + '\\n'));",
)}`;

/** The compile cache folder of `kgw --version` run with `env` (undefined: none); Node keeps one inside per version and flags. */
function cacheDirOf(env: NodeJS.ProcessEnv): string | undefined {
  const base: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: '' };
  delete base.NODE_COMPILE_CACHE;
  delete base.NODE_DISABLE_COMPILE_CACHE;
  const run = spawnSync(process.execPath, ['--import', PROBE, KGW, '--version'], { env: { ...base, ...env }, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stdout, /^\d+\.\d+\.\d+/);
  const dir = /^cache:(.*)$/m.exec(run.stderr)?.[1];
  assert.ok(dir !== undefined, run.stderr);
  return dir === 'undefined' ? undefined : dir;
}

describe('kgw keeps the compile cache in the project', () => {
  it("uses the project's .cache/node-compile by default", () => {
    assert.equal(path.dirname(cacheDirOf({}) ?? ''), PROJECT_CACHE);
  });

  it('uses NODE_COMPILE_CACHE when set, and none with NODE_DISABLE_COMPILE_CACHE=1', () => {
    const elsewhere = path.join(os.tmpdir(), `kgw-compile-cache-${process.pid}`);
    try {
      assert.equal(path.dirname(cacheDirOf({ NODE_COMPILE_CACHE: elsewhere }) ?? ''), elsewhere);
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
    assert.equal(cacheDirOf({ NODE_DISABLE_COMPILE_CACHE: '1' }), undefined);
  });
});
