import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, rm, symlink } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { blobKey } from '../../../connectors/blob/contract.ts';
import { DiskBlobStore } from '../../../connectors/blob/disk.ts';
import type { CliStore, Served } from '../../cli/support.ts';
import { TOKEN_LINE, cliStoreBackends, kgw, lines, serve } from '../../cli/support.ts';
import { connectClient } from '../../support/gateway.ts';
import { PNG, skillMd, writeTree } from './context-support.ts';

/** `kgw apply` with knowledge and skills sections: the CLI reads file: and dir: next to the org file. */

const ORG = (tenant: string): string => `tenant: ${tenant}
name: Acme Inc.
people:
  - { email: alice@acme.test, name: Alice }
agents:
  - { name: release-bot, owner: alice@acme.test }
knowledge:
  - title: Release policy
    file: policies/release.md
    authority: must_follow
    publish: true
  - title: Greeting
    content: "Say hello."
skills:
  - dir: skills/release-check
    publish: true
grants:
  - { to: release-bot, on: "knowledge:Release policy", role: viewer }
  - { to: release-bot, on: skill:release-check, role: viewer }
routes:
  - { deliver: skill:release-check, to: release-bot }
`;

const TREE = {
  'policies/release.md': '# Release policy\n\nAlways run the release check.\n',
  'skills/release-check/SKILL.md': skillMd('release-check', 'Checks that a release is ready.'),
  'skills/release-check/scripts/check.sh': '#!/bin/sh\necho ready\n',
  'skills/release-check/assets/logo.png': PNG,
};

const CREATE_LINES = (tenant: string) => [
  `+ create tenant ${tenant}`,
  '+ create person alice@acme.test',
  '+ create agent release-bot (owner alice@acme.test)',
  '+ create knowledge Release policy (authority must_follow)',
  '~ publish knowledge Release policy (version 1)',
  '+ create knowledge Greeting',
  '+ create skill release-check (2 files besides SKILL.md)',
  '~ publish skill release-check (version 1)',
  '+ add grant release-bot (on knowledge:Release policy as viewer)',
  '+ add grant release-bot (on skill:release-check as viewer)',
  '+ add route skill:release-check (to release-bot)',
];

const sha256 = (bytes: string | Buffer): string => createHash('sha256').update(bytes).digest('hex');

/** A folder of its own for one test's org file and the files it references. */
async function orgFolder(store: CliStore, name: string): Promise<string> {
  const folder = path.join(store.workDir, name);
  await mkdir(folder, { recursive: true });
  await writeTree(folder, TREE);
  return folder;
}

for (const backend of cliStoreBackends()) {
  describe(`kgw apply with knowledge and skills on ${backend.name}`, () => {
    let store: CliStore;
    before(async () => {
      store = await backend.open();
    });
    after(() => store.dispose());

    it('reads the files next to the org file, from any working directory, and then finds the tenant up to date', async () => {
      const folder = await orgFolder(store, 'create');
      await writeTree(folder, { 'org.yaml': ORG('t-create') });
      // kgw runs in the project root: the paths are relative to the org file, not to the working directory.
      const first = await kgw(['apply', path.join(folder, 'org.yaml')], store.env);
      assert.equal(first.code, 0, first.stderr);
      assert.deepEqual(lines(first.stdout), [...CREATE_LINES('t-create'), 'applied 11 changes to tenant t-create']);
      const again = await kgw(['apply', path.join(folder, 'org.yaml')], store.env);
      assert.equal(again.code, 0, again.stderr);
      assert.equal(again.stdout, 'tenant t-create is up to date\n');

      // The Skill's files are in the blob store the CLI opened (the embedded or configured data folder).
      const blob = new DiskBlobStore({ dataDir: store.dataDir, publicUrl: 'http://127.0.0.1:1' });
      try {
        assert.ok(await blob.head(blobKey(sha256(PNG))), 'the binary attachment is stored');
      } finally {
        await blob.close();
      }

      await writeTree(folder, {
        'policies/release.md': '# Release policy\n\nAlways run the release check, twice.\n',
        'skills/release-check/scripts/check.sh': '#!/bin/sh\necho ready now\n',
      });
      const dry = await kgw(['apply', '--dry-run', path.join(folder, 'org.yaml')], store.env);
      assert.equal(dry.code, 0, dry.stderr);
      const planned = [
        '~ update knowledge Release policy (content changed; version 1 → 2)',
        '~ publish knowledge Release policy (version 1 → 2)',
        '~ update skill release-check (changed scripts/check.sh; version 1 → 2)',
        '~ publish skill release-check (version 1 → 2)',
      ];
      assert.deepEqual(lines(dry.stdout), [...planned, 'dry run: 4 changes planned for tenant t-create, nothing applied']);
      const changed = await kgw(['apply', path.join(folder, 'org.yaml')], store.env);
      assert.equal(changed.code, 0, changed.stderr);
      assert.deepEqual(lines(changed.stdout), [...planned, 'applied 4 changes to tenant t-create']);
    });

    it('refuses what it cannot read with the line of the reference, and applies nothing', async () => {
      const folder = await orgFolder(store, 'refuse');
      await symlink('../../policies/release.md', path.join(folder, 'skills/release-check/policy.md'));
      await rm(path.join(folder, 'policies/release.md'));
      await writeTree(folder, { 'org.yaml': ORG('t-refuse') });
      const run = await kgw(['apply', path.join(folder, 'org.yaml')], store.env);
      assert.equal(run.code, 1, run.stderr);
      assert.equal(run.stdout, '');
      // The grants and routes name what the file declares: those entries' own problems are all there is to say.
      assert.deepEqual(lines(run.stderr), [
        'kgw: org.yaml:9: knowledge[0].file: "policies/release.md" does not exist',
        'org.yaml:15: skills[0].dir: "skills/release-check/policy.md" is a symbolic link; the org file reads only regular files and folders',
      ]);
      await rm(path.join(folder, 'skills/release-check/policy.md'));
      await writeTree(folder, { 'policies/release.md': TREE['policies/release.md'] });
      const fixed = await kgw(['apply', path.join(folder, 'org.yaml')], store.env);
      assert.equal(fixed.code, 0, fixed.stderr);
      assert.deepEqual(lines(fixed.stdout), [...CREATE_LINES('t-refuse'), 'applied 11 changes to tenant t-refuse'], 'the refused apply left everything to do');
    });
  });
}

const embedded = cliStoreBackends().find((b) => b.name === 'embedded');
assert.ok(embedded);

describe('kgw apply with knowledge and skills while kgw serve holds the embedded data folder', () => {
  let store: CliStore;
  let gateway: Served;

  before(async () => {
    store = await embedded.open();
    gateway = await serve(store.env);
  });
  after(async () => {
    await gateway.stop();
    await store.dispose();
  });

  it('sends the referenced files through the gateway, which stores the Skill files in its own blob store', async () => {
    const folder = await orgFolder(store, 'served');
    await writeTree(folder, { 'org.yaml': ORG('acme') });
    const applied = await kgw(['apply', path.join(folder, 'org.yaml')], store.env);
    assert.equal(applied.code, 0, applied.stderr);
    assert.deepEqual(lines(applied.stdout), [...CREATE_LINES('acme'), 'applied 11 changes to tenant acme']);
    const again = await kgw(['apply', '--dry-run', path.join(folder, 'org.yaml')], store.env);
    assert.equal(again.stdout, 'tenant acme is up to date\n');

    const created = await kgw(['token', 'create', '--tenant', 'acme', '--principal', 'release-bot', '--scopes', 'context.read'], store.env);
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, TOKEN_LINE);
    const client = await connectClient(`${gateway.url}/alignbase/mcp`, created.stdout.trim());
    try {
      const call = async (name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> => {
        const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
        assert.notEqual(result.isError, true, JSON.stringify(result.content));
        return result.structuredContent as Record<string, unknown>;
      };
      const listed = (await call('list_skills', {})) as { skills: { id: string; name: string }[] };
      const skill = listed.skills.find((s) => s.name === 'release-check');
      assert.ok(skill, 'release-bot sees the Skill through its grant');
      const read = await call('read_skill', { skill_id: skill.id, version: 'published' });
      assert.equal(read.skill_md, TREE['skills/release-check/SKILL.md']);
      assert.deepEqual(
        (read.attachments as { path: string }[]).map((a) => a.path),
        ['assets/logo.png', 'scripts/check.sh'],
      );
      const chunk = await call('read_context_attachment', { context_type: 'skill', context_id: skill.id, version: 1, path: 'assets/logo.png' });
      assert.deepEqual(Buffer.from(chunk.data_base64 as string, 'base64'), PNG);
      const knowledge = (await call('list_knowledge', {})) as { knowledge: { title: string }[] };
      assert.deepEqual(
        knowledge.knowledge.map((k) => k.title),
        ['Release policy'],
      );
    } finally {
      await client.close();
    }
  });
});
