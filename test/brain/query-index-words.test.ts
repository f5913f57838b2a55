import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { analyzer, analyzerLanguage } from '../../src/search-text/analyzer.ts';
import { connectClient, drainedOutbox, issueToken, seedOrg, startGateway } from '../support/gateway.ts';
import type { RunningGateway } from '../support/gateway.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';
import type { SearchEngine } from '../search/engines.ts';
import { searchEngines } from '../search/engines.ts';

/*
 * query_index finds a node by every word of its own title, on each engine: the question is
 * analysed like the node was indexed (the tenant's stemmer), so "Hiring" finds "Hiring process"
 * and "Engineering" finds "Engineering handbook", in English and in German.
 */

/** Words as titles hold them, inflected on purpose: the stemmer turns many of them into shorter terms. */
const VOCABULARY: Readonly<Record<string, readonly string[]>> = {
  en: (
    'Hiring Engineering Onboarding Processes Policies Payments Accounting Marketing Deployments Contracts Scheduling Planning Reviews ' +
    'Invoices Security Customers Suppliers Training Reporting Budgeting Recruiting Licensing Warehousing Shipping Purchasing Auditing ' +
    'Compliance Analytics Operations Meetings Handbook Guidelines Escalations Approvals Releases Incidents Monitoring Alerting Paging Forecasting'
  ).split(' '),
  de: (
    'Einstellungsprozess Rechnungen Buchhaltung Verträge Lieferanten Kunden Schulungen Berichte Planung Freigaben Sicherheit Richtlinien ' +
    'Zahlungen Einkäufe Prüfungen Besprechungen Störungen Auslieferungen Lagerhaltung Abläufe'
  ).split(' '),
};

/** A graph of `count` nodes whose titles are two or three words of the vocabulary, each word in a few titles only. */
function generatedNodes(words: readonly string[], count: number): { id: string; title: string }[] {
  let seed = 35;
  const next = () => {
    seed = (seed * 48271) % 2147483647;
    return seed;
  };
  const nodes: { id: string; title: string }[] = [];
  for (let i = 0; i < count; i++) {
    const picked = new Set<string>();
    const size = 2 + (next() % 2);
    while (picked.size < size) picked.add(words[next() % words.length] ?? '');
    nodes.push({ id: `node-${i}`, title: [...picked].join(' ') });
  }
  return nodes;
}

const textOf = (result: CallToolResult): string =>
  result.content
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('\n');

for (const backend of storeBackends()) {
  for (const searchEngine of searchEngines()) {
    describe(`query_index by the words of node titles on ${backend.name}, ${searchEngine.name}`, () => {
      let store: TestStore;
      let running: RunningGateway;
      let engine: SearchEngine;
      const clients: Client[] = [];
      const run = Math.random().toString(36).slice(2, 8);
      const graphs = Object.entries(VOCABULARY).map(([language, words]) => ({
        language,
        slug: `words-${language}-${run}`,
        nodes: generatedNodes(words, language === 'en' ? 40 : 20),
      }));

      before(async () => {
        store = await backend.open({ migrated: true });
        for (const graph of graphs) {
          const nodes = graph.nodes.map((n) => `    - { id: ${n.id}, type: tool, title: ${n.title}, summary: Generated node ${n.id}., access: public }`);
          await seedOrg(
            store.db,
            `tenant: ${graph.slug}\nname: Words\nlanguage: ${graph.language}\npeople:\n  - { email: cy@${graph.slug}.test, name: Cy }\nbrain:\n  nodes:\n${nodes.join('\n')}\n`,
          );
        }
        engine = searchEngine.open();
        running = await startGateway(store.db, { ...engine.env }, { outboxWorker: { idleMs: 10, backoff: { baseMs: 20, maxMs: 500 } } });
        await drainedOutbox(store.db);
      });
      after(async () => {
        for (const client of clients) await client.close();
        await running.close();
        await engine.dispose();
        await store.dispose();
      });

      for (const graph of graphs) {
        it(`finds each node of a generated ${graph.language} graph by every word of its title`, async () => {
          const client = await connectClient(`${running.url}/brain/mcp`, await issueToken(store.db, graph.slug, `cy@${graph.slug}.test`, 'brain:read'));
          clients.push(client);
          const stemmer = analyzer(analyzerLanguage(graph.language));
          const byWord = new Map<string, Set<string>>();
          for (const node of graph.nodes) for (const word of node.title.split(' ')) byWord.set(word, (byWord.get(word) ?? new Set()).add(node.id));
          // Words whose stem differs from the word as typed are the ones a question analysed without the stemmer missed.
          assert.ok([...byWord.keys()].filter((w) => stemmer.term(w) !== w.toLowerCase()).length >= 10);
          const missed: string[] = [];
          for (const [word, ids] of byWord) {
            assert.ok(ids.size <= 20, `${word} is in more titles than one answer lists`);
            const result = (await client.callTool({ name: 'query_index', arguments: { query: word, limit: 20 } })) as CallToolResult;
            const text = textOf(result);
            assert.notEqual(result.isError, true, text);
            const found = new Set([...text.matchAll(/^\d+\. \[(node-\d+)\]/gm)].map((m) => m[1]));
            for (const id of ids) if (!found.has(id)) missed.push(`${word} → ${id}`);
          }
          assert.deepEqual(missed, []);
        });
      }
    });
  }
}
