import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { frontMatterLength } from '../../src/search-text/front-matter.ts';
import { snippetText } from '../../src/search-text/shown-text.ts';
import { storeBackends } from '../support/stores.ts';
import type { KbWire } from '../atmina/support.ts';
import { KbSuite, backendLabel } from '../atmina/support.ts';
import type { SearchEngine } from './engines.ts';
import { searchEngines } from './engines.ts';
import type { SearchWire } from '../atmina/search/wire.ts';

/*
 * What a search result shows a person: snippets without a Markdown file's front matter (whose
 * words still match), and the words search added as the file writes them, not their stems.
 * Through the MCP client on /atmina/mcp, on each engine.
 */

describe('snippet text of a Markdown document', () => {
  it('starts after the front matter, its closing line included', () => {
    assert.equal(snippetText('---\ntitle: A\n---\n# Body\n', 'text/markdown'), '# Body\n');
    assert.equal(snippetText('\uFEFF---\r\ntags: [x]\r\n...\r\nBody', 'text/markdown'), 'Body');
  });

  it('keeps the whole text when the block is not closed, or the document is not Markdown', () => {
    assert.equal(frontMatterLength('---\nno closing line\n'), 0);
    assert.equal(snippetText('---\na: 1\n---\nb: 2\n', 'application/yaml'), '---\na: 1\n---\nb: 2\n');
    assert.equal(snippetText('Text\n---\nmore\n---\n', 'text/markdown'), 'Text\n---\nmore\n---\n');
  });
});

for (const backend of storeBackends()) {
  for (const choice of searchEngines())
    describe(`What Atmina search results show, with the ${choice.name} engine on ${backendLabel(backend)}`, () => {
      let engine: SearchEngine;
      let suite: KbSuite;
      let kb: KbWire;
      before(async () => {
        engine = choice.open();
        suite = await KbSuite.open(backend, engine.env, { projections: true });
        kb = await suite.kb();
        await suite.file(
          kb.kb_id,
          'policies/travel.md',
          '---\ntitle: Travel policy\ntags: [itinerary, reimbursement]\nowner: finance\n---\n# Travel\n\nBook trains for trips under four hours; flights need approval.\n',
        );
        await suite.file(kb.kb_id, 'guides/wings.md', '# Wing design\n\nThe boundary layer over a swept wing thickens toward the tip.\n');
        await suite.file(kb.kb_id, 'decisions/records.md', '# Retention\n\nRetention of customer records ends after thirty days.\n');
        await suite.settled();
      });
      after(async () => {
        await suite?.close();
        await engine?.dispose();
      });

      const search = async (query: string) => (await suite.agent('viewer-bot')).ok<SearchWire>('search', { query, scope: { kb_ids: [kb.kb_id] } });

      it('quotes the body of a Markdown file, never its front matter', async () => {
        const [hit] = (await search('trains approval')).results;
        assert.equal(hit?.path, 'policies/travel.md');
        assert.ok(hit.snippets.length > 0);
        for (const snippet of hit.snippets) assert.doesNotMatch(snippet, /---|tags:|owner:|finance/);
        assert.match(hit.snippets.join(' '), /<mark>trains<\/mark>/);
      });

      it('still finds a file by a word only its front matter holds, and shows the start of its body', async () => {
        const [hit] = (await search('reimbursement')).results;
        assert.equal(hit?.path, 'policies/travel.md');
        // On Meilisearch too: a snippet that marks no word is replaced by a crop of the indexed
        // text, unless the match is in the front matter, which such a crop would show.
        assert.deepEqual(hit.snippets, ['# Travel Book trains for trips under four hours; flights need approval.']);
      });

      it('names the words a prefix added as the file writes them, not as stems', async () => {
        const [hit] = (await search('thick*')).results;
        assert.equal(hit?.path, 'guides/wings.md');
        assert.deepEqual(hit.reasons.expansions, ['thickens']);
      });

      it('names the word a typo correction found as the file writes it', async () => {
        const [hit] = (await search('retnetion')).results;
        assert.equal(hit?.path, 'decisions/records.md');
        assert.deepEqual(hit.reasons.expansions, ['Retention']);
      });
    });
}
