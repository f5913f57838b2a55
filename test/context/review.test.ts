import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DiskBlobStore } from '../../connectors/blob/disk.ts';
import type { Caller } from '../../src/core/access/caller.ts';
import type { Scope } from '../../src/core/access/scopes.ts';
import { AuditLog } from '../../src/core/audit/audit-log.ts';
import { readContextAttachment } from '../../src/core/context/attachments.ts';
import { createDraft, proposeKnowledge } from '../../src/core/context/drafts.ts';
import { readKnowledge, writeKnowledge } from '../../src/core/context/knowledge.ts';
import type { AcceptInput, ReviewItem } from '../../src/core/context/review.ts';
import { acceptReview, listReviews, rejectReview, showReview } from '../../src/core/context/review.ts';
import { createSkill, readSkill } from '../../src/core/context/skills.ts';
import { findPrincipal, requireTenant } from '../../src/core/directory/directory.ts';
import { applyOrgFile } from '../../src/core/org/apply.ts';
import { GLOBEX_KNOWLEDGE_OWNER_ORG, REVIEW_AGENTS, SKILL_MD, assertKgwError, b64, pick, rejectsWithKgwError } from '../support/fixtures.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';

const ACME = `tenant: acme
name: Acme Inc.
people:
  - { email: alice@acme.test, name: Alice Adams }
  - { email: bob@acme.test, name: Bob Brown }
${REVIEW_AGENTS}  - { to: bob@acme.test, on: all_knowledge, role: proposer }
`;

interface AuditRow {
  surface: string;
  principal_id: string | null;
  action: string;
  result: string;
  resources: unknown;
  details: unknown;
}

for (const backend of storeBackends()) {
  describe(`review of drafts and proposals on ${backend.name}`, () => {
    let store: TestStore;
    let blobDir: string;
    let blob: DiskBlobStore;
    let audit: AuditLog;
    let writer: Caller;
    let drafter: Caller;
    let hank: Caller;
    let alice: string;
    const services = () => ({ db: store.db, blob });

    async function caller(tenant: string, name: string, scopes: Scope[] = ['context.read', 'context.write']): Promise<Caller> {
      const ref = await requireTenant(store.db, tenant);
      const principal = await findPrincipal(store.db, ref.id, name);
      assert.ok(principal, name);
      return { tenant: ref, principal, scopes: new Set(scopes), tokenId: randomUUID() };
    }
    const accept = (id: string, more: Partial<AcceptInput> = {}) => acceptReview(store.db, audit, { tenant: 'acme', id, ...more });
    const knowledge = async (title: string, content: string, extra: { authority?: 'informational' | 'must_follow' } = {}) =>
      (await writeKnowledge(store.db, writer, { expected_version: 0, title, content, ...extra })).knowledge_id;
    const draftOn = async (type: 'knowledge' | 'skill', id: string, base: number, content: string, rationale?: string, by = drafter) =>
      (await createDraft(store.db, by, type, { id, base_version: base, content, rationale })).draft_id;
    const auditOf = (id: string) =>
      store.db.query<AuditRow>(
        `SELECT surface, principal_id, action, result, resources, details FROM audit_events WHERE details->>'draft_id' = $1 OR details->>'proposal_id' = $1 ORDER BY at`,
        [id],
      );

    before(async () => {
      store = await backend.open({ migrated: true });
      blobDir = await mkdtemp(path.join(os.tmpdir(), 'kgw-review-'));
      blob = new DiskBlobStore({ dataDir: blobDir, publicUrl: 'http://127.0.0.1:1' });
      audit = new AuditLog(store.db);
      await applyOrgFile(store.db, { source: ACME });
      await applyOrgFile(store.db, { source: GLOBEX_KNOWLEDGE_OWNER_ORG });
      writer = await caller('acme', 'writer-bot');
      drafter = await caller('acme', 'draft-bot');
      hank = await caller('globex', 'globex-bot');
      alice = (await caller('acme', 'alice@acme.test')).principal.id;
    });
    after(async () => {
      await store.dispose();
      await rm(blobDir, { recursive: true, force: true });
    });

    it('lists the open drafts and proposals of the tenant, oldest first, with staleness and authors', async () => {
      const handbook = await knowledge('Handbook', 'line one\nline two\n');
      const skill = await createSkill(services(), writer, { skill_md: SKILL_MD('list-check', 'Checks lists.') });
      const d1 = await draftOn('knowledge', handbook, 1, 'line one\nline 2\n', 'Numbers read better');
      const d2 = await draftOn('skill', skill.skill_id, 1, SKILL_MD('list-check', 'Checks lists better.'));
      const p1 = (await proposeKnowledge(services(), drafter, { title: 'New idea', content: 'Idea text', rationale: 'We lack it' })).proposal_id;
      const personDraft = await draftOn('knowledge', handbook, 1, 'by a person\n', undefined, await caller('acme', 'bob@acme.test'));
      // Another tenant's draft is never listed.
      const globexKnowledge = (await writeKnowledge(store.db, hank, { expected_version: 0, title: 'Handbook', content: 'globex' })).knowledge_id;
      await draftOn('knowledge', globexKnowledge, 1, 'globex draft', undefined, hank);

      await writeKnowledge(store.db, writer, { knowledge_id: handbook, expected_version: 1, content: 'line one\nline two\nline three\n' });
      const ours: string[] = [d1, d2, p1, personDraft];
      const items = (await listReviews(store.db, { tenant: 'acme' })).filter((i) => ours.includes(i.id));
      const at = (id: string): ReviewItem => {
        const item = items.find((i) => i.id === id);
        assert.ok(item, id);
        return item;
      };
      assert.deepEqual(
        items.map((i) => i.id),
        [d1, d2, p1, personDraft],
      );
      assert.deepEqual(
        { ...at(d1), created_at: '' },
        {
          id: d1,
          kind: 'draft',
          type: 'knowledge',
          resource_id: handbook,
          name: 'Handbook',
          base_version: 1,
          current_version: 2,
          is_stale: true,
          author_name: 'Bob Brown',
          author_email: 'bob@acme.test',
          agent_name: 'draft-bot',
          rationale: 'Numbers read better',
          created_at: '',
        },
      );
      assert.match(at(d1).created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      assert.partialDeepStrictEqual(at(d2), { type: 'skill', name: 'list-check', base_version: 1, current_version: 1, is_stale: false });
      assert.partialDeepStrictEqual(at(p1), {
        kind: 'proposal',
        type: 'knowledge',
        resource_id: null,
        name: 'New idea',
        base_version: null,
        current_version: null,
        is_stale: false,
        agent_name: 'draft-bot',
        rationale: 'We lack it',
      });
      assert.partialDeepStrictEqual(at(personDraft), { author_email: 'bob@acme.test', author_name: 'Bob Brown', agent_name: null });

      const globex = await listReviews(store.db, { tenant: 'globex' });
      assert.deepEqual(
        globex.map((i) => i.name),
        ['Handbook'],
      );
      await rejectsWithKgwError(listReviews(store.db, { tenant: 'initech' }), 'not_found', 'tenant "initech" not found');
    });

    it('shows a Knowledge draft with its base version and a unified diff; a stale one against the latest too', async () => {
      const id = await knowledge('Show me', 'alpha\nbeta\ngamma\n', { authority: 'must_follow' });
      const draft = await draftOn('knowledge', id, 1, 'alpha\nBETA\ngamma\n', 'Shout');
      const shown = await showReview(store.db, { tenant: 'acme', id: draft.toUpperCase() });
      assert.equal(shown.id, draft);
      assert.equal(shown.status, 'open');
      assert.equal(shown.content, 'alpha\nBETA\ngamma\n');
      assert.equal(shown.authority, 'must_follow');
      assert.deepEqual(shown.base, { version: 1, content: 'alpha\nbeta\ngamma\n' });
      assert.equal(shown.latest, null);
      assert.equal(shown.diff, `--- Knowledge "Show me" version 1\n+++ draft ${draft}\n@@ -1,3 +1,3 @@\n alpha\n-beta\n+BETA\n gamma\n`);
      assert.equal(shown.diff_latest, null);
      assert.partialDeepStrictEqual(shown, { decided_at: null, decided_by: null, decision_note: null, result_version: null, result_resource_id: null });

      await writeKnowledge(store.db, writer, { knowledge_id: id, expected_version: 1, content: 'alpha\nbeta\ngamma\ndelta\n' });
      const stale = await showReview(store.db, { tenant: 'acme', id: draft });
      assert.equal(stale.is_stale, true);
      assert.deepEqual(stale.latest, { version: 2, content: 'alpha\nbeta\ngamma\ndelta\n' });
      assert.equal(stale.diff, shown.diff);
      assert.equal(stale.diff_latest, `--- Knowledge "Show me" version 2\n+++ draft ${draft}\n@@ -1,4 +1,3 @@\n alpha\n-beta\n+BETA\n gamma\n-delta\n`);
    });

    it('accepts a Knowledge draft as a new version keeping the authority; --publish publishes it; audited with the reviewer', async () => {
      const id = await knowledge('Accept me', 'first\n', { authority: 'must_follow' });
      const draft = await draftOn('knowledge', id, 1, 'second\n');
      const result = await accept(draft, { as: 'Alice@Acme.test', publish: true });
      assert.deepEqual(
        { ...result, version_id: '', decided_at: '' },
        {
          id: draft,
          kind: 'draft',
          type: 'knowledge',
          resource_id: id,
          name: 'Accept me',
          status: 'accepted',
          base_version: 1,
          previous_version: 1,
          version: 2,
          version_id: '',
          saved: true,
          published: true,
          forced: false,
          decided_at: '',
          decided_by: 'alice@acme.test',
        },
      );
      const read = await readKnowledge(store.db, writer, { knowledge_id: id, version: 'published' });
      assert.partialDeepStrictEqual(read, { version: 2, content: 'second\n', authority: 'must_follow', version_id: result.version_id });
      const [version] = await store.db.query<{ created_by: string }>('SELECT created_by FROM context_versions WHERE resource_id = $1 AND version = 2', [id]);
      assert.equal(version?.created_by, drafter.principal.id, 'the version is the drafting agent’s');

      const [row] = await store.db.query<{ status: string; decided_by: string; result_version: number; decided_at: Date }>(
        'SELECT status, decided_by, result_version, decided_at FROM context_drafts WHERE id = $1',
        [draft],
      );
      assert.deepEqual(
        { status: row?.status, decided_by: row?.decided_by, result_version: Number(row?.result_version) },
        { status: 'accepted', decided_by: alice, result_version: 2 },
      );
      const shown = await showReview(store.db, { tenant: 'acme', id: draft });
      assert.partialDeepStrictEqual(shown, { status: 'accepted', decided_by: 'alice@acme.test', result_version: 2, is_stale: false, latest: null });

      const events = await auditOf(draft);
      const accepted = events.find((e) => e.action === 'review.accept');
      assert.ok(accepted, 'a review.accept event');
      assert.deepEqual(
        { ...accepted, resources: accepted.resources },
        {
          surface: 'cli',
          principal_id: alice,
          action: 'review.accept',
          result: 'ok',
          resources: [{ type: 'knowledge', id, before_version: 1, after_version: 2, version_id: result.version_id, changed: true }],
          details: { kind: 'draft', draft_id: draft, base_version: 1, published: true, forced: false },
        },
      );
    });

    it('accepts a draft equal to the latest version without saving one; decided_by NULL is the CLI operator', async () => {
      const id = await knowledge('Same', 'same text');
      const draft = await draftOn('knowledge', id, 1, 'same text');
      const result = await accept(draft);
      assert.partialDeepStrictEqual(result, { saved: false, version: 1, previous_version: 1, decided_by: null, published: false });
      const [row] = await store.db.query<{ decided_by: string | null; result_version: number }>(
        'SELECT decided_by, result_version FROM context_drafts WHERE id = $1',
        [draft],
      );
      assert.deepEqual({ decided_by: row?.decided_by, result_version: Number(row?.result_version) }, { decided_by: null, result_version: 1 });
      const [event] = await auditOf(draft).then((rows) => rows.filter((r) => r.action === 'review.accept'));
      assert.equal(event?.principal_id, null);
    });

    it('accepts a Skill draft keeping the latest attachments, with the new name and description', async () => {
      const skill = await createSkill(services(), writer, {
        skill_md: SKILL_MD('old-name', 'Old description.'),
        attachments: [
          { path: 'scripts/run.sh', data_base64: b64('#!/bin/sh\necho run\n') },
          { path: 'notes.md', data_base64: b64('# Notes\n') },
        ],
      });
      const draft = await draftOn('skill', skill.skill_id, 1, SKILL_MD('new-name', 'New description.', 'Better steps.'));
      const shown = await showReview(store.db, { tenant: 'acme', id: draft });
      assert.deepEqual(
        shown.attachments.map((a) => a.path),
        ['notes.md', 'scripts/run.sh'],
      );
      assert.equal(shown.authority, null);
      assert.equal(
        shown.diff,
        `--- Skill "old-name" version 1\n+++ draft ${draft}\n@@ -1,6 +1,6 @@\n ---\n-name: old-name\n-description: Old description.\n+name: new-name\n+description: New description.\n ---\n \n-Follow these steps.\n+Better steps.\n`,
      );

      const result = await accept(draft, { as: 'bob@acme.test' });
      assert.partialDeepStrictEqual(result, { type: 'skill', name: 'new-name', version: 2, saved: true, published: false });
      const read = await readSkill(services(), writer, { skill_id: skill.skill_id });
      assert.partialDeepStrictEqual(read, {
        name: 'new-name',
        description: 'New description.',
        version: 2,
        skill_md: SKILL_MD('new-name', 'New description.', 'Better steps.'),
      });
      assert.deepEqual(
        read.attachments.map((a) => pick(a, ['path', 'size'])),
        [
          { path: 'notes.md', size: 8 },
          { path: 'scripts/run.sh', size: 19 },
        ],
      );
      const chunk = await readContextAttachment(services(), writer, { context_type: 'skill', context_id: skill.skill_id, version: 2, path: 'scripts/run.sh' });
      assert.equal(Buffer.from(chunk.data_base64, 'base64').toString('utf8'), '#!/bin/sh\necho run\n');
    });

    it('refuses a Skill draft renaming to a taken name, changing nothing', async () => {
      await createSkill(services(), writer, { skill_md: SKILL_MD('taken-name', 'Taken.') });
      const skill = await createSkill(services(), writer, { skill_md: SKILL_MD('free-name', 'Free.') });
      const draft = await draftOn('skill', skill.skill_id, 1, SKILL_MD('taken-name', 'Free.'));
      await rejectsWithKgwError(accept(draft), 'validation', 'invalid skill package: a skill named "taken-name" already exists');
      const shown = await showReview(store.db, { tenant: 'acme', id: draft });
      assert.partialDeepStrictEqual(shown, { status: 'open', current_version: 1, name: 'free-name' });
    });

    it('accepts a proposal: creates the Knowledge with its authority and files, created by the proposing agent', async () => {
      const proposal = (
        await proposeKnowledge(services(), drafter, {
          title: 'Proposed policy',
          content: '# Policy\n\nDo it.',
          rationale: 'Missing',
          authority: 'must_follow',
          attachments: [{ path: 'data/table.csv', data_base64: b64('a,b\n1,2\n') }],
        })
      ).proposal_id;
      const shown = await showReview(store.db, { tenant: 'acme', id: proposal });
      assert.partialDeepStrictEqual(shown, { kind: 'proposal', content: '# Policy\n\nDo it.', authority: 'must_follow', base: null, diff: null });
      assert.deepEqual(shown.attachments, [{ path: 'data/table.csv', media_type: 'text/csv', size: 8, digest_encoding: 'text' }]);

      const result = await accept(proposal, { publish: true });
      assert.partialDeepStrictEqual(result, { kind: 'proposal', name: 'Proposed policy', version: 1, previous_version: null, published: true, saved: true });
      const read = await readKnowledge(store.db, drafter, { knowledge_id: result.resource_id, version: 'published' });
      assert.partialDeepStrictEqual(read, { title: 'Proposed policy', content: '# Policy\n\nDo it.', authority: 'must_follow', version: 1 });
      const chunk = await readContextAttachment(services(), drafter, {
        context_type: 'knowledge',
        context_id: result.resource_id,
        version: 1,
        path: 'data/table.csv',
      });
      assert.equal(Buffer.from(chunk.data_base64, 'base64').toString('utf8'), 'a,b\n1,2\n');
      const [resource] = await store.db.query<{ created_by: string }>('SELECT created_by FROM context_resources WHERE id = $1', [result.resource_id]);
      assert.equal(resource?.created_by, drafter.principal.id);
      const [row] = await store.db.query<{ status: string; resource_id: string }>('SELECT status, resource_id FROM context_proposals WHERE id = $1', [
        proposal,
      ]);
      assert.partialDeepStrictEqual(row, { status: 'accepted', resource_id: result.resource_id });
      const after = await showReview(store.db, { tenant: 'acme', id: proposal });
      assert.partialDeepStrictEqual(after, { status: 'accepted', result_resource_id: result.resource_id, resource_id: null });

      const [event] = (await auditOf(proposal)).filter((e) => e.action === 'review.accept');
      assert.deepEqual(event?.resources, [
        { type: 'knowledge', id: result.resource_id, before_version: null, after_version: 1, version_id: result.version_id, changed: true },
      ]);
      assert.deepEqual(event?.details, { kind: 'proposal', proposal_id: proposal, published: true });
    });

    it('refuses a stale draft naming both versions unless forced', async () => {
      const id = await knowledge('Moving', 'v1');
      const draft = await draftOn('knowledge', id, 1, 'draft on v1');
      await writeKnowledge(store.db, writer, { knowledge_id: id, expected_version: 1, content: 'v2' });
      await writeKnowledge(store.db, writer, { knowledge_id: id, expected_version: 2, content: 'v3' });
      await rejectsWithKgwError(
        accept(draft),
        'conflict',
        `draft ${draft} is stale: it was written on version 1 of the Knowledge "Moving", which is now at version 3; accepting it would replace version 3 (review it and accept with --force to do so)`,
      );
      assert.equal((await showReview(store.db, { tenant: 'acme', id: draft })).status, 'open');
      const forced = await accept(draft, { force: true });
      assert.partialDeepStrictEqual(forced, { version: 4, previous_version: 3, base_version: 1, forced: true, saved: true });
      assert.equal((await readKnowledge(store.db, writer, { knowledge_id: id })).content, 'draft on v1');
      const [event] = (await auditOf(draft)).filter((e) => e.action === 'review.accept');
      assert.deepEqual(event?.details, { kind: 'draft', draft_id: draft, base_version: 1, published: false, forced: true });
    });

    it('rejects with a note; a decided item cannot be decided again', async () => {
      const id = await knowledge('Reject me', 'v1');
      const draft = await draftOn('knowledge', id, 1, 'bad idea');
      const proposal = (await proposeKnowledge(services(), drafter, { title: 'Nope', content: 'no' })).proposal_id;

      const rejected = await rejectReview(store.db, audit, { tenant: 'acme', id: draft, as: 'bob@acme.test', note: 'Not accurate' });
      assert.deepEqual(
        { ...rejected, decided_at: '' },
        {
          id: draft,
          kind: 'draft',
          type: 'knowledge',
          resource_id: id,
          name: 'Reject me',
          status: 'rejected',
          note: 'Not accurate',
          decided_at: '',
          decided_by: 'bob@acme.test',
        },
      );
      const shown = await showReview(store.db, { tenant: 'acme', id: draft });
      assert.partialDeepStrictEqual(shown, { status: 'rejected', decision_note: 'Not accurate', decided_by: 'bob@acme.test' });
      assert.equal((await readKnowledge(store.db, writer, { knowledge_id: id })).latest_version, 1, 'nothing saved');
      assert.ok(!(await listReviews(store.db, { tenant: 'acme' })).some((i) => i.id === draft), 'no longer listed');

      const noNote = await rejectReview(store.db, audit, { tenant: 'acme', id: proposal, note: '  ' });
      assert.partialDeepStrictEqual(noNote, { kind: 'proposal', note: null, decided_by: null, resource_id: null });

      await rejectsWithKgwError(accept(draft), 'conflict', /^draft .* was already rejected at \d{4}-.*Z; only open drafts and proposals can be decided$/);
      await rejectsWithKgwError(rejectReview(store.db, audit, { tenant: 'acme', id: proposal }), 'conflict', /^proposal .* was already rejected at /);
      const once = await draftOn('knowledge', id, 1, 'good idea');
      await accept(once);
      await rejectsWithKgwError(accept(once), 'conflict', /^draft .* was already accepted at /);
      await rejectsWithKgwError(rejectReview(store.db, audit, { tenant: 'acme', id: once }), 'conflict', /was already accepted/);

      const bob = (await caller('acme', 'bob@acme.test')).principal.id;
      assert.deepEqual(
        (await auditOf(draft)).map((e) => pick(e, ['action', 'surface', 'result', 'principal_id', 'resources', 'details'])),
        [
          {
            action: 'review.reject',
            surface: 'cli',
            result: 'ok',
            principal_id: bob,
            resources: [{ type: 'knowledge', id, version: 1 }],
            details: { kind: 'draft', draft_id: draft },
          },
        ],
      );
      assert.deepEqual(
        (await auditOf(proposal)).map((e) => pick(e, ['action', 'resources', 'details'])),
        [{ action: 'review.reject', resources: [], details: { kind: 'proposal', proposal_id: proposal } }],
      );
    });

    it('of two concurrent accepts of one draft exactly one wins; of two drafts on one base the second is stale', async () => {
      const id = await knowledge('Race', 'v1');
      const draft = await draftOn('knowledge', id, 1, 'racing');
      const outcomes = await Promise.allSettled([accept(draft), accept(draft), rejectReview(store.db, audit, { tenant: 'acme', id: draft })]);
      const won = outcomes.filter((o) => o.status === 'fulfilled');
      assert.equal(won.length, 1, 'exactly one decision');
      for (const lost of outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected')) {
        assertKgwError(lost.reason, 'conflict');
        assert.match((lost.reason as Error).message, /was already (accepted|rejected)/);
      }
      const versions = await store.db.query('SELECT version FROM context_versions WHERE resource_id = $1', [id]);
      assert.equal(versions.length, (won[0] as PromiseFulfilledResult<{ status: string }>).value.status === 'accepted' ? 2 : 1);
      assert.equal((await auditOf(draft)).filter((e) => e.action.startsWith('review.')).length, 1, 'one decision audited');

      const proposal = (await proposeKnowledge(services(), drafter, { title: 'Race proposal', content: 'x' })).proposal_id;
      const proposed = await Promise.allSettled([accept(proposal), accept(proposal)]);
      assert.equal(proposed.filter((o) => o.status === 'fulfilled').length, 1);
      const created = await store.db.query("SELECT id FROM context_resources WHERE type = 'knowledge' AND name = 'Race proposal'");
      assert.equal(created.length, 1, 'one Knowledge created');

      const other = await knowledge('Race two', 'v1');
      const a = await draftOn('knowledge', other, 1, 'first');
      const b = await draftOn('knowledge', other, 1, 'second');
      const both = await Promise.allSettled([accept(a), accept(b)]);
      const ok = both.filter((o) => o.status === 'fulfilled');
      assert.equal(ok.length, 1, 'the second is stale once the first is saved');
      const lost = both.find((o): o is PromiseRejectedResult => o.status === 'rejected');
      assert.match((lost?.reason as Error).message, /is stale: it was written on version 1 of the Knowledge "Race two", which is now at version 2/);
      const loser = ok[0] === both[0] ? b : a;
      const forced = await accept(loser, { force: true });
      assert.equal(forced.version, 3);
    });

    it('refuses unknown ids, another tenant’s ids, unknown reviewers and long notes', async () => {
      const globexKnowledge = (await writeKnowledge(store.db, hank, { expected_version: 0, title: 'Theirs', content: 'globex' })).knowledge_id;
      const theirs = await draftOn('knowledge', globexKnowledge, 1, 'their draft', undefined, hank);
      const id = await knowledge('Mine', 'v1');
      const mine = await draftOn('knowledge', id, 1, 'my draft');
      const unknown = randomUUID();
      for (const [what, wanted] of [
        [unknown, unknown],
        ['not-an-id', 'not-an-id'],
        [theirs, theirs],
      ] as const) {
        const message = `no draft or proposal "${wanted}" in tenant "acme"`;
        await rejectsWithKgwError(showReview(store.db, { tenant: 'acme', id: what }), 'not_found', message);
        await rejectsWithKgwError(accept(what), 'not_found', message);
        await rejectsWithKgwError(rejectReview(store.db, audit, { tenant: 'acme', id: what }), 'not_found', message);
      }
      assert.equal((await showReview(store.db, { tenant: 'globex', id: theirs })).status, 'open', 'untouched in its own tenant');
      await rejectsWithKgwError(accept(mine, { as: 'carol@acme.test' }), 'not_found', 'no person "carol@acme.test" in tenant "acme"');
      await rejectsWithKgwError(accept(mine, { as: 'hank@globex.test' }), 'not_found', 'no person "hank@globex.test" in tenant "acme"');
      await rejectsWithKgwError(accept(mine, { as: 'draft-bot' }), 'validation', 'the reviewer must be a person, named by email: "draft-bot"');
      await rejectsWithKgwError(
        rejectReview(store.db, audit, { tenant: 'acme', id: mine, note: 'x'.repeat(2001) }),
        'validation',
        'note cannot exceed 2000 characters',
      );
      await rejectsWithKgwError(accept(mine, { tenant: 'initech' }), 'not_found', 'tenant "initech" not found');
      assert.equal((await showReview(store.db, { tenant: 'acme', id: mine })).status, 'open');
      assert.deepEqual(await auditOf(mine).then((rows) => rows.filter((r) => r.action.startsWith('review.'))), []);
    });
  });
}
