import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { storeBackends } from '../support/stores.ts';
import {
  KNOWLEDGE_DRAFT_ITEM,
  KNOWLEDGE_DRAFT_READ,
  SKILL_DRAFT_ITEM,
  SKILL_DRAFT_READ,
  SKILL_MD,
  Suite,
  UUID,
  assertScopeRefused,
  assertShape,
  b64,
  backendLabel,
  createKnowledge,
  createSkill,
  grant,
  route,
  snapshot,
} from './support.ts';

type Draft = Record<string, unknown> & { draft_id: string; base_version: number; current_version: number; is_stale: boolean };
type Created = { draft_id: string; base_version: number; created: boolean; knowledge_id?: string; skill_id?: string };

const RANDOM_ID = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';

for (const backend of storeBackends()) {
  describe(`Alignbase drafts and proposals on ${backendLabel(backend)}`, () => {
    let suite: Suite;
    before(async () => {
      suite = await Suite.open(backend);
    });
    after(async () => {
      await suite?.close();
    });

    it('proposes Knowledge drafts without saving a version or delivering them; lists and reads them with the spec’s shapes', async () => {
      const admin = await suite.agent('admin-bot');
      const proposer = await suite.agent('proposer-bot');
      const viewer = await suite.agent('viewer-bot');
      const title = suite.unique('Draftable');
      const created = await createKnowledge(admin, title, { content: 'published text' });
      const id = created.knowledge_id;
      await admin.ok('publish_knowledge', { knowledge_id: id });
      await suite.access({ routes: [route(`knowledge:${title}`, 'routed-bot')] });

      const first = await proposer.ok<Created>('create_knowledge_draft', {
        knowledge_id: id,
        base_version: 1,
        content: 'DRAFT ONE text',
        rationale: 'Clearer wording',
      });
      assertShape('create_knowledge_draft', first, { draft_id: 'uuid', knowledge_id: 'uuid', base_version: 'int', created: 'bool' });
      assert.deepEqual({ ...first, draft_id: '' }, { draft_id: '', knowledge_id: id, base_version: 1, created: true });
      const second = await proposer.ok<Created>('create_knowledge_draft', { knowledge_id: id.toUpperCase(), base_version: 1, content: 'DRAFT TWO text' });
      assert.equal(second.knowledge_id, id);

      // No version was saved, and nothing of the drafts is delivered.
      const read = await admin.ok<{ version: number; latest_version: number; content: string }>('read_knowledge', { knowledge_id: id });
      assert.deepEqual([read.version, read.latest_version, read.content], [1, 1, 'published text']);
      const context = await (await suite.agent('routed-bot', 'context.read')).context();
      assert.ok(context.includes('published text'));
      assert.ok(!context.includes('DRAFT'));

      // Listed for Viewers, oldest first.
      const { drafts } = await viewer.ok<{ drafts: Draft[] }>('list_knowledge_drafts', { knowledge_id: id });
      for (const draft of drafts) assertShape('list_knowledge_drafts item', draft, KNOWLEDGE_DRAFT_ITEM);
      assert.deepEqual(
        drafts.map((d) => [
          d.draft_id,
          d.knowledge_id,
          d.base_version,
          d.current_version,
          d.is_stale,
          d.author_name,
          d.author_email,
          d.agent_name,
          d.rationale,
          d.created_by_this_agent,
        ]),
        [
          [first.draft_id, id, 1, 1, false, 'Alice', 'alice@acme.test', 'proposer-bot', 'Clearer wording', false],
          [second.draft_id, id, 1, 1, false, 'Alice', 'alice@acme.test', 'proposer-bot', null, false],
        ],
      );
      assert.deepEqual(
        (await proposer.ok<{ drafts: Draft[] }>('list_knowledge_drafts', { knowledge_id: id })).drafts.map((d) => d.created_by_this_agent),
        [true, true],
      );

      // Stale once the Knowledge moves on.
      await admin.ok('write_knowledge', { knowledge_id: id, expected_version: 1, content: 'v2' });
      const stale = await proposer.ok<Draft>('read_knowledge_draft', { draft_id: first.draft_id });
      assertShape('read_knowledge_draft', stale, KNOWLEDGE_DRAFT_READ);
      assert.deepEqual(
        [
          stale.draft_id,
          stale.knowledge_id,
          stale.base_version,
          stale.current_version,
          stale.is_stale,
          stale.content,
          stale.rationale,
          stale.created_by_this_agent,
          stale.agent_name,
        ],
        [first.draft_id, id, 1, 2, true, 'DRAFT ONE text', 'Clearer wording', true, 'proposer-bot'],
      );
      const third = await proposer.ok<Created>('create_knowledge_draft', { knowledge_id: id, base_version: 2, content: 'DRAFT THREE', rationale: '   ' });
      const listed = (await viewer.ok<{ drafts: Draft[] }>('list_knowledge_drafts', { knowledge_id: id })).drafts;
      assert.deepEqual(
        listed.map((d) => [d.draft_id, d.is_stale, d.current_version]),
        [
          [first.draft_id, true, 2],
          [second.draft_id, true, 2],
          [third.draft_id, false, 2],
        ],
      );
      assert.equal(listed[2]?.rationale, null);
      // A Knowledge without drafts lists none.
      const bare = await createKnowledge(admin, suite.unique('No drafts'));
      assert.deepEqual(await viewer.ok('list_knowledge_drafts', { knowledge_id: bare.knowledge_id }), { drafts: [] });
    });

    it('lets the author and Publishers read a draft; others are refused; non-readers learn nothing', async () => {
      const admin = await suite.agent('admin-bot');
      const title = suite.unique('Review me');
      const created = await createKnowledge(admin, title);
      const id = created.knowledge_id;
      // scoped-bot: Proposer on this Knowledge only.
      await suite.access({ grants: [grant('scoped-bot', `knowledge:${title}`, 'proposer')] });
      const author = await suite.agent('scoped-bot');
      const draft = await author.ok<Created>('create_knowledge_draft', { knowledge_id: id, base_version: 1, content: 'scoped proposal' });

      assert.equal((await author.ok<Draft>('read_knowledge_draft', { draft_id: draft.draft_id })).content, 'scoped proposal');
      // The author may read with a read-only connection too.
      assert.equal(
        (await (await suite.agent('scoped-bot', 'context.read')).ok<Draft>('read_knowledge_draft', { draft_id: draft.draft_id })).content,
        'scoped proposal',
      );
      for (const reviewer of ['publisher-bot', 'admin-bot']) {
        const got = await (await suite.agent(reviewer)).ok<Draft>('read_knowledge_draft', { draft_id: draft.draft_id });
        assert.deepEqual([got.content, got.created_by_this_agent, got.agent_name], ['scoped proposal', false, 'scoped-bot'], reviewer);
      }
      for (const other of ['editor-bot', 'proposer-bot', 'viewer-bot']) {
        assert.equal(await (await suite.agent(other)).fail('read_knowledge_draft', { draft_id: draft.draft_id }), 'forbidden', other);
      }
      for (const stranger of ['outsider-bot', 'routed-bot']) {
        assert.equal(await (await suite.agent(stranger)).fail('read_knowledge_draft', { draft_id: draft.draft_id }), 'draft not found', stranger);
      }
      assert.equal(await admin.fail('read_knowledge_draft', { draft_id: RANDOM_ID }), 'draft not found');
      assert.equal(await admin.fail('read_knowledge_draft', { draft_id: 'draft-1' }), 'invalid draft_id');
      // A Knowledge draft is not a Skill draft.
      assert.equal(await admin.fail('read_skill_draft', { draft_id: draft.draft_id }), 'draft not found');
    });

    it('needs Proposer to draft and Viewer to list drafts; refuses bad input without changing anything', async () => {
      const admin = await suite.agent('admin-bot');
      const created = await createKnowledge(admin, suite.unique('Guarded'));
      const skill = await createSkill(admin, suite.unique('guarded'));
      const id = created.knowledge_id;
      const snap = await snapshot(suite.db, suite.tenantId);
      const viewer = await suite.agent('viewer-bot');
      assert.equal(await viewer.fail('create_knowledge_draft', { knowledge_id: id, base_version: 1, content: 'x' }), 'forbidden');
      assert.equal(await viewer.fail('create_skill_draft', { skill_id: skill.skill_id, base_version: 1, skill_md: SKILL_MD(skill.name) }), 'forbidden');
      const outsider = await suite.agent('outsider-bot');
      assert.equal(await outsider.fail('list_knowledge_drafts', { knowledge_id: id }), 'Knowledge not found');
      assert.equal(await outsider.fail('list_skill_drafts', { skill_id: skill.skill_id }), 'skill not found');
      assert.equal(await outsider.fail('create_knowledge_draft', { knowledge_id: id, base_version: 1, content: 'x' }), 'Knowledge not found');
      const proposer = await suite.agent('proposer-bot');
      for (const base of [0, -1, 1.5]) {
        assert.equal(await proposer.fail('create_knowledge_draft', { knowledge_id: id, base_version: base, content: 'x' }), 'base_version must be positive');
        assert.equal(
          await proposer.fail('create_skill_draft', { skill_id: skill.skill_id, base_version: base, skill_md: SKILL_MD(skill.name) }),
          'base_version must be positive',
        );
      }
      assert.equal(await proposer.fail('create_knowledge_draft', { knowledge_id: id, base_version: 2, content: 'x' }), 'Knowledge version not found');
      assert.equal(
        await proposer.fail('create_skill_draft', { skill_id: skill.skill_id, base_version: 2, skill_md: SKILL_MD(skill.name) }),
        'skill version not found',
      );
      assert.match(
        await proposer.fail('create_knowledge_draft', { knowledge_id: id, base_version: 1, content: 'x', rationale: 'r'.repeat(2001) }),
        /^rationale cannot exceed 2000 characters$/,
      );
      // Drafting is a write: a read-only connection does not even see the tool.
      await assertScopeRefused(
        (await suite.agent('proposer-bot', 'context.read')).call('create_knowledge_draft', { knowledge_id: id, base_version: 1, content: 'x' }),
      );
      assert.deepEqual(await snapshot(suite.db, suite.tenantId), snap);
    });

    it('proposes Skill drafts (SKILL.md only, validated) and lists and reads them', async () => {
      const admin = await suite.agent('admin-bot');
      const name = suite.unique('drafted-skill');
      const skill = await createSkill(admin, name, { attachments: [{ path: 'keep.md', data_base64: b64('keep') }] });
      await admin.ok('write_skill', { skill_id: skill.skill_id, expected_version: 1, skill_md: SKILL_MD(name, 'v2') });
      const proposer = await suite.agent('proposer-bot');
      const proposed = SKILL_MD(name, 'Proposed description.', 'Proposed steps.');
      const draft = await proposer.ok<Created>('create_skill_draft', { skill_id: skill.skill_id, base_version: 1, skill_md: proposed, rationale: 'Sharper' });
      assertShape('create_skill_draft', draft, { draft_id: 'uuid', skill_id: 'uuid', base_version: 'int', created: 'bool' });
      assert.deepEqual({ ...draft, draft_id: '' }, { draft_id: '', skill_id: skill.skill_id, base_version: 1, created: true });
      assert.match(draft.draft_id, UUID);

      const { drafts } = await (await suite.agent('viewer-bot')).ok<{ drafts: Draft[] }>('list_skill_drafts', { skill_id: skill.skill_id });
      assert.equal(drafts.length, 1);
      assertShape('list_skill_drafts item', drafts[0], SKILL_DRAFT_ITEM);
      assert.deepEqual(
        [drafts[0]?.skill_id, drafts[0]?.base_version, drafts[0]?.current_version, drafts[0]?.is_stale, drafts[0]?.rationale],
        [skill.skill_id, 1, 2, true, 'Sharper'],
      );
      for (const reader of ['proposer-bot', 'publisher-bot']) {
        const got = await (await suite.agent(reader)).ok<Draft>('read_skill_draft', { draft_id: draft.draft_id });
        assertShape('read_skill_draft', got, SKILL_DRAFT_READ);
        assert.deepEqual([got.skill_md, got.skill_id, got.created_by_this_agent], [proposed, skill.skill_id, reader === 'proposer-bot']);
      }
      assert.equal(await (await suite.agent('editor-bot')).fail('read_skill_draft', { draft_id: draft.draft_id }), 'forbidden');
      assert.equal(await admin.fail('read_knowledge_draft', { draft_id: draft.draft_id }), 'draft not found');
      // The Skill itself did not change.
      const read = await admin.ok<{ version: number; description: string; attachments: unknown[] }>('read_skill', { skill_id: skill.skill_id });
      assert.deepEqual([read.version, read.description, read.attachments.length], [2, 'v2', 1]);
    });

    it('proposes new Knowledge with Proposer on All Knowledge only, creating nothing', async () => {
      const admin = await suite.agent('admin-bot');
      const title = suite.unique('Scoped only');
      await createKnowledge(admin, title);
      await suite.access({ grants: [grant('scoped-bot', `knowledge:${title}`, 'owner')] });
      const before = await snapshot(suite.db, suite.tenantId);
      const listBefore = await admin.ok('list_knowledge');

      const proposer = await suite.agent('proposer-bot');
      const proposal = await proposer.ok('propose_knowledge', {
        title: '  A new handbook  ',
        content: '# Handbook',
        rationale: 'We need one',
        authority: 'must_follow',
        attachments: [{ path: 'refs/a.md', data_base64: b64('attached') }],
      });
      assertShape('propose_knowledge', proposal, { proposal_id: 'uuid', title: 'string', status: 'string', created: 'bool' });
      assert.deepEqual({ ...proposal, proposal_id: '' }, { proposal_id: '', title: 'A new handbook', status: 'open', created: true });
      assert.deepEqual(await admin.ok('list_knowledge'), listBefore);
      const [row] = await suite.db.query<{ title: string; content: string; authority: string; status: string; attachments: unknown[] }>(
        'SELECT title, content, authority, status, attachments FROM context_proposals WHERE tenant_id = $1 AND id = $2',
        [suite.tenantId, (proposal as { proposal_id: string }).proposal_id],
      );
      assert.deepEqual(
        [row?.title, row?.content, row?.authority, row?.status, row?.attachments.length],
        ['A new handbook', '# Handbook', 'must_follow', 'open', 1],
      );
      const after = (await snapshot(suite.db, suite.tenantId)) as { resources: unknown[]; versions: unknown[] };
      assert.deepEqual(after.resources, (before as { resources: unknown[] }).resources);
      assert.deepEqual(after.versions, (before as { versions: unknown[] }).versions);

      const snap = await snapshot(suite.db, suite.tenantId);
      // Owner of one Knowledge is not Proposer on All Knowledge; neither is a Viewer.
      assert.equal(await (await suite.agent('scoped-bot')).fail('propose_knowledge', { title: 'Nope', content: 'x' }), 'forbidden');
      assert.equal(await (await suite.agent('viewer-bot')).fail('propose_knowledge', { title: 'Nope', content: 'x' }), 'forbidden');
      assert.equal(await proposer.fail('propose_knowledge', { title: ' ', content: 'x' }), 'title required');
      assert.equal(await proposer.fail('propose_knowledge', { title: 't'.repeat(201), content: 'x' }), 'title too long');
      assert.equal(await proposer.fail('propose_knowledge', { title: 'Empty', content: '' }), 'content is required');
      assert.match(
        await proposer.fail('propose_knowledge', { title: 'Bad file', content: 'x', attachments: [{ path: '../x', data_base64: b64('x') }] }),
        /^invalid attachments: attachments\[0\]\.path "\.\.\/x" must not contain \.\.$/,
      );
      assert.deepEqual(await snapshot(suite.db, suite.tenantId), snap);
    });
  });
}
