import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parseStartCommand, startCommand, startScript } from '../support/start-command.ts';

/*
 * The gateway's own launchers (`npm start`, the container image) run Node with glibc's allocator
 * set to two arenas and a fixed trim threshold (docs/decisions.md, "The C allocator"): a process
 * cannot set them for itself, as glibc reads them when it starts. `npm start` gives them as
 * defaults, so an operator's own values win. Checked through the shell that npm runs a script
 * with: what the script's assignments give, with and without values already set, and that the
 * test's reading of the script (which the benches start the gateway with) agrees.
 */
const ROOT = new URL('../../', import.meta.url);
const NAMES = ['MALLOC_ARENA_MAX', 'MALLOC_TRIM_THRESHOLD_'] as const;
const DEFAULTS = { MALLOC_ARENA_MAX: '2', MALLOC_TRIM_THRESHOLD_: '131072' };

/** What a Node started by the script's own assignments sees, run by sh as npm runs scripts. */
function seenBy(script: string, env: NodeJS.ProcessEnv): Record<string, string | undefined> {
  const assignments = script.slice(0, script.indexOf(' node '));
  const print = `JSON.stringify({ ${NAMES.map((name) => `${name}: process.env.${name}`).join(', ')} })`;
  const out = execFileSync('sh', ['-c', `${assignments} "$KGW_TEST_NODE" -p '${print}'`], {
    env: { PATH: process.env.PATH, KGW_TEST_NODE: process.execPath, ...env },
    encoding: 'utf8',
  });
  return JSON.parse(out) as Record<string, string | undefined>;
}

describe('the launchers set the C allocator', () => {
  it('npm start sets both, as defaults an operator may override', async () => {
    const script = await startScript();
    assert.deepEqual(seenBy(script, {}), DEFAULTS);
    assert.deepEqual((await startCommand({})).env, DEFAULTS);
    const own = { MALLOC_ARENA_MAX: '4', MALLOC_TRIM_THRESHOLD_: '1048576' };
    assert.deepEqual(seenBy(script, own), own);
    assert.deepEqual(parseStartCommand(script, own).env, own);
    // An empty value counts as unset, in the shell's ${NAME:-value} and in the benches' reading.
    assert.deepEqual(seenBy(script, { MALLOC_ARENA_MAX: '' }), DEFAULTS);
    assert.deepEqual(parseStartCommand(script, { MALLOC_ARENA_MAX: '' }).env, DEFAULTS);
  });

  it('the container image sets both', () => {
    const dockerfile = readFileSync(new URL('Dockerfile', ROOT), 'utf8');
    const runtime = dockerfile.slice(dockerfile.indexOf(' AS runtime'));
    for (const [name, value] of Object.entries(DEFAULTS)) assert.match(runtime, new RegExp(`^\\s*${name}=${value}\\b`, 'm'), name);
  });

  it('reads a start script as the shell does, and refuses what it cannot read', () => {
    assert.deepEqual(parseStartCommand('node bin/kgw.js serve', {}), { env: {}, flags: [], args: ['bin/kgw.js', 'serve'] });
    assert.deepEqual(parseStartCommand('A=1 B=${B:-x} node --f=1 --g s.js a', { B: 'y' }), {
      env: { A: '1', B: 'y' },
      flags: ['--f=1', '--g'],
      args: ['s.js', 'a'],
    });
    assert.throws(() => parseStartCommand('A=${B:-1} node s.js'), /defaults A from another variable/);
    assert.throws(() => parseStartCommand('A=$(id) node s.js'), /does not start node/);
    assert.throws(() => parseStartCommand('npx kgw serve'), /does not start node/);
    assert.throws(() => parseStartCommand('node --f'), /names no script/);
  });
});
