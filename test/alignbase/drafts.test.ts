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
      assert.partialDeepStrictEqual(read, { version: 1, latest_version: 1, content: 'published text' });
      const context = await (await suite.agent('routed-bot', 'context.read')).context();
      assert.ok(context.includes('published text'));
      assert.ok(!context.includes('DRAFT'));

      // Listed for Viewers, oldest first.
      const { drafts } = await viewer.ok<{ drafts: Draft[] }>('list_knowledge_drafts', { knowledge_id: id });
      for (const draft of drafts) assertShape('list_knowledge_drafts item', draft, KNOWLEDGE_DRAFT_ITEM);
      /** What both drafts share: proposer-bot's, for its owner Alice, on version 1. */
      const byProposer = {
        knowledge_id: id,
        base_version: 1,
        current_version: 1,
        is_stale: false,
        author_name: 'Alice',
        author_email: 'alice@acme.test',
        agent_name: 'proposer-bot',
        created_by_this_agent: false,
      };
      assert.deepEqual(
        drafts.map((d) => ({
          draft_id: d.draft_id,
          knowledge_id: d.knowledge_id,
          base_version: d.base_version,
          current_version: d.current_version,
          is_stale: d.is_stale,
          author_name: d.author_name,
          author_email: d.author_email,
          agent_name: d.agent_name,
          rationale: d.rationale,
          created_by_this_agent: d.created_by_this_agent,
        })),
        [
          { draft_id: first.draft_id, ...byProposer, rationale: 'Clearer wording' },
          { draft_id: second.draft_id, ...byProposer, rationale: null },
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
      assert.partialDeepStrictEqual(stale, {
        draft_id: first.draft_id,
        knowledge_id: id,
        base_version: 1,
        current_version: 2,
        is_stale: true,
        content: 'DRAFT ONE text',
        rationale: 'Clearer wording',
        created_by_this_agent: true,
        agent_name: 'proposer-bot',
      });
      const third = await proposer.ok<Created>('create_knowledge_draft', { knowledge_id: id, base_version: 2, content: 'DRAFT THREE', rationale: '   ' });
      const listed = (await viewer.ok<{ drafts: Draft[] }>('list_knowledge_drafts', { knowledge_id: id })).drafts;
      assert.deepEqual(
        listed.map((d) => ({ draft_id: d.draft_id, is_stale: d.is_stale, current_version: d.current_version })),
        [
          { draft_id: first.draft_id, is_stale: true, current_version: 2 },
          { draft_id: second.draft_id, is_stale: true, current_version: 2 },
          { draft_id: third.draft_id, is_stale: false, current_version: 2 },
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
        assert.partialDeepStrictEqual(got, { content: 'scoped proposal', created_by_this_agent: false, agent_name: 'scoped-bot' }, reviewer);
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
      assert.partialDeepStrictEqual(drafts[0], { skill_id: skill.skill_id, base_version: 1, current_version: 2, is_stale: true, rationale: 'Sharper' });
      for (const reader of ['proposer-bot', 'publisher-bot']) {
        const got = await (await suite.agent(reader)).ok<Draft>('read_skill_draft', { draft_id: draft.draft_id });
        assertShape('read_skill_draft', got, SKILL_DRAFT_READ);
        assert.partialDeepStrictEqual(got, { skill_md: proposed, skill_id: skill.skill_id, created_by_this_agent: reader === 'proposer-bot' });
      }
      assert.equal(await (await suite.agent('editor-bot')).fail('read_skill_draft', { draft_id: draft.draft_id }), 'forbidden');
      assert.equal(await admin.fail('read_knowledge_draft', { draft_id: draft.draft_id }), 'draft not found');
      // The Skill itself did not change.
      const read = await admin.ok<{ version: number; description: string; attachments: unknown[] }>('read_skill', { skill_id: skill.skill_id });
      assert.deepEqual(
        { version: read.version, description: read.description, attachments: read.attachments.length },
        { version: 2, description: 'v2', attachments: 1 },
      );
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
        { title: row?.title, content: row?.content, authority: row?.authority, status: row?.status, attachments: row?.attachments.length },
        { title: 'A new handbook', content: '# Handbook', authority: 'must_follow', status: 'open', attachments: 1 },
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
