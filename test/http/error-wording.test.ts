import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { issueLines, issuesText } from '../../src/kernel/zod-issues.ts';
import type { SeededGateway } from '../support/gateway.ts';
import { ACME_ORG, connectClient, startSeededGateway } from '../support/gateway.ts';
import { storeBackends } from '../support/stores.ts';

// Refusals read as one clear sentence each: the 401 of every endpoint, and arguments that fail
// a tool's schema, worded per field (no zod `Too small: expected string to have >=3
// characters`, no field named twice, no `1 characters`, no list said as a string).

const linesOf = (schema: z.ZodType, value: unknown): string[] => {
  const parsed = schema.safeParse(value);
  assert.equal(parsed.success, false);
  return issueLines(parsed.success ? [] : parsed.error.issues, 'labelled');
};

describe('issueLines', () => {
  it('words sizes in the field’s terms, singular and plural, lists as items', () => {
    const schema = z.object({
      title: z.string().min(3).max(5),
      name: z.string().min(1),
      tags: z.array(z.string()).min(1).max(2),
      limit: z.number().int().min(1).max(500),
      code: z.string().length(4),
    });
    assert.deepEqual(linesOf(schema, { title: 'ab', name: '', tags: [], limit: 0, code: 'abc' }), [
      'title: must be at least 3 characters',
      'name: must not be empty',
      'tags: must hold at least 1 item',
      'limit: must be at least 1',
      'code: must be exactly 4 characters',
    ]);
    assert.deepEqual(linesOf(schema, { title: 'abcdef', name: 'x', tags: ['a', 'b', 'c'], limit: 501, code: 'abcd' }), [
      'title: must be at most 5 characters',
      'tags: must hold at most 2 items',
      'limit: must be at most 500',
    ]);
    assert.deepEqual(linesOf(z.object({ one: z.string().max(1), list: z.array(z.number()).max(1) }), { one: 'ab', list: [1, 2] }), [
      'one: must be at most 1 character',
      'list: must hold at most 1 item',
    ]);
  });

  it('tells a field that fails several checks once, and never names the field twice', () => {
    const title = z
      .string()
      .min(3)
      .refine((v) => [...v].length >= 3, 'title must be at least 3 characters');
    assert.deepEqual(linesOf(z.object({ title }), { title: 'ab' }), ['title: must be at least 3 characters']);
    const named = z.object({ subject: z.string().refine((v) => !v.includes('\n'), 'subject must be one line') });
    assert.deepEqual(linesOf(named, { subject: 'a\nb' }), ['subject: must be one line']);
    // Other texts stay as they are; the admin operations' style writes the path before the sentence.
    assert.deepEqual(linesOf(z.object({ n: z.number() }), { n: 'x' }), ['n: Invalid input: expected number, received string']);
    const parsed = z.object({ names: z.array(z.string().min(1)) }).safeParse({ names: ['a', ''] });
    assert.equal(issuesText(parsed.success ? [] : parsed.error.issues, 'phrase'), 'names.1 must not be empty');
  });
});

for (const backend of storeBackends()) {
  describe(`Refusal texts through the MCP client on ${backend.name}`, () => {
    let seeded: SeededGateway;
    let client: Client;
    before(async () => {
      seeded = await startSeededGateway(backend, ACME_ORG);
      client = await connectClient(`${seeded.running.url}/mcp`, seeded.token);
    });
    after(async () => {
      await client?.close();
      await seeded?.close();
    });

    const refusal = async (name: string, args: Record<string, unknown>): Promise<string> => {
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
      assert.equal(result.isError, true, JSON.stringify(result.content));
      const first = result.content[0];
      return first?.type === 'text' ? first.text : '';
    };

    it('answers each dialect’s tool with too short or too long strings and lists in one sentence per field', async () => {
      const body = 'An observation long enough.';
      const cases: [string, Record<string, unknown>, string][] = [
        ['write_inbox', { kind: 'observation', title: 'ab', body }, 'Invalid input: title: must be at least 3 characters'],
        ['write_inbox', { kind: 'observation', title: 'x'.repeat(121), body }, 'Invalid input: title: must be at most 120 characters'],
        [
          'write_inbox',
          { kind: 'observation', title: 'Title', body, relatedNodeIds: Array(11).fill('n') },
          'Invalid input: relatedNodeIds: must hold at most 10 items',
        ],
        ['write_inbox', { kind: 'observation', title: 'Title', body, relatedNodeIds: [''] }, 'Invalid input: relatedNodeIds.0: must not be empty'],
        [
          'propose_draft_email',
          { to: Array.from({ length: 11 }, (_, i) => `person${i}@example.com`), subject: 'Hello', bodyText: 'Hi.' },
          'Invalid input: to: must hold at most 10 items',
        ],
        [
          'propose_draft_email',
          { to: [], subject: '', bodyText: '' },
          'Invalid input: to: must hold at least 1 item; subject: must not be empty; bodyText: must not be empty',
        ],
        ['propose_onboarding_action', { action: 'add_node', summary: 'ab', details: {} }, 'Invalid input: summary: must be at least 3 characters'],
        ['query_index', { query: 'a' }, 'Invalid input: query: must be at least 2 characters'],
        ['write_files', { kb_id: 'kb', items: [] }, 'validation: items: must hold at least 1 item'],
        ['list_files', { kb_id: 'kb', limit: 0 }, 'validation: limit: must be at least 1'],
        ['list_files', { kb_id: 'kb', limit: 501 }, 'validation: limit: must be at most 500'],
        [
          'report_installation_capabilities',
          { integration: 'test', transport: 'stdio', capabilities: Array(51).fill('skills') },
          'invalid arguments: capabilities: must hold at most 50 items',
        ],
      ];
      for (const [name, args, text] of cases) assert.equal(await refusal(name, args), text, `${name} ${JSON.stringify(args).slice(0, 80)}`);
    });

    it('answers a missing or unknown token on each endpoint with its sentence', async () => {
      const texts: Record<string, string> = {
        '/mcp': 'Unauthorized: the request is missing a valid Knowledge Gateway token.',
        '/brain/mcp': 'Unauthorized: the request is missing a valid Company Brain token.',
        '/alignbase/mcp': 'Unauthorized: a valid bearer token is required',
        '/atmina/mcp': 'Unauthorized: a valid bearer token is required',
      };
      for (const [path, text] of Object.entries(texts)) {
        for (const authorization of [undefined, 'Bearer kgw_not-a-real-token']) {
          const response = await fetch(`${seeded.running.url}${path}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(authorization ? { authorization } : {}) },
            body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
          });
          assert.equal(response.status, 401, path);
          assert.deepEqual(
            await response.json(),
            { jsonrpc: '2.0', error: { code: -32001, message: text }, id: null },
            `${path} ${authorization ?? 'no token'}`,
          );
        }
      }
    });
  });
}
