import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cliEnv, kgw, lines, tempDir, writeIn } from './support.ts';

// Nothing here reaches a store: every run stops before one is opened.

describe('kgw --help and usage errors', { concurrency: 4 }, () => {
  let dir: string;
  let env: ReturnType<typeof cliEnv>;
  before(async () => {
    dir = await tempDir();
    env = cliEnv({ KGW_DATA_DIR: path.join(dir, 'data') });
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('kgw --help prints the overview', async () => {
    const run = await kgw(['--help'], env);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stderr, '');
    assert.match(run.stdout, /^Usage: kgw COMMAND \[options\]\n/);
    for (const command of ['serve', 'migrate', 'apply', 'token', 'connect', 'doctor']) assert.match(run.stdout, new RegExp(`^  ${command} +\\S`, 'm'));
  });

  it('kgw without a command prints the overview on stderr and exits 2, so a script that lost its arguments fails', async () => {
    const run = await kgw([], env);
    assert.equal(run.code, 2);
    assert.equal(run.stdout, '');
    assert.match(run.stderr, /^Usage: kgw COMMAND \[options\]\n/);
  });

  it('kgw version, --version and -v print the version alone', async () => {
    for (const args of [['version'], ['--version'], ['-v']]) {
      const run = await kgw(args, env);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /^\d+\.\d+\.\d+\S*\n$/, args.join(' '));
    }
  });

  const usage = (command: string) => (command === 'token' ? /^Usage:\n {2}kgw token create / : new RegExp(`^Usage: kgw ${command}\\b`));
  for (const command of ['serve', 'migrate', 'apply', 'token', 'doctor']) {
    it(`kgw ${command} --help prints its usage and touches nothing`, async () => {
      const run = await kgw([command, '--help'], env);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stderr, '');
      assert.match(run.stdout, usage(command));
      assert.equal(existsSync(path.join(dir, 'data')), false, 'no data folder was made');
    });
  }

  it('-h, "kgw help COMMAND" and "kgw token SUB --help" print the same usage', async () => {
    for (const [args, command] of [
      [['apply', '-h'], 'apply'],
      [['help', 'doctor'], 'doctor'],
      [['token', 'create', '--help'], 'token'],
    ] as const) {
      const run = await kgw(args, env);
      assert.equal(run.code, 0, `${args.join(' ')}: ${run.stderr}`);
      assert.match(run.stdout, usage(command), args.join(' '));
    }
  });

  it('an unknown command exits 2 with one line on stderr', async () => {
    const run = await kgw(['frobnicate'], env);
    assert.equal(run.code, 2);
    assert.equal(run.stdout, '');
    assert.deepEqual(lines(run.stderr), ['kgw: unknown command "frobnicate"; run "kgw --help"']);
  });

  const USAGE_ERRORS: { args: string[]; message: RegExp }[] = [
    { args: ['token', 'frob'], message: /^kgw: unknown token command "frob"; use create, list or revoke/ },
    { args: ['apply'], message: /^kgw: expected one argument, got 0 \(see "kgw apply --help"\)$/ },
    { args: ['migrate', 'now'], message: /^kgw: this command takes no arguments/ },
    { args: ['doctor', '--verbose'], message: /^kgw: unknown option --verbose; the options are --json, --help \(see "kgw doctor --help"\)$/ },
    { args: ['token', 'create', '--tenant'], message: /^kgw: --tenant needs a value \(see "kgw token --help"\)$/ },
    { args: ['doctor', '--json=yes'], message: /^kgw: --json takes no value \(see "kgw doctor --help"\)$/ },
    { args: ['token', 'create', '--principal', 'release-bot', '--scopes', 'context.read'], message: /^kgw: --tenant is required \(see "kgw token --help"\)$/ },
    { args: ['token', 'create', '--tenant', 'acme', '--scopes', 'context.read'], message: /^kgw: --principal is required \(see "kgw token --help"\)$/ },
    { args: ['token', 'create', '--tenant', 'acme', '--principal', 'release-bot'], message: /^kgw: --scopes is required \(see "kgw token --help"\)$/ },
    { args: ['token', 'revoke'], message: /^kgw: expected one argument, got 0/ },
  ];
  for (const { args, message } of USAGE_ERRORS) {
    it(`kgw ${args.join(' ')} is a usage error: exit 2, one line`, async () => {
      const run = await kgw(args, env);
      assert.equal(run.code, 2, run.stderr);
      assert.equal(run.stdout, '');
      const errors = lines(run.stderr);
      assert.equal(errors.length, 1, run.stderr);
      assert.match(errors[0] ?? '', message);
      assert.equal(existsSync(path.join(dir, 'data')), false, 'no store was opened');
    });
  }
});

/** Each bad value and the one line kgw prints for it. */
const CONFIG_ERRORS: { env: Record<string, string>; line: string }[] = [
  { env: { KGW_PORT: 'abc' }, line: 'KGW_PORT: must be a whole number from 0 to 65535, got "abc"' },
  { env: { KGW_PORT: '70000' }, line: 'KGW_PORT: must be a whole number from 0 to 65535, got "70000"' },
  { env: { KGW_PUBLIC_URL: 'ftp://x' }, line: 'KGW_PUBLIC_URL: must use http or https, got "ftp"' },
  { env: { DATABASE_URL: 'mysql://x' }, line: 'DATABASE_URL: must use postgres or postgresql, got "mysql"' },
  { env: { KGW_ALLOWED_ORIGINS: 'not-an-origin' }, line: 'KGW_ALLOWED_ORIGINS: "not-an-origin" is not an origin such as https://app.example.com' },
  { env: { S3_ENDPOINT: 'http://127.0.0.1:9000' }, line: 'S3_BUCKET: is required when any S3_* variable is set' },
  { env: { NEO4J_URL: 'bolt://127.0.0.1:7687' }, line: 'NEO4J_PASSWORD: is required when NEO4J_URL is set' },
  { env: { MEILI_API_KEY: 'k' }, line: 'MEILI_URL: is required when MEILI_API_KEY is set' },
  { env: { KGW_LOG_LEVEL: 'loud' }, line: 'KGW_LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent, got "loud"' },
  { env: { KGW_MEMORY: 'small' }, line: 'KGW_MEMORY: must be one of throughput, lean, got "small"' },
];

describe('configuration errors stop start-up', { concurrency: 4 }, () => {
  let dir: string;
  before(async () => {
    dir = await tempDir();
  });
  after(() => rm(dir, { recursive: true, force: true }));

  for (const command of ['serve', 'doctor']) {
    for (const { env, line } of CONFIG_ERRORS) {
      const variable = line.slice(0, line.indexOf(':'));
      it(`kgw ${command} with ${Object.entries(env)
        .map(([k, v]) => `${k}=${v}`)
        .join(' ')} exits 1 naming ${variable}`, async () => {
        const dataDir = path.join(dir, `${command}-${variable}-${Object.values(env).join('').replace(/\W/g, '')}`);
        const run = await kgw([command], cliEnv({ KGW_DATA_DIR: dataDir, ...env }), { timeoutMs: 20_000 });
        assert.equal(run.code, 1, `exit code; stderr: ${run.stderr}`);
        assert.equal(run.signal, null);
        assert.equal(run.stdout, '');
        assert.deepEqual(lines(run.stderr), [`kgw: ${line}`]);
        assert.equal(existsSync(dataDir), false, 'the data folder was not touched');
      });
    }
  }

  it('every store-using command checks the configuration first', async () => {
    const file = await writeIn(dir, 'org.yaml', 'tenant: acme\nname: Acme\n');
    const args = [
      ['migrate'],
      ['apply', file],
      ['token', 'list'],
      ['token', 'create', '--tenant', 'a', '--principal', 'b', '--scopes', 'context.read'],
      ['token', 'revoke', 'x'],
    ];
    for (const command of args) {
      const dataDir = path.join(dir, `other-${command.join('-').replace(/\W/g, '')}`);
      const run = await kgw(command, cliEnv({ KGW_DATA_DIR: dataDir, KGW_PORT: 'abc' }));
      assert.equal(run.code, 1, `${command.join(' ')}: ${run.stderr}`);
      assert.deepEqual(lines(run.stderr), ['kgw: KGW_PORT: must be a whole number from 0 to 65535, got "abc"'], command.join(' '));
      assert.equal(existsSync(dataDir), false);
    }
  });
});

describe('help with a bad configuration', () => {
  it('kgw COMMAND --help works whatever the environment says', async () => {
    const env = cliEnv({ KGW_DATA_DIR: '/nonexistent/kgw', KGW_PORT: 'abc' });
    for (const args of [
      ['serve', '--help'],
      ['doctor', '--help'],
      ['token', '--help'],
    ]) {
      const run = await kgw(args, env);
      assert.equal(run.code, 0, `${args.join(' ')}: ${run.stderr}`);
      assert.match(run.stdout, /^Usage:/);
    }
  });

  // src/cli/token.ts calls loadConfig() before parsing a subcommand's arguments, so the
  // subcommands' --help (and their usage errors) fail on a bad configuration.
  it('kgw token create --help works whatever the environment says', async () => {
    const run = await kgw(['token', 'create', '--help'], cliEnv({ KGW_DATA_DIR: '/nonexistent/kgw', KGW_PORT: 'abc' }));
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^Usage:/);
  });
});
