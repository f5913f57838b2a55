import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Gateway } from '../../src/app.ts';
import { createGateway } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { applyOrgFile } from '../../src/org-sections.ts';
import { cliTrail } from '../support/audit.ts';
import { ACME_ORG, seedOrg } from '../support/gateway.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';

const SECRET = 'admin-rpc-regression-secret';

// Regressions found by test/fuzz/http.fuzz.test.ts: text the store cannot hold answered 500.
for (const backend of storeBackends()) {
  describe(`POST /admin/rpc with text the store cannot hold on ${backend.name}`, () => {
    let store: TestStore;
    let gateway: Gateway;
    let dataDir: string;

    before(async () => {
      store = await backend.open({ migrated: true });
      await seedOrg(store.db, ACME_ORG);
      dataDir = await mkdtemp(path.join(os.tmpdir(), 'kgw-admin-rpc-'));
      gateway = await createGateway(loadConfig({ KGW_LOG_LEVEL: 'silent', KGW_DATA_DIR: dataDir }), { db: store.db, adminSecret: SECRET });
    });
    after(async () => {
      await gateway.close();
      await store.dispose();
      await rm(dataDir, { recursive: true, force: true });
    });

    const rpc = (op: string, args: unknown) =>
      gateway.app.inject({
        method: 'POST',
        url: '/admin/rpc',
        headers: { authorization: `Bearer ${SECRET}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ op, args }),
      });

    it('refuses a NUL or a lone surrogate in any argument with 400 validation, naming the argument', async () => {
      const cases: [string, unknown, string][] = [
        ['token.list', { tenant: 'acme\u0000' }, 'tenant'],
        ['token.create', { tenant: 'acme', principal: 'release-bot', scopes: 'context.read', label: 'x\uD800' }, 'label'],
        ['token.revoke', { id: '\u0000' }, 'id'],
        ['oauth.login-link', { tenant: 'acme', email: 'alice@acme.test\u0000' }, 'email'],
        ['inbox.list', { tenant: 'acme', agent: '\uDC00' }, 'agent'],
        ['projections.rebuild', { names: ['search', 'gr\u0000aph'] }, 'names.1'],
        ['apply', { source: 'tenant: acme\nname: "Acme"\n', env: { 'A\u0000': 'x' } }, 'env.A\u0000'],
        ['tenant.show', { tenant: 'ac\uD800me' }, 'tenant'],
        ['context.resources', { tenant: 'acme', after: '\u0000' }, 'after'],
        ['context.file', { tenant: 'acme', resource_id: 'x', version: 1, path: 'a\u0000' }, 'path'],
      ];
      for (const [op, args, where] of cases) {
        const response = await rpc(op, args);
        assert.equal(response.statusCode, 400, `${op}: ${response.body}`);
        const { error } = response.json<{ error: { code: string; message: string } }>();
        assert.equal(error.code, 'validation');
        assert.equal(error.message, `bad arguments for ${op}: ${where} must not contain NUL (U+0000) or a lone surrogate`);
      }
      // The endpoint keeps working.
      const tokens = await rpc('token.list', { tenant: 'acme' });
      assert.equal(tokens.statusCode, 200, tokens.body);
    });

    it('shows a tenant by slug, and answers an unknown one or bad arguments without a 5xx', async () => {
      const shown = await rpc('tenant.show', { tenant: 'acme' });
      assert.equal(shown.statusCode, 200, shown.body);
      assert.deepEqual(shown.json(), { result: { tenant: 'acme', name: 'Acme Inc.', language: 'en' } });
      const unknown = await rpc('tenant.show', { tenant: 'nope' });
      assert.equal(unknown.statusCode, 404, unknown.body);
      const extra = await rpc('tenant.show', { tenant: 'acme', as: 'x' });
      assert.equal(extra.statusCode, 400, extra.body);
      const huge = await rpc('tenant.show', { tenant: 'a'.repeat(100_000) });
      assert.equal(huge.statusCode, 404, huge.body);
    });

    it('bounds context.resources and context.file, and answers what is not there with 404, never a 5xx', async () => {
      for (const [limit, problem] of [
        [0, 'limit must be at least 1'],
        [201, 'limit must be at most 200'],
        [1.5, 'limit must be a whole number'],
      ] as const) {
        const response = await rpc('context.resources', { tenant: 'acme', limit });
        assert.equal(response.statusCode, 400, response.body);
        assert.deepEqual(response.json(), { error: { code: 'validation', message: `bad arguments for context.resources: ${problem}` } });
      }
      const page = await rpc('context.resources', { tenant: 'acme', limit: 1 });
      assert.equal(page.statusCode, 200, page.body);
      const badAfter = await rpc('context.resources', { tenant: 'acme', after: 'not-an-id' });
      assert.equal(badAfter.statusCode, 400, badAfter.body);
      assert.equal((await rpc('context.resources', { tenant: 'nope' })).statusCode, 404);
      for (const args of [
        { tenant: 'acme', resource_id: 'not-an-id', version: 1, path: 'x' },
        { tenant: 'acme', resource_id: '00000000-0000-0000-0000-000000000000', version: 1, path: 'x' },
        { tenant: 'nope', resource_id: '00000000-0000-0000-0000-000000000000', version: 1, path: 'x' },
      ]) {
        const response = await rpc('context.file', args);
        assert.equal(response.statusCode, 404, response.body);
      }
      assert.equal((await rpc('context.file', { tenant: 'acme', resource_id: 'x', version: 0, path: 'x' })).statusCode, 400);
    });

    it('bounds kb.files and kb.import, pages a KB, refuses a bad batch or path item by item, and answers an unknown KB with 404', async () => {
      for (const [limit, problem] of [
        [0, 'limit must be at least 1'],
        [1001, 'limit must be at most 1000'],
        [1.5, 'limit must be a whole number'],
      ] as const) {
        const response = await rpc('kb.files', { tenant: 'acme', kb: 'handbook', limit });
        assert.equal(response.statusCode, 400, response.body);
        assert.deepEqual(response.json(), { error: { code: 'validation', message: `bad arguments for kb.files: ${problem}` } });
      }
      // A KB of five files, read two at a time: every file once, in byte order, each with its version.
      const files = ['b.md', 'a/z.md', 'Z.md', 'a.md', 'ä.md'].map((name) => ({ path: name, data_base64: Buffer.from(`# ${name}\n`).toString('base64') }));
      await applyOrgFile(
        store.db,
        {
          source: `tenant: acme\nname: Acme Inc.\nkbs:\n  - { slug: paged, name: Paged, team: docs, files_from: notes }\n`,
          files: { notes: { folder: files } },
          blob: gateway.services.blob,
        },
        cliTrail(store.db),
      );
      const seen: string[] = [];
      let after: string | undefined;
      do {
        const page = await rpc('kb.files', { tenant: 'acme', kb: 'paged', limit: 2, ...(after === undefined ? {} : { after }) });
        assert.equal(page.statusCode, 200, page.body);
        const body = page.json<{ result: { files: { path: string; versions: { version: number }[] }[]; next: string | null } }>().result;
        assert.ok(body.files.length <= 2);
        for (const file of body.files) {
          assert.deepEqual(
            file.versions.map((v) => v.version),
            [1],
          );
          seen.push(file.path);
        }
        after = body.next ?? undefined;
      } while (after !== undefined);
      assert.deepEqual(seen, ['Z.md', 'a.md', 'a/z.md', 'b.md', 'ä.md']);
      // kb.import: a batch is bounded, its bytes are base64, and a person imports.
      const one = { path: 'x.md', data_base64: Buffer.from('x').toString('base64') };
      for (const [args, problem] of [
        [{ files: Array.from({ length: 201 }, () => one) }, 'files must hold at most 200 items'],
        [{ files: [{ path: 'x.md', data_base64: 'not base64!' }] }, 'files.0.data_base64 must be base64'],
      ] as const) {
        const response = await rpc('kb.import', { tenant: 'acme', kb: 'paged', as: 'alice@acme.test', ...args });
        assert.equal(response.statusCode, 400, response.body);
        assert.deepEqual(response.json(), { error: { code: 'validation', message: `bad arguments for kb.import: ${problem}` } });
      }
      const asAgent = await rpc('kb.import', { tenant: 'acme', kb: 'paged', as: 'release-bot', files: [one] });
      assert.equal(asAgent.statusCode, 400, asAgent.body);
      const bad = await rpc('kb.import', {
        tenant: 'acme',
        kb: 'paged',
        as: 'alice@acme.test',
        files: [{ path: '../x.md', data_base64: one.data_base64 }, one],
      });
      assert.equal(bad.statusCode, 200, bad.body);
      const result = bad.json<{ result: { files: ({ path: string; error: string } | { path: string; outcome: string })[] } }>().result;
      assert.deepEqual(
        result.files.map((file) => ('error' in file ? ['refused', file.path] : [file.outcome, file.path])),
        [
          ['refused', '../x.md'],
          ['created', 'x.md'],
        ],
      );
      const unknown = await rpc('kb.files', { tenant: 'acme', kb: 'nothing' });
      assert.equal(unknown.statusCode, 404, unknown.body);
      assert.deepEqual(unknown.json(), { error: { code: 'not_found', message: 'no Knowledge Base "nothing" in tenant "acme"' } });
    });
  });
}
