import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KbWire } from '../atmina/support.ts';
import { KbSuite, backendLabel } from '../atmina/support.ts';
import type { SearchWire } from '../atmina/search/wire.ts';
import { paths } from '../atmina/search/wire.ts';
import { storeBackends } from '../support/stores.ts';

/*
 * Hybrid retrieval against a real sentence-embedding model: all-MiniLM-L6-v2 served by
 * services/embeddings (ONNX Runtime behind an OpenAI-compatible /v1/embeddings), started by
 * test/services/embeddings.sh. The other hybrid suites use hashed words, which show the plumbing;
 * this one shows that a question finds a file that shares no word with it, by meaning alone.
 */

interface Endpoint {
  readonly url: string;
  readonly model: string;
  readonly dimensions: number;
}

/** The model's endpoint for tests; CI must provide it, a developer may not. */
function testEmbeddings(): Endpoint | undefined {
  const url = process.env.KGW_TEST_EMBEDDINGS_URL;
  if (url === undefined || url === '') {
    if (process.env.CI === 'true') throw new Error('KGW_TEST_EMBEDDINGS_URL must be set in CI (eval "$(bash test/services/embeddings.sh)")');
    return undefined;
  }
  return {
    url,
    model: process.env.KGW_TEST_EMBEDDINGS_MODEL ?? 'all-MiniLM-L6-v2',
    dimensions: Number(process.env.KGW_TEST_EMBEDDINGS_DIMENSIONS ?? '384'),
  };
}

const endpoint = testEmbeddings();
const skip = endpoint === undefined ? 'KGW_TEST_EMBEDDINGS_URL is not set (eval "$(bash test/services/embeddings.sh)")' : false;

interface EmbeddingsAnswer {
  object: string;
  data: { object: string; index: number; embedding: number[] | string }[];
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}

async function embed(target: Endpoint, input: string | string[], encoding: 'float' | 'base64' = 'float'): Promise<EmbeddingsAnswer> {
  const response = await fetch(`${target.url}/embeddings`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: target.model, input, encoding_format: encoding, dimensions: target.dimensions }),
  });
  assert.equal(response.status, 200, await response.clone().text());
  return (await response.json()) as EmbeddingsAnswer;
}

function floats(answer: EmbeddingsAnswer): number[][] {
  return [...answer.data]
    .sort((a, b) => a.index - b.index)
    .map((item) => {
      assert.ok(Array.isArray(item.embedding));
      return item.embedding;
    });
}

const dot = (a: readonly number[], b: readonly number[]): number => a.reduce((sum, x, i) => sum + x * (b[i] ?? 0), 0);

describe('the real embedding model, asked directly', { skip }, () => {
  it('answers unit vectors of its length, nearer for nearer meanings', async () => {
    assert.ok(endpoint !== undefined);
    // The example of the sentence-transformers documentation.
    const answer = await embed(endpoint, ['A man is eating food.', 'A man is eating a piece of bread.', 'A man is riding a horse.']);
    const [food, bread, horse] = floats(answer);
    assert.ok(food !== undefined && bread !== undefined && horse !== undefined);
    assert.deepEqual(
      { object: answer.object, model: answer.model, lengths: [food.length, bread.length, horse.length] },
      { object: 'list', model: endpoint.model, lengths: [endpoint.dimensions, endpoint.dimensions, endpoint.dimensions] },
    );
    for (const vector of [food, bread, horse]) assert.ok(Math.abs(Math.sqrt(dot(vector, vector)) - 1) < 1e-5);
    assert.ok(dot(food, bread) > dot(food, horse) + 0.3, `cos(food, bread) ${dot(food, bread)}, cos(food, horse) ${dot(food, horse)}`);
    assert.ok(answer.usage.prompt_tokens > 0 && answer.usage.total_tokens === answer.usage.prompt_tokens);
  });

  it('gives in base64 the little-endian float32 values it gives as numbers', async () => {
    assert.ok(endpoint !== undefined);
    const [asNumbers] = floats(await embed(endpoint, 'A man is eating food.'));
    const [item] = (await embed(endpoint, 'A man is eating food.', 'base64')).data;
    assert.ok(typeof item?.embedding === 'string');
    const bytes = Buffer.from(item.embedding, 'base64');
    const decoded = Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4));
    assert.deepEqual(decoded, asNumbers);
  });
});

/*
 * The question shares no word with the file that answers it ("reset", "forgotten", "password"
 * against "remember", "login", "credentials", "recovery"), while two files each share one word
 * with it and are about something else. With all-MiniLM-L6-v2 the answer is the nearest file by
 * far (cosine 0.64; the next, the password policy, 0.39). Fusion is by reciprocal rank alone,
 * so a file found only by meaning comes after files found both ways; it is in the top three.
 */
const QUESTION = 'How do I reset my forgotten password?';
const FILES: readonly (readonly [string, string])[] = [
  ['access/sign-in-help.md', '# Sign-in help\n\nIf you cannot remember your login credentials, ask for a recovery link by email and choose new ones.\n'],
  ['security/policy.md', '# Password policy\n\nEvery password has at least twelve characters and is never shared.\n'],
  ['office/printer.md', '# Printer manual\n\nA factory reset of the office printer takes ten minutes.\n'],
  ['office/canteen.md', '# Canteen\n\nLunch is served from noon until two in the canteen.\n'],
  ['office/reception.md', '# Lost and found\n\nUmbrellas left behind are kept at the reception desk for a month.\n'],
  ['guides/wings.md', '# Wing design\n\nThe boundary layer over a swept wing thickens toward the tip.\n'],
];
const ANSWER = 'access/sign-in-help.md';

for (const backend of storeBackends())
  describe(`hybrid search with a real embedding model on ${backendLabel(backend)}`, { skip }, () => {
    let suite: KbSuite;
    let kb: KbWire;
    before(async () => {
      assert.ok(endpoint !== undefined);
      suite = await KbSuite.open(
        backend,
        { KGW_EMBEDDINGS_URL: endpoint.url, KGW_EMBEDDINGS_MODEL: endpoint.model, KGW_EMBEDDINGS_DIMENSIONS: String(endpoint.dimensions) },
        { projections: true },
      );
      kb = await suite.kb();
      for (const [path, content] of FILES) await suite.file(kb.kb_id, path, content);
      await suite.settled();
    });
    after(async () => {
      await suite?.close();
    });

    it('finds by meaning the file that answers a question in other words, which lexical search misses', async () => {
      const viewer = await suite.agent('viewer-bot');
      const lexical = await viewer.ok<SearchWire>('search', { query: QUESTION, scope: { kb_ids: [kb.kb_id] } });
      const hybrid = await viewer.ok<SearchWire>('search', { query: QUESTION, retrieval: 'hybrid', scope: { kb_ids: [kb.kb_id] } });
      const found = hybrid.results.find((result) => result.path === ANSWER);
      assert.deepEqual(
        {
          lexical: paths(lexical).includes(ANSWER),
          retrieval: hybrid.retrieval,
          top3: paths(hybrid).slice(0, 3).includes(ANSWER),
          lists: found?.reasons.lists,
        },
        { lexical: false, retrieval: 'hybrid', top3: true, lists: [{ list: 'vector', rank: 1 }] },
        `lexical: ${paths(lexical).join(', ')}; hybrid: ${paths(hybrid).join(', ')}`,
      );
    });
  });
