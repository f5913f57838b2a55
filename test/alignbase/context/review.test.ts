import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DiskBlobStore } from '../../../connectors/blob/disk.ts';
import type { Caller } from '../../../src/kernel/access/caller.ts';
import type { Scope } from '../../../src/kernel/access/scopes.ts';
import type { AuditTrail } from '../../../src/kernel/audit/trail.ts';
import { readContextAttachment } from '../../../src/alignbase/context/attachments.ts';
import type { ProposeKnowledgeInput } from '../../../src/alignbase/context/drafts.ts';
import { createDraft, proposeKnowledge } from '../../../src/alignbase/context/drafts.ts';
import { readKnowledge, writeKnowledge } from '../../../src/alignbase/context/knowledge.ts';
import type { AttachmentInput } from '../../../src/alignbase/context/skill-package.ts';
import type { AcceptInput, AcceptResult, RejectResult, ReviewDetail, ReviewItem } from '../../../src/alignbase/context/review.ts';
import { acceptReview, listReviews, rejectReview, showReview } from '../../../src/alignbase/context/review.ts';
import { createSkill, readSkill } from '../../../src/alignbase/context/skills.ts';
import { findPrincipal, requireTenant } from '../../../src/kernel/directory/directory.ts';
import { applyOrgFile } from '../../../src/org-sections.ts';
import { callerTrail, cliTrail } from '../../support/audit.ts';
import { GLOBEX_KNOWLEDGE_OWNER_ORG, REVIEW_AGENTS, SKILL_MD, assertKgwError, b64, pick, records, rejectsWithKgwError } from '../../support/fixtures.ts';
import type { TestStore } from '../../support/stores.ts';
import { storeBackends } from '../../support/stores.ts';

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
    let audit: AuditTrail;
    let writer: Caller;
    let drafter: Caller;
    let hank: Caller;
    let alice: string;
    let bob: string;
    const services = () => ({ db: store.db, blob });

    async function caller(tenant: string, name: string, scopes: Scope[] = ['context.read', 'context.write']): Promise<Caller> {
      const ref = await requireTenant(store.db, tenant);
      const principal = await findPrincipal(store.db, ref.id, name);
      assert.ok(principal, name);
      return { tenant: ref, principal, scopes: new Set(scopes), tokenId: randomUUID() };
    }
    /** The trail of one tool call by `who`, as the gateway gives each call to the core. */
    const trail = (who: Caller) => callerTrail(store.db, who);
    const accept = (id: string, more: Partial<AcceptInput> = {}) => acceptReview(store.db, audit, { tenant: 'acme', id, ...more });
    const show = (id: string) => showReview(store.db, { tenant: 'acme', id });
    /** A new Knowledge of the writer (version 1): its id. */
    const knowledge = async (title: string, content: string, extra: { authority?: 'informational' | 'must_follow' } = {}) =>
      (await writeKnowledge(store.db, writer, { expectedVersion: 0, title, content, ...extra }, trail(writer))).id;
    /** The writer saves the next version of its Knowledge `id`. */
    const nextVersion = (id: string, expectedVersion: number, content: string) =>
      writeKnowledge(store.db, writer, { knowledgeId: id, expectedVersion, content }, trail(writer));
    /** A new Skill of the writer (version 1): its id. */
    const skill = async (skillMd: string, attachments?: readonly AttachmentInput[]) =>
      (await createSkill(services(), writer, { skillMd, attachments }, trail(writer))).id;
    const draftOn = async (type: 'knowledge' | 'skill', id: string, base: number, content: string, rationale?: string, by = drafter) =>
      (await createDraft(store.db, by, type, { resourceId: id, baseVersion: base, content, rationale }, trail(by))).draftId;
    /** A proposal of draft-bot: its id. */
    const propose = async (input: ProposeKnowledgeInput) => (await proposeKnowledge(services(), drafter, input, trail(drafter))).proposalId;
    // The review decisions on a draft or proposal (its creation is audited too, as the agent's).
    const auditOf = (id: string) =>
      store.db.query<AuditRow>(
        `SELECT surface, principal_id, action, result, resources, details FROM audit_events
          WHERE (details->>'draft_id' = $1 OR details->>'proposal_id' = $1) AND action LIKE 'review.%' ORDER BY at`,
        [id],
      );
    /** The one review.accept event of a draft or proposal. */
    async function acceptEventOf(id: string): Promise<AuditRow> {
      const events = (await auditOf(id)).filter((e) => e.action === 'review.accept');
      assert.equal(events.length, 1, `one review.accept event of ${id}`);
      const [event] = events;
      assert.ok(event);
      return event;
    }
    /** A refused decision changed nothing: the item is still open and no decision is audited. */
    async function assertUndecided(id: string): Promise<void> {
      assert.equal((await show(id)).status, 'open');
      assert.deepEqual(await auditOf(id), []);
    }

    before(async () => {
      store = await backend.open({ migrated: true });
      blobDir = await mkdtemp(path.join(os.tmpdir(), 'kgw-review-'));
      blob = new DiskBlobStore({ dataDir: blobDir, publicUrl: 'http://127.0.0.1:1' });
      audit = cliTrail(store.db);
      await applyOrgFile(store.db, { source: ACME }, audit);
      await applyOrgFile(store.db, { source: GLOBEX_KNOWLEDGE_OWNER_ORG }, audit);
      writer = await caller('acme', 'writer-bot');
      drafter = await caller('acme', 'draft-bot');
      hank = await caller('globex', 'globex-bot');
      alice = (await caller('acme', 'alice@acme.test')).principal.id;
      bob = (await caller('acme', 'bob@acme.test')).principal.id;
    });
    after(async () => {
      await store.dispose();
      await rm(blobDir, { recursive: true, force: true });
    });

    describe('the list of open drafts and proposals', () => {
      // Two agent drafts (one left stale), a proposal and a person's draft, oldest first, and a draft in globex.
      let handbook: string;
      let d1: string;
      let d2: string;
      let p1: string;
      let personDraft: string;
      let items: ReviewItem[];
      const at = (id: string): ReviewItem => {
        const item = items.find((i) => i.id === id);
        assert.ok(item, id);
        return item;
      };

      before(async () => {
        handbook = await knowledge('Handbook', 'line one\nline two\n');
        const skillId = await skill(SKILL_MD('list-check', 'Checks lists.'));
        d1 = await draftOn('knowledge', handbook, 1, 'line one\nline 2\n', 'Numbers read better');
        d2 = await draftOn('skill', skillId, 1, SKILL_MD('list-check', 'Checks lists better.'));
        p1 = await propose({ title: 'New idea', content: 'Idea text', rationale: 'We lack it' });
        personDraft = await draftOn('knowledge', handbook, 1, 'by a person\n', undefined, await caller('acme', 'bob@acme.test'));
        // Another tenant's draft is never listed.
        const globexKnowledge = (await writeKnowledge(store.db, hank, { expectedVersion: 0, title: 'Handbook', content: 'globex' }, trail(hank))).id;
        await draftOn('knowledge', globexKnowledge, 1, 'globex draft', undefined, hank);

        await nextVersion(handbook, 1, 'line one\nline two\nline three\n');
        const ours: string[] = [d1, d2, p1, personDraft];
        items = (await listReviews(store.db, { tenant: 'acme' })).filter((i) => ours.includes(i.id));
      });

      it('lists them oldest first', () => {
        assert.deepEqual(
          items.map((i) => i.id),
          [d1, d2, p1, personDraft],
        );
      });

      it('shows an agent’s stale Knowledge draft with both versions, its author and the agent', () => {
        assert.deepEqual(
          { ...at(d1), createdAt: '' },
          {
            id: d1,
            kind: 'draft',
            type: 'knowledge',
            resourceId: handbook,
            name: 'Handbook',
            baseVersion: 1,
            currentVersion: 2,
            isStale: true,
            authorName: 'Bob Brown',
            authorEmail: 'bob@acme.test',
            agentName: 'draft-bot',
            rationale: 'Numbers read better',
            createdAt: '',
          },
        );
        assert.match(at(d1).createdAt.toISOString(), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      });

      it('shows a Skill draft on the latest version as not stale', () => {
        assert.partialDeepStrictEqual(at(d2), { type: 'skill', name: 'list-check', baseVersion: 1, currentVersion: 1, isStale: false });
      });

      it('shows a proposal by its title, without a resource or versions', () => {
        assert.partialDeepStrictEqual(at(p1), {
          kind: 'proposal',
          type: 'knowledge',
          resourceId: null,
          name: 'New idea',
          baseVersion: null,
          currentVersion: null,
          isStale: false,
          agentName: 'draft-bot',
          rationale: 'We lack it',
        });
      });

      it('shows a person’s draft as theirs, without an agent', () => {
        assert.partialDeepStrictEqual(at(personDraft), { authorEmail: 'bob@acme.test', authorName: 'Bob Brown', agentName: null });
      });

      it('lists another tenant’s own drafts to it alone', async () => {
        const globex = await listReviews(store.db, { tenant: 'globex' });
        assert.deepEqual(
          globex.map((i) => i.name),
          ['Handbook'],
        );
      });

      it('refuses an unknown tenant', async () => {
        await rejectsWithKgwError(listReviews(store.db, { tenant: 'initech' }), 'not_found', 'tenant "initech" not found');
      });
    });

    it('shows an open Knowledge draft with its base version and a unified diff, undecided', async () => {
      const id = await knowledge('Show me', 'alpha\nbeta\ngamma\n', { authority: 'must_follow' });
      const draft = await draftOn('knowledge', id, 1, 'alpha\nBETA\ngamma\n', 'Shout');
      const shown = await show(draft.toUpperCase());
      assert.partialDeepStrictEqual(shown, {
        id: draft,
        status: 'open',
        content: 'alpha\nBETA\ngamma\n',
        authority: 'must_follow',
        latest: null,
        diff: `--- Knowledge "Show me" version 1\n+++ draft ${draft}\n@@ -1,3 +1,3 @@\n alpha\n-beta\n+BETA\n gamma\n`,
        diffLatest: null,
        decidedAt: null,
        decidedBy: null,
        decisionNote: null,
        resultVersion: null,
        resultResourceId: null,
      });
      assert.deepEqual(shown.base, { version: 1, content: 'alpha\nbeta\ngamma\n' });
    });

    it('shows a stale draft against the latest version too', async () => {
      const id = await knowledge('Show me stale', 'alpha\nbeta\ngamma\n');
      const draft = await draftOn('knowledge', id, 1, 'alpha\nBETA\ngamma\n');
      await nextVersion(id, 1, 'alpha\nbeta\ngamma\ndelta\n');
      const stale = await show(draft);
      assert.partialDeepStrictEqual(stale, {
        isStale: true,
        diff: `--- Knowledge "Show me stale" version 1\n+++ draft ${draft}\n@@ -1,3 +1,3 @@\n alpha\n-beta\n+BETA\n gamma\n`,
        diffLatest: `--- Knowledge "Show me stale" version 2\n+++ draft ${draft}\n@@ -1,4 +1,3 @@\n alpha\n-beta\n+BETA\n gamma\n-delta\n`,
      });
      assert.deepEqual(stale.latest, { version: 2, content: 'alpha\nbeta\ngamma\ndelta\n' });
    });

    describe('accepting a Knowledge draft', () => {
      // A must_follow Knowledge and draft-bot's draft on it, accepted by Alice with --publish.
      let id: string;
      let draft: string;
      let result: AcceptResult;
      before(async () => {
        id = await knowledge('Accept me', 'first\n', { authority: 'must_follow' });
        draft = await draftOn('knowledge', id, 1, 'second\n');
        result = await accept(draft, { as: 'Alice@Acme.test', publish: true });
      });

      it('saves and publishes the next version, decided by the reviewer', () => {
        assert.deepEqual(
          { ...result, versionId: '', decidedAt: '' },
          {
            id: draft,
            kind: 'draft',
            type: 'knowledge',
            resourceId: id,
            name: 'Accept me',
            status: 'accepted',
            baseVersion: 1,
            previousVersion: 1,
            version: 2,
            versionId: '',
            saved: true,
            published: true,
            forced: false,
            decidedAt: '',
            decidedBy: 'alice@acme.test',
          },
        );
      });

      it('keeps the authority, and the version is the drafting agent’s', async () => {
        const read = await readKnowledge(store.db, writer, { knowledgeId: id, version: 'published' }, trail(writer));
        assert.partialDeepStrictEqual(read, { version: 2, content: 'second\n', authority: 'must_follow', versionId: result.versionId });
        const [version] = await store.db.query<{ created_by: string }>('SELECT created_by FROM context_versions WHERE resource_id = $1 AND version = 2', [id]);
        assert.equal(version?.created_by, drafter.principal.id, 'the version is the drafting agent’s');
      });

      it('records the decision on the draft, which then shows as accepted', async () => {
        const [row] = await store.db.query<{ status: string; decided_by: string; result_version: number }>(
          'SELECT status, decided_by, result_version FROM context_drafts WHERE id = $1',
          [draft],
        );
        assert.deepEqual(
          { status: row?.status, decided_by: row?.decided_by, result_version: Number(row?.result_version) },
          { status: 'accepted', decided_by: alice, result_version: 2 },
        );
        assert.partialDeepStrictEqual(await show(draft), { status: 'accepted', decidedBy: 'alice@acme.test', resultVersion: 2, isStale: false, latest: null });
      });

      it('audits the decision as the reviewer’s', async () => {
        assert.deepEqual(
          { ...(await acceptEventOf(draft)) },
          {
            surface: 'cli',
            principal_id: alice,
            action: 'review.accept',
            result: 'ok',
            resources: [{ type: 'knowledge', id, before_version: 1, after_version: 2, version_id: result.versionId, changed: true }],
            details: { kind: 'draft', draft_id: draft, base_version: 1, published: true, forced: false },
          },
        );
      });
    });

    it('accepts a draft equal to the latest version without saving one; decided_by NULL is the CLI operator', async () => {
      const id = await knowledge('Same', 'same text');
      const draft = await draftOn('knowledge', id, 1, 'same text');
      const result = await accept(draft);
      assert.partialDeepStrictEqual(result, { saved: false, version: 1, previousVersion: 1, decidedBy: null, published: false });
      const [row] = await store.db.query<{ decided_by: string | null; result_version: number }>(
        'SELECT decided_by, result_version FROM context_drafts WHERE id = $1',
        [draft],
      );
      assert.deepEqual({ decided_by: row?.decided_by, result_version: Number(row?.result_version) }, { decided_by: null, result_version: 1 });
      assert.equal((await acceptEventOf(draft)).principal_id, null);
    });

    describe('a Skill draft', () => {
      // A Skill with two files and draft-bot's draft renaming it, shown and then accepted by Bob.
      const RENAMED = SKILL_MD('new-name', 'New description.', 'Better steps.');
      let skillId: string;
      let draft: string;
      let shown: ReviewDetail;
      let result: AcceptResult;
      before(async () => {
        skillId = await skill(SKILL_MD('old-name', 'Old description.'), [
          { path: 'scripts/run.sh', data_base64: b64('#!/bin/sh\necho run\n') },
          { path: 'notes.md', data_base64: b64('# Notes\n') },
        ]);
        draft = await draftOn('skill', skillId, 1, RENAMED);
        shown = await show(draft);
        result = await accept(draft, { as: 'bob@acme.test' });
      });

      it('shows the latest version’s files, no authority, and the diff of its SKILL.md', () => {
        assert.deepEqual(
          shown.attachments.map((a) => a.path),
          ['notes.md', 'scripts/run.sh'],
        );
        assert.partialDeepStrictEqual(shown, {
          authority: null,
          diff: `--- Skill "old-name" version 1\n+++ draft ${draft}\n@@ -1,6 +1,6 @@\n ---\n-name: old-name\n-description: Old description.\n+name: new-name\n+description: New description.\n ---\n \n-Follow these steps.\n+Better steps.\n`,
        });
      });

      it('is accepted as the next version with the new name and description', async () => {
        assert.partialDeepStrictEqual(result, { type: 'skill', name: 'new-name', version: 2, saved: true, published: false });
        const read = await readSkill(services(), writer, { skillId }, trail(writer));
        assert.partialDeepStrictEqual(read, { name: 'new-name', description: 'New description.', version: 2, skillMd: RENAMED });
      });

      it('is accepted keeping the latest version’s files', async () => {
        const read = await readSkill(services(), writer, { skillId }, trail(writer));
        assert.deepEqual(
          read.attachments.map((a) => pick(a, ['path', 'size'])),
          records(
            ['path', 'size'],
            [
              ['notes.md', 8],
              ['scripts/run.sh', 19],
            ],
          ),
        );
        const chunk = await readContextAttachment(
          services(),
          writer,
          { contextType: 'skill', contextId: skillId, version: 2, path: 'scripts/run.sh' },
          trail(writer),
        );
        assert.equal(chunk.data.toString('utf8'), '#!/bin/sh\necho run\n');
      });

      it('renaming to a taken name is refused, changing nothing', async () => {
        await skill(SKILL_MD('taken-name', 'Taken.'));
        const freeSkill = await skill(SKILL_MD('free-name', 'Free.'));
        const taking = await draftOn('skill', freeSkill, 1, SKILL_MD('taken-name', 'Free.'));
        await rejectsWithKgwError(accept(taking), 'validation', 'invalid skill package: a skill named "taken-name" already exists');
        assert.partialDeepStrictEqual(await show(taking), { status: 'open', currentVersion: 1, name: 'free-name' });
      });
    });

    describe('a proposal', () => {
      // draft-bot's proposal of a must_follow policy with one file, shown and then accepted with --publish.
      let proposal: string;
      let shown: ReviewDetail;
      let result: AcceptResult;
      before(async () => {
        proposal = await propose({
          title: 'Proposed policy',
          content: '# Policy\n\nDo it.',
          rationale: 'Missing',
          authority: 'must_follow',
          attachments: [{ path: 'data/table.csv', data_base64: b64('a,b\n1,2\n') }],
        });
        shown = await show(proposal);
        result = await accept(proposal, { publish: true });
      });

      it('shows its content, authority and files, with no base or diff', () => {
        assert.partialDeepStrictEqual(shown, { kind: 'proposal', content: '# Policy\n\nDo it.', authority: 'must_follow', base: null, diff: null });
        assert.deepEqual(shown.attachments, [{ path: 'data/table.csv', mediaType: 'text/csv', size: 8, digestEncoding: 'text' }]);
      });

      it('is accepted as a new Knowledge with its authority, published with --publish', async () => {
        assert.partialDeepStrictEqual(result, { kind: 'proposal', name: 'Proposed policy', version: 1, previousVersion: null, published: true, saved: true });
        const read = await readKnowledge(store.db, drafter, { knowledgeId: result.resourceId, version: 'published' }, trail(drafter));
        assert.partialDeepStrictEqual(read, { title: 'Proposed policy', content: '# Policy\n\nDo it.', authority: 'must_follow', version: 1 });
      });

      it('is accepted with its files, created by the proposing agent', async () => {
        const chunk = await readContextAttachment(
          services(),
          drafter,
          {
            contextType: 'knowledge',
            contextId: result.resourceId,
            version: 1,
            path: 'data/table.csv',
          },
          trail(drafter),
        );
        assert.equal(chunk.data.toString('utf8'), 'a,b\n1,2\n');
        const [resource] = await store.db.query<{ created_by: string }>('SELECT created_by FROM context_resources WHERE id = $1', [result.resourceId]);
        assert.equal(resource?.created_by, drafter.principal.id);
      });

      it('records the Knowledge it created as its result, not as a resource it replaces', async () => {
        const [row] = await store.db.query<{ status: string; resource_id: string }>('SELECT status, resource_id FROM context_proposals WHERE id = $1', [
          proposal,
        ]);
        assert.deepEqual({ status: row?.status, resource_id: row?.resource_id }, { status: 'accepted', resource_id: result.resourceId });
        assert.partialDeepStrictEqual(await show(proposal), { status: 'accepted', resultResourceId: result.resourceId, resourceId: null });
      });

      it('audits its acceptance with the Knowledge created', async () => {
        const event = await acceptEventOf(proposal);
        assert.deepEqual(event.resources, [
          { type: 'knowledge', id: result.resourceId, before_version: null, after_version: 1, version_id: result.versionId, changed: true },
        ]);
        assert.deepEqual(event.details, { kind: 'proposal', proposal_id: proposal, published: true });
      });
    });

    describe('a stale draft', () => {
      // A draft written on version 1 of a Knowledge now at version 3: accepted without force, then with it.
      let id: string;
      let draft: string;
      let refusal: unknown;
      let statusAfterRefusal: string;
      let forced: AcceptResult;
      before(async () => {
        id = await knowledge('Moving', 'v1');
        draft = await draftOn('knowledge', id, 1, 'draft on v1');
        await nextVersion(id, 1, 'v2');
        await nextVersion(id, 2, 'v3');
        refusal = await accept(draft).then(
          () => undefined,
          (error: unknown) => error,
        );
        statusAfterRefusal = (await show(draft)).status;
        forced = await accept(draft, { force: true });
      });

      it('is refused naming both versions, and stays open', () => {
        assertKgwError(
          refusal,
          'conflict',
          `draft ${draft} is stale: it was written on version 1 of the Knowledge "Moving", which is now at version 3; accepting it would replace version 3 (review it and accept with --force to do so)`,
        );
        assert.equal(statusAfterRefusal, 'open');
      });

      it('is accepted with force as the next version', async () => {
        assert.partialDeepStrictEqual(forced, { version: 4, previousVersion: 3, baseVersion: 1, forced: true, saved: true });
        assert.equal((await readKnowledge(store.db, writer, { knowledgeId: id }, trail(writer))).content, 'draft on v1');
      });

      it('audits the acceptance as forced', async () => {
        assert.deepEqual((await acceptEventOf(draft)).details, { kind: 'draft', draft_id: draft, base_version: 1, published: false, forced: true });
      });
    });

    describe('rejecting', () => {
      // A draft rejected by Bob with a note, and a proposal rejected by the CLI operator with a blank one.
      let id: string;
      let draft: string;
      let rejected: RejectResult;
      let proposal: string;
      let noNote: RejectResult;
      before(async () => {
        id = await knowledge('Reject me', 'v1');
        draft = await draftOn('knowledge', id, 1, 'bad idea');
        proposal = await propose({ title: 'Nope', content: 'no' });
        rejected = await rejectReview(store.db, audit, { tenant: 'acme', id: draft, as: 'bob@acme.test', note: 'Not accurate' });
        noNote = await rejectReview(store.db, audit, { tenant: 'acme', id: proposal, note: '  ' });
      });

      it('rejects a draft with the reviewer’s note', async () => {
        assert.deepEqual(
          { ...rejected, decidedAt: '' },
          {
            id: draft,
            kind: 'draft',
            type: 'knowledge',
            resourceId: id,
            name: 'Reject me',
            status: 'rejected',
            note: 'Not accurate',
            decidedAt: '',
            decidedBy: 'bob@acme.test',
          },
        );
        assert.partialDeepStrictEqual(await show(draft), { status: 'rejected', decisionNote: 'Not accurate', decidedBy: 'bob@acme.test' });
      });

      it('saves nothing and lists the draft no more', async () => {
        assert.equal((await readKnowledge(store.db, writer, { knowledgeId: id }, trail(writer))).latestVersion, 1, 'nothing saved');
        assert.ok(!(await listReviews(store.db, { tenant: 'acme' })).some((i) => i.id === draft), 'no longer listed');
      });

      it('rejects a proposal without a note when the note is blank', () => {
        assert.partialDeepStrictEqual(noNote, { kind: 'proposal', note: null, decidedBy: null, resourceId: null });
      });

      it('audits a draft’s rejection as the reviewer’s, with its resource', async () => {
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
      });

      it('audits a proposal’s rejection without resources', async () => {
        assert.deepEqual(
          (await auditOf(proposal)).map((e) => pick(e, ['action', 'resources', 'details'])),
          [{ action: 'review.reject', resources: [], details: { kind: 'proposal', proposal_id: proposal } }],
        );
      });

      it('a rejected draft or proposal cannot be decided again, and nothing more is audited', async () => {
        await rejectsWithKgwError(accept(draft), 'conflict', /^draft .* was already rejected at \d{4}-.*Z; only open drafts and proposals can be decided$/);
        await rejectsWithKgwError(rejectReview(store.db, audit, { tenant: 'acme', id: proposal }), 'conflict', /^proposal .* was already rejected at /);
        assert.deepEqual(
          (await auditOf(draft)).map((e) => e.action),
          ['review.reject'],
        );
        assert.deepEqual(
          (await auditOf(proposal)).map((e) => e.action),
          ['review.reject'],
        );
      });

      it('an accepted draft cannot be decided again', async () => {
        const once = await draftOn('knowledge', await knowledge('Accept once', 'v1'), 1, 'good idea');
        await accept(once);
        await rejectsWithKgwError(accept(once), 'conflict', /^draft .* was already accepted at /);
        await rejectsWithKgwError(rejectReview(store.db, audit, { tenant: 'acme', id: once }), 'conflict', /was already accepted/);
      });
    });

    describe('concurrent decisions', () => {
      it('of two accepts and a reject of one draft exactly one wins, saved and audited once', async () => {
        const id = await knowledge('Race', 'v1');
        const draft = await draftOn('knowledge', id, 1, 'racing');
        const outcomes = await Promise.allSettled([accept(draft), accept(draft), rejectReview(store.db, audit, { tenant: 'acme', id: draft })]);
        const won = outcomes.filter((o) => o.status === 'fulfilled');
        assert.equal(won.length, 1, 'exactly one decision');
        for (const lost of outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected')) {
          assertKgwError(lost.reason, 'conflict', /was already (accepted|rejected)/);
        }
        const versions = await store.db.query('SELECT version FROM context_versions WHERE resource_id = $1', [id]);
        assert.equal(versions.length, won[0]?.value.status === 'accepted' ? 2 : 1);
        assert.equal((await auditOf(draft)).length, 1, 'one decision audited');
      });

      it('of two accepts of one proposal exactly one creates the Knowledge', async () => {
        const proposal = await propose({ title: 'Race proposal', content: 'x' });
        const proposed = await Promise.allSettled([accept(proposal), accept(proposal)]);
        assert.equal(proposed.filter((o) => o.status === 'fulfilled').length, 1);
        const created = await store.db.query("SELECT id FROM context_resources WHERE type = 'knowledge' AND name = 'Race proposal'");
        assert.equal(created.length, 1, 'one Knowledge created');
      });

      it('of two drafts on one base the second is stale once the first is saved; forced, it saves the next version', async () => {
        const other = await knowledge('Race two', 'v1');
        const a = await draftOn('knowledge', other, 1, 'first');
        const b = await draftOn('knowledge', other, 1, 'second');
        const both = await Promise.allSettled([accept(a), accept(b)]);
        const ok = both.filter((o) => o.status === 'fulfilled');
        assert.equal(ok.length, 1, 'the second is stale once the first is saved');
        const lost = both.find((o): o is PromiseRejectedResult => o.status === 'rejected');
        assertKgwError(lost?.reason, 'conflict', /is stale: it was written on version 1 of the Knowledge "Race two", which is now at version 2/);
        const loser = ok[0] === both[0] ? b : a;
        const forced = await accept(loser, { force: true });
        assert.equal(forced.version, 3);
      });
    });

    describe('refusals', () => {
      it('refuses unknown ids and another tenant’s ids as not found, leaving them untouched', async () => {
        const globexKnowledge = (await writeKnowledge(store.db, hank, { expectedVersion: 0, title: 'Theirs', content: 'globex' }, trail(hank))).id;
        const theirs = await draftOn('knowledge', globexKnowledge, 1, 'their draft', undefined, hank);
        const unknown = randomUUID();
        for (const [what, wanted] of [
          [unknown, unknown],
          ['not-an-id', 'not-an-id'],
          [theirs, theirs],
        ] as const) {
          const message = `no draft or proposal "${wanted}" in tenant "acme"`;
          await rejectsWithKgwError(show(what), 'not_found', message);
          await rejectsWithKgwError(accept(what), 'not_found', message);
          await rejectsWithKgwError(rejectReview(store.db, audit, { tenant: 'acme', id: what }), 'not_found', message);
        }
        assert.equal((await showReview(store.db, { tenant: 'globex', id: theirs })).status, 'open', 'untouched in its own tenant');
      });

      it('refuses a reviewer who is not a person of the tenant, deciding nothing', async () => {
        const mine = await draftOn('knowledge', await knowledge('Mine', 'v1'), 1, 'my draft');
        await rejectsWithKgwError(accept(mine, { as: 'carol@acme.test' }), 'not_found', 'no person "carol@acme.test" in tenant "acme"');
        await rejectsWithKgwError(accept(mine, { as: 'hank@globex.test' }), 'not_found', 'no person "hank@globex.test" in tenant "acme"');
        await rejectsWithKgwError(accept(mine, { as: 'draft-bot' }), 'validation', 'the reviewer must be a person, named by email: "draft-bot"');
        await assertUndecided(mine);
      });

      it('refuses a note longer than 2000 characters, deciding nothing', async () => {
        const mine = await draftOn('knowledge', await knowledge('Mine too', 'v1'), 1, 'my draft');
        await rejectsWithKgwError(
          rejectReview(store.db, audit, { tenant: 'acme', id: mine, note: 'x'.repeat(2001) }),
          'validation',
          'note cannot exceed 2000 characters',
        );
        await assertUndecided(mine);
      });

      it('refuses an unknown tenant, deciding nothing', async () => {
        const mine = await draftOn('knowledge', await knowledge('Mine three', 'v1'), 1, 'my draft');
        await rejectsWithKgwError(accept(mine, { tenant: 'initech' }), 'not_found', 'tenant "initech" not found');
        await assertUndecided(mine);
      });
    });
  });
}
