import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { KB_TEXT_MAX_BYTES } from '../../src/atmina/kb/files.ts';
import { issueToken } from '../support/gateway.ts';
import { storeBackends } from '../support/stores.ts';
import type { KbWire, ReadWire } from '../atmina/support.ts';
import { KbSuite, backendLabel } from '../atmina/support.ts';
import { fuzzRuns, fuzzSeed } from './harness.ts';

/*
 * The attacks issue 35 found, as properties that keep them fixed: patch lists that grow a file
 * past its bound, confirmations of uploads never PUT (another tenant's bytes by their SHA-256),
 * content that starts with a byte order mark, large documents for the indexers, and many large
 * bodies of one token at once. Every answer is a deliberate one, never an internal error.
 */

const RUNS = fuzzRuns(25);
const SEED = fuzzSeed();
const sha = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');
const ALLOWED_FAILURES = /^(validation|conflict|payload_too_large|not_found): /;

async function check<T extends unknown[]>(property: fc.IAsyncPropertyWithHooks<T>, runs = RUNS): Promise<void> {
  const details = await fc.check(property, { numRuns: runs, seed: SEED, endOnFailure: true });
  if (details.failed) assert.fail(`seed ${details.seed} path ${details.counterexamplePath}: ${String(details.errorInstance)}`);
}

for (const backend of storeBackends()) {
  describe(`attacks on ${backendLabel(backend)}`, { timeout: 600_000 }, () => {
    let suite: KbSuite;
    let kb: KbWire;
    before(async () => {
      suite = await KbSuite.open(backend, {}, { projections: true });
      kb = await suite.kb();
    });
    after(async () => {
      await suite?.close();
    });
    const editor = () => suite.agent('editor-bot');
    const healthy = async () => assert.equal((await fetch(`${suite.running.url}/healthz`)).status, 200);

    it('answers any patch list within the file bound, or payload_too_large, never past it', async () => {
      const edit = fc.record(
        {
          find: fc.constantFrom('a', 'ab', 'b', 'aa'),
          replace: fc.oneof(
            fc.constantFrom('', 'aa', 'aaaa', 'ba'),
            fc.integer({ min: 1, max: 4000 }).map((n) => 'a'.repeat(n)),
          ),
          occurrence: fc.constantFrom<'all' | 1 | undefined>('all', 1, undefined),
        },
        { requiredKeys: ['find', 'replace'] },
      );
      await check(
        fc.asyncProperty(fc.integer({ min: 1, max: 64 * 1024 }), fc.array(edit, { minLength: 1, maxLength: 50 }), async (size, patch) => {
          const path = `patch/${randomUUID()}.md`;
          await suite.file(kb.kb_id, path, 'ab'.repeat(size).slice(0, size));
          const result = await (await editor()).call('write_file', { kb_id: kb.kb_id, path, mode: 'patch', patch });
          const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
          if (result.isError === true) assert.match(text, ALLOWED_FAILURES, text.slice(0, 300));
          const read = await (await editor()).ok<ReadWire>('read_file', { kb_id: kb.kb_id, path });
          assert.ok(read.size_bytes <= KB_TEXT_MAX_BYTES);
        }),
      );
      await healthy();
    });

    it('never confirms bytes a batch did not PUT, whoever holds them', async () => {
      const globex = await suite.agent('globex-bot', 'context.read context.write', 'globex');
      const theirs = await globex.ok<KbWire>('create_kb', { name: suite.unique('Secrets'), team: 'ops' });
      await check(
        fc.asyncProperty(fc.string({ minLength: 1, maxLength: 2000 }), fc.constantFrom('txt', 'md', 'png', 'pdf', 'bin'), async (text, extension) => {
          const secret = `${text} ${randomUUID()}`;
          await globex.ok('write_file', { kb_id: theirs.kb_id, path: `${randomUUID()}.md`, mode: 'create', content: secret });
          const path = `stolen/${randomUUID()}.${extension}`;
          const bytes = Buffer.from(secret, 'utf8');
          const batch = await (
            await editor()
          ).ok<{ batch_token: string }>('request_uploads', { kb_id: kb.kb_id, items: [{ path, size_bytes: bytes.length, sha256: sha(bytes) }] });
          const confirmed = await (
            await editor()
          ).ok<{ results: { ok: boolean; error?: string }[] }>('confirm_uploads', { kb_id: kb.kb_id, batch_token: batch.batch_token });
          assert.equal(confirmed.results[0]?.ok, false);
          assert.match(confirmed.results[0]?.error ?? '', /nothing was uploaded/);
          const read = await (await editor()).call('read_file', { kb_id: kb.kb_id, path });
          assert.equal(read.isError, true);
        }),
      );
    });

    it('keeps content that starts with a byte order mark byte for byte', async () => {
      const text = fc.string({ unit: 'grapheme', maxLength: 300 }).filter((s) => !s.includes('\u0000'));
      await check(
        fc.asyncProperty(text, async (body) => {
          const content = `\ufeff${body}`;
          const path = `bom/${randomUUID()}.md`;
          await (await editor()).ok('write_file', { kb_id: kb.kb_id, path, mode: 'create', content });
          const read = await (await editor()).ok<ReadWire>('read_file', { kb_id: kb.kb_id, path });
          assert.equal(read.content, content);
          assert.equal(read.sha256, sha(content));
        }),
      );
    });

    it('indexes large documents of many words, links, references or tags, and answers meanwhile', async () => {
      const kind = fc.constantFrom('words', 'links', 'references', 'tags');
      await check(
        fc.asyncProperty(kind, fc.integer({ min: 200_000, max: 900_000 }), async (what, chars) => {
          let text = what === 'tags' ? '---\ntags:\n' : '';
          for (let i = 0; text.length < chars; i++) {
            if (what === 'words') text += `w${i.toString(36)}q `;
            else if (what === 'links') text += `[l${i}](doc${i}.md)\n`;
            else if (what === 'references') text += `[r${i}]: https://example.test/${i}\n`;
            else text += `  - tag${i}\n`;
          }
          if (what === 'tags') text += '---\nbody\n';
          const path = `heavy/${randomUUID()}.md`;
          await (await editor()).ok('write_file', { kb_id: kb.kb_id, path, mode: 'create', content: text.slice(0, KB_TEXT_MAX_BYTES) });
          await healthy();
          await suite.settled();
        }),
        Math.min(RUNS, 4),
      );
      await healthy();
    });

    it('answers many large bodies of one token at once with 200, 429 or 503, never a 5xx of its own', async () => {
      const token = await issueToken(suite.db, 'acme', 'editor-bot', 'context.read');
      await check(
        fc.asyncProperty(fc.integer({ min: 4, max: 24 }), fc.integer({ min: 1, max: 15 }), async (count, megabytes) => {
          const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { _meta: { pad: 'x'.repeat(megabytes * 1024 * 1024) } } });
          const statuses = await Promise.all(
            Array.from({ length: count }, async () => {
              const response = await fetch(`${suite.running.url}/atmina/mcp`, {
                method: 'POST',
                headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` },
                body,
              }).catch(() => undefined);
              await response?.arrayBuffer().catch(() => undefined);
              return response?.status ?? 0;
            }),
          );
          for (const status of statuses) assert.ok([0, 200, 429, 503].includes(status), `status ${status}`);
          assert.ok(statuses.includes(200));
          await healthy();
        }),
        Math.min(RUNS, 6),
      );
    });
  });
}
