import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { issueToken } from '../support/gateway.ts';
import { storeBackends } from '../support/stores.ts';
import type { Agent } from './support.ts';
import { MCP_PATH, SKILL_MD, Suite, assertScopeRefused, backendLabel, createKnowledge, createSkill, grant, route, snapshot } from './support.ts';

type Caps = { can_read: boolean; can_draft: boolean; can_edit: boolean; can_publish: boolean };
type KnowledgeRead = Caps & { version: number; version_id: string; content: string; latest_version: number; published_version: number | null };
type SkillRead = Caps & { version: number; version_id: string; skill_md: string; latest_version: number; published_version: number | null };

const READ_TOOLS = [
  'get_current_context',
  'list_knowledge',
  'read_knowledge',
  'list_knowledge_drafts',
  'read_knowledge_draft',
  'list_skills',
  'read_skill',
  'list_skill_drafts',
  'read_skill_draft',
  'read_context_attachment',
];
const WRITE_TOOLS = [
  'write_knowledge',
  'publish_knowledge',
  'create_knowledge_draft',
  'propose_knowledge',
  'create_skill',
  'write_skill',
  'publish_skill',
  'create_skill_draft',
];

/** The four capabilities of a list item or a read, by name (and no other field). */
const caps = (c: Caps): Caps => ({ can_read: c.can_read, can_draft: c.can_draft, can_edit: c.can_edit, can_publish: c.can_publish });
/** Capabilities given in the order of the role table: read, draft, edit, publish. */
const capabilities = (can_read: boolean, can_draft: boolean, can_edit: boolean, can_publish: boolean): Caps => ({ can_read, can_draft, can_edit, can_publish });

for (const backend of storeBackends()) {
  describe(`Alignbase permission boundaries on ${backendLabel(backend)}`, () => {
    let suite: Suite;
    let admin: Agent;
    before(async () => {
      suite = await Suite.open(backend);
      admin = await suite.agent('admin-bot');
    });
    after(async () => {
      await suite?.close();
    });

    const ROLES = [
      // agent, can_read, can_draft, can_edit, can_publish
      ['viewer-bot', true, false, false, false],
      ['proposer-bot', true, true, false, false],
      ['editor-bot', true, true, true, false],
      ['publisher-bot', true, true, true, true],
    ] as const;

    it('Viewer reads, Proposer drafts, Editor saves, Publisher publishes: Knowledge', async () => {
      const created = await createKnowledge(admin, suite.unique('Role matrix'));
      const id = created.knowledge_id;
      for (const [name, read, draft, edit, publish] of ROLES) {
        const agent = await suite.agent(name);
        const { knowledge } = await agent.ok<{ knowledge: (Caps & { knowledge_id: string })[] }>('list_knowledge');
        const item = knowledge.find((k) => k.knowledge_id === id);
        assert.ok(item, name);
        assert.deepEqual(caps(item), capabilities(read, draft, edit, publish), `${name} list`);
        const current = await agent.ok<KnowledgeRead>('read_knowledge', { knowledge_id: id });
        assert.deepEqual(caps(current), capabilities(read, draft, edit, publish), `${name} read`);
        const latest = current.latest_version;

        const drafted = await agent.call('create_knowledge_draft', { knowledge_id: id, base_version: latest, content: `draft by ${name}` });
        assert.equal(drafted.isError === true, !draft, `${name} drafts`);

        // Publishing with a write needs Publisher: refused before anything is saved.
        const snap = await snapshot(suite.db, suite.tenantId);
        if (!publish) {
          assert.equal(
            await agent.fail('write_knowledge', { knowledge_id: id, expected_version: latest, content: `publish by ${name}`, publish: true }),
            'forbidden',
            `${name} write+publish`,
          );
          assert.equal(await agent.fail('publish_knowledge', { knowledge_id: id }), 'forbidden', `${name} publish`);
          assert.deepEqual(await snapshot(suite.db, suite.tenantId), snap);
        }
        if (!edit) {
          assert.equal(
            await agent.fail('write_knowledge', { knowledge_id: id, expected_version: latest, content: `by ${name}` }),
            'forbidden',
            `${name} write`,
          );
          assert.deepEqual(await snapshot(suite.db, suite.tenantId), snap);
          continue;
        }
        const written = await agent.ok<{ version: number; published: boolean }>('write_knowledge', {
          knowledge_id: id,
          expected_version: latest,
          content: `by ${name}`,
        });
        assert.partialDeepStrictEqual(written, { version: latest + 1, published: false });
        if (publish) {
          assert.equal((await agent.ok<{ published: boolean }>('publish_knowledge', { knowledge_id: id })).published, true);
          const both = await agent.ok<{ version: number; published: boolean; updated: boolean }>('write_knowledge', {
            knowledge_id: id,
            expected_version: latest + 1,
            content: `live by ${name}`,
            publish: true,
          });
          assert.partialDeepStrictEqual(both, { version: latest + 2, updated: true, published: true });
        }
      }
      const final = await admin.ok<KnowledgeRead>('read_knowledge', { knowledge_id: id, version: 'published' });
      assert.equal(final.content, 'live by publisher-bot');
    });

    it('Viewer reads, Proposer drafts, Editor saves, Publisher publishes: Skills', async () => {
      const name = suite.unique('role-matrix');
      const created = await createSkill(admin, name);
      const id = created.skill_id;
      for (const [agentName, read, draft, edit, publish] of ROLES) {
        const agent = await suite.agent(agentName);
        const { skills } = await agent.ok<{ skills: (Caps & { id: string })[] }>('list_skills');
        const item = skills.find((s) => s.id === id);
        assert.ok(item, agentName);
        assert.deepEqual(caps(item), capabilities(read, draft, edit, publish), `${agentName} list`);
        const current = await agent.ok<SkillRead>('read_skill', { skill_id: id });
        assert.deepEqual(caps(current), capabilities(read, draft, edit, publish), `${agentName} read`);
        const latest = current.latest_version;
        const drafted = await agent.call('create_skill_draft', { skill_id: id, base_version: latest, skill_md: SKILL_MD(name, `draft by ${agentName}`) });
        assert.equal(drafted.isError === true, !draft, `${agentName} drafts`);
        const snap = await snapshot(suite.db, suite.tenantId);
        if (!publish) {
          assert.equal(await agent.fail('publish_skill', { skill_id: id }), 'forbidden', `${agentName} publish`);
          assert.deepEqual(await snapshot(suite.db, suite.tenantId), snap);
        }
        if (!edit) {
          assert.equal(
            await agent.fail('write_skill', { skill_id: id, expected_version: latest, skill_md: SKILL_MD(name, `by ${agentName}`) }),
            'forbidden',
            `${agentName} write`,
          );
          // A date change is a write too.
          assert.equal(
            await agent.fail('write_skill', { skill_id: id, expected_version: latest, skill_md: current.skill_md, review_by: '2040-01-01' }),
            'forbidden',
            `${agentName} dates`,
          );
          assert.deepEqual(await snapshot(suite.db, suite.tenantId), snap);
          continue;
        }
        const written = await agent.ok<{ version: number; updated: boolean }>('write_skill', {
          skill_id: id,
          expected_version: latest,
          skill_md: SKILL_MD(name, `by ${agentName}`),
        });
        assert.partialDeepStrictEqual(written, { version: latest + 1, updated: true });
        if (publish) assert.equal((await agent.ok<{ published: boolean }>('publish_skill', { skill_id: id })).published, true);
      }
      assert.equal((await admin.ok<SkillRead>('read_skill', { skill_id: id, version: 'published' })).skill_md, SKILL_MD(name, 'by publisher-bot'));
    });

    it('creates only with Editor on All Knowledge or All Skills; creating and publishing at once needs Publisher there', async () => {
      const title = suite.unique('Scoped owner');
      const skillName = suite.unique('scoped-owner');
      await createKnowledge(admin, title);
      await createSkill(admin, skillName);
      await suite.access({ grants: [grant('scoped-bot', `knowledge:${title}`, 'owner'), grant('scoped-bot', `skill:${skillName}`, 'owner')] });
      const snap = await snapshot(suite.db, suite.tenantId);
      for (const name of ['viewer-bot', 'proposer-bot', 'scoped-bot']) {
        const agent = await suite.agent(name);
        assert.equal(await agent.fail('write_knowledge', { title: `By ${name}`, expected_version: 0, content: 'x' }), 'forbidden', name);
        assert.equal(await agent.fail('create_skill', { skill_md: SKILL_MD(suite.unique('by-agent')) }), 'forbidden', name);
      }
      const editor = await suite.agent('editor-bot');
      assert.equal(await editor.fail('write_knowledge', { title: 'Editor publishes', expected_version: 0, content: 'x', publish: true }), 'forbidden');
      assert.deepEqual(await snapshot(suite.db, suite.tenantId), snap);

      // The scoped owner uses what it holds: all capabilities on those two, nothing else listed.
      const scoped = await suite.agent('scoped-bot');
      const { knowledge } = await scoped.ok<{ knowledge: (Caps & { title: string })[] }>('list_knowledge');
      assert.deepEqual(
        knowledge.map((k) => ({ title: k.title, ...caps(k) })),
        [{ title, ...capabilities(true, true, true, true) }],
      );
      const { skills } = await scoped.ok<{ skills: (Caps & { name: string; id: string })[] }>('list_skills');
      assert.deepEqual(
        skills.map((s) => ({ name: s.name, ...caps(s) })),
        [{ name: skillName, ...capabilities(true, true, true, true) }],
      );
      assert.equal((await scoped.ok<{ published: boolean }>('publish_skill', { skill_id: skills[0]?.id })).published, true);

      const byEditor = await editor.ok<{ created: boolean; published: boolean; version: number }>('write_knowledge', {
        title: suite.unique('By editor'),
        expected_version: 0,
        content: 'x',
      });
      assert.partialDeepStrictEqual(byEditor, { created: true, published: false, version: 1 });
      const skill = await editor.ok<{ created: boolean; version: number }>('create_skill', { skill_md: SKILL_MD(suite.unique('by-editor')) });
      assert.partialDeepStrictEqual(skill, { created: true, version: 1 });
      const publisher = await suite.agent('publisher-bot');
      const live = await publisher.ok<{ knowledge_id: string; created: boolean; published: boolean }>('write_knowledge', {
        title: suite.unique('By publisher'),
        expected_version: 0,
        content: 'live',
        publish: true,
      });
      assert.partialDeepStrictEqual(live, { created: true, published: true });
      const read = await publisher.ok<{ publication_status: string; published_version: number }>('read_knowledge', {
        knowledge_id: live.knowledge_id,
        version: 'published',
      });
      assert.partialDeepStrictEqual(read, { publication_status: 'published', published_version: 1 });
    });

    it('adds roles from groups and specific grants on top of whole-type roles', async () => {
      const title = suite.unique('Group edited');
      const other = await createKnowledge(admin, suite.unique('Viewer only'));
      const created = await createKnowledge(admin, title);
      await suite.access({ grants: [grant('group:fleet', `knowledge:${title}`, 'editor'), grant('viewer-bot', `knowledge:${title}`, 'publisher')] });
      const fleet = await suite.agent('fleet-bot');
      const { knowledge } = await fleet.ok<{ knowledge: (Caps & { knowledge_id: string })[] }>('list_knowledge');
      assert.deepEqual(
        knowledge.map((k) => ({ knowledge_id: k.knowledge_id, ...caps(k) })),
        [{ knowledge_id: created.knowledge_id, ...capabilities(true, true, true, false) }],
      );
      assert.equal(
        (await fleet.ok<{ version: number }>('write_knowledge', { knowledge_id: created.knowledge_id, expected_version: 1, content: 'by the fleet' })).version,
        2,
      );
      assert.equal(await fleet.fail('publish_knowledge', { knowledge_id: created.knowledge_id }), 'forbidden');

      const viewer = await suite.agent('viewer-bot');
      assert.deepEqual(caps(await viewer.ok<KnowledgeRead>('read_knowledge', { knowledge_id: created.knowledge_id })), capabilities(true, true, true, true));
      assert.equal((await viewer.ok<{ published: boolean }>('publish_knowledge', { knowledge_id: created.knowledge_id })).published, true);
      // The whole-type Viewer stays a Viewer elsewhere.
      assert.deepEqual(caps(await viewer.ok<KnowledgeRead>('read_knowledge', { knowledge_id: other.knowledge_id })), capabilities(true, false, false, false));
      assert.equal(await viewer.fail('publish_knowledge', { knowledge_id: other.knowledge_id }), 'forbidden');
    });

    it('hides and refuses every write tool for a read-only token (HTTP 403 insufficient_scope), with can_* false', async () => {
      const created = await createKnowledge(admin, suite.unique('Read only'));
      const skill = await createSkill(admin, suite.unique('read-only'));
      const reader = await suite.agent('admin-bot', 'context.read');
      const { tools } = await reader.client.listTools();
      // (Other Alignbase tools, such as Memory's, are checked by their own suites.)
      const names = tools.map((t) => t.name);
      for (const name of READ_TOOLS) assert.ok(names.includes(name), `${name} is listed for context.read`);
      for (const name of WRITE_TOOLS) assert.ok(!names.includes(name), `${name} is hidden without context.write`);
      const { tools: all } = await admin.client.listTools();
      for (const name of [...READ_TOOLS, ...WRITE_TOOLS])
        assert.ok(
          all.some((t) => t.name === name),
          `${name} is listed for context.write`,
        );
      for (const tool of all.filter((t) => [...READ_TOOLS, ...WRITE_TOOLS].includes(t.name))) {
        assert.ok(tool.outputSchema !== undefined || tool.name === 'get_current_context', `${tool.name} has an output schema`);
      }

      const snap = await snapshot(suite.db, suite.tenantId);
      const args: Record<string, Record<string, unknown>> = {
        write_knowledge: { knowledge_id: created.knowledge_id, expected_version: 1, content: 'x' },
        publish_knowledge: { knowledge_id: created.knowledge_id },
        create_knowledge_draft: { knowledge_id: created.knowledge_id, base_version: 1, content: 'x' },
        propose_knowledge: { title: 'x', content: 'x' },
        create_skill: { skill_md: SKILL_MD('read-only-new') },
        write_skill: { skill_id: skill.skill_id, expected_version: 1, skill_md: SKILL_MD('read-only-new') },
        publish_skill: { skill_id: skill.skill_id },
        create_skill_draft: { skill_id: skill.skill_id, base_version: 1, skill_md: SKILL_MD('read-only-new') },
      };
      for (const tool of WRITE_TOOLS) await assertScopeRefused(reader.call(tool, args[tool]));
      assert.deepEqual(await snapshot(suite.db, suite.tenantId), snap);

      // On the wire: 403 with the insufficient_scope challenge naming the scope to ask for.
      const token = await issueToken(suite.db, 'acme', 'admin-bot', 'context.read');
      const response = await fetch(`${suite.running.url}${MCP_PATH}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'write_knowledge', arguments: args.write_knowledge } }),
      });
      assert.equal(response.status, 403);
      assert.match(response.headers.get('www-authenticate') ?? '', /error="insufficient_scope", scope="context\.read context\.write"/);
      assert.deepEqual(await response.json(), { jsonrpc: '2.0', id: 7, error: { code: -32003, message: 'forbidden' } });

      // The reads work, and say the connection cannot write even for an Owner.
      const { knowledge } = await reader.ok<{ knowledge: (Caps & { knowledge_id: string })[] }>('list_knowledge');
      assert.deepEqual(caps(knowledge.find((k) => k.knowledge_id === created.knowledge_id) as Caps), capabilities(true, false, false, false));
      assert.deepEqual(caps(await reader.ok<KnowledgeRead>('read_knowledge', { knowledge_id: created.knowledge_id })), capabilities(true, false, false, false));
      const { skills } = await reader.ok<{ skills: (Caps & { id: string })[] }>('list_skills');
      assert.deepEqual(caps(skills.find((s) => s.id === skill.skill_id) as Caps), capabilities(true, false, false, false));
      assert.deepEqual(caps(await reader.ok<SkillRead>('read_skill', { skill_id: skill.skill_id })), capabilities(true, false, false, false));
    });

    it('lets a route-only reader read the published version and nothing else', async () => {
      const title = suite.unique('Routed');
      const skillName = suite.unique('routed');
      const created = await createKnowledge(admin, title, { content: 'published content' });
      const id = created.knowledge_id;
      await admin.ok('publish_knowledge', { knowledge_id: id });
      await admin.ok('write_knowledge', { knowledge_id: id, expected_version: 1, content: 'unpublished latest' });
      const skill = await createSkill(admin, skillName);
      await admin.ok('publish_skill', { skill_id: skill.skill_id });
      await admin.ok('write_skill', { skill_id: skill.skill_id, expected_version: 1, skill_md: SKILL_MD(skillName, 'unpublished') });
      const unpublishedTitle = suite.unique('Routed unpublished');
      const unpublished = await createKnowledge(admin, unpublishedTitle);
      const routes = [
        route(`knowledge:${title}`, 'routed-bot'),
        route(`skill:${skillName}`, 'routed-bot'),
        route(`knowledge:${unpublishedTitle}`, 'routed-bot'),
        route(`knowledge:${title}`, 'group:fleet'),
        route(`skill:${skillName}`, 'group:fleet'),
      ];
      await suite.access({ routes });

      for (const name of ['routed-bot', 'fleet-bot']) {
        const reader = await suite.agent(name);
        const published = await reader.ok<KnowledgeRead>('read_knowledge', { knowledge_id: id, version: 'published' });
        assert.partialDeepStrictEqual(
          published,
          { version: 1, content: 'published content', latest_version: 2, published_version: 1, ...capabilities(false, false, false, false) },
          name,
        );
        // The exact number of the published version is the published version.
        assert.equal((await reader.ok<KnowledgeRead>('read_knowledge', { knowledge_id: id, version: 1 })).content, 'published content');
        for (const version of [undefined, 'latest', 2, '2']) {
          assert.equal(
            await reader.fail('read_knowledge', version === undefined ? { knowledge_id: id } : { knowledge_id: id, version }),
            'forbidden',
            `${name} ${String(version)}`,
          );
        }
        const skillRead = await reader.ok<SkillRead>('read_skill', { skill_id: skill.skill_id, version: 'published' });
        assert.partialDeepStrictEqual(skillRead, { version: 1, skill_md: SKILL_MD(skillName), ...capabilities(false, false, false, false) });
        for (const version of [undefined, 'latest', 2]) {
          assert.equal(
            await reader.fail('read_skill', version === undefined ? { skill_id: skill.skill_id } : { skill_id: skill.skill_id, version }),
            'forbidden',
          );
        }
        // Not listed, no drafts, no writes: for these a route is not access at all.
        assert.ok(!(await reader.ok<{ knowledge: { knowledge_id: string }[] }>('list_knowledge')).knowledge.some((k) => k.knowledge_id === id));
        assert.ok(!(await reader.ok<{ skills: { id: string }[] }>('list_skills')).skills.some((s) => s.id === skill.skill_id));
        assert.equal(await reader.fail('list_knowledge_drafts', { knowledge_id: id }), 'Knowledge not found');
        assert.equal(await reader.fail('create_knowledge_draft', { knowledge_id: id, base_version: 2, content: 'x' }), 'Knowledge not found');
        assert.equal(await reader.fail('write_knowledge', { knowledge_id: id, expected_version: 2, content: 'x' }), 'Knowledge not found');
        assert.equal(await reader.fail('publish_knowledge', { knowledge_id: id }), 'Knowledge not found');
        assert.equal(await reader.fail('list_skill_drafts', { skill_id: skill.skill_id }), 'skill not found');
        assert.equal(await reader.fail('write_skill', { skill_id: skill.skill_id, expected_version: 2, skill_md: SKILL_MD(skillName) }), 'skill not found');
        assert.equal(await reader.fail('publish_skill', { skill_id: skill.skill_id }), 'skill not found');
      }
      const routed = await suite.agent('routed-bot');
      assert.equal(
        await routed.fail('read_knowledge', { knowledge_id: unpublished.knowledge_id, version: 'published' }),
        'this Knowledge has no published version',
      );
      // Without the route, nothing is left.
      await suite.access({ dropRoutes: routes });
      assert.equal(await routed.fail('read_knowledge', { knowledge_id: id, version: 'published' }), 'Knowledge not found');
      assert.equal(await routed.fail('read_skill', { skill_id: skill.skill_id, version: 'published' }), 'skill not found');
    });

    it('serves the same tools, texts and checks on the combined /mcp endpoint', async () => {
      const created = await createKnowledge(admin, suite.unique('Combined'));
      const combined = await suite.connect('viewer-bot', 'context.read context.write', { path: '/mcp' });
      const { tools } = await combined.client.listTools();
      for (const name of [...READ_TOOLS, ...WRITE_TOOLS])
        assert.ok(
          tools.some((t) => t.name === name),
          name,
        );
      assert.equal((await combined.ok<KnowledgeRead>('read_knowledge', { knowledge_id: created.knowledge_id })).version, 1);
      assert.equal(await combined.fail('write_knowledge', { knowledge_id: created.knowledge_id, expected_version: 1, content: 'x' }), 'forbidden');
      assert.equal(await combined.fail('read_knowledge', { knowledge_id: 'x' }), 'invalid knowledge_id');
    });
  });
}
