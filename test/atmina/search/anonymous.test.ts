import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Agent, KbSuite, assertAtminaError, backendLabel } from '../support.ts';
import type { KbWire } from '../support.ts';
import type { RunningGateway } from '../../support/gateway.ts';
import { startGateway } from '../../support/gateway.ts';
import { storeBackends } from '../../support/stores.ts';
import type { SearchEngine } from '../../search/engines.ts';
import { searchEngines } from '../../search/engines.ts';
import type { SearchWire } from './wire.ts';
import { writeSecrets } from './wire.ts';
import { sdkClient } from '../../support/mcp-client.ts';

/*
 * Anonymous search (docs/atmina.md, "Anonymous search") through the MCP SDK's client over HTTP
 * on /atmina/public/{tenant}/mcp, with no Authorization header: only `search`, only over the
 * public KBs of that tenant, rate-limited per address, off unless the operator lists the tenant.
 */

const NO_PROJECTIONS = { projections: { projections: [], rebuilders: [] } };

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });

async function anonymousClient(url: string, headers: Record<string, string> = {}): Promise<Agent> {
  const client = sdkClient('kgw-anonymous-test');
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  // The SDK validates structured content against the output schemas of listed tools.
  await client.listTools();
  return new Agent('anonymous', client);
}

for (const backend of storeBackends())
  for (const choice of searchEngines())
    describe(`anonymous search with the ${choice.name} engine on ${backendLabel(backend)}`, () => {
      let engine: SearchEngine;
      let suite: KbSuite;
      let open: KbWire;
      let team: KbWire;
      let hidden: KbWire;
      let globexOpen: KbWire;
      let anonymous: Agent;
      let endpoint: string;
      const clients: Agent[] = [];
      before(async () => {
        // A high rate here: these tests search often from one address; the rate has its own gateway below.
        engine = choice.open();
        suite = await KbSuite.open(
          backend,
          { ...engine.env, KGW_ANONYMOUS_SEARCH_TENANTS: 'acme', KGW_ANONYMOUS_SEARCHES_PER_MINUTE: '10000' },
          { projections: true },
        );
        open = await suite.kb({ visibility: 'public' });
        team = await suite.kb({ visibility: 'team' });
        hidden = await suite.kb({ visibility: 'private' });
        // Three weak matches in the public KB; many strong ones where an anonymous caller may not look.
        await suite.file(open.kb_id, 'faq/retention.md', '# Questions\n\nHow long is customer data kept? See the retention policy.\n');
        await suite.file(open.kb_id, 'faq/survey.md', '# Survey\n\nThe customer survey asked about support hours.\n');
        await suite.file(open.kb_id, 'guides/wings.md', '# Wing design\n\nData on swept wings and customer retention of drawings.\n');
        const admin = await suite.agent('admin-bot');
        for (const kb of [team, hidden])
          await writeSecrets(
            admin,
            kb.kb_id,
            (i) => `# Customer data retention ${i}\n\ncustomer data retention customer data retention customer data retention\n`,
          );
        const globex = await suite.agent('globex-bot', 'context.read context.write', 'globex');
        globexOpen = await globex.ok<KbWire>('create_kb', { name: 'Globex handbook', team: 'ops', visibility: 'public' });
        await globex.ok('write_file', {
          kb_id: globexOpen.kb_id,
          path: 'retention.md',
          mode: 'create',
          content: '# Customer data retention\n\ncustomer data retention customer data retention\n',
        });
        await suite.settled();
        endpoint = `${suite.running.url}/atmina/public/acme/mcp`;
        anonymous = await anonymousClient(endpoint);
        clients.push(anonymous);
      });
      after(async () => {
        for (const agent of clients) await agent.client.close();
        await suite?.close();
        await engine?.dispose();
      });

      it('lists search and nothing else', async () => {
        const { tools } = await anonymous.client.listTools();
        assert.deepEqual(
          tools.map((t) => t.name),
          ['search'],
        );
      });

      it('finds the files of a public KB', async () => {
        const answer = await anonymous.ok<SearchWire>('search', { query: 'wing design' });
        assert.equal(answer.results[0]?.path, 'guides/wings.md');
        assert.equal(answer.results[0]?.kb_slug, open.slug);
      });

      it('never shows nor counts a file of a team or private KB, however well it matches', async () => {
        const answer = await anonymous.ok<SearchWire>('search', { query: 'customer data retention', max_files: 50 });
        assert.deepEqual(
          answer.results.map((r) => r.kb_id),
          answer.results.map(() => open.kb_id),
        );
        assert.deepEqual(answer.results.map((r) => r.path).sort(), ['faq/retention.md', 'faq/survey.md', 'guides/wings.md']);
        assert.equal(answer.total, 3);
        assert.equal(answer.next_cursor, null);
        // The hidden files are indexed: a member of their team finds them first.
        const member = await suite.agent('admin-bot');
        const signedIn = await member.ok<SearchWire>('search', { query: 'customer data retention', max_files: 50 });
        assert.equal(signedIn.total, 43);
        assert.equal(signedIn.results[0]?.path.startsWith('secret/'), true);
      });

      it('pages over the public files only', async () => {
        const first = await anonymous.ok<SearchWire>('search', { query: 'customer data retention', max_files: 2 });
        assert.equal(first.results.length, 2);
        assert.equal(first.total, 3);
        assert.ok(first.next_cursor);
        const second = await anonymous.ok<SearchWire>('search', { query: 'customer data retention', max_files: 2, cursor: first.next_cursor });
        assert.deepEqual(
          second.results.map((r) => r.kb_id),
          [open.kb_id],
        );
        assert.equal(second.next_cursor, null);
      });

      it('refuses a scope naming a team or private KB as not found, like a KB that does not exist', async () => {
        const missing = await anonymous.fail('search', { query: 'retention', scope: { kb_slugs: ['no-such-kb'] } });
        assertAtminaError(missing, 'not_found', '"no-such-kb"');
        for (const kb of [team, hidden]) {
          assertAtminaError(await anonymous.fail('search', { query: 'retention', scope: { kb_ids: [kb.kb_id] } }), 'not_found', `"${kb.kb_id}"`);
          assertAtminaError(await anonymous.fail('search', { query: 'retention', scope: { kb_slugs: [kb.slug] } }), 'not_found', `"${kb.slug}"`);
        }
      });

      it('searches a public KB named by its tenant-qualified slug, and refuses another tenant’s prefix or a hidden KB so named as not found', async () => {
        const answer = await anonymous.ok<SearchWire>('search', { query: 'survey', scope: { kb_slugs: [`acme/${open.slug}`] } });
        assert.deepEqual(
          answer.results.map((r) => r.path),
          ['faq/survey.md'],
        );
        for (const slug of [`globex/${open.slug}`, `acme/${team.slug}`, `acme/${hidden.slug}`])
          assertAtminaError(
            await anonymous.fail('search', { query: 'survey', scope: { kb_slugs: [slug] } }),
            'not_found',
            `no Knowledge Base ${JSON.stringify(slug)}`,
          );
      });

      it('searches a public KB named in the scope', async () => {
        const answer = await anonymous.ok<SearchWire>('search', { query: 'survey', scope: { kb_slugs: [open.slug] } });
        assert.deepEqual(
          answer.results.map((r) => r.path),
          ['faq/survey.md'],
        );
      });

      it("never shows another tenant's public KB", async () => {
        const answer = await anonymous.ok<SearchWire>('search', { query: 'customer data retention', max_files: 50 });
        assert.ok(!answer.results.some((r) => r.kb_id === globexOpen.kb_id));
        assertAtminaError(await anonymous.fail('search', { query: 'retention', scope: { kb_ids: [globexOpen.kb_id] } }), 'not_found');
      });

      it('answers a tenant that does not allow anonymous search as one that does not exist', async () => {
        const call = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
        const globex = await post(`${suite.running.url}/atmina/public/globex/mcp`, call);
        const nowhere = await post(`${suite.running.url}/atmina/public/no-such-tenant/mcp`, call);
        assert.equal(globex.status, 404);
        assert.equal(nowhere.status, 404);
        assert.deepEqual(await globex.json(), await nowhere.json());
      });

      it('answers hostile tenant segments with the same 404', async () => {
        const call = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
        for (const segment of ['%00', '%E2%80%AEacme', 'ACME', 'acme%2F..', 'a'.repeat(90)]) {
          const answer = await post(`${suite.running.url}/atmina/public/${segment}/mcp`, call);
          assert.equal(answer.status, 404, segment.slice(0, 40));
          assert.match(((await answer.json()) as { error: { message: string } }).error.message, /^Not Found: no anonymous search endpoint here/);
        }
        // Bytes that are no UTF-8 (a lone surrogate) are refused by the router before any route, as on every path.
        assert.equal((await post(`${suite.running.url}/atmina/public/%ED%A0%80/mcp`, call)).status, 400);
        // A segment longer than the router's parameter limit (100 characters) is 414 there.
        assert.equal((await post(`${suite.running.url}/atmina/public/${'a'.repeat(5000)}/mcp`, call)).status, 414);
      });

      it('hands back read_ref as for a signed-in caller, and refuses read_file to the anonymous connection', async () => {
        const [first] = (await anonymous.ok<SearchWire>('search', { query: 'survey' })).results;
        assert.ok(first);
        assert.deepEqual(first.read_ref, { tool: 'read_file', arguments: { kb_id: open.kb_id, file_id: first.file_id } });
        assert.equal(
          await anonymous.fail('read_file', first.read_ref.arguments),
          'permission_denied: read_file needs a signed-in connection; an anonymous connection may call search only',
        );
      });

      it('refuses every other tool, writes included, and changes nothing', async () => {
        const before = await suite.snapshot();
        for (const [tool, args] of [
          ['list_kbs', {}],
          ['whoami', {}],
          ['write_file', { kb_id: open.kb_id, path: 'x.md', mode: 'create', content: 'x' }],
          ['delete_kb', { kb_id: open.kb_id, confirm: open.slug }],
        ] as const)
          assert.equal(
            await anonymous.fail(tool, args),
            `permission_denied: ${tool} needs a signed-in connection; an anonymous connection may call search only`,
          );
        assert.deepEqual(await suite.snapshot(), before);
      });

      it('knows no tool of another dialect and serves no resources', async () => {
        await assert.rejects(anonymous.call('read_knowledge', {}), /Tool read_knowledge not found/);
        const resources = await post(endpoint, { jsonrpc: '2.0', id: 1, method: 'resources/list' });
        assert.equal(resources.status, 200);
        assert.equal(((await resources.json()) as { error: { code: number } }).error.code, -32601);
      });

      it('refuses a request that brings a token, rather than serve it as anonymous', async () => {
        const answer = await post(endpoint, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { authorization: 'Bearer kgw_whatever' });
        assert.equal(answer.status, 400);
        assert.match(((await answer.json()) as { error: { message: string } }).error.message, /takes no Authorization header; send the token to \/atmina\/mcp/);
      });

      it('keeps 401 with WWW-Authenticate on /atmina/mcp without a token', async () => {
        const answer = await post(`${suite.running.url}/atmina/mcp`, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
        assert.equal(answer.status, 401);
        assert.match(answer.headers.get('www-authenticate') ?? '', /^Bearer resource_metadata="/);
      });

      it('refuses hostile and huge queries in the spec words, and reads bidi and other scripts as words', async () => {
        assertAtminaError(await anonymous.fail('search', { query: 'data\u0000retention' }), 'validation');
        assertAtminaError(await anonymous.fail('search', { query: 'data \ud800 retention' }), 'validation');
        assertAtminaError(await anonymous.fail('search', { query: 'x'.repeat(4001) }), 'validation');
        assertAtminaError(await anonymous.fail('search', { query: '   ' }), 'validation', 'query must not be empty');
        assertAtminaError(await anonymous.fail('search', { query: 'retention', scope: { kb_slugs: ['../secret'] } }), 'not_found');
        assertAtminaError(await anonymous.fail('search', { query: 'retention', scope: { kb_ids: ["' OR 1=1 --"] } }), 'not_found');
        const bidi = await anonymous.ok<SearchWire>('search', { query: '\u202esurvey\u202c \u05e9\u05dc\u05d5\u05dd 😀' });
        assert.deepEqual(
          bidi.results.map((r) => r.path),
          ['faq/survey.md'],
        );
      });

      it('audits each search as kb.search with no principal or token', async () => {
        await anonymous.ok<SearchWire>('search', { query: 'audited anonymous survey' });
        const rows = await suite.db.query<{
          action: string;
          principal_id: string | null;
          token_id: string | null;
          details: { anonymous?: boolean; query?: string };
        }>(`SELECT action, principal_id, token_id, details FROM audit_events WHERE tool = 'search' AND details->>'query' = 'audited anonymous survey'`);
        assert.equal(rows.length, 1);
        assert.equal(rows[0]?.action, 'kb.search');
        assert.equal(rows[0]?.principal_id, null);
        assert.equal(rows[0]?.token_id, null);
        assert.equal(rows[0]?.details.anonymous, true);
      });

      describe('with a rate of 2 searches a minute', () => {
        let limited: RunningGateway;
        let client: Agent;
        before(async () => {
          limited = await startGateway(
            suite.db,
            { ...engine.env, KGW_ANONYMOUS_SEARCH_TENANTS: 'acme', KGW_ANONYMOUS_SEARCHES_PER_MINUTE: '2' },
            NO_PROJECTIONS,
          );
          client = await anonymousClient(`${limited.url}/atmina/public/acme/mcp`);
        });
        after(async () => {
          await client?.client.close();
          await limited?.close();
        });

        it('refuses the third search from one address as rate_limited with the wait, and still lists tools', async () => {
          await client.ok('search', { query: 'survey' });
          await client.ok('search', { query: 'survey' });
          assertAtminaError(
            (await client.limited('search', { query: 'survey' })).text,
            'rate_limited',
            /^rate_limited: too many anonymous searches from your address; retry in \d+ s$/,
          );
          const { tools } = await client.client.listTools();
          assert.deepEqual(
            tools.map((t) => t.name),
            ['search'],
          );
        });
      });

      describe('with a rate of 2 searches a minute behind a reverse proxy', () => {
        const gateways: RunningGateway[] = [];
        const opened: Agent[] = [];
        /** A gateway whose KGW_TRUSTED_PROXIES is `trusted`, and a client there the proxy says is `address`. */
        const behind = async (trusted: string) => {
          const env = { ...engine.env, KGW_ANONYMOUS_SEARCH_TENANTS: 'acme', KGW_ANONYMOUS_SEARCHES_PER_MINUTE: '2', KGW_TRUSTED_PROXIES: trusted };
          const gateway = await startGateway(suite.db, env, NO_PROJECTIONS);
          gateways.push(gateway);
          return async (address: string) => {
            const agent = await anonymousClient(`${gateway.url}/atmina/public/acme/mcp`, { 'x-forwarded-for': address });
            opened.push(agent);
            return agent;
          };
        };
        after(async () => {
          for (const agent of opened) await agent.client.close();
          for (const gateway of gateways) await gateway.close();
        });

        it('counts each client the trusted proxy names on its own', async () => {
          const client = await behind('loopback');
          const [first, second] = [await client('203.0.113.1'), await client('203.0.113.2')];
          await first.ok('search', { query: 'survey' });
          await first.ok('search', { query: 'survey' });
          assertAtminaError((await first.limited('search', { query: 'survey' })).text, 'rate_limited', /from your address/);
          await second.ok('search', { query: 'survey' });
          await second.ok('search', { query: 'survey' });
        });

        it('ignores X-Forwarded-For from a connection that is no trusted proxy', async () => {
          const client = await behind('10.0.0.1, 192.168.0.0/16');
          const [first, second] = [await client('203.0.113.1'), await client('203.0.113.2')];
          await first.ok('search', { query: 'survey' });
          await second.ok('search', { query: 'survey' });
          // One budget: both are the loopback connection, whatever the header claims.
          assertAtminaError((await first.limited('search', { query: 'survey' })).text, 'rate_limited', /from your address/);
        });
      });

      describe('with a rate of 1 search a minute for the tenant', () => {
        let limited: RunningGateway;
        let client: Agent;
        before(async () => {
          limited = await startGateway(
            suite.db,
            { ...engine.env, KGW_ANONYMOUS_SEARCH_TENANTS: 'acme', KGW_ANONYMOUS_SEARCHES_PER_TENANT_PER_MINUTE: '1' },
            NO_PROJECTIONS,
          );
          client = await anonymousClient(`${limited.url}/atmina/public/acme/mcp`);
        });
        after(async () => {
          await client?.client.close();
          await limited?.close();
        });

        it('refuses the second search of the tenant from any address as rate_limited', async () => {
          await client.ok('search', { query: 'survey' });
          assertAtminaError(
            (await client.limited('search', { query: 'survey' })).text,
            'rate_limited',
            /^rate_limited: too many anonymous searches of this organisation just now; retry in \d+ s$/,
          );
        });
      });

      describe('without KGW_ANONYMOUS_SEARCH_TENANTS', () => {
        let plain: RunningGateway;
        before(async () => {
          plain = await startGateway(suite.db, engine.env, NO_PROJECTIONS);
        });
        after(async () => {
          await plain?.close();
        });

        it('has no anonymous endpoint, and /atmina/mcp still asks for a token', async () => {
          const call = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
          assert.equal((await post(`${plain.url}/atmina/public/acme/mcp`, call)).status, 404);
          const signedOut = await post(`${plain.url}/atmina/mcp`, call);
          assert.equal(signedOut.status, 401);
          assert.match(signedOut.headers.get('www-authenticate') ?? '', /^Bearer /);
        });
      });
    });
