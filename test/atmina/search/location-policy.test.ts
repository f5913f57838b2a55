import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Agent } from '../../support/harness.ts';
import { storeBackends } from '../../support/stores.ts';
import type { KbWire } from '../support.ts';
import { KbSuite, backendLabel } from '../support.ts';
import type { SearchEngine } from '../../search/engines.ts';
import { searchEngines } from '../../search/engines.ts';
import type { SearchWire } from './wire.ts';
import { paths } from './wire.ts';
import { sdkClient } from '../../support/mcp-client.ts';

/*
 * location_policy flag_only: a caller who may search a public KB but not read it is told only
 * that the KB holds a match (flagged_kbs), never which files or where; its readers see the files
 * as ever. Through the MCP client on /atmina/mcp and the anonymous endpoint, on each engine.
 */

interface FlaggedWire extends SearchWire {
  flagged_kbs?: { kb_id: string; kb_slug: string; name: string }[];
}

for (const backend of storeBackends()) {
  for (const choice of searchEngines())
    describe(`location_policy with the ${choice.name} engine on ${backendLabel(backend)}`, () => {
      let engine: SearchEngine;
      let suite: KbSuite;
      let flagging: KbWire;
      let visible: KbWire;
      let anonymous: Agent;
      before(async () => {
        engine = choice.open();
        suite = await KbSuite.open(backend, { ...engine.env, KGW_ANONYMOUS_SEARCH_TENANTS: 'acme' }, { projections: true });
        flagging = await suite.kb({ visibility: 'public', location_policy: 'flag_only' });
        visible = await suite.kb({ visibility: 'public' });
        await suite.file(flagging.kb_id, 'incidents/zeppelin.md', '# Zeppelin outage\n\nThe zeppelin hangar lost power for an hour.\n');
        await suite.file(flagging.kb_id, 'notes/other.md', '# Other\n\nNothing about airships here.\n');
        await suite.file(visible.kb_id, 'guides/hangar.md', '# Hangar doors\n\nOpen the hangar doors slowly.\n');
        await suite.settled();
        const client = sdkClient('kgw-anonymous-test');
        await client.connect(new StreamableHTTPClientTransport(new URL(`${suite.running.url}/atmina/public/acme/mcp`)));
        await client.listTools();
        anonymous = new Agent('anonymous', client);
      });
      after(async () => {
        await anonymous?.client.close();
        await suite?.close();
        await engine?.dispose();
      });

      it('flags a flag_only KB that holds a match to a caller who may only search it, and shows none of its files', async () => {
        // outsider-bot is in no team: the public KBs are searchable to it, not readable.
        const outsider = await suite.agent('outsider-bot');
        const answer = await outsider.ok<FlaggedWire>('search', { query: 'zeppelin hangar', max_files: 50 });
        assert.deepEqual(paths(answer), ['guides/hangar.md']);
        assert.equal(answer.total, 1);
        assert.deepEqual(answer.flagged_kbs, [{ kb_id: flagging.kb_id, kb_slug: flagging.slug, name: flagging.name }]);
        assert.doesNotMatch(JSON.stringify(answer), /zeppelin\.md|incidents|outage/);
      });

      it('does not flag a flag_only KB that holds no match, nor when its files are outside the path prefixes', async () => {
        const outsider = await suite.agent('outsider-bot');
        assert.equal((await outsider.ok<FlaggedWire>('search', { query: 'doors' })).flagged_kbs, undefined);
        const outside = await outsider.ok<FlaggedWire>('search', { query: 'zeppelin', scope: { path_prefixes: ['notes/'] } });
        assert.equal(outside.flagged_kbs, undefined);
        const inside = await outsider.ok<FlaggedWire>('search', { query: 'zeppelin', scope: { path_prefixes: ['incidents/'] } });
        assert.deepEqual(
          inside.flagged_kbs?.map((k) => k.kb_id),
          [flagging.kb_id],
        );
      });

      it('shows the files to a caller who may read the KB, without a flag', async () => {
        const viewer = await suite.agent('viewer-bot');
        const answer = await viewer.ok<FlaggedWire>('search', { query: 'zeppelin', scope: { kb_ids: [flagging.kb_id] } });
        assert.deepEqual(paths(answer), ['incidents/zeppelin.md']);
        assert.equal(answer.flagged_kbs, undefined);
      });

      it('flags the KB to an anonymous connection too', async () => {
        const answer = await anonymous.ok<FlaggedWire>('search', { query: 'zeppelin' });
        assert.deepEqual(paths(answer), []);
        assert.equal(answer.total, 0);
        assert.deepEqual(
          answer.flagged_kbs?.map((k) => k.kb_slug),
          [flagging.slug],
        );
      });

      it('shows where the matches are again once the KB is set back to visible', async () => {
        await (await suite.agent('admin-bot')).ok('update_kb', { kb_id: flagging.kb_id, location_policy: 'visible' });
        const outsider = await suite.agent('outsider-bot');
        const answer = await outsider.ok<FlaggedWire>('search', { query: 'zeppelin' });
        assert.deepEqual(paths(answer), ['incidents/zeppelin.md']);
        assert.equal(answer.flagged_kbs, undefined);
        await (await suite.agent('admin-bot')).ok('update_kb', { kb_id: flagging.kb_id, location_policy: 'flag_only' });
      });
    });
}
