import assert from 'node:assert/strict';
import { chmod } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CliStore, Served } from './support.ts';
import { ORG, ROOT, cliStoreBackends, kgw, openPeers, writeIn } from './support.ts';

/**
 * kgw import mcp --sign-in and kgw export mcp --sign-in: instead of a token, the command signs
 * in at the other gateway as a desktop client does: the SDK's OAuth client registers itself,
 * the authorization page opens in "the browser" (KGW_BROWSER: a script that signs in with a
 * password and approves on the consent page over HTTP, as a person would), and the code comes
 * back to the command's loopback listener with the PKCE verifier checked by the server.
 */

const PASSWORD = 'correct horse battery staple';

for (const backend of cliStoreBackends()) {
  describe(`kgw import/export mcp --sign-in on ${backend.name}`, () => {
    let sourceStore: CliStore;
    let source: Served;
    let sourceClient: Client;
    let store: CliStore;
    let client: Client;
    let browser: string;
    const sourceUrl = () => `${source.url}/atmina/mcp`;
    const env = (decision = 'approve') => ({
      ...store.env,
      KGW_BROWSER: browser,
      KGW_TEST_SIGN_IN: JSON.stringify({ tenant: 'acme', email: 'alice@acme.test', password: PASSWORD, decision }),
    });
    const importing = (extra: string[], decision?: string) =>
      kgw(['import', 'mcp', '--from', sourceUrl(), '--dialect', 'atmina', '--tenant', 'acme', '--as', 'alice@acme.test', ...extra], env(decision), {
        timeoutMs: 120_000,
      });

    let peers: Awaited<ReturnType<typeof openPeers>>;
    before(async () => {
      peers = await openPeers(backend);
      ({ store: sourceStore, gateway: source, client: sourceClient } = peers.other);
      ({ store, client } = peers.local);
      const withPassword = ORG.replace('    name: Alice\n', '    name: Alice\n    password_env: ALICE_PASSWORD\n');
      const applied = await kgw(['apply', await writeIn(sourceStore.workDir, 'org.yaml', withPassword)], { ...sourceStore.env, ALICE_PASSWORD: PASSWORD });
      assert.equal(applied.code, 0, applied.stderr);
      await sourceClient.callTool({ name: 'create_kb', arguments: { name: 'Handbook', team: 'docs' } });
      await sourceClient.callTool({ name: 'write_file', arguments: { kb_id: 'handbook', path: 'README.md', mode: 'create', content: '# Handbook\n' } });
      await client.callTool({ name: 'create_kb', arguments: { name: 'Handbook', team: 'docs' } });
      browser = await writeIn(
        store.workDir,
        'browser.sh',
        `#!/bin/sh\nexec "${process.execPath}" "${path.join(ROOT, 'test/fixtures/sign-in-browser.ts')}" "$1"\n`,
      );
      await chmod(browser, 0o755);
    });
    after(async () => {
      await peers?.close();
    });

    it('imports after a sign-in in the browser: registration, PKCE, the code caught on loopback', async () => {
      const result = await importing(['--sign-in', '--kb', 'handbook', '--json']);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stderr, /^Sign in at http:\/\/127\.0\.0\.1:\d+\/oauth\/authorize\?/m);
      const report = JSON.parse(result.stdout) as { kbs: { created: number }[] };
      assert.equal(report.kbs[0]?.created, 1);
    });

    it('exports after a sign-in too', async () => {
      const result = await kgw(
        ['export', 'mcp', '--to', sourceUrl(), '--dialect', 'atmina', '--tenant', 'acme', '--kb', 'handbook', '--sign-in', '--dry-run', '--json'],
        env(),
        { timeoutMs: 120_000 },
      );
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stderr, /^Sign in at /m);
    });

    it('stops when the person declines, and refuses a token and a sign-in together', async () => {
      const declined = await importing(['--sign-in', '--kb', 'handbook'], 'deny');
      assert.equal(declined.code, 1);
      assert.match(declined.stderr, /the sign-in was not approved \(access_denied\)/);
      const both = await importing(['--sign-in', '--token', 'kgw_x']);
      assert.equal(both.code, 2);
      assert.match(both.stderr, /give either --token or --sign-in, not both/);
      const scope = await importing(['--token', 'kgw_x', '--scope', 'context.read']);
      assert.equal(scope.code, 2);
      assert.match(scope.stderr, /--scope goes with --sign-in/);
    });
  });
}
