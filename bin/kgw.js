#!/usr/bin/env node
/*
 * The `kgw` command. A clone of the repository has the TypeScript sources and runs them on its
 * Node 24 (type stripping); the installed package ships only the built JavaScript (dist/, made
 * by `npm pack`), so the sources decide: a clone never runs a stale build.
 */
import { existsSync } from 'node:fs';
import module from 'node:module';
import { fileURLToPath } from 'node:url';

const source = new URL('../src/cli/kgw.ts', import.meta.url);
if (existsSync(source)) {
  // Node strips the sources' types at every start with a WebAssembly compiler that then stays in
  // memory: about 25 MiB of an idle gateway's 150 (docs/decisions.md, "The compile cache").
  // Node's compile cache keeps the stripped code and V8's bytecode, so later starts load neither.
  // It lives in the project's own .cache/ (the tests' too), not a shared temporary folder another
  // user could write into; NODE_COMPILE_CACHE, when set, is used instead, and
  // NODE_DISABLE_COMPILE_CACHE=1 turns it off.
  module.enableCompileCache(fileURLToPath(new URL('../.cache/node-compile', import.meta.url)));
}
await import(existsSync(source) ? source.href : new URL('../dist/src/cli/kgw.js', import.meta.url).href);
