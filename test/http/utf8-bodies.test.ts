import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { invalidUtf8Offset } from '../../src/http/utf8.ts';
import type { RunningGateway } from '../support/gateway.ts';
import { issueToken, seedOrg, startGateway } from '../support/gateway.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';

// A JSON body that is not UTF-8 is refused with where, before anything runs: decoding it would
// put U+FFFD in place of each bad byte, and the changed text would be stored without a word.

const ORG = `
tenant: bytes
name: Bytes
people:
  - email: owner@bytes.test
    name: Owner
agents:
  - name: writer-bot
    owner: owner@bytes.test
grants:
  - { to: writer-bot, on: all_knowledge, role: owner }
`;
const SECRET = 'utf8-bodies-admin-secret';
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** The bad byte sequences, each inside a JSON string, and what the answer says of them. */
const INVALID: readonly { readonly name: string; readonly bytes: readonly number[]; readonly first: string }[] = [
  { name: 'a lone 0xFF', bytes: [0xff], first: '0xff' },
  { name: 'a multi-byte sequence cut short', bytes: [0xe2, 0x82], first: '0xe2' },
  { name: 'an overlong encoding of /', bytes: [0xc0, 0xaf], first: '0xc0' },
  { name: 'an overlong three-byte encoding', bytes: [0xe0, 0x80, 0xaf], first: '0xe0' },
  { name: 'an encoded surrogate (ED A0 80)', bytes: [0xed, 0xa0, 0x80], first: '0xed' },
  { name: 'a code point above U+10FFFF', bytes: [0xf4, 0x90, 0x80, 0x80], first: '0xf4' },
];

/** `before` + bytes + `after`, and the offset where the bytes begin. */
function bodyWith(before: string, bytes: readonly number[], after: string): { body: Buffer; offset: number } {
  const head = Buffer.from(before, 'utf8');
  return { body: Buffer.concat([head, Buffer.from(bytes), Buffer.from(after, 'utf8')]), offset: head.length };
}

const reason = (offset: number, first: string) => `the body is not valid UTF-8: the byte at offset ${offset} (${first}) does not begin a well-formed sequence`;

describe('invalidUtf8Offset', () => {
  it('names the first byte of the first ill-formed sequence, and nothing for well-formed text', () => {
    assert.equal(invalidUtf8Offset(Buffer.from('plain é € 😀 \uFEFF', 'utf8')), undefined);
    assert.equal(invalidUtf8Offset(Buffer.from([0x61, 0xc3, 0xa9, 0xff, 0xff])), 3);
    assert.equal(invalidUtf8Offset(Buffer.from([0x61, 0xf0, 0x9f, 0x98])), 1);
    assert.equal(invalidUtf8Offset(Buffer.from([0xed, 0x9f, 0xbf, 0xed, 0xa0, 0x80])), 3);
    assert.equal(invalidUtf8Offset(Buffer.from([0x80])), 0);
    assert.equal(invalidUtf8Offset(Buffer.from([0xf4, 0x8f, 0xbf, 0xbf, 0xf5])), 4);
  });
});

for (const backend of storeBackends()) {
  describe(`JSON bodies that are not UTF-8 on ${backend.name}`, () => {
    let store: TestStore;
    let running: RunningGateway;
    let token: string;

    before(async () => {
      store = await backend.open({ migrated: true });
      await seedOrg(store.db, ORG);
      token = await issueToken(store.db, 'bytes', 'writer-bot', 'context.read context.write');
      running = await startGateway(store.db, { KGW_ANONYMOUS_SEARCH_TENANTS: 'bytes' }, { adminSecret: SECRET });
    });
    after(async () => {
      await running.close();
      await store.dispose();
    });

    const post = async (path: string, body: Buffer, headers: Record<string, string>): Promise<{ status: number; json: unknown }> => {
      const response = await fetch(`${running.url}${path}`, { method: 'POST', headers, body, signal: AbortSignal.timeout(30_000) });
      const text = await response.text();
      return { status: response.status, json: text === '' ? undefined : (JSON.parse(text) as unknown) };
    };
    const knowledgeTitles = async (): Promise<string[]> =>
      (
        await store.db.query<{ name: string }>(
          `SELECT r.name FROM context_resources r JOIN tenants t ON t.id = r.tenant_id WHERE t.slug = 'bytes' AND r.type = 'knowledge' ORDER BY r.name`,
        )
      ).map((row) => row.name);
    const writeCall = (title: string) =>
      `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"write_knowledge","arguments":{"title":"${title}","expected_version":0,"content":"ab`;

    it('refuses each kind of ill-formed UTF-8 in an MCP call with -32700 and HTTP 400, naming its offset, and writes nothing', async () => {
      for (const { name, bytes, first } of INVALID) {
        const { body, offset } = bodyWith(writeCall(name), bytes, 'cd"}}}');
        const answer = await post('/alignbase/mcp', body, { ...MCP_HEADERS, authorization: `Bearer ${token}` });
        assert.equal(answer.status, 400, name);
        assert.deepEqual(
          answer.json,
          { jsonrpc: '2.0', id: null, error: { code: -32700, message: `Parse error: ${reason(offset, first)}`, data: { offset } } },
          name,
        );
      }
      assert.deepEqual(await knowledgeTitles(), []);
    });

    it('accepts valid multi-byte text and stores it as sent', async () => {
      const content = 'é € 😀 \u{10FFFF} 中文';
      const body = Buffer.from(`${writeCall('Multi-byte')}${content}"}}}`, 'utf8');
      const answer = await post('/alignbase/mcp', body, { ...MCP_HEADERS, authorization: `Bearer ${token}` });
      assert.equal(answer.status, 200, JSON.stringify(answer.json));
      assert.notEqual((answer.json as { result: { isError?: boolean } }).result.isError, true, JSON.stringify(answer.json));
      const [row] = await store.db.query<{ content: string }>(
        `SELECT v.content FROM context_versions v JOIN context_resources r ON r.tenant_id = v.tenant_id AND r.id = v.resource_id WHERE r.name = 'Multi-byte'`,
      );
      assert.equal(row?.content, `ab${content}`);
    });

    it('refuses it alike on every MCP endpoint and on the anonymous one', async () => {
      const { body, offset } = bodyWith('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{"x":"', [0xff], '"}}}');
      const refusal = { jsonrpc: '2.0', id: null, error: { code: -32700, message: `Parse error: ${reason(offset, '0xff')}`, data: { offset } } };
      for (const path of ['/mcp', '/alignbase/mcp', '/atmina/mcp', '/brain/mcp']) {
        const answer = await post(path, body, { ...MCP_HEADERS, authorization: `Bearer ${token}` });
        assert.deepEqual(answer, { status: 400, json: refusal }, path);
      }
      const anonymous = bodyWith('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":"', [0xe2, 0x82], '"}}}');
      assert.deepEqual(await post('/atmina/public/bytes/mcp', anonymous.body, MCP_HEADERS), {
        status: 400,
        json: {
          jsonrpc: '2.0',
          id: null,
          error: { code: -32700, message: `Parse error: ${reason(anonymous.offset, '0xe2')}`, data: { offset: anonymous.offset } },
        },
      });
    });

    it('refuses it in an OAuth registration and token request, registering nothing', async () => {
      const [before] = await store.db.query<{ n: number }>('SELECT count(*)::int AS n FROM oauth_clients');
      const registration = bodyWith('{"redirect_uris":["http://127.0.0.1:9/cb"],"client_name":"', [0xed, 0xa0, 0x80], '"}');
      assert.deepEqual(await post('/oauth/register', registration.body, { 'content-type': 'application/json' }), {
        status: 400,
        json: { error: 'invalid_client_metadata', error_description: reason(registration.offset, '0xed') },
      });
      const [afterwards] = await store.db.query<{ n: number }>('SELECT count(*)::int AS n FROM oauth_clients');
      assert.equal(afterwards?.n, before?.n);
      const form = bodyWith('grant_type=authorization_code&client_id=', [0xc0, 0xaf], '');
      assert.deepEqual(await post('/oauth/token', form.body, { 'content-type': 'application/x-www-form-urlencoded' }), {
        status: 400,
        json: { error: 'invalid_request', error_description: reason(form.offset, '0xc0') },
      });
    });

    it('refuses it on the admin endpoint before the operation runs', async () => {
      const headers = { 'content-type': 'application/json', authorization: `Bearer ${SECRET}` };
      const { body, offset } = bodyWith(
        '{"op":"token.create","args":{"tenant":"bytes","principal":"writer-bot","scopes":"context.read","label":"',
        [0xff],
        '"}}',
      );
      const [before] = await store.db.query<{ n: number }>('SELECT count(*)::int AS n FROM tokens');
      const answer = await post('/admin/rpc', body, headers);
      assert.equal(answer.status, 400);
      assert.deepEqual((answer.json as { error: { code: string; message: string } }).error, { code: 'validation', message: reason(offset, '0xff') });
      const [afterwards] = await store.db.query<{ n: number }>('SELECT count(*)::int AS n FROM tokens');
      assert.equal(afterwards?.n, before?.n);
      const valid = await post('/admin/rpc', Buffer.from('{"op":"token.list","args":{"tenant":"bytes"}}'), headers);
      assert.equal(valid.status, 200, JSON.stringify(valid.json));
    });
  });
}
