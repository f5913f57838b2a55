import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Agent } from './support.ts';
import { MCP_PATH, OrgGateway, backendLabel, s3GatewayEnv } from './support.ts';
import { acceptReview, showReview } from '../../src/alignbase/context/review.ts';
import { cliTrail } from '../support/audit.ts';
import { storeBackends } from '../support/stores.ts';

/**
 * Content is kept byte for byte, a leading byte order mark (U+FEFF) included: written and read
 * through the SDK's client over HTTP, on both stores (PGlite's own result decoding removed it).
 */

const ORG = `tenant: bom
name: Bom Co
people:
  - email: ann@bom.test
    name: Ann
agents:
  - name: owner
    owner: ann@bom.test
grants:
  - { to: owner, on: all_knowledge, role: owner }
  - { to: owner, on: all_memories, role: owner }
  - { to: owner, on: all_artifacts, role: owner }
`;

const BOM = '\uFEFF';

for (const backend of storeBackends()) {
  describe(`A leading U+FEFF kept byte for byte on ${backendLabel(backend)}`, () => {
    let gw: OrgGateway;
    let owner: Agent;
    before(async () => {
      gw = await OrgGateway.start(backend, [ORG], { tenant: 'bom', endpoint: MCP_PATH, env: s3GatewayEnv(backend) });
      owner = await gw.connect('owner');
    });
    after(() => gw.close());

    it('in Knowledge, as written and as read, and an equal rewrite saves nothing', async () => {
      const content = `${BOM}# Title\n\nBody ${BOM}inside`;
      const created = await owner.ok('write_knowledge', { title: 'With a mark', expected_version: 0, content });
      assert.equal((await owner.ok('read_knowledge', { knowledge_id: created.knowledge_id })).content, content);
      const again = await owner.ok('write_knowledge', { knowledge_id: created.knowledge_id, expected_version: 1, content });
      assert.equal(again.updated, false);
      const without = await owner.ok('write_knowledge', { knowledge_id: created.knowledge_id, expected_version: 1, content: content.slice(1) });
      assert.deepEqual([without.updated, without.version], [true, 2]);
      assert.equal((await owner.ok('read_knowledge', { knowledge_id: created.knowledge_id, version: 1 })).content, content);
    });

    it('in a Memory', async () => {
      const content = `${BOM}Release started.`;
      const created = await owner.ok('create_memory', { name: 'Release state', content });
      assert.equal((await owner.ok('read_memory', { memory_id: created.memory_id })).content, content);
      const same = await owner.ok('write_memory', { memory_id: created.memory_id, expected_version: 1, content });
      assert.equal(same.updated, false);
    });

    it('in an Artifact', async () => {
      const markdown = `${BOM}# Notes`;
      const created = await owner.ok('write_artifact', { expected_version: 0, name: 'Notes', markdown, source_task: `${BOM}task` });
      const read = await owner.ok('read_artifact', { artifact_id: created.artifact_id });
      assert.deepEqual([read.markdown, read.source_task], [markdown, `${BOM}task`]);
    });

    it('in a draft and a proposal, and in the Knowledge they become', async () => {
      const created = await owner.ok('write_knowledge', { title: 'Drafted', expected_version: 0, content: 'plain' });
      const content = `${BOM}drafted text`;
      const draft = await owner.ok('create_knowledge_draft', { knowledge_id: created.knowledge_id, base_version: 1, content });
      assert.equal((await owner.ok('read_knowledge_draft', { draft_id: draft.draft_id })).content, content);
      const listed = (await owner.ok('list_knowledge_drafts', { knowledge_id: created.knowledge_id })).drafts as { draft_id: string }[];
      assert.deepEqual(
        listed.map((d) => d.draft_id),
        [draft.draft_id],
      );
      assert.equal((await showReview(gw.db, { tenant: 'bom', id: String(draft.draft_id) })).content, content);
      await acceptReview(gw.db, cliTrail(gw.db), { tenant: 'bom', id: String(draft.draft_id) });
      assert.equal((await owner.ok('read_knowledge', { knowledge_id: created.knowledge_id })).content, content);

      const proposed = `${BOM}# Proposed`;
      const proposal = await owner.ok('propose_knowledge', { title: 'Proposed', content: proposed });
      assert.equal((await showReview(gw.db, { tenant: 'bom', id: String(proposal.proposal_id) })).content, proposed);
      const accepted = await acceptReview(gw.db, cliTrail(gw.db), { tenant: 'bom', id: String(proposal.proposal_id) });
      assert.equal((await owner.ok('read_knowledge', { knowledge_id: accepted.resourceId })).content, proposed);
    });
  });
}
