import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { OrgGateway } from '../alignbase/support.ts';
import { storeBackends } from '../support/stores.ts';
import { ACME_KB_ORG, ATMINA_PATH, assertAtminaError } from './support.ts';

/*
 * The rates of writes and uploads, on a gateway configured with tiny ones: a principal over its
 * rate is told `rate_limited: … retry in N s` with nothing written, others are not held back;
 * the disk store's upload URL answers 429 with Retry-After before it reads a body.
 */

const [embedded] = storeBackends();

describe('Atmina write and upload rates', { skip: embedded === undefined }, () => {
  let gateway: OrgGateway;
  before(async () => {
    gateway = await OrgGateway.start(embedded as NonNullable<typeof embedded>, [ACME_KB_ORG], {
      tenant: 'acme',
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
    const refused = await editor.fail('upload_file', { kb_id: kb.kb_id, filename: 'over.bin', content_base64: 'AAEC' });
    assertAtminaError(refused, 'rate_limited', /retry in \d+ s$/);
    const files = await admin.ok<{ files: unknown[] }>('list_files', { kb_id: kb.kb_id });
    assert.equal(files.files.length, 3);
    await admin.ok('write_file', { kb_id: kb.kb_id, path: 'admin.md', mode: 'create', content: 'x' });
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
