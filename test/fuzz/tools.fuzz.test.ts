import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { storeBackends } from '../support/stores.ts';
import type { CallOutcome, RecordingClient } from './harness.ts';
import { ENDPOINT_PATHS, FuzzWorld, describeOutcome, fuzzRuns, fuzzSeed, leaksIn, preview, problemsOf, secretsOf, signatureOf } from './harness.ts';
import { argumentsFor, inputSchemaProblems } from './inputs.ts';

/*
 * Property-based fuzzing of every tool every MCP endpoint lists: for each endpoint the tool list
 * is read through the MCP SDK's client over HTTP, and each listed tool is called with arguments
 * derived from its own input schema, real ids of both tenants and hostile values (see inputs.ts
 * and hostile.ts). Every call must end in a JSON-RPC result or error within the time bound:
 * never -32603, never an internal-error text, never HTTP 5xx, and a successful result's
 * structured content must match the tool's output schema; and no answer may hold an id or text
 * of the other tenant that the request did not hold; an Atmina tool's error (and each failed
 * item's) carries a known code. After each tool, /healthz answers 200 and the other tenant's
 * Knowledge Bases, files (rows and bytes) and audit log are exactly as seeded.
 *
 * KGW_FUZZ_RUNS sets the runs per tool and endpoint (default below; `npm run fuzz` runs many
 * more), KGW_FUZZ_SEED the seed (fixed by default, so runs replay). KGW_FUZZ_COLLECT=1 does not
 * stop at a tool's first failure: it runs every input and reports each distinct failure once
 * with the smallest input seen, which is how a whole batch of bugs is found in one run.
 * KGW_FUZZ_TOOLS=a,b fuzzes only those tools (to replay one failure quickly); every listed
 * tool's schema is still checked.
 */

const RUNS = fuzzRuns(100);
const SEED = fuzzSeed();
const COLLECT = process.env.KGW_FUZZ_COLLECT === '1';
const ONLY = new Set(
  (process.env.KGW_FUZZ_TOOLS ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== ''),
);
/** Bounds a property, shrinking included; an interrupted property still reports its failure. */
const TIME_LIMIT_MS = Number(process.env.KGW_FUZZ_TIME_LIMIT_MS ?? 60_000 + RUNS * 4_000);

/** A seed per endpoint and tool, so tools do not all see the same choices. */
function seedFor(path: string, tool: string): number {
  let hash = SEED | 0;
  for (const char of `${path} ${tool}`) hash = (Math.imul(hash, 31) + char.charCodeAt(0)) | 0;
  return hash;
}

/** The ` (code)` an error text starts with (`code: message`), for the tally; empty when it has none. */
function codeOf(result: CallToolResult): string {
  const first = result.content[0];
  const code = first?.type === 'text' ? /^([a-z_]+): /.exec(first.text)?.[1] : undefined;
  return code === undefined ? '' : ` (${code})`;
}

interface Found {
  readonly args: unknown;
  readonly outcome: CallOutcome;
  readonly problems: readonly string[];
  count: number;
}

async function fuzzTool(t: TestContext, world: FuzzWorld, client: RecordingClient, tool: Tool): Promise<void> {
  const pools = await world.pools();
  const secrets = secretsOf(pools.other);
  const seed = seedFor(client.path, tool.name);
  const arbitrary = argumentsFor(tool, pools);
  let calls = 0;
  const tally = new Map<string, number>();
  const started = performance.now();
  const found = new Map<string, Found>();
  const property = fc.asyncProperty(arbitrary, async (args) => {
    calls += 1;
    const outcome = await client.call(tool.name, args);
    const kind =
      outcome.kind === 'result'
        ? outcome.result.isError === true
          ? `tool error${codeOf(outcome.result)}`
          : 'ok'
        : outcome.kind === 'http-error'
          ? `HTTP ${outcome.status}`
          : outcome.kind;
    tally.set(kind, (tally.get(kind) ?? 0) + 1);
    const leaked = leaksIn(outcome, client.lastExchange()?.requestBody ?? JSON.stringify(args), secrets);
    const problems = [...problemsOf(outcome, tool), ...(leaked.length > 0 ? [`the other tenant's ${leaked.join(', ')} in the answer`] : [])];
    if (problems.length === 0) return;
    if (!COLLECT)
      throw new Error(`${tool.name} on ${client.path}: ${problems.join('; ')}\n  arguments: ${preview(args)}\n  answer: ${describeOutcome(outcome)}`);
    const signature = signatureOf(tool.name, problems, outcome);
    const seen = found.get(signature);
    if (seen === undefined || preview(args, 100_000).length < preview(seen.args, 100_000).length)
      found.set(signature, { args, outcome, problems, count: (seen?.count ?? 0) + 1 });
    else seen.count += 1;
  });
  let failure: Error | undefined;
  try {
    await fc.assert(property, { seed, numRuns: RUNS, plugins: [fc.interruptAfterTimeLimit(TIME_LIMIT_MS)] });
  } catch (error) {
    failure = error instanceof Error ? error : new Error(String(error));
  }
  const kinds = [...tally].map(([kind, count]) => `${count} ${kind}`).join(', ');
  t.diagnostic(`${client.path} ${tool.name}: seed ${seed}, ${calls} calls (${RUNS} runs asked) in ${Math.round(performance.now() - started)} ms: ${kinds}`);
  // The gateway must still be alive, whatever the calls did.
  assert.equal(await world.healthz(), 200, `/healthz after fuzzing ${tool.name} on ${client.path}`);
  // And nothing the fuzzing agent did may reach the other tenant: its KB rows, file bytes and audit log are as seeded.
  assert.deepStrictEqual(
    await world.otherTenantDigest(),
    world.otherBaseline,
    `the other tenant's Knowledge Bases after fuzzing ${tool.name} on ${client.path}`,
  );
  if (failure !== undefined) throw failure;
  if (found.size > 0) {
    const report = [...found.values()].map(
      (f) =>
        `- ${tool.name} on ${client.path} (${f.count}×): ${f.problems.join('; ')}\n    arguments: ${preview(f.args)}\n    answer: ${describeOutcome(f.outcome)}`,
    );
    assert.fail(`${found.size} distinct failure(s) of ${tool.name} on ${client.path}:\n${report.join('\n')}`);
  }
}

for (const backend of storeBackends()) {
  describe(`fuzz: every listed tool on every MCP endpoint (${backend.name})`, () => {
    let world: FuzzWorld;
    before(async () => {
      world = await FuzzWorld.open(backend);
    });
    after(async () => {
      await world?.close();
    });

    for (const path of ENDPOINT_PATHS) {
      it(`${path}: every listed tool answers schema-derived and hostile arguments with a JSON-RPC result or error`, async (t) => {
        const client = await world.connect(path);
        const tools = await client.listTools();
        t.diagnostic(`${path}: ${tools.length} tools listed; ${RUNS} runs per tool; seed ${SEED}${COLLECT ? '; collecting every distinct failure' : ''}`);
        const unsupported = tools.flatMap((tool) => inputSchemaProblems(tool).map((problem) => `${tool.name}: ${problem}`));
        assert.deepEqual(unsupported, [], `every listed tool has an input schema the generator covers (test/fuzz/schema-arbitrary.ts)`);
        for (const tool of tools.filter((listed) => ONLY.size === 0 || ONLY.has(listed.name))) {
          await t.test(tool.name, (tt) => fuzzTool(tt, world, client, tool));
        }
      });
    }
  });
}
