import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DiskBlobStore } from '../../connectors/blob/disk.ts';
import type { Caller } from '../../src/core/access/caller.ts';
import type { Scope } from '../../src/core/access/scopes.ts';
import type { AuditTrail } from '../../src/core/audit/trail.ts';
import { readContextAttachment } from '../../src/core/context/attachments.ts';
import { createDraft, proposeKnowledge } from '../../src/core/context/drafts.ts';
import { readKnowledge, writeKnowledge } from '../../src/core/context/knowledge.ts';
import type { AcceptInput, ReviewItem } from '../../src/core/context/review.ts';
import { acceptReview, listReviews, rejectReview, showReview } from '../../src/core/context/review.ts';
import { createSkill, readSkill } from '../../src/core/context/skills.ts';
import { findPrincipal, requireTenant } from '../../src/core/directory/directory.ts';
import { isKgwError } from '../../src/core/errors.ts';
import type { ErrorCode } from '../../src/core/errors.ts';
import { applyOrgFile } from '../../src/core/org/apply.ts';
import { callerTrail, cliTrail } from '../support/audit.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';

const ACME = `tenant: acme
name: Acme Inc.
people:
  - { email: alice@acme.test, name: Alice Adams }
  - { email: bob@acme.test, name: Bob Brown }
agents:
  - { name: writer-bot, owner: alice@acme.test }
  - { name: draft-bot, owner: bob@acme.test }
grants:
  - { to: writer-bot, on: all_knowledge, role: owner }
  - { to: writer-bot, on: all_skills, role: owner }
  - { to: draft-bot, on: all_knowledge, role: proposer }
  - { to: draft-bot, on: all_skills, role: proposer }
  - { to: bob@acme.test, on: all_knowledge, role: proposer }
`;

const GLOBEX = `tenant: globex
name: Globex
people:
  - { email: hank@globex.test, name: Hank }
agents:
  - { name: globex-bot, owner: hank@globex.test }
grants:
  - { to: globex-bot, on: all_knowledge, role: owner }
`;

const SKILL_MD = (name: string, description: string, body = 'Follow these steps.'): string =>
  `---\nname: ${name}\ndescription: ${description}\n---\n\n${body}\n`;
const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

/** Asserts `promise` fails with a KgwError of `code` whose message matches `message`. */
async function refused(promise: Promise<unknown>, code: ErrorCode, message: RegExp | string): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(isKgwError(error, code), `expected ${code}, got ${String(error)}`);
    if (typeof message === 'string') assert.equal(error.message, message);
    else assert.match(error.message, message);
    return true;
  });
}

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
    const knowledge = async (title: string, content: string, extra: { authority?: 'informational' | 'must_follow' } = {}) =>
      (await writeKnowledge(store.db, writer, { expectedVersion: 0, title, content, ...extra }, trail(writer))).id;
    const draftOn = async (type: 'knowledge' | 'skill', id: string, base: number, content: string, rationale?: string, by = drafter) =>
      (await createDraft(store.db, by, type, { resourceId: id, baseVersion: base, content, rationale }, trail(by))).draftId;
    // The review decisions on a draft or proposal (its creation is audited too, as the agent's).
    const auditOf = (id: string) =>
      store.db.query<AuditRow>(
        `SELECT surface, principal_id, action, result, resources, details FROM audit_events
          WHERE (details->>'draft_id' = $1 OR details->>'proposal_id' = $1) AND action LIKE 'review.%' ORDER BY at`,
        [id],
      );

    before(async () => {
      store = await backend.open({ migrated: true });
      blobDir = await mkdtemp(path.join(os.tmpdir(), 'kgw-review-'));
      blob = new DiskBlobStore({ dataDir: blobDir, publicUrl: 'http://127.0.0.1:1' });
      audit = cliTrail(store.db);
      await applyOrgFile(store.db, { source: ACME }, audit);
      await applyOrgFile(store.db, { source: GLOBEX }, audit);
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
      const skill = await createSkill(services(), writer, { skillMd: SKILL_MD('list-check', 'Checks lists.') }, trail(writer));
      const d1 = await draftOn('knowledge', handbook, 1, 'line one\nline 2\n', 'Numbers read better');
      const d2 = await draftOn('skill', skill.id, 1, SKILL_MD('list-check', 'Checks lists better.'));
      const p1 = (await proposeKnowledge(services(), drafter, { title: 'New idea', content: 'Idea text', rationale: 'We lack it' }, trail(drafter))).proposalId;
      const personDraft = await draftOn('knowledge', handbook, 1, 'by a person\n', undefined, await caller('acme', 'bob@acme.test'));
      // Another tenant's draft is never listed.
      const globexKnowledge = (await writeKnowledge(store.db, hank, { expectedVersion: 0, title: 'Handbook', content: 'globex' }, trail(hank))).id;
      await draftOn('knowledge', globexKnowledge, 1, 'globex draft', undefined, hank);

      await writeKnowledge(store.db, writer, { knowledgeId: handbook, expectedVersion: 1, content: 'line one\nline two\nline three\n' }, trail(writer));
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
      assert.deepEqual([at(d2).type, at(d2).name, at(d2).baseVersion, at(d2).currentVersion, at(d2).isStale], ['skill', 'list-check', 1, 1, false]);
      assert.deepEqual(
        [
          at(p1).kind,
          at(p1).type,
          at(p1).resourceId,
          at(p1).name,
          at(p1).baseVersion,
          at(p1).currentVersion,
          at(p1).isStale,
          at(p1).agentName,
          at(p1).rationale,
        ],
        ['proposal', 'knowledge', null, 'New idea', null, null, false, 'draft-bot', 'We lack it'],
      );
      assert.deepEqual([at(personDraft).authorEmail, at(personDraft).authorName, at(personDraft).agentName], ['bob@acme.test', 'Bob Brown', null]);

      const globex = await listReviews(store.db, { tenant: 'globex' });
      assert.deepEqual(
        globex.map((i) => i.name),
        ['Handbook'],
      );
      await refused(listReviews(store.db, { tenant: 'initech' }), 'not_found', 'tenant "initech" not found');
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
      assert.equal(shown.diffLatest, null);
      assert.deepEqual([shown.decidedAt, shown.decidedBy, shown.decisionNote, shown.resultVersion, shown.resultResourceId], [null, null, null, null, null]);

      await writeKnowledge(store.db, writer, { knowledgeId: id, expectedVersion: 1, content: 'alpha\nbeta\ngamma\ndelta\n' }, trail(writer));
      const stale = await showReview(store.db, { tenant: 'acme', id: draft });
      assert.equal(stale.isStale, true);
      assert.deepEqual(stale.latest, { version: 2, content: 'alpha\nbeta\ngamma\ndelta\n' });
      assert.equal(stale.diff, shown.diff);
      assert.equal(stale.diffLatest, `--- Knowledge "Show me" version 2\n+++ draft ${draft}\n@@ -1,4 +1,3 @@\n alpha\n-beta\n+BETA\n gamma\n-delta\n`);
    });

    it('accepts a Knowledge draft as a new version keeping the authority; --publish publishes it; audited with the reviewer', async () => {
      const id = await knowledge('Accept me', 'first\n', { authority: 'must_follow' });
      const draft = await draftOn('knowledge', id, 1, 'second\n');
      const result = await accept(draft, { as: 'Alice@Acme.test', publish: true });
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
      const read = await readKnowledge(store.db, writer, { knowledgeId: id, version: 'published' }, trail(writer));
      assert.deepEqual([read.version, read.content, read.authority, read.versionId], [2, 'second\n', 'must_follow', result.versionId]);
      const [version] = await store.db.query<{ created_by: string }>('SELECT created_by FROM context_versions WHERE resource_id = $1 AND version = 2', [id]);
      assert.equal(version?.created_by, drafter.principal.id, 'the version is the drafting agent’s');

      const [row] = await store.db.query<{ status: string; decided_by: string; result_version: number; decided_at: Date }>(
        'SELECT status, decided_by, result_version, decided_at FROM context_drafts WHERE id = $1',
        [draft],
      );
      assert.deepEqual([row?.status, row?.decided_by, Number(row?.result_version)], ['accepted', alice, 2]);
      const shown = await showReview(store.db, { tenant: 'acme', id: draft });
      assert.deepEqual([shown.status, shown.decidedBy, shown.resultVersion, shown.isStale, shown.latest], ['accepted', 'alice@acme.test', 2, false, null]);

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
          resources: [{ type: 'knowledge', id, before_version: 1, after_version: 2, version_id: result.versionId, changed: true }],
          details: { kind: 'draft', draft_id: draft, base_version: 1, published: true, forced: false },
        },
      );
    });

    it('accepts a draft equal to the latest version without saving one; decided_by NULL is the CLI operator', async () => {
      const id = await knowledge('Same', 'same text');
      const draft = await draftOn('knowledge', id, 1, 'same text');
      const result = await accept(draft);
      assert.deepEqual([result.saved, result.version, result.previousVersion, result.decidedBy, result.published], [false, 1, 1, null, false]);
      const [row] = await store.db.query<{ decided_by: string | null; result_version: number }>(
        'SELECT decided_by, result_version FROM context_drafts WHERE id = $1',
        [draft],
      );
      assert.deepEqual([row?.decided_by, Number(row?.result_version)], [null, 1]);
      const [event] = await auditOf(draft).then((rows) => rows.filter((r) => r.action === 'review.accept'));
      assert.equal(event?.principal_id, null);
    });

    it('accepts a Skill draft keeping the latest attachments, with the new name and description', async () => {
      const skill = await createSkill(
        services(),
        writer,
        {
          skillMd: SKILL_MD('old-name', 'Old description.'),
          attachments: [
            { path: 'scripts/run.sh', data_base64: b64('#!/bin/sh\necho run\n') },
            { path: 'notes.md', data_base64: b64('# Notes\n') },
          ],
        },
        trail(writer),
      );
      const draft = await draftOn('skill', skill.id, 1, SKILL_MD('new-name', 'New description.', 'Better steps.'));
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
      assert.deepEqual([result.type, result.name, result.version, result.saved, result.published], ['skill', 'new-name', 2, true, false]);
      const read = await readSkill(services(), writer, { skillId: skill.id }, trail(writer));
      assert.deepEqual(
        [read.name, read.description, read.version, read.skillMd],
        ['new-name', 'New description.', 2, SKILL_MD('new-name', 'New description.', 'Better steps.')],
      );
      assert.deepEqual(
        read.attachments.map((a) => [a.path, a.size]),
        [
          ['notes.md', 8],
          ['scripts/run.sh', 19],
        ],
      );
      const chunk = await readContextAttachment(
        services(),
        writer,
        { contextType: 'skill', contextId: skill.id, version: 2, path: 'scripts/run.sh' },
        trail(writer),
      );
      assert.equal(chunk.data.toString('utf8'), '#!/bin/sh\necho run\n');
    });

    it('refuses a Skill draft renaming to a taken name, changing nothing', async () => {
      await createSkill(services(), writer, { skillMd: SKILL_MD('taken-name', 'Taken.') }, trail(writer));
      const skill = await createSkill(services(), writer, { skillMd: SKILL_MD('free-name', 'Free.') }, trail(writer));
      const draft = await draftOn('skill', skill.id, 1, SKILL_MD('taken-name', 'Free.'));
      await refused(accept(draft), 'validation', 'invalid skill package: a skill named "taken-name" already exists');
      const shown = await showReview(store.db, { tenant: 'acme', id: draft });
      assert.deepEqual([shown.status, shown.currentVersion, shown.name], ['open', 1, 'free-name']);
    });

    it('accepts a proposal: creates the Knowledge with its authority and files, created by the proposing agent', async () => {
      const proposal = (
        await proposeKnowledge(
          services(),
          drafter,
          {
            title: 'Proposed policy',
            content: '# Policy\n\nDo it.',
            rationale: 'Missing',
            authority: 'must_follow',
            attachments: [{ path: 'data/table.csv', data_base64: b64('a,b\n1,2\n') }],
          },
          trail(drafter),
        )
      ).proposalId;
      const shown = await showReview(store.db, { tenant: 'acme', id: proposal });
      assert.deepEqual(
        [shown.kind, shown.content, shown.authority, shown.attachments, shown.base, shown.diff],
        ['proposal', '# Policy\n\nDo it.', 'must_follow', [{ path: 'data/table.csv', mediaType: 'text/csv', size: 8, digestEncoding: 'text' }], null, null],
      );

      const result = await accept(proposal, { publish: true });
      assert.deepEqual(
        [result.kind, result.name, result.version, result.previousVersion, result.published, result.saved],
        ['proposal', 'Proposed policy', 1, null, true, true],
      );
      const read = await readKnowledge(store.db, drafter, { knowledgeId: result.resourceId, version: 'published' }, trail(drafter));
      assert.deepEqual([read.title, read.content, read.authority, read.version], ['Proposed policy', '# Policy\n\nDo it.', 'must_follow', 1]);
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
      const [row] = await store.db.query<{ status: string; resource_id: string }>('SELECT status, resource_id FROM context_proposals WHERE id = $1', [
        proposal,
      ]);
      assert.deepEqual([row?.status, row?.resource_id], ['accepted', result.resourceId]);
      const after = await showReview(store.db, { tenant: 'acme', id: proposal });
      assert.deepEqual([after.status, after.resultResourceId, after.resourceId], ['accepted', result.resourceId, null]);

      const [event] = (await auditOf(proposal)).filter((e) => e.action === 'review.accept');
      assert.deepEqual(event?.resources, [
        { type: 'knowledge', id: result.resourceId, before_version: null, after_version: 1, version_id: result.versionId, changed: true },
      ]);
      assert.deepEqual(event?.details, { kind: 'proposal', proposal_id: proposal, published: true });
    });

    it('refuses a stale draft naming both versions unless forced', async () => {
      const id = await knowledge('Moving', 'v1');
      const draft = await draftOn('knowledge', id, 1, 'draft on v1');
      await writeKnowledge(store.db, writer, { knowledgeId: id, expectedVersion: 1, content: 'v2' }, trail(writer));
      await writeKnowledge(store.db, writer, { knowledgeId: id, expectedVersion: 2, content: 'v3' }, trail(writer));
      await refused(
        accept(draft),
        'conflict',
        `draft ${draft} is stale: it was written on version 1 of the Knowledge "Moving", which is now at version 3; accepting it would replace version 3 (review it and accept with --force to do so)`,
      );
      assert.equal((await showReview(store.db, { tenant: 'acme', id: draft })).status, 'open');
      const forced = await accept(draft, { force: true });
      assert.deepEqual([forced.version, forced.previousVersion, forced.baseVersion, forced.forced, forced.saved], [4, 3, 1, true, true]);
      assert.equal((await readKnowledge(store.db, writer, { knowledgeId: id }, trail(writer))).content, 'draft on v1');
      const [event] = (await auditOf(draft)).filter((e) => e.action === 'review.accept');
      assert.deepEqual(event?.details, { kind: 'draft', draft_id: draft, base_version: 1, published: false, forced: true });
    });

    it('rejects with a note; a decided item cannot be decided again', async () => {
      const id = await knowledge('Reject me', 'v1');
      const draft = await draftOn('knowledge', id, 1, 'bad idea');
      const proposal = (await proposeKnowledge(services(), drafter, { title: 'Nope', content: 'no' }, trail(drafter))).proposalId;

      const rejected = await rejectReview(store.db, audit, { tenant: 'acme', id: draft, as: 'bob@acme.test', note: 'Not accurate' });
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
      const shown = await showReview(store.db, { tenant: 'acme', id: draft });
      assert.deepEqual([shown.status, shown.decisionNote, shown.decidedBy], ['rejected', 'Not accurate', 'bob@acme.test']);
      assert.equal((await readKnowledge(store.db, writer, { knowledgeId: id }, trail(writer))).latestVersion, 1, 'nothing saved');
      assert.ok(!(await listReviews(store.db, { tenant: 'acme' })).some((i) => i.id === draft), 'no longer listed');

      const noNote = await rejectReview(store.db, audit, { tenant: 'acme', id: proposal, note: '  ' });
      assert.deepEqual([noNote.kind, noNote.note, noNote.decidedBy, noNote.resourceId], ['proposal', null, null, null]);

      await refused(accept(draft), 'conflict', /^draft .* was already rejected at \d{4}-.*Z; only open drafts and proposals can be decided$/);
      await refused(rejectReview(store.db, audit, { tenant: 'acme', id: proposal }), 'conflict', /^proposal .* was already rejected at /);
      const once = await draftOn('knowledge', id, 1, 'good idea');
      await accept(once);
      await refused(accept(once), 'conflict', /^draft .* was already accepted at /);
      await refused(rejectReview(store.db, audit, { tenant: 'acme', id: once }), 'conflict', /was already accepted/);

      const bob = (await caller('acme', 'bob@acme.test')).principal.id;
      assert.deepEqual(
        (await auditOf(draft)).map((e) => [e.action, e.surface, e.result, e.principal_id, e.resources, e.details]),
        [['review.reject', 'cli', 'ok', bob, [{ type: 'knowledge', id, version: 1 }], { kind: 'draft', draft_id: draft }]],
      );
      assert.deepEqual(
        (await auditOf(proposal)).map((e) => [e.action, e.resources, e.details]),
        [['review.reject', [], { kind: 'proposal', proposal_id: proposal }]],
      );
    });

    it('of two concurrent accepts of one draft exactly one wins; of two drafts on one base the second is stale', async () => {
      const id = await knowledge('Race', 'v1');
      const draft = await draftOn('knowledge', id, 1, 'racing');
      const outcomes = await Promise.allSettled([accept(draft), accept(draft), rejectReview(store.db, audit, { tenant: 'acme', id: draft })]);
      const won = outcomes.filter((o) => o.status === 'fulfilled');
      assert.equal(won.length, 1, 'exactly one decision');
      for (const lost of outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected')) {
        assert.ok(isKgwError(lost.reason, 'conflict'), String(lost.reason));
        assert.match((lost.reason as Error).message, /was already (accepted|rejected)/);
      }
      const versions = await store.db.query('SELECT version FROM context_versions WHERE resource_id = $1', [id]);
      assert.equal(versions.length, (won[0] as PromiseFulfilledResult<{ status: string }>).value.status === 'accepted' ? 2 : 1);
      assert.equal((await auditOf(draft)).filter((e) => e.action.startsWith('review.')).length, 1, 'one decision audited');

      const proposal = (await proposeKnowledge(services(), drafter, { title: 'Race proposal', content: 'x' }, trail(drafter))).proposalId;
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
      const globexKnowledge = (await writeKnowledge(store.db, hank, { expectedVersion: 0, title: 'Theirs', content: 'globex' }, trail(hank))).id;
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
        await refused(showReview(store.db, { tenant: 'acme', id: what }), 'not_found', message);
        await refused(accept(what), 'not_found', message);
        await refused(rejectReview(store.db, audit, { tenant: 'acme', id: what }), 'not_found', message);
      }
      assert.equal((await showReview(store.db, { tenant: 'globex', id: theirs })).status, 'open', 'untouched in its own tenant');
      await refused(accept(mine, { as: 'carol@acme.test' }), 'not_found', 'no person "carol@acme.test" in tenant "acme"');
      await refused(accept(mine, { as: 'hank@globex.test' }), 'not_found', 'no person "hank@globex.test" in tenant "acme"');
      await refused(accept(mine, { as: 'draft-bot' }), 'validation', 'the reviewer must be a person, named by email: "draft-bot"');
      await refused(rejectReview(store.db, audit, { tenant: 'acme', id: mine, note: 'x'.repeat(2001) }), 'validation', 'note cannot exceed 2000 characters');
      await refused(accept(mine, { tenant: 'initech' }), 'not_found', 'tenant "initech" not found');
      assert.equal((await showReview(store.db, { tenant: 'acme', id: mine })).status, 'open');
      assert.deepEqual(await auditOf(mine).then((rows) => rows.filter((r) => r.action.startsWith('review.'))), []);
    });
  });
}
