import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { uploadOrigin } from '../../connectors/blob/index.ts';
import { renderMarkdown, kbTarget } from '../../src/atmina/console/markdown.ts';
import { loadConfig } from '../../src/config.ts';
import { fuzzSeed } from '../fuzz/harness.ts';
import { hostileString } from '../fuzz/hostile.ts';
import type { Browser } from '../oauth/support.ts';
import { PASSWORD, setPassword, startOAuthGateway } from '../oauth/support.ts';
import { connectClient, drainedOutbox, issueToken, seedOrg } from '../support/gateway.ts';
import { s3GatewayEnv } from '../support/harness.ts';
import { storeBackends } from '../support/stores.ts';
import type { ConsoleGateway } from './support.ts';
import { csrfOf, signedInFetch, startConsole } from './support.ts';
import { GLOBEX_KBS_ORG, HOSTILE_MD, KBS_ORG, call, kbIdOf, seedHandbook } from './kbs-support.ts';

/**
 * The console's Knowledge Bases section through HTTP: Alice (Admin of the Docs team) and Bob (its
 * Viewer) list, browse and read the handbook KB; a Markdown file with script, raw HTML and
 * hostile links renders inert while its links to other files lead to their pages; Alice restores
 * an older version (seen through MCP), Bob's restore is refused; Globex's KB is the same Not
 * found as an unknown one; search shows snippets and why they matched; an upload through the
 * console's presigned batch arrives as a file the tools see.
 */

/** Hostile requests the property below sends (KGW_FUZZ_RUNS for more). */
const HOSTILE_RUNS = Number(process.env.KGW_FUZZ_RUNS ?? 60);

/** Every byte of a text's UTF-8 percent-encoded: a path segment of anything, a lone surrogate included. */
const segment = (text: string): string => [...Buffer.from(text, 'utf8')].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');

/** What rendered Markdown never holds: a script element, an element from raw HTML, an event handler or style attribute, a dangerous address. */
const INERT = /<script|<img src="x"|<[^>]*\son\w+=|<[^>]*\sstyle=|(?:href|src)="\s*(?:javascript|vbscript|data):/i;

/** The rendered Markdown of a console page. */
const markdownOf = (page: string): string => /<div class="markdown">([\s\S]*?)<\/div>\n/.exec(page)?.[1] ?? assert.fail('no rendered Markdown');

describe('KB Markdown rendering', () => {
  const targets = {
    file: (p: string) => `/f?path=${encodeURIComponent(p)}`,
    folder: (p: string) => `/d?path=${encodeURIComponent(p)}`,
    image: (p: string) => `/i?path=${encodeURIComponent(p)}`,
    wiki: (inner: string) => (inner === 'leave' ? '/f?path=policies%2Fleave.md' : undefined),
  };
  it('resolves links between files from the linking file’s folder, never above the root', () => {
    assert.deepEqual(kbTarget('a/b/c.md', '../d.md'), { path: 'a/d.md', folder: false });
    assert.deepEqual(kbTarget('a/b/c.md', '/top.md#part'), { path: 'top.md', folder: false });
    assert.deepEqual(kbTarget('a/c.md', 'sub/'), { path: 'a/sub/', folder: true });
    assert.deepEqual(kbTarget('c.md', 'my%20file.md'), { path: 'my file.md', folder: false });
    assert.equal(kbTarget('c.md', '../../etc/passwd'), undefined);
    assert.equal(kbTarget('c.md', '%E0%A4%A'), undefined);
  });
  it('renders no script, raw HTML, dangerous link or inline style', () => {
    const out = renderMarkdown(HOSTILE_MD, 'index.md', targets).value;
    assert.doesNotMatch(out, INERT);
    assert.match(out, /&lt;script&gt;/);
    assert.match(out, /<a href="\/f\?path=policies%2Fleave\.md">leave policy<\/a>/);
    assert.match(out, /<a href="\/d\?path=policies%2F">policies<\/a>/);
    assert.match(out, /<a href="https:\/\/example\.com\/x" rel="noopener noreferrer nofollow">Example<\/a>/);
    assert.match(out, /<img src="\/i\?path=img%2Fred\.png" alt="A red square">/);
    assert.match(out, /<a href="https:\/\/example\.com\/pic\.png" rel="noopener noreferrer nofollow">elsewhere<\/a>/);
    assert.match(out, /\\u202eevil/);
    // Wiki links: to the file that answers, or the label marked unresolved; their text escaped.
    assert.match(out, /<a href="\/f\?path=policies%2Fleave\.md">leave<\/a>/);
    assert.match(out, /<span class="unresolved">the leave rules<\/span>/);
    assert.match(out, /<span class="unresolved">Nowhere<\/span>/);
    assert.match(out, /<span class="unresolved">&lt;b&gt;x<\/span>/);
  });
});

describe('the upload origin the console’s CSP allows', () => {
  it('is none on disk (the gateway serves uploads), the endpoint’s origin or the bucket’s AWS address on S3', () => {
    assert.equal(uploadOrigin(loadConfig({})), undefined);
    assert.equal(uploadOrigin(loadConfig({ S3_BUCKET: 'kgw-files', S3_ENDPOINT: 'http://minio.internal:9000/base' })), 'http://minio.internal:9000');
    assert.equal(uploadOrigin(loadConfig({ S3_BUCKET: 'kgw-files', S3_REGION: 'eu-central-1' })), 'https://kgw-files.s3.eu-central-1.amazonaws.com');
  });
});

for (const backend of storeBackends()) {
  describe(`console Knowledge Bases on ${backend.name}`, () => {
    let gateway: ConsoleGateway;
    let alice: Browser;
    let bob: Browser;
    let carol: Browser;
    let hank: Browser;
    let agent: Client;
    let kbId: string;
    let globexKbId: string;
    const origin = () => ({ origin: new URL(gateway.url).origin });
    const kbPath = (page: string, query: Record<string, string> = {}) => {
      const search = new URLSearchParams(query).toString();
      return `/console/kbs/${kbId}${page}${search === '' ? '' : `?${search}`}`;
    };

    before(async () => {
      gateway = await startConsole(backend, KBS_ORG, [
        { tenant: 'acme', email: 'alice@acme.test' },
        { tenant: 'acme', email: 'bob@acme.test' },
        { tenant: 'acme', email: 'carol@acme.test' },
      ]);
      await seedOrg(gateway.store.db, GLOBEX_KBS_ORG);
      await setPassword(gateway.store.db, 'globex', 'hank@globex.test', PASSWORD);
      agent = await connectClient(`${gateway.url}/atmina/mcp`, await issueToken(gateway.store.db, 'acme', 'alice@acme.test', 'context.read context.write'));
      kbId = await kbIdOf(agent, 'handbook');
      await seedHandbook(agent, kbId);
      const globex = await connectClient(`${gateway.url}/atmina/mcp`, await issueToken(gateway.store.db, 'globex', 'hank@globex.test', 'context.read'));
      globexKbId = await kbIdOf(globex, 'runbook');
      await globex.close();
      await drainedOutbox(gateway.store.db);
      alice = await signedInFetch(gateway.url, 'acme', 'alice@acme.test');
      bob = await signedInFetch(gateway.url, 'acme', 'bob@acme.test');
      carol = await signedInFetch(gateway.url, 'acme', 'carol@acme.test');
      hank = await signedInFetch(gateway.url, 'globex', 'hank@globex.test');
    });
    after(async () => {
      await agent?.close();
      await gateway?.close();
    });

    it('lists the KBs a person may use, in the navigation and paged; one without any sees none', async () => {
      const inbox = await alice.request('/console/inbox');
      assert.match(inbox.text, new RegExp(`<a href="${gateway.url}/console/kbs">Knowledge Bases</a>`));
      for (const person of [alice, bob]) {
        const list = await person.request('/console/kbs');
        assert.equal(list.status, 200, list.text);
        assert.match(list.text, new RegExp(`<a href="${gateway.url}/console/kbs/${kbId}">Engineering handbook</a>`));
        assert.match(list.text, /How we work/);
        assert.match(list.text, /script src="[^"]+\/console\/static\/kbs\/kb-upload\.js"/);
      }
      // The page's script may reach this gateway, and the S3 endpoint where the bytes go to S3.
      const s3 = s3GatewayEnv(backend)['S3_ENDPOINT'];
      const connect = s3 === undefined ? "connect-src 'self';" : `connect-src 'self' ${new URL(s3).origin};`;
      assert.ok((inbox.headers.get('content-security-policy') ?? '').includes(connect), inbox.headers.get('content-security-policy') ?? '');
      const none = await carol.request('/console/kbs');
      assert.equal(none.status, 200);
      assert.doesNotMatch(none.text, /Engineering handbook/);
      assert.match(none.text, /You may use no Knowledge Base yet\./);
      assert.equal((await alice.request('/console/kbs?page=0')).status, 400);
      assert.equal((await alice.request('/console/kbs?page=2')).status, 200);
      // German for an organisation that speaks it.
      const german = await hank.request('/console/kbs');
      assert.match(german.text, /<h1>Wissensdatenbanken<\/h1>/);
      assert.match(german.text, /Runbook/);
    });

    it('browses folders with breadcrumbs, a page at a time', async () => {
      const root = await bob.request(kbPath(''));
      assert.equal(root.status, 200, root.text);
      assert.match(root.text, /<h1>Engineering handbook<\/h1>/);
      assert.match(root.text, new RegExp(`href="${gateway.url}/console/kbs/${kbId}\\?path=policies%2F">policies/</a>`));
      assert.match(root.text, new RegExp(`href="${gateway.url}/console/kbs/${kbId}/file\\?path=index\\.md">index\\.md</a>`));
      assert.doesNotMatch(root.text, />leave\.md</);
      // A Viewer gets no upload form; an Editor does.
      assert.doesNotMatch(root.text, /data-upload/);
      assert.match((await alice.request(kbPath(''))).text, /<form class="upload"/);
      const folder = await bob.request(kbPath('', { path: 'policies/' }));
      assert.match(folder.text, /<nav class="crumbs" aria-label="Where you are"><ol>/);
      assert.match(folder.text, new RegExp(`<li><a href="${gateway.url}/console/kbs/${kbId}\\?path=policies%2F">policies</a></li>`));
      assert.match(folder.text, />leave\.md</);
      assert.equal((await bob.request(kbPath('', { path: 'policies' }))).status, 200);
      // A cursor of another listing, and a NUL in the address, are refused.
      assert.equal((await bob.request(kbPath('', { cursor: 'bm9wZQ' }))).status, 400);
      assert.equal((await bob.request(`${kbPath('')}?path=a%00b`)).status, 400);
    });

    it('shows Markdown inert with links to the KB’s pages, text as text, an image from its rendition', async () => {
      const page = await bob.request(kbPath('/file', { path: 'index.md' }));
      assert.equal(page.status, 200, page.text);
      const md = markdownOf(page.text);
      assert.doesNotMatch(md, INERT);
      // A link to a scheme other than http, https and mailto is no link: its source shows as text.
      assert.match(md, /\[evil\]\(javascript:alert\('link'\)\)/);
      assert.match(md, /&lt;script&gt;alert/);
      assert.match(md, new RegExp(`<a href="${gateway.url}/console/kbs/${kbId}/file\\?path=policies%2Fleave\\.md">leave policy</a>`));
      // Wiki links go where the related tool says they go: a bare name to the one file of that name, a path to its file.
      assert.match(md, new RegExp(`<a href="${gateway.url}/console/kbs/${kbId}/file\\?path=policies%2Fleave\\.md">leave</a>`));
      assert.match(md, new RegExp(`<a href="${gateway.url}/console/kbs/${kbId}/file\\?path=policies%2Fleave\\.md">the leave rules</a>`));
      assert.match(md, /<span class="unresolved">Nowhere<\/span>/);
      const image = new RegExp(`<img src="(${gateway.url}/console/kbs/${kbId}/image\\?path=img%2Fred\\.png)" alt="A red square">`).exec(md);
      assert.ok(image, md);
      assert.match(page.text, /<dt>Tags<\/dt><dd>start, guide<\/dd>/);
      const rendition = await fetch(image[1]!, { headers: { cookie: bob.cookie ?? '' } });
      assert.equal(rendition.status, 200);
      assert.match(rendition.headers.get('content-type') ?? '', /^image\//);
      assert.ok((await rendition.arrayBuffer()).byteLength > 0);

      const text = await bob.request(kbPath('/file', { path: 'notes.txt' }));
      assert.match(text.text, /<pre aria-label="Content">plain &lt;b&gt;text&lt;\/b&gt;/);
      const asset = await bob.request(kbPath('/file', { path: 'img/red.png' }));
      assert.match(asset.text, /<img class="kb-image" src="[^"]+\/image\?path=img%2Fred\.png&amp;v=1"/);
      assert.match(asset.text, /A red square/);
      const raw = await bob.request(kbPath('/raw', { path: 'notes.txt' }));
      assert.equal(raw.status, 200);
      assert.equal(raw.text, 'plain <b>text</b>\n');
      assert.match(raw.headers.get('content-disposition') ?? '', /attachment; filename="notes\.txt"/);
      assert.equal((await bob.request(kbPath('/file', { path: 'missing.md' }))).status, 404);
      assert.equal((await bob.request(kbPath('/image', { path: 'notes.txt' }))).status, 400);
    });

    it('gives a KB the person may not see, another tenant’s and an unknown one the same Not found page', async () => {
      const unknown = await carol.request('/console/kbs/00000000-0000-4000-8000-000000000000');
      const hidden = await carol.request(kbPath(''));
      const foreign = await carol.request(`/console/kbs/${globexKbId}`);
      const foreignFile = await alice.request(`/console/kbs/${globexKbId}/file?path=index.md`);
      const garbage = await carol.request('/console/kbs/not%20a%20kb');
      for (const answer of [unknown, hidden, foreign, foreignFile, garbage]) {
        assert.equal(answer.status, 404, answer.text);
        assert.match(answer.text, /There is nothing here, or nothing you may see\./);
      }
      assert.equal(hidden.text, unknown.text);
      assert.equal(foreign.text, unknown.text);
      assert.equal((await hank.request(kbPath(''))).status, 404);
    });

    it('shows the history with each version’s changes, and lets an Editor restore one (seen through MCP)', async () => {
      const history = await alice.request(kbPath('/history', { path: 'policies/leave.md' }));
      assert.equal(history.status, 200, history.text);
      assert.match(history.text, /<h1>History of policies\/leave\.md<\/h1>/);
      assert.match(history.text, /aria-label="Restore version 1"/);
      assert.doesNotMatch(history.text, /aria-label="Restore version 2"/);
      const diff = await alice.request(kbPath('/diff', { path: 'policies/leave.md', version: '2' }));
      assert.equal(diff.status, 200, diff.text);
      assert.match(diff.text, /<del class="del">-Everyone takes 30 days of vacation\.<\/del>/);
      assert.match(diff.text, /<ins class="add">\+Everyone takes 25 days of vacation\.<\/ins>/);
      assert.match((await alice.request(kbPath('/diff', { path: 'policies/leave.md', version: '1' }))).text, /The first version/);
      assert.equal((await alice.request(kbPath('/diff', { path: 'policies/leave.md', version: '9' }))).status, 400);

      const head = (await call(agent, 'read_file', { kb_id: kbId, path: 'policies/leave.md' })) as { sha256: string; version: number };
      assert.equal(head.version, 2);
      // A stale if_match is a conflict: nothing restored.
      const stale = await alice.request(kbPath('/restore'), {
        form: { csrf: csrfOf(history.text), path: 'policies/leave.md', version: '1', if_match: '0'.repeat(64) },
        headers: origin(),
      });
      assert.equal(stale.status, 409, stale.text);
      const restored = await alice.request(kbPath('/restore'), {
        form: { csrf: csrfOf(history.text), path: 'policies/leave.md', version: '1', if_match: head.sha256 },
        headers: origin(),
      });
      assert.equal(restored.status, 303, restored.text);
      assert.equal(restored.location, `${gateway.url}${kbPath('/history', { path: 'policies/leave.md' })}`);
      const now = (await call(agent, 'read_file', { kb_id: kbId, path: 'policies/leave.md' })) as { content: string; version: number };
      assert.equal(now.version, 3);
      assert.match(now.content, /30 days/);
      const versions = (await call(agent, 'file_history', { kb_id: kbId, path: 'policies/leave.md' })) as {
        versions: { version: number; operation: string; restored_from: number | null; author: { name: string } | null }[];
      };
      assert.deepEqual(versions.versions[0], { ...versions.versions[0], version: 3, operation: 'restore', restored_from: 1 });
      assert.equal(versions.versions[0]?.author?.name, 'Alice');
      const audit = await gateway.store.db.query<{ surface: string }>(`SELECT surface FROM audit_events WHERE action = 'kb.file.restore'`);
      assert.deepEqual(
        audit.map((row) => row.surface),
        ['console'],
      );
    });

    it('shows a Viewer no restore button and refuses a Viewer’s posted restore, changing nothing', async () => {
      const history = await bob.request(kbPath('/history', { path: 'policies/leave.md' }));
      assert.equal(history.status, 200);
      assert.doesNotMatch(history.text, /Restore/);
      const head = (await call(agent, 'read_file', { kb_id: kbId, path: 'policies/leave.md' })) as { sha256: string; version: number };
      const refused = await bob.request(kbPath('/restore'), {
        form: { csrf: csrfOf(history.text), path: 'policies/leave.md', version: '2', if_match: head.sha256 },
        headers: origin(),
      });
      assert.equal(refused.status, 403, refused.text);
      assert.equal(((await call(agent, 'read_file', { kb_id: kbId, path: 'policies/leave.md' })) as { version: number }).version, head.version);
      // Without the session's CSRF value, even an Editor's restore is refused.
      const forged = await alice.request(kbPath('/restore'), {
        form: { csrf: 'forged', path: 'policies/leave.md', version: '2', if_match: head.sha256 },
        headers: origin(),
      });
      assert.equal(forged.status, 403);
      assert.equal(((await call(agent, 'read_file', { kb_id: kbId, path: 'policies/leave.md' })) as { version: number }).version, head.version);
    });

    it('searches every visible KB or one, with snippets and why each file matched', async () => {
      await drainedOutbox(gateway.store.db);
      const all = await bob.request(`/console/kbs/search?${new URLSearchParams({ q: 'vacation' }).toString()}`);
      assert.equal(all.status, 200, all.text);
      assert.match(all.text, /<mark>vacation<\/mark>/);
      assert.match(all.text, /Why it matched:/);
      assert.match(all.text, new RegExp(`href="${gateway.url}/console/kbs/${kbId}/file\\?path=policies%2Fleave\\.md"`));
      const one = await bob.request(`/console/kbs/search?${new URLSearchParams({ q: 'vacation', kb: kbId }).toString()}`);
      assert.match(one.text, /In Engineering handbook\./);
      assert.match(one.text, /<mark>vacation<\/mark>/);
      // Carol may search nothing: no result, and the handbook scope is not found.
      assert.doesNotMatch((await carol.request('/console/kbs/search?q=vacation')).text, /<mark>/);
      assert.equal((await carol.request(`/console/kbs/search?q=vacation&kb=${kbId}`)).status, 404);
      assert.equal((await bob.request(`/console/kbs/search?q=${'x'.repeat(4001)}`)).status, 400);
    });

    it('answers hostile addresses and forms with a page, a redirect or a file, never an error', async () => {
      const csrf = csrfOf((await alice.request(kbPath(''))).text);
      const value = hostileString({ pathish: true, idish: true });
      const kb = fc.oneof({ weight: 3, arbitrary: fc.constant(kbId) }, { weight: 1, arbitrary: fc.constant(globexKbId) }, { weight: 2, arbitrary: value });
      const query = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
      const request = fc.oneof(
        fc
          .record({ page: fc.constantFrom('', '/file', '/raw', '/image', '/history', '/diff'), kb, path: value, cursor: value, version: value })
          .map(({ page, kb: k, ...fields }) => ({ url: `/console/kbs/${segment(k)}${page}?${query(fields)}`, form: undefined })),
        fc.record({ q: value, kb: value, cursor: value, page: value }).map((fields) => ({ url: `/console/kbs/search?${query(fields)}`, form: undefined })),
        fc.record({ page: value }).map((fields) => ({ url: `/console/kbs?${query(fields)}`, form: undefined })),
        fc
          .record({
            page: fc.constantFrom('/restore', '/uploads', '/uploads/confirm'),
            kb,
            form: fc.record(
              { path: value, version: value, if_match: value, count: value, path0: value, size0: value, sha2560: value, type0: value, batch: value },
              { requiredKeys: [] },
            ),
          })
          .map(({ page, kb: k, form }) => ({ url: `/console/kbs/${segment(k)}${page}`, form: { csrf, ...form } })),
      );
      await fc.assert(
        fc.asyncProperty(request, async ({ url, form }) => {
          const answer = await alice.request(url, form === undefined ? {} : { form, headers: origin() });
          assert.ok(answer.status < 500, `${url}: ${answer.status} ${answer.text.slice(0, 300)}`);
          if (answer.status === 303) assert.ok((answer.location ?? '').startsWith(`${gateway.url}/console/`), String(answer.location));
        }),
        { numRuns: HOSTILE_RUNS, seed: fuzzSeed() },
      );
    });

    it('uploads through the presigned batch agents use: declare, PUT, confirm; the tools see the file', async () => {
      const bytes = Buffer.from('# Uploaded\n\nFrom the console.\n');
      const sha = createHash('sha256').update(bytes).digest('hex');
      const folder = await alice.request(kbPath('', { path: 'policies/' }));
      const csrf = csrfOf(folder.text);
      const asked = await alice.request(kbPath('/uploads'), {
        form: { csrf, count: '1', path0: 'policies/uploaded.md', size0: String(bytes.length), sha2560: sha, type0: 'text/markdown' },
        headers: origin(),
      });
      assert.equal(asked.status, 200, asked.text);
      const batch = JSON.parse(asked.text) as { batch: string; uploads: { url: string; method: string; headers: Record<string, string> }[] };
      assert.equal(batch.uploads.length, 1);
      const put = await fetch(batch.uploads[0]!.url, { method: 'PUT', headers: batch.uploads[0]!.headers, body: bytes });
      assert.equal(put.status, 200, await put.text());
      const confirmed = await alice.request(kbPath('/uploads/confirm'), { form: { csrf, batch: batch.batch }, headers: origin() });
      assert.equal(confirmed.status, 200, confirmed.text);
      assert.deepEqual(JSON.parse(confirmed.text), { items: [{ path: 'policies/uploaded.md', ok: true }] });
      const read = (await call(agent, 'read_file', { kb_id: kbId, path: 'policies/uploaded.md' })) as { content: string };
      assert.equal(read.content, bytes.toString());
      // A Viewer may not upload: refused by the core, as request_uploads refuses it.
      const viewer = await bob.request(kbPath('/uploads'), {
        form: { csrf: csrfOf((await bob.request(kbPath(''))).text), count: '1', path0: 'x.md', size0: '1', sha2560: sha },
        headers: origin(),
      });
      assert.equal(viewer.status, 403);
      const tooMany = await alice.request(kbPath('/uploads'), { form: { csrf, count: '11' }, headers: origin() });
      assert.equal(tooMany.status, 400);
    });
  });
}

describe('console writes at the KB write rate', () => {
  it('refuses a person’s third write within a minute at a rate of 2, with 429', async () => {
    const [backend] = storeBackends();
    const store = await backend!.open({ migrated: true });
    await seedOrg(store.db, KBS_ORG);
    await setPassword(store.db, 'acme', 'alice@acme.test', PASSWORD);
    const running = await startOAuthGateway(store.db, { KGW_KB_WRITES_PER_MINUTE: '2' });
    try {
      const alice = await signedInFetch(running.url, 'acme', 'alice@acme.test');
      const list = await alice.request('/console/kbs');
      const kb = /\/console\/kbs\/([0-9a-f-]{36})"/.exec(list.text)?.[1] ?? assert.fail('no KB link');
      const csrf = csrfOf(list.text);
      const write = () => alice.request(`/console/kbs/${kb}/uploads`, { form: { csrf, count: '0' }, headers: { origin: new URL(running.url).origin } });
      assert.equal((await write()).status, 400);
      assert.equal((await write()).status, 400);
      const refused = await write();
      assert.equal(refused.status, 429, refused.text);
      assert.match(refused.text, /rate_limited|too many/);
    } finally {
      await running.close();
      await store.dispose();
    }
  });
});
