import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CONFLICT, retryOnConflict } from '../../src/kernel/retry.ts';
import { storeBackends } from '../support/stores.ts';
import type { Agent } from './support.ts';
import { SKILL_MD, Suite, backendLabel, createKnowledge, createSkill } from './support.ts';

const WRITERS = 20;
const KNOWLEDGE_CONFLICT = 'version conflict: read the Knowledge again before writing';
const SKILL_CONFLICT = 'version conflict: read the skill again before writing';

type Written = { version: number; version_id: string; updated: boolean };

/** Each writer retries as a client should (src/kernel/retry.ts), bounded well above what twenty writers need. */
const RETRIES = { attempts: 10 * WRITERS };

for (const backend of storeBackends()) {
  describe(`Alignbase concurrent writers on ${backendLabel(backend)}`, () => {
    let suite: Suite;
    let writers: Agent[];
    before(async () => {
      suite = await Suite.open(backend);
      // Twenty connections with their own tokens: editor-bot's and publisher-bot's.
      writers = await Promise.all(Array.from({ length: WRITERS }, (_, n) => suite.connect(n % 2 === 0 ? 'editor-bot' : 'publisher-bot')));
    });
    after(async () => {
      await suite?.close();
    });

    /** Runs one write per writer at once; returns each writer's result (structured or error text). */
    async function race(write: (agent: Agent, n: number) => Promise<{ isError?: boolean; structuredContent?: unknown; content: unknown[] }>) {
      const results = await Promise.all(writers.map((agent, n) => write(agent, n)));
      return results.map((result, n) => ({
        n,
        ok: result.isError !== true,
        value: result.structuredContent as Written | undefined,
        text: (result.content[0] as { text?: string } | undefined)?.text ?? '',
      }));
    }

    it(`lets exactly one of ${WRITERS} writers of one Knowledge version win; the others get the conflict text`, async () => {
      const admin = await suite.agent('admin-bot');
      const created = await createKnowledge(admin, suite.unique('Contended'));
      const id = created.knowledge_id;
      let latest = 1;
      let winners = 0;
      for (let round = 0; round < 3; round++) {
        const results = await race((agent, n) =>
          agent.call('write_knowledge', { knowledge_id: id, expected_version: latest, content: `round ${round} by writer ${n}` }),
        );
        const won = results.filter((r) => r.ok);
        assert.equal(won.length, 1, `round ${round}: exactly one winner, got ${won.length}`);
        for (const lost of results.filter((r) => !r.ok)) assert.equal(lost.text, KNOWLEDGE_CONFLICT);
        const winner = won[0];
        assert.ok(winner?.value);
        assert.partialDeepStrictEqual(winner.value, { version: latest + 1, updated: true });
        winners += 1;
        latest += 1;
        // No lost update: the latest is the winner's.
        const read = await admin.ok<{ version: number; version_id: string; content: string }>('read_knowledge', { knowledge_id: id });
        assert.partialDeepStrictEqual(read, { version: latest, version_id: winner.value.version_id, content: `round ${round} by writer ${winner.n}` });
      }
      const { knowledge } = await admin.ok<{ knowledge: { knowledge_id: string; latest_version: number }[] }>('list_knowledge');
      assert.equal(knowledge.find((k) => k.knowledge_id === id)?.latest_version, 1 + winners);
      const [versions] = await suite.db.query<{ n: number }>('SELECT count(*)::int AS n FROM context_versions WHERE tenant_id = $1 AND resource_id = $2', [
        suite.tenantId,
        id,
      ]);
      assert.equal(versions?.n, 1 + winners);
    });

    it(`loses no update when ${WRITERS} Knowledge writers retry after conflicts: every write is one version, in a linear history`, async () => {
      const admin = await suite.agent('admin-bot');
      const created = await createKnowledge(admin, suite.unique('Retried'));
      const id = created.knowledge_id;
      const saved = await Promise.all(
        writers.map((agent, n) =>
          retryOnConflict(async () => {
            const { version } = await agent.ok<{ version: number }>('read_knowledge', { knowledge_id: id, version: 'latest' });
            const result = await agent.call('write_knowledge', { knowledge_id: id, expected_version: version, content: `writer ${n}` });
            if (result.isError !== true) {
              const written = result.structuredContent as Written;
              assert.equal(written.version, version + 1);
              return written.version;
            }
            assert.equal((result.content[0] as { text: string }).text, KNOWLEDGE_CONFLICT);
            return CONFLICT;
          }, RETRIES),
        ),
      );
      assert.deepEqual(
        [...saved].sort((a, b) => a - b),
        Array.from({ length: WRITERS }, (_, n) => n + 2),
      );
      // Each version holds exactly the content of the writer that saved it.
      for (const [n, version] of saved.entries()) {
        assert.equal((await admin.ok<{ content: string }>('read_knowledge', { knowledge_id: id, version })).content, `writer ${n}`);
      }
      assert.equal((await admin.ok<{ latest_version: number }>('read_knowledge', { knowledge_id: id })).latest_version, 1 + WRITERS);
    });

    it(`lets exactly one of ${WRITERS} writers of one Skill version win; the others get the conflict text`, async () => {
      const admin = await suite.agent('admin-bot');
      const name = suite.unique('contended-skill');
      const created = await createSkill(admin, name);
      let latest = 1;
      let winners = 0;
      for (let round = 0; round < 3; round++) {
        const results = await race((agent, n) =>
          agent.call('write_skill', { skill_id: created.skill_id, expected_version: latest, skill_md: SKILL_MD(name, `Round ${round} by writer ${n}.`) }),
        );
        const won = results.filter((r) => r.ok);
        assert.equal(won.length, 1, `round ${round}: exactly one winner, got ${won.length}`);
        for (const lost of results.filter((r) => !r.ok)) assert.equal(lost.text, SKILL_CONFLICT);
        const winner = won[0];
        assert.ok(winner?.value);
        assert.partialDeepStrictEqual(winner.value, { version: latest + 1, updated: true });
        winners += 1;
        latest += 1;
        const read = await admin.ok<{ version: number; version_id: string; description: string }>('read_skill', { skill_id: created.skill_id });
        assert.partialDeepStrictEqual(read, { version: latest, version_id: winner.value.version_id, description: `Round ${round} by writer ${winner.n}.` });
      }
      const { skills } = await admin.ok<{ skills: { id: string; latest_version: number }[] }>('list_skills');
      assert.equal(skills.find((s) => s.id === created.skill_id)?.latest_version, 1 + winners);
    });

    it(`loses no update when ${WRITERS} Skill writers with files retry after conflicts`, async () => {
      const admin = await suite.agent('admin-bot');
      const name = suite.unique('retried-skill');
      const created = await createSkill(admin, name);
      const saved = await Promise.all(
        writers.map((agent, n) =>
          retryOnConflict(async () => {
            const { version } = await agent.ok<{ version: number }>('read_skill', { skill_id: created.skill_id, version: 'latest' });
            const result = await agent.call('write_skill', {
              skill_id: created.skill_id,
              expected_version: version,
              skill_md: SKILL_MD(name, `Writer ${n}.`),
              attachments: [{ path: `by/${n}.md`, data_base64: Buffer.from(`writer ${n}`).toString('base64') }],
            });
            if (result.isError !== true) return (result.structuredContent as Written).version;
            assert.equal((result.content[0] as { text: string }).text, SKILL_CONFLICT);
            return CONFLICT;
          }, RETRIES),
        ),
      );
      assert.deepEqual(
        [...saved].sort((a, b) => a - b),
        Array.from({ length: WRITERS }, (_, n) => n + 2),
      );
      for (const [n, version] of saved.entries()) {
        const read = await admin.ok<{ description: string; attachments: { path: string }[] }>('read_skill', { skill_id: created.skill_id, version });
        assert.deepEqual(
          { description: read.description, attachments: read.attachments.map((a) => a.path) },
          { description: `Writer ${n}.`, attachments: [`by/${n}.md`] },
        );
      }
    });

    it(`creates a Skill name once when ${WRITERS} agents create it at the same time`, async () => {
      const name = suite.unique('raced-name');
      const results = await race((agent) => agent.call('create_skill', { skill_md: SKILL_MD(name) }));
      assert.equal(results.filter((r) => r.ok).length, 1);
      for (const lost of results.filter((r) => !r.ok)) assert.equal(lost.text, `invalid skill package: a skill named "${name}" already exists`);
      const { skills } = await (await suite.agent('admin-bot')).ok<{ skills: { name: string }[] }>('list_skills');
      assert.equal(skills.filter((s) => s.name === name).length, 1);
    });

    it(`publishes once when ${WRITERS} publishers publish the same version at the same time`, async () => {
      const admin = await suite.agent('admin-bot');
      const created = await createKnowledge(admin, suite.unique('Raced publish'));
      const publishers = await Promise.all(Array.from({ length: WRITERS }, () => suite.connect('publisher-bot')));
      const results = await Promise.all(
        publishers.map((agent) => agent.ok<{ published: boolean; version: number }>('publish_knowledge', { knowledge_id: created.knowledge_id })),
      );
      assert.equal(results.filter((r) => r.published).length, 1);
      assert.ok(results.every((r) => r.version === 1));
      const events = await suite.db.query('SELECT 1 FROM audit_events WHERE tenant_id = $1 AND action = $2 AND resources @> $3::jsonb', [
        suite.tenantId,
        'knowledge.publish',
        JSON.stringify([{ id: created.knowledge_id }]),
      ]);
      assert.equal(events.length, 1);
    });
  });
}
