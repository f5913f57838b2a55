import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { storeBackends } from '../support/stores.ts';
import type { Agent } from './support.ts';
import { SKILL_MD, Suite, b64, backendLabel, createKnowledge, createSkill, grant, route, snapshot } from './support.ts';

type Created = { knowledge_id: string; version_id: string };

for (const backend of storeBackends()) {
  describe(`Alignbase tenant isolation on ${backendLabel(backend)}`, () => {
    let suite: Suite;
    let acme: Agent;
    let globex: Agent;
    before(async () => {
      suite = await Suite.open(backend, { globex: true });
      acme = await suite.agent('admin-bot');
      globex = await suite.agent('globex-bot', 'context.read context.write', 'globex');
    });
    after(async () => {
      await suite?.close();
    });

    it('answers not found for another tenant’s ids and shows nothing of it in lists or the session context', async () => {
      const title = suite.unique('Acme secret');
      const skillName = suite.unique('acme-secret');
      const knowledge = await createKnowledge(acme, title, { content: 'ACME-ONLY knowledge' });
      await acme.ok('publish_knowledge', { knowledge_id: knowledge.knowledge_id });
      const skill = await createSkill(acme, skillName, { attachments: [{ path: 'secret.md', data_base64: b64('ACME-ONLY file') }] });
      await acme.ok('publish_skill', { skill_id: skill.skill_id });
      const draft = await acme.ok<{ draft_id: string }>('create_knowledge_draft', {
        knowledge_id: knowledge.knowledge_id,
        base_version: 1,
        content: 'ACME-ONLY draft',
      });
      const skillDraft = await acme.ok<{ draft_id: string }>('create_skill_draft', {
        skill_id: skill.skill_id,
        base_version: 1,
        skill_md: SKILL_MD(skillName, 'ACME-ONLY draft'),
      });
      // Routed to everyone in acme who could be mistaken for the caller.
      await suite.access({
        routes: [route(`knowledge:${title}`, 'routed-bot'), route(`skill:${skillName}`, 'routed-bot')],
        grants: [grant('group:fleet', `knowledge:${title}`, 'owner')],
      });

      const before = await snapshot(suite.db, suite.tenantId);
      const kid = knowledge.knowledge_id;
      const sid = skill.skill_id;
      const cases: [string, Record<string, unknown>, string][] = [
        ['read_knowledge', { knowledge_id: kid }, 'Knowledge not found'],
        ['read_knowledge', { knowledge_id: kid, version: 'published' }, 'Knowledge not found'],
        ['read_knowledge', { knowledge_id: kid, version: 1 }, 'Knowledge not found'],
        ['write_knowledge', { knowledge_id: kid, expected_version: 1, content: 'globex was here' }, 'Knowledge not found'],
        ['write_knowledge', { knowledge_id: kid, expected_version: 1, content: 'globex was here', publish: true }, 'Knowledge not found'],
        ['publish_knowledge', { knowledge_id: kid }, 'Knowledge not found'],
        ['create_knowledge_draft', { knowledge_id: kid, base_version: 1, content: 'x' }, 'Knowledge not found'],
        ['list_knowledge_drafts', { knowledge_id: kid }, 'Knowledge not found'],
        ['read_knowledge_draft', { draft_id: draft.draft_id }, 'draft not found'],
        ['read_skill', { skill_id: sid }, 'skill not found'],
        ['read_skill', { skill_id: sid, version: 'published' }, 'skill not found'],
        ['write_skill', { skill_id: sid, expected_version: 1, skill_md: SKILL_MD(skillName) }, 'skill not found'],
        ['publish_skill', { skill_id: sid, version: 1 }, 'skill not found'],
        ['create_skill_draft', { skill_id: sid, base_version: 1, skill_md: SKILL_MD(skillName) }, 'skill not found'],
        ['list_skill_drafts', { skill_id: sid }, 'skill not found'],
        ['read_skill_draft', { draft_id: skillDraft.draft_id }, 'draft not found'],
        ['read_context_attachment', { context_type: 'skill', context_id: sid, version: 1, path: 'secret.md' }, 'skill not found'],
        ['read_context_attachment', { context_type: 'knowledge', context_id: kid, version: 1, path: 'secret.md' }, 'Knowledge not found'],
      ];
      for (const [tool, args, text] of cases) assert.equal(await globex.fail(tool, args), text, `globex ${tool}`);
      assert.deepEqual(await snapshot(suite.db, suite.tenantId), before);

      assert.deepEqual(await globex.ok('list_knowledge'), { knowledge: [] });
      assert.deepEqual(await globex.ok('list_skills'), { skills: [] });
      const context = await globex.context();
      assert.ok(!context.includes('ACME-ONLY') && !context.includes(kid) && !context.includes(skillName));
      assert.ok(context.includes('No Knowledge is routed to this agent.') && context.includes('No Skills are routed to this agent.'));
    });

    it('keeps each tenant’s names and content to itself', async () => {
      // The same Skill name and Knowledge title in both tenants.
      const skillName = suite.unique('shared-name');
      const title = suite.unique('Shared title');
      const acmeSkill = await createSkill(acme, skillName);
      const globexSkill = await globex.ok<{ skill_id: string; name: string }>('create_skill', { skill_md: SKILL_MD(skillName, 'Globex words.') });
      assert.notEqual(globexSkill.skill_id, acmeSkill.skill_id);
      assert.equal(globexSkill.name, skillName);
      const acmeKnowledge = await createKnowledge(acme, title, { content: 'Acme words.' });
      const globexKnowledge = await globex.ok<Created>('write_knowledge', { title, expected_version: 0, content: 'Globex words.', publish: true });

      const globexList = await globex.ok<{ knowledge: { knowledge_id: string; title: string }[] }>('list_knowledge');
      assert.deepEqual(
        globexList.knowledge.map((k) => k.knowledge_id),
        [globexKnowledge.knowledge_id],
      );
      const globexSkills = await globex.ok<{ skills: { id: string; description: string }[] }>('list_skills');
      assert.deepEqual(
        globexSkills.skills.map((s) => ({ id: s.id, description: s.description })),
        [{ id: globexSkill.skill_id, description: 'Globex words.' }],
      );
      // And the other way round.
      for (const name of ['admin-bot', 'viewer-bot', 'routed-bot']) {
        const agent = await suite.agent(name);
        assert.equal(await agent.fail('read_knowledge', { knowledge_id: globexKnowledge.knowledge_id, version: 'published' }), 'Knowledge not found', name);
        assert.equal(await agent.fail('read_skill', { skill_id: globexSkill.skill_id }), 'skill not found', name);
        const { knowledge } = await agent.ok<{ knowledge: { knowledge_id: string }[] }>('list_knowledge');
        assert.ok(!knowledge.some((k) => k.knowledge_id === globexKnowledge.knowledge_id));
        assert.ok(!(await agent.context()).includes('Globex words.'));
      }
      assert.equal((await acme.ok<{ content: string }>('read_knowledge', { knowledge_id: acmeKnowledge.knowledge_id })).content, 'Acme words.');
    });
  });
}
