import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { CliStore, Served } from '../../cli/support.ts';
import { cliStoreBackends, kgw, lines, serve } from '../../cli/support.ts';
import { connectClient } from '../../support/gateway.ts';
import { skillMd, writeTree } from './context-support.ts';

/**
 * The org file and reviewed content, through the real CLI: Knowledge and a Skill the file
 * wrote, then changed by drafts an agent proposed over MCP and a reviewer accepted with
 * `kgw review accept`. Applying the unchanged file keeps the accepted versions latest and
 * published; a changed entry replaces them, and `kgw apply --dry-run` says so first.
 */

const TENANT = 'reviewed';
const ORG = `tenant: ${TENANT}
name: Reviewed Inc.
people:
  - { email: alice@acme.test, name: Alice }
agents:
  - { name: release-bot, owner: alice@acme.test }
knowledge:
  - title: Release checklist
    file: checklist.md
    publish: true
skills:
  - dir: skills/release-check
    publish: true
grants:
  - { to: release-bot, on: "knowledge:Release checklist", role: proposer }
  - { to: release-bot, on: skill:release-check, role: proposer }
`;

const CHECKLIST = '# Release checklist\n\n1. Run the tests.\n';
const REVIEWED = '# Release checklist\n\n1. Run the tests.\n2. Update the changelog.\n';
const SKILL = skillMd('release-check', 'Checks that a release is ready.');
const REVIEWED_SKILL = skillMd('release-check', 'Checks that a release is ready, reviewed.');

for (const backend of cliStoreBackends()) {
  describe(`kgw apply keeps reviewed Knowledge and Skills on ${backend.name}`, () => {
    let store: CliStore;
    let gateway: Served;
    let client: Client;
    let folder: string;

    const apply = (...flags: string[]) => kgw(['apply', ...flags, path.join(folder, 'org.yaml')], store.env);
    const call = async (name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> => {
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
      assert.notEqual(result.isError, true, JSON.stringify(result.content));
      return result.structuredContent as Record<string, unknown>;
    };
    const accept = async (draftId: unknown): Promise<void> => {
      const accepted = await kgw(['review', 'accept', String(draftId), '--tenant', TENANT, '--as', 'alice@acme.test', '--publish'], store.env);
      assert.equal(accepted.code, 0, accepted.stderr);
    };
    const published = async (): Promise<{ knowledge: unknown[]; skill: unknown[] }> => {
      const knowledge = (await call('list_knowledge', {})).knowledge as { knowledge_id: string }[];
      const skills = (await call('list_skills', {})).skills as { id: string }[];
      const k = await call('read_knowledge', { knowledge_id: knowledge[0]?.knowledge_id, version: 'published' });
      const s = await call('read_skill', { skill_id: skills[0]?.id, version: 'published' });
      return { knowledge: [k.version, k.content], skill: [s.version, s.skill_md] };
    };

    before(async () => {
      store = await backend.open();
      folder = path.join(store.workDir, 'org');
      await mkdir(folder, { recursive: true });
      await writeTree(folder, { 'org.yaml': ORG, 'checklist.md': CHECKLIST, 'skills/release-check/SKILL.md': SKILL });
      gateway = await serve(store.env);
    });
    after(async () => {
      await client?.close();
      await gateway?.stop();
      await store?.dispose();
    });

    it('applies the unchanged file without touching what reviewers accepted since, and says when a changed entry replaces it', async () => {
      const first = await apply();
      assert.equal(first.code, 0, first.stderr);
      assert.equal(lines(first.stdout).at(-1), `applied 9 changes to tenant ${TENANT}`);

      const token = await kgw(['token', 'create', '--tenant', TENANT, '--principal', 'release-bot', '--scopes', 'context.read context.write'], store.env);
      assert.equal(token.code, 0, token.stderr);
      client = await connectClient(`${gateway.url}/alignbase/mcp`, token.stdout.trim());
      const knowledgeId = ((await call('list_knowledge', {})).knowledge as { knowledge_id: string }[])[0]?.knowledge_id;
      const skillId = ((await call('list_skills', {})).skills as { id: string }[])[0]?.id;
      await accept((await call('create_knowledge_draft', { knowledge_id: knowledgeId, base_version: 1, content: REVIEWED })).draft_id);
      await accept((await call('create_skill_draft', { skill_id: skillId, base_version: 1, skill_md: REVIEWED_SKILL })).draft_id);
      const reviewed = { knowledge: [2, REVIEWED], skill: [2, REVIEWED_SKILL] };
      assert.deepEqual(await published(), reviewed);

      // The file says what it said when it wrote version 1: the accepted versions stay, latest and published.
      for (const flags of [['--dry-run'], []]) {
        const again = await apply(...flags);
        assert.equal(again.code, 0, again.stderr);
        assert.equal(again.stdout, `tenant ${TENANT} is up to date\n`, flags.join(' '));
      }
      assert.deepEqual(await published(), reviewed);

      // An edited entry replaces the reviewed version, and the dry run says so before anything is written.
      await writeTree(folder, { 'checklist.md': `${CHECKLIST}3. Tag the release.\n`, 'skills/release-check/notes.md': 'Notes.\n' });
      const planned = [
        '~ update knowledge Release checklist (content changed; version 2 → 3; replaces version 2, written since the last apply)',
        '~ publish knowledge Release checklist (version 2 → 3)',
        '~ update skill release-check (SKILL.md changed; added notes.md; version 2 → 3; replaces version 2, written since the last apply)',
        '~ publish skill release-check (version 2 → 3)',
      ];
      const dry = await apply('--dry-run');
      assert.equal(dry.code, 0, dry.stderr);
      assert.deepEqual(lines(dry.stdout), [...planned, `dry run: 4 changes planned for tenant ${TENANT}, nothing applied`]);
      assert.deepEqual(await published(), reviewed);
      const changed = await apply();
      assert.equal(changed.code, 0, changed.stderr);
      assert.deepEqual(lines(changed.stdout), [...planned, `applied 4 changes to tenant ${TENANT}`]);
      assert.deepEqual(await published(), { knowledge: [3, `${CHECKLIST}3. Tag the release.\n`], skill: [3, SKILL] });
      assert.equal((await apply()).stdout, `tenant ${TENANT} is up to date\n`);
    });
  });
}
