#!/usr/bin/env node
/*
 * The `kgw` command. A clone of the repository has the TypeScript sources and runs them on its
 * Node 24 (type stripping); the installed package ships only the built JavaScript (dist/, made
 * by `npm pack`), so the sources decide: a clone never runs a stale build.
 */
import { existsSync } from 'node:fs';

const source = new URL('../src/cli/kgw.ts', import.meta.url);
await import(existsSync(source) ? source.href : new URL('../dist/src/cli/kgw.js', import.meta.url).href);
