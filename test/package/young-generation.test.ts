import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { startCommand } from '../support/start-command.ts';

/*
 * The gateway's own launchers (`npm start`, the container image) start Node with a young
 * generation of 8 MiB a half instead of V8's up to 64 (docs/decisions.md, "The young
 * generation"). Checked by effect: a Node started as each launcher starts it churns short-lived
 * objects, and its new space must stay within the bound. Without the flag it grows to 128 MiB.
 */
const ROOT = new URL('../../', import.meta.url);
const SEMI_SPACE_MIB = 8;

/** Allocates a few hundred MiB of short-lived objects, then prints the new space's size in bytes. */
const CHURN = `
const v8 = require('node:v8');
let kept = 0;
for (let round = 0; round < 200; round++) { const list = []; for (let i = 0; i < 50000; i++) list.push({ i, s: 'x' + i }); kept += list.length; }
const space = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
process.stdout.write(String(space.space_size));
`;

function newSpaceBytes(flags: readonly string[], env: NodeJS.ProcessEnv = {}): number {
  const out = execFileSync(process.execPath, [...flags, '-e', CHURN], { env: { ...process.env, NODE_OPTIONS: '', ...env }, encoding: 'utf8' });
  return Number(out);
}

describe('the launchers bound the young generation', () => {
  it('npm start passes the flag to Node, and it takes effect', async () => {
    const { flags } = await startCommand();
    assert.deepEqual(flags, [`--max-semi-space-size=${SEMI_SPACE_MIB}`]);
    assert.ok(newSpaceBytes(flags) <= 2 * SEMI_SPACE_MIB * 1024 * 1024);
  });

  it('the container image sets it in NODE_OPTIONS, which Node accepts there', () => {
    const dockerfile = readFileSync(new URL('Dockerfile', ROOT), 'utf8');
    const match = /^\s*NODE_OPTIONS=(\S+)/m.exec(dockerfile);
    assert.ok(match?.[1] !== undefined, 'the runtime stage sets NODE_OPTIONS');
    assert.equal(match[1], `--max-semi-space-size=${SEMI_SPACE_MIB}`);
    assert.ok(newSpaceBytes([], { NODE_OPTIONS: match[1] }) <= 2 * SEMI_SPACE_MIB * 1024 * 1024);
  });

  it('is a bound: without it the young generation grows past it', () => {
    assert.ok(newSpaceBytes([]) > 2 * SEMI_SPACE_MIB * 1024 * 1024);
  });
});
