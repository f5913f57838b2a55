/**
 * `npm run bench:conversations`: lexical against hybrid retrieval on a conversational-memory
 * set of the project's own making (bench/datasets/conversations): dialogues between a user and
 * an assistant over several sessions, and questions asked later in other words than the turns
 * that answer them. A gateway runs in this process over a fresh store; the SDK client writes
 * each turn as a file, waits for search (and, with an embeddings endpoint, for the vectors),
 * then asks every question through the search tool lexically and, when it can, with
 * `retrieval: "hybrid"`, and scores recall@10 and nDCG@10 against the evidence turns. See
 * bench/README.md.
 */
import { readFile, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { connectClient, issueToken, seedOrg, startGateway } from '../test/support/gateway.ts';
import { storeBackendAt } from '../test/support/stores.ts';
import type { BenchFile, QueryRun } from './cranfield-mcp.ts';
import { CleanUp } from './clean-up.ts';
import { createKb, runQueries, searchBackend, searchPageSize, waitForSearchIndexing, waitForVectors, writeFiles } from './cranfield-mcp.ts';
import { benchEmbeddings, embeddingsGatewayEnv } from './embeddings.ts';
import { NDCG_DEPTH, RECALL_DEPTH, mean, ndcgAt, recallAt } from './ir-metrics.ts';
import { machineInfo } from './machine.ts';
import { BENCH_KB_WRITES_PER_MINUTE, CALLER, ORG_YAML } from './scenarios.ts';

const HERE = path.dirname(new URL(import.meta.url).pathname);
const DATASET = path.join(HERE, 'datasets', 'conversations');
const SCOPES = 'context.read context.write';
const KB_NAME = 'Conversations';

export interface Turn {
  readonly id: string;
  readonly dialogue: string;
  readonly session: string;
  readonly date: string;
  readonly speaker: 'user' | 'assistant';
  readonly text: string;
}

export interface Question {
  readonly id: string;
  readonly question: string;
  readonly evidence: readonly string[];
  readonly shares_words: boolean;
}

async function readJsonl<T>(file: string): Promise<T[]> {
  const text = await readFile(file, 'utf8');
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as T);
}

/** A turn's file: `<dialogue>/<session>/<turn id>.md`, so the path says where in the conversations it was said. */
export const turnPath = (turn: Turn): string => `${turn.dialogue}/${turn.session}/${turn.id}.md`;

/** The file's content: the session's date, the speaker and what was said. */
export const turnContent = (turn: Turn): string => `${turn.date}, ${turn.speaker}: ${turn.text}\n`;

/** The turn id of a result's path (its file name without `.md`). */
export const turnIdOf = (filePath: string): string | undefined => /([^/]+)\.md$/.exec(filePath)?.[1];

const round = (value: number, digits: number) => Math.round(value * 10 ** digits) / 10 ** digits;

interface Scored {
  readonly id: string;
  readonly recall10: number;
  readonly ndcg10: number;
}

interface Figures {
  readonly questions: number;
  readonly recall10: number;
  readonly ndcg10: number;
}

function score(questions: readonly Question[], runs: readonly QueryRun[]): Scored[] {
  return runs.map((run, index) => {
    const q = questions[index]!;
    // Every evidence turn answers the question as well as another: one grade (code 1) for all.
    const judgments = new Map(q.evidence.map((id) => [id, 1]));
    return { id: q.id, recall10: recallAt(run.ranking, new Set(q.evidence), RECALL_DEPTH), ndcg10: ndcgAt(run.ranking, judgments, NDCG_DEPTH) };
  });
}

function figures(scored: readonly Scored[]): Figures {
  return { questions: scored.length, recall10: round(mean(scored.map((s) => s.recall10)), 4), ndcg10: round(mean(scored.map((s) => s.ndcg10)), 4) };
}

/** All questions, those sharing a content word with their evidence, and those sharing none. */
function groups(questions: readonly Question[], scored: readonly Scored[]): Record<string, Figures> {
  const pick = (keep: (q: Question) => boolean) => figures(scored.filter((_, i) => keep(questions[i]!)));
  return { all: pick(() => true), sharesWords: pick((q) => q.shares_words), noSharedWords: pick((q) => !q.shares_words) };
}

/** (hybrid - lexical) / lexical, in percent; null when lexical is 0. */
const relativeGain = (lexical: number, hybrid: number): number | null => (lexical === 0 ? null : round(((hybrid - lexical) / lexical) * 100, 1));

function printTable(rows: readonly (readonly string[])[]): void {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  for (const row of rows) console.log(row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  '));
}

async function main(): Promise<void> {
  const databaseUrl = process.env.BENCH_DATABASE_URL || undefined;
  const store = databaseUrl === undefined ? 'pglite' : 'postgres';
  const embeddings = benchEmbeddings();
  const turns = await readJsonl<Turn>(path.join(DATASET, 'turns.jsonl'));
  const questions = await readJsonl<Question>(path.join(DATASET, 'questions.jsonl'));
  const known = new Set(turns.map((t) => t.id));
  for (const q of questions) for (const id of q.evidence) if (!known.has(id)) throw new Error(`question ${q.id} names evidence ${id}, which is no turn`);
  const machine = machineInfo();

  const undo = new CleanUp().onSignals("removing the bench's store");
  try {
    const opened = await storeBackendAt(databaseUrl).open({ migrated: true });
    undo.push(() => opened.dispose());
    await seedOrg(opened.db, ORG_YAML);
    const token = await issueToken(opened.db, CALLER.tenant, CALLER.principal, SCOPES);
    const engineEnv: Record<string, string> = {};
    for (const name of ['MEILI_URL', 'MEILI_API_KEY', 'MEILI_INDEX']) if (process.env[name]) engineEnv[name] = process.env[name];
    const gateway = await startGateway(opened.db, {
      KGW_LOG_LEVEL: 'error',
      KGW_KB_WRITES_PER_MINUTE: String(BENCH_KB_WRITES_PER_MINUTE),
      ...engineEnv,
      ...embeddingsGatewayEnv(embeddings),
    });
    undo.push(() => gateway.close());
    const client = await connectClient(`${gateway.url}/atmina/mcp`, token);
    undo.push(() => client.close());

    const kbId = await createKb(client, KB_NAME);
    const dialogues = new Set(turns.map((t) => t.dialogue)).size;
    console.log(`conversations: ${store}, ${dialogues} dialogues, ${turns.length} turns, ${questions.length} questions`);
    if (embeddings === undefined) console.log('- no embeddings endpoint (KGW_TEST_EMBEDDINGS_URL unset): lexical retrieval only');
    const started = performance.now();
    const files: BenchFile[] = turns.map((t) => ({ path: turnPath(t), content: turnContent(t) }));
    const written = await writeFiles(client, kbId, files);
    await waitForSearchIndexing(client, kbId);
    const indexedSeconds = (performance.now() - started) / 1000;
    console.log(`- wrote and indexed ${written} files in ${round(indexedSeconds, 1)} s`);
    let vectorsSeconds: number | undefined;
    if (embeddings !== undefined) {
      await waitForVectors(opened.db);
      vectorsSeconds = (performance.now() - started) / 1000;
      console.log(`- embedded them with ${embeddings.model} after ${round(vectorsSeconds, 1)} s`);
    }
    const engine = await searchBackend(client);
    const pageSize = await searchPageSize(client);
    // Only the top 10 is scored: one page of 10 per question, on both sides alike.
    const options = { pageSize: Math.min(pageSize, RECALL_DEPTH), maxFiles: RECALL_DEPTH, idOf: turnIdOf };
    const ask = questions.map((q, index) => ({ number: index + 1, text: q.question }));

    const lexicalRuns = await runQueries(client, kbId, ask, { ...options, retrieval: 'lexical' });
    const lexical = score(questions, lexicalRuns);
    const hybridRuns = embeddings === undefined ? undefined : await runQueries(client, kbId, ask, { ...options, retrieval: 'hybrid' });
    const hybrid = hybridRuns === undefined ? undefined : score(questions, hybridRuns);
    // A hybrid search that could not search by meaning answers lexically; the count says whether the comparison holds.
    const fallbacks = hybridRuns?.filter((r) => r.retrieval !== 'hybrid').length;

    const results = { lexical: groups(questions, lexical), ...(hybrid === undefined ? {} : { hybrid: groups(questions, hybrid) }) };
    const gain =
      results.hybrid === undefined
        ? undefined
        : {
            recall10Percent: relativeGain(results.lexical.all!.recall10, results.hybrid.all!.recall10),
            ndcg10Percent: relativeGain(results.lexical.all!.ndcg10, results.hybrid.all!.ndcg10),
          };
    const safeEngine = engine.toLowerCase().replace(/[^a-z0-9]+/g, '-');
    const name = `conversations-${store}-${safeEngine}`;
    const report = {
      name,
      date: new Date().toISOString(),
      machine,
      settings: {
        store,
        engine,
        embeddings: embeddings === undefined ? null : { model: embeddings.model, dimensions: embeddings.dimensions },
        recallDepth: RECALL_DEPTH,
        ndcgDepth: NDCG_DEPTH,
      },
      dataset: { dialogues, turns: turns.length, questions: questions.length, sharingWords: questions.filter((q) => q.shares_words).length },
      results,
      gain: gain ?? null,
      hybridFallbacks: fallbacks ?? null,
      load: { files: written, indexedSeconds: round(indexedSeconds, 2), vectorsSeconds: vectorsSeconds === undefined ? null : round(vectorsSeconds, 2) },
      perQuestion: questions.map((q, i) => ({
        id: q.id,
        sharesWords: q.shares_words,
        lexical: { recall10: round(lexical[i]!.recall10, 4), ndcg10: round(lexical[i]!.ndcg10, 4), top: lexicalRuns[i]!.ranking.slice(0, 3) },
        ...(hybrid === undefined
          ? {}
          : { hybrid: { recall10: round(hybrid[i]!.recall10, 4), ndcg10: round(hybrid[i]!.ndcg10, 4), top: hybridRuns![i]!.ranking.slice(0, 3) } }),
      })),
    };
    const file = path.join(HERE, 'results', `${name}.json`);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);

    console.log();
    const rows = [['questions', 'count', 'lexical R@10', 'lexical nDCG@10', 'hybrid R@10', 'hybrid nDCG@10']];
    for (const [group, f] of Object.entries(results.lexical)) {
      const h = results.hybrid?.[group];
      rows.push([group, String(f.questions), f.recall10.toFixed(3), f.ndcg10.toFixed(3), h?.recall10.toFixed(3) ?? '-', h?.ndcg10.toFixed(3) ?? '-']);
    }
    printTable(rows);
    if (gain !== undefined)
      console.log(
        `\nhybrid against lexical: recall@10 ${gain.recall10Percent ?? '-'} %, nDCG@10 ${gain.ndcg10Percent ?? '-'} %; ${fallbacks} hybrid answers fell back to lexical`,
      );
    console.log(`engine ${engine}, store ${store}; machine: ${machine.cpu}, ${machine.cpus} CPUs, Node ${machine.node}`);
    console.log(`wrote ${path.relative(process.cwd(), file)}`);
  } finally {
    await undo.all();
  }
}

if (import.meta.main) await main();
