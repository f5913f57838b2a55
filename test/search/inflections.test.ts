import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { SearchBackend, SearchDocument } from '../../connectors/search/contract.ts';
import { openSearchBackend } from '../../connectors/search/index.ts';
import { stemWords } from '../../connectors/search/meili-query.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';
import { searchDocument } from './documents.ts';
import type { SearchEngine } from './engines.ts';
import { searchEngines } from './engines.ts';

/*
 * The same questions on both engines give the same files in the same order with the same
 * scores, also for words the files hold only in another form: the built-in engine matches stems,
 * and Meilisearch, which matches words as written, is asked for the stems too (stemWords).
 */

const SCOPE = 'kb:inflections';
const BODIES: Record<string, string> = {
  'runbooks/deploy.md': 'How to deploy the service. Each deploy is reviewed; a deployed build is tagged.',
  'runbooks/rollback.md': 'Roll back a deployment when the canary fails.',
  'alerts/routing.md': 'Alerts go to the on-call rotation. Every alert names its owner.',
  'alerts/noise.md': 'Noisy alerts are muted for a week, then reviewed.',
  'oncall/pager.md': 'The pager pages the primary first; pages repeat every five minutes.',
  'oncall/handover.md': 'The owner of the rotation hands over on Monday.',
  'teams/ownership.md': 'Each service is owned by one team; owners answer its pages.',
  'misc/unrelated.md': 'Lunch is at noon in the big room.',
};
const QUESTIONS = ['deploying', 'alerting', 'paging', 'owned', 'deployments failing', 'who owns alerting', 'reviewing deploys'];

describe('stemWords', () => {
  it('asks for the stems that differ from the words as typed, once each', () => {
    const terms = [
      { word: 'Deploying', term: 'deploy' },
      { word: 'alerts', term: 'alert' },
      { word: 'ox', term: 'ox' },
      { word: 'run', term: 'run' },
    ];
    assert.deepEqual(stemWords(terms, ['Deploying', 'alerts', 'ox', 'run']), ['deploy', 'alert']);
    assert.deepEqual(stemWords(terms, ['alerts']), ['alert']);
  });
});

for (const backend of storeBackends()) {
  describe(`inflected words on every engine, on ${backend.name}`, () => {
    let store: TestStore;
    const engines: { name: string; setup: SearchEngine; engine: SearchBackend }[] = [];
    const tenantId = randomUUID();
    before(async () => {
      store = await backend.open({ migrated: true });
      const docs: SearchDocument[] = Object.entries(BODIES).map(([path, body]) =>
        searchDocument({ tenantId, id: `kb_file:${path}`, scope: SCOPE, path, title: '', body }),
      );
      for (const choice of searchEngines()) {
        const setup = choice.open();
        const env = setup.env;
        const engine = openSearchBackend(
          env.MEILI_URL === undefined ? undefined : { url: env.MEILI_URL, apiKey: env.MEILI_API_KEY, index: env.MEILI_INDEX ?? 'kgw_documents' },
          store.db,
        );
        await store.db.tx((tx) => engine.upsert(docs, { tx, signal: new AbortController().signal }));
        engines.push({ name: choice.name, setup, engine });
      }
    });
    after(async () => {
      for (const { engine, setup } of engines) {
        await engine.close?.();
        await setup.dispose();
      }
      await store?.dispose();
    });

    for (const question of QUESTIONS) {
      it(`answers "${question}" with the same files, order and scores on every engine`, async () => {
        const answers = await Promise.all(
          engines.map(async ({ name, engine }) => {
            const { hits, total } = await engine.search({ tenantId, text: question, language: 'english', scopes: [SCOPE], limit: 10, snippets: 0 });
            return { name, total, hits: hits.map((h) => ({ id: h.id, score: Number(h.score.toFixed(6)) })) };
          }),
        );
        const [first, ...rest] = answers;
        assert.ok(first !== undefined && first.hits.length > 0, `the built-in engine finds "${question}"`);
        for (const other of rest) assert.deepEqual({ ...other, name: first.name }, first, `${other.name} differs from ${first.name}`);
      });
    }
  });
}
