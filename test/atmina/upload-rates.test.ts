import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { allTools } from '../../src/products.ts';
import type { RunningGateway } from '../support/gateway.ts';
import { connectClient, issueToken, startGateway } from '../support/gateway.ts';
import { Agent, OrgGateway, s3GatewayEnv, textOf } from '../support/harness.ts';
import { storeBackends } from '../support/stores.ts';
import { ACME_KB_ORG, ATMINA_PATH, assertAtminaError } from './support.ts';

/*
 * The rates of writes and uploads, on a gateway configured with tiny ones: a principal over its
 * rate is told `rate_limited: … retry in N s` (HTTP 429 with Retry-After, test/http/rate-limited.test.ts)
 * with nothing written, others are not held back;
 * the disk store's upload URL answers 429 with Retry-After before it reads a body. And the
 * tool definitions: every writing Atmina tool declares the write rate or is exempt for a reason.
 */

// The writing Atmina tools the write rate does not count, each with why (docs/atmina.md, Rates).
const EXEMPT_FROM_WRITE_RATE: Readonly<Record<string, string>> = {
  create_kb: 'an Admin of a team makes one row; no file version and no bytes',
  update_kb: 'an Admin changes one row; no file version and no bytes',
  delete_kb: 'an Admin archives one row; no file version and no bytes',
  update_team_settings: 'an Admin of the team changes one row',
  share_kb: 'an Admin writes one share row',
  invite_to_kb: 'an Admin writes one share row',
  revoke_share: 'an Admin removes one share row',
};

describe('Atmina write rate declarations', () => {
  const writing = allTools.filter((tool) => tool.dialect === 'atmina' && tool.annotations.readOnlyHint !== true);

  it('declares the kb_writes rate on every writing Atmina tool that is not exempt', () => {
    const undeclared = writing.filter((tool) => tool.rateLimit?.limiter !== 'kb_writes' && !(tool.name in EXEMPT_FROM_WRITE_RATE));
    assert.deepStrictEqual(
      undeclared.map((tool) => tool.name),
      [],
    );
  });

  it('exempts only writing tools that declare no rate', () => {
    const exempt = Object.keys(EXEMPT_FROM_WRITE_RATE).map((name) => {
      const tool = writing.find((t) => t.name === name);
      return { name, writing: tool !== undefined, rateLimit: tool?.rateLimit };
    });
    assert.deepStrictEqual(
      exempt,
      Object.keys(EXEMPT_FROM_WRITE_RATE).map((name) => ({ name, writing: true, rateLimit: undefined })),
    );
  });
});

const [embedded] = storeBackends();

describe('Atmina write and upload rates', { skip: embedded === undefined }, () => {
  let gateway: OrgGateway;
  before(async () => {
    gateway = await OrgGateway.start(embedded as NonNullable<typeof embedded>, [ACME_KB_ORG], {
      tenant: 'acme',
      endpoint: ATMINA_PATH,
      env: { KGW_KB_WRITES_PER_MINUTE: '3', KGW_UPLOAD_PUTS_PER_MINUTE: '2' },
    });
  });
  after(async () => {
    await gateway?.close();
  });

  const agent = (name: string) => gateway.connect(name, 'context.read context.write', { path: ATMINA_PATH });

  it('refuses a principal’s writes over its rate with rate_limited and the wait, and no one else’s', async () => {
    const admin = await agent('admin-bot');
    const kb = await admin.ok<{ kb_id: string }>('create_kb', { name: 'Rates', team: 'docs' });
    const editor = await agent('editor-bot');
    for (let n = 0; n < 3; n += 1) await editor.ok('write_file', { kb_id: kb.kb_id, path: `n${n}.md`, mode: 'create', content: 'x' });
    const refused = (await editor.limited('upload_file', { kb_id: kb.kb_id, filename: 'over.bin', content_base64: 'AAEC' })).text;
    assertAtminaError(refused, 'rate_limited', /retry in \d+ s$/);
    const files = await admin.ok<{ files: unknown[] }>('list_files', { kb_id: kb.kb_id });
    assert.equal(files.files.length, 3);
    await admin.ok('write_file', { kb_id: kb.kb_id, path: 'admin.md', mode: 'create', content: 'x' });
  });

  it('counts generate_nav’s apply against the rate and not its previews', async () => {
    const admin = await agent('multi-bot');
    const kb = await admin.ok<{ kb_id: string }>('create_kb', { name: 'Generated', team: 'docs' });
    let preview = { sha256: '' };
    for (let n = 0; n < 4; n += 1) preview = await admin.ok<{ sha256: string }>('generate_nav', { kb_id: kb.kb_id });
    await admin.ok('generate_nav', { kb_id: kb.kb_id, operation: 'apply', sha256: preview.sha256 });
    for (let n = 0; n < 2; n += 1) await admin.ok('write_file', { kb_id: kb.kb_id, path: `g${n}.md`, mode: 'create', content: 'x' });
    const refused = (await admin.limited('write_file', { kb_id: kb.kb_id, path: 'over.md', mode: 'create', content: 'x' })).text;
    assertAtminaError(refused, 'rate_limited', /retry in \d+ s$/);
  });

  it('spends no unit on a call refused for its arguments', async () => {
    const admin = await agent('support-bot');
    const kb = await admin.ok<{ kb_id: string }>('create_kb', { name: 'Arguments', team: 'support' });
    for (let n = 0; n < 3; n += 1)
      assertAtminaError(await admin.fail('write_file', { kb_id: kb.kb_id, path: `bad${n}.md`, mode: 'replace', content: 'x' }), 'validation');
    for (let n = 0; n < 3; n += 1) await admin.ok('write_file', { kb_id: kb.kb_id, path: `a${n}.md`, mode: 'create', content: 'x' });
    const files = await admin.ok<{ files: unknown[] }>('list_files', { kb_id: kb.kb_id });
    assert.equal(files.files.length, 3);
  });

  it('spends a unit on a call the core refuses', async () => {
    const admin = await agent('admin-bot');
    const kb = await admin.ok<{ kb_id: string }>('create_kb', { name: 'Conflicts', team: 'docs' });
    const editor = await agent('share-bot');
    await editor.ok('write_file', { kb_id: kb.kb_id, path: 'same.md', mode: 'create', content: 'x' });
    for (let n = 0; n < 2; n += 1)
      assertAtminaError(await editor.fail('write_file', { kb_id: kb.kb_id, path: 'same.md', mode: 'create', content: 'x' }), 'conflict');
    const refused = (await editor.limited('write_file', { kb_id: kb.kb_id, path: 'other.md', mode: 'create', content: 'x' })).text;
    assertAtminaError(refused, 'rate_limited', /retry in \d+ s$/);
  });

  it('answers PUTs to upload URLs over the rate with 429 and Retry-After', async () => {
    const admin = await agent('admin-bot');
    const kb = await admin.ok<{ kb_id: string }>('create_kb', { name: 'Puts', team: 'docs' });
    const bytes = Buffer.from('put me');
    const batch = await admin.ok<{ uploads: { url: string; headers: Record<string, string> }[] }>('request_uploads', {
      kb_id: kb.kb_id,
      items: [{ path: 'p.txt', size_bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') }],
    });
    const upload = batch.uploads[0];
    assert.ok(upload !== undefined);
    const url = new URL(new URL(upload.url).pathname, gateway.running.url).toString();
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let n = 0; n < 3; n += 1) {
      const response = await fetch(url, { method: 'PUT', headers: upload.headers, body: bytes });
      statuses.push(response.status);
      retryAfter = response.headers.get('retry-after');
      await response.arrayBuffer();
    }
    // The first stores the bytes, the second finds its single-use URL used, the third is over the rate.
    assert.deepStrictEqual({ statuses, retryAfter: /^\d+$/.test(retryAfter ?? '') }, { statuses: [200, 409, 429], retryAfter: true });
  });
});

/*
 * Two replicas over one store: the write rate is counted in the store (src/auth/shared-rate.ts),
 * so an agent whose calls alternate between two gateways is refused at the same count as on one,
 * and concurrent calls through both lose no count. On PGlite the second gateway shares the
 * store's handle, as a second process cannot open it.
 */
for (const backend of storeBackends()) {
  describe(`the write rate across two replicas on ${backend.name}`, () => {
    let gateway: OrgGateway;
    let second: RunningGateway;
    before(async () => {
      gateway = await OrgGateway.start(backend, [ACME_KB_ORG], {
        tenant: 'acme',
        endpoint: ATMINA_PATH,
        env: { ...s3GatewayEnv(backend), KGW_KB_WRITES_PER_MINUTE: '4' },
      });
      second = await startGateway(gateway.db, { ...s3GatewayEnv(backend), KGW_KB_WRITES_PER_MINUTE: '4' });
    });
    after(async () => {
      await second?.close();
      await gateway?.close();
    });

    it('refuses the fifth write of a principal whose writes alternate between the replicas', async () => {
      const admin = await gateway.connect('admin-bot', 'context.read context.write', { path: ATMINA_PATH });
      const kb = await admin.ok<{ kb_id: string }>('create_kb', { name: 'Replicas', team: 'docs' });
      const token = await issueToken(gateway.db, 'acme', 'editor-bot', 'context.read context.write');
      const clients = [
        new Agent('editor-bot', await connectClient(`${gateway.running.url}${ATMINA_PATH}`, token)),
        new Agent('editor-bot', await connectClient(`${second.url}${ATMINA_PATH}`, token)),
      ];
      try {
        for (let n = 0; n < 4; n += 1) await clients[n % 2]!.ok('write_file', { kb_id: kb.kb_id, path: `r${n}.md`, mode: 'create', content: 'x' });
        for (const client of clients) {
          const refused = await client.limited('write_file', { kb_id: kb.kb_id, path: 'over.md', mode: 'create', content: 'x' });
          assertAtminaError(refused.text, 'rate_limited', /retry in \d+ s$/);
          assert.ok(refused.retryAfterSeconds >= 1 && refused.retryAfterSeconds <= 60, String(refused.retryAfterSeconds));
        }
        assert.equal((await admin.ok<{ files: unknown[] }>('list_files', { kb_id: kb.kb_id })).files.length, 4);
      } finally {
        await Promise.all(clients.map((c) => c.client.close()));
      }
    });

    it('counts concurrent writes through both replicas exactly: the rate’s worth succeed, the rest are refused', async () => {
      const admin = await gateway.connect('admin-bot', 'context.read context.write', { path: ATMINA_PATH });
      const kb = await admin.ok<{ kb_id: string }>('create_kb', { name: 'Concurrent', team: 'docs' });
      const token = await issueToken(gateway.db, 'acme', 'multi-bot', 'context.read context.write');
      const clients = await Promise.all(
        [gateway.running.url, second.url].map(async (url) => new Agent('multi-bot', await connectClient(`${url}${ATMINA_PATH}`, token))),
      );
      try {
        const outcomes = await Promise.all(
          Array.from({ length: 12 }, async (_, n) => {
            const result = await clients[n % 2]!.call('write_file', { kb_id: kb.kb_id, path: `c${n}.md`, mode: 'create', content: 'x' }).then(
              (r) => (r.isError === true ? `error: ${textOf(r)}` : 'written'),
              (error: unknown) => (/rate_limited/.test(String(error)) ? 'limited' : `thrown: ${String(error)}`),
            );
            return result;
          }),
        );
        assert.deepStrictEqual(
          outcomes.filter((o) => o !== 'written' && o !== 'limited'),
          [],
        );
        assert.equal(outcomes.filter((o) => o === 'written').length, 4, outcomes.join(', '));
        assert.equal((await admin.ok<{ files: unknown[] }>('list_files', { kb_id: kb.kb_id })).files.length, 4);
      } finally {
        await Promise.all(clients.map((c) => c.client.close()));
      }
    });
  });
}
