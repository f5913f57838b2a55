import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CliStore } from './support.ts';
import { ORG, cliStoreBackends, kgw, lines, writeIn } from './support.ts';

/*
 * `kgw brain import` through the real CLI: the file's nodes and relations imported all or
 * nothing, with every problem on its line, a dry run, and an import that finds nothing to do.
 */

const BRAIN_YAML = `nodes:
  - { id: erp, type: tool, title: ERP, access: public }
  - { id: close, type: SOP / process, title: Month-end close, access: manager, mark: inferred }
relations:
  - { from: close, verb: uses, to: erp }
  - { from: "person:alice@acme.test", verb: owns, to: close }
`;

for (const backend of cliStoreBackends()) {
  describe(`kgw brain import on ${backend.name}`, () => {
    let store: CliStore;
    const brain = async (source: string, ...flags: string[]) =>
      kgw(['brain', 'import', await writeIn(store.workDir, 'brain.yaml', source), ...flags], store.env);

    before(async () => {
      store = await backend.open();
      const applied = await kgw(['apply', await writeIn(store.workDir, 'org.yaml', ORG)], store.env);
      assert.equal(applied.code, 0, applied.stderr);
    });
    after(() => store.dispose());

    it('imports a file, then finds it up to date', async () => {
      const dry = await brain(BRAIN_YAML, '--tenant', 'acme', '--dry-run');
      assert.equal(dry.code, 0, dry.stderr);
      assert.equal(lines(dry.stdout).at(-1), 'dry run: 4 changes planned for tenant acme, nothing applied');
      const first = await brain(BRAIN_YAML, '--tenant', 'acme');
      assert.equal(first.code, 0, first.stderr);
      assert.deepEqual(lines(first.stdout), [
        '+ create brain node erp (tool; access public)',
        '+ create brain node close (SOP / process; access manager; inferred)',
        '+ add brain relation close uses erp',
        '+ add brain relation person:alice@acme.test owns close',
        'applied 4 changes to tenant acme',
      ]);
      const again = await brain(BRAIN_YAML, '--tenant', 'acme');
      assert.equal(again.stdout, 'tenant acme is up to date\n');
    });

    it('refuses a file with problems, naming each line, and imports nothing of it', async () => {
      const bad =
        'nodes:\n  - { id: fine, type: tool, title: Fine, access: public }\n  - { id: worse, type: gadget, title: W, access: public }\nrelations:\n  - { from: fine, verb: uses, to: nowhere }\n';
      const result = await brain(bad, '--tenant', 'acme');
      assert.equal(result.code, 1);
      assert.match(result.stderr, /brain\.yaml:3: nodes\[1\]\.type: "gadget" is not a node type/);
      assert.match(result.stderr, /brain\.yaml:5: relations\[0\]\.to: no node "nowhere"/);
      const json = await brain('nodes:\n  - { id: fine, type: tool, title: Fine, access: public }\n', '--tenant', 'acme', '--dry-run', '--json');
      const parsed = JSON.parse(json.stdout) as { changes: { name: string }[] };
      assert.deepEqual(
        parsed.changes.map((c) => c.name),
        ['fine'],
      );
    });

    it('needs a tenant and a readable file', async () => {
      const noTenant = await brain(BRAIN_YAML);
      assert.equal(noTenant.code, 2);
      assert.match(noTenant.stderr, /needs --tenant SLUG/);
      const missing = await kgw(['brain', 'import', 'no-such-file.yaml', '--tenant', 'acme'], store.env);
      assert.match(missing.stderr, /cannot read no-such-file\.yaml: ENOENT/);
      const unknownTenant = await brain(BRAIN_YAML, '--tenant', 'nobody');
      assert.match(unknownTenant.stderr, /tenant "nobody" not found/);
    });
  });
}
