import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { storeBackends } from '../support/stores.ts';
import type { CreatedKnowledge } from './support.ts';
import {
  KNOWLEDGE_ITEM,
  KNOWLEDGE_PUBLISH,
  KNOWLEDGE_READ,
  KNOWLEDGE_WRITE,
  Suite,
  assertShape,
  backendLabel,
  createKnowledge,
  snapshot,
  utcDate,
} from './support.ts';

type Item = Record<string, unknown> & { knowledge_id: string };
type Read = Record<string, unknown> & { version_id: string; version: number; content: string };
/** A tool, its arguments and the error text it must answer. */
type Refusal = [string, Record<string, unknown>, string];

const RANDOM_ID = '0b1e7c5e-8f43-4d8e-9a51-3c2d1f0e9b7a';

/** A Knowledge that one test made for itself, as the spec's example: must_follow, with a review and an expiry date. */
interface Checklist {
  readonly id: string;
  readonly title: string;
  readonly reviewBy: string;
  readonly expiresAt: string;
  /** write_knowledge's answer to the create. */
  readonly created: CreatedKnowledge;
  readonly v1: string;
}
/** The version ids of the versions the setup wrote after the first. */
type Changed = Checklist & { readonly v2: string };
type AuthorityChanged = Changed & { readonly v3: string };
type FourthPublished = AuthorityChanged & { readonly v4: string };

for (const backend of storeBackends()) {
  describe(`Alignbase Knowledge tools on ${backendLabel(backend)}`, () => {
    let suite: Suite;
    before(async () => {
      suite = await Suite.open(backend);
    });
    after(async () => {
      await suite?.close();
    });

    async function listed(agentName: string, id: string): Promise<Item | undefined> {
      const agent = await suite.agent(agentName);
      const { knowledge } = await agent.ok<{ knowledge: Item[] }>('list_knowledge');
      for (const item of knowledge) assertShape('list_knowledge item', item, KNOWLEDGE_ITEM);
      return knowledge.find((k) => k.knowledge_id === id);
    }

    // The publication transitions, each test on a Knowledge of its own, brought by the helpers
    // below to the state the test starts from. Each step a helper takes is checked by its own test.

    /** Version 1 saved, never published. */
    async function createChecklist(): Promise<Checklist> {
      const admin = await suite.agent('admin-bot');
      const title = suite.unique('Release checklist');
      const reviewBy = utcDate(30);
      const expiresAt = utcDate(60);
      const created = await admin.ok<CreatedKnowledge>('write_knowledge', {
        title,
        expected_version: 0,
        content: '# Checklist\n\nv1',
        authority: 'must_follow',
        review_by: reviewBy,
        expires_at: expiresAt,
      });
      return { id: created.knowledge_id, title, reviewBy, expiresAt, created, v1: created.version_id };
    }

    /** Version 1 published, then version 2 saved (authority omitted). */
    async function changedAfterPublish(): Promise<Changed> {
      const admin = await suite.agent('admin-bot');
      const checklist = await createChecklist();
      await admin.ok('publish_knowledge', { knowledge_id: checklist.id });
      const written = await admin.ok<CreatedKnowledge>('write_knowledge', { knowledge_id: checklist.id, expected_version: 1, content: '# Checklist\n\nv2' });
      return { ...checklist, v2: written.version_id };
    }

    /** As changedAfterPublish, then version 3: the same content, authority informational (version 1 stays published). */
    async function authorityChanged(): Promise<AuthorityChanged> {
      const admin = await suite.agent('admin-bot');
      const checklist = await changedAfterPublish();
      const written = await admin.ok<CreatedKnowledge>('write_knowledge', {
        knowledge_id: checklist.id,
        expected_version: 2,
        content: '# Checklist\n\nv2',
        authority: 'informational',
      });
      return { ...checklist, v3: written.version_id };
    }

    /** As authorityChanged, then version 4 written with publish: true: the latest is the published version. */
    async function fourthPublished(): Promise<FourthPublished> {
      const admin = await suite.agent('admin-bot');
      const checklist = await authorityChanged();
      const written = await admin.ok<CreatedKnowledge>('write_knowledge', {
        knowledge_id: checklist.id,
        expected_version: 3,
        content: '# Checklist\n\nv4',
        publish: true,
      });
      return { ...checklist, v4: written.version_id };
    }

    it('creates Knowledge with the spec’s write_knowledge shape: version 1, created, not published', async () => {
      const { created, title } = await createChecklist();
      assertShape('write_knowledge', created, KNOWLEDGE_WRITE);
      assert.deepEqual(
        { ...created, knowledge_id: '', version_id: '' },
        { knowledge_id: '', title, version_id: '', version: 1, updated: true, published: false, created: true },
      );
    });

    it('lists saved, never published Knowledge as unpublished, with its dates and every capability of an Owner', async () => {
      const { id, title, v1, reviewBy, expiresAt } = await createChecklist();
      const item = await listed('admin-bot', id);
      assert.ok(item);
      assert.partialDeepStrictEqual(item, {
        title,
        current_version_id: v1,
        current_version: 1,
        latest_version_id: v1,
        latest_version: 1,
        published_version_id: null,
        published_version: null,
        published_version_created_at: null,
        review_by: reviewBy,
        expires_at: expiresAt,
        status: 'live',
        publication_status: 'unpublished',
        has_unpublished_changes: true,
        can_read: true,
        can_draft: true,
        can_edit: true,
        can_publish: true,
      });
      assert.equal(item.current_version_created_at, item.latest_version_created_at);
    });

    it('reads saved, never published Knowledge with the spec’s shape: its content and authority at version 1, unpublished', async () => {
      const admin = await suite.agent('admin-bot');
      const { id, title, v1 } = await createChecklist();
      const item = await listed('admin-bot', id);
      assert.ok(item);
      const read = await admin.ok<Read>('read_knowledge', { knowledge_id: id });
      assertShape('read_knowledge', read, KNOWLEDGE_READ);
      assert.partialDeepStrictEqual(read, {
        knowledge_id: id,
        title,
        version_id: v1,
        version: 1,
        latest_version: 1,
        published_version: null,
        is_published_version: false,
        has_unpublished_changes: true,
        content: '# Checklist\n\nv1',
        authority: 'must_follow',
        publication_status: 'unpublished',
      });
      assert.equal(read.created_at, item.created_at);
      assert.equal(read.version_created_at, item.latest_version_created_at);
    });

    it('publishes the latest version, and answers published: false when it already is the published one', async () => {
      const admin = await suite.agent('admin-bot');
      const { id, title, v1 } = await createChecklist();
      const published = await admin.ok('publish_knowledge', { knowledge_id: id });
      assertShape('publish_knowledge', published, KNOWLEDGE_PUBLISH);
      assert.deepEqual(published, { knowledge_id: id, title, version_id: v1, version: 1, published: true });
      assert.deepEqual(await admin.ok('publish_knowledge', { knowledge_id: id, version: 'latest' }), {
        knowledge_id: id,
        title,
        version_id: v1,
        version: 1,
        published: false,
      });
      const item = await listed('admin-bot', id);
      assert.partialDeepStrictEqual(item, { published_version_id: v1, published_version: 1, publication_status: 'published', has_unpublished_changes: false });
      assert.equal(item?.published_version_created_at, item?.latest_version_created_at);
    });

    it('saves a new version over a published one, keeping the authority when it is omitted: unpublished changes', async () => {
      const admin = await suite.agent('admin-bot');
      const { id, title, v1 } = await createChecklist();
      await admin.ok('publish_knowledge', { knowledge_id: id });
      const written = await admin.ok<CreatedKnowledge>('write_knowledge', { knowledge_id: id, expected_version: 1, content: '# Checklist\n\nv2' });
      assertShape('write_knowledge', written, KNOWLEDGE_WRITE);
      assert.deepEqual(
        { ...written, version_id: '' },
        { knowledge_id: id, title, version_id: '', version: 2, updated: true, published: false, created: false },
      );
      assert.notEqual(written.version_id, v1);
      const v2 = written.version_id;
      const read = await admin.ok<Read>('read_knowledge', { knowledge_id: id, version: 'latest' });
      assert.partialDeepStrictEqual(read, {
        version_id: v2,
        version: 2,
        authority: 'must_follow',
        content: '# Checklist\n\nv2',
        is_published_version: false,
        published_version: 1,
        publication_status: 'unpublished_changes',
        has_unpublished_changes: true,
      });
      const item = await listed('admin-bot', id);
      assert.partialDeepStrictEqual(item, {
        latest_version_id: v2,
        latest_version: 2,
        published_version_id: v1,
        published_version: 1,
        publication_status: 'unpublished_changes',
        has_unpublished_changes: true,
      });
      assert.notEqual(item?.published_version_created_at, null);
    });

    it('reads every version selector to its version, with stable version ids', async () => {
      const admin = await suite.agent('admin-bot');
      const { id, v1, v2 } = await changedAfterPublish();
      const selectors: [unknown, string, string][] = [
        [undefined, v2, '# Checklist\n\nv2'],
        ['latest', v2, '# Checklist\n\nv2'],
        ['published', v1, '# Checklist\n\nv1'],
        [1, v1, '# Checklist\n\nv1'],
        ['1', v1, '# Checklist\n\nv1'],
        [2, v2, '# Checklist\n\nv2'],
        ['2', v2, '# Checklist\n\nv2'],
      ];
      for (const [version, versionId, content] of selectors) {
        const got = await admin.ok<Read>('read_knowledge', version === undefined ? { knowledge_id: id } : { knowledge_id: id, version });
        assert.partialDeepStrictEqual(
          got,
          { version_id: versionId, content, is_published_version: versionId === v1, latest_version: 2 },
          `version ${String(version)}`,
        );
      }
    });

    it('answers a write of the same content and authority with updated: false and saves no version', async () => {
      const admin = await suite.agent('admin-bot');
      const { id, title, v2 } = await changedAfterPublish();
      const same = await admin.ok<CreatedKnowledge>('write_knowledge', {
        knowledge_id: id,
        expected_version: 2,
        content: '# Checklist\n\nv2',
        authority: 'must_follow',
      });
      assert.deepEqual(same, { knowledge_id: id, title, version_id: v2, version: 2, updated: false, published: false, created: false });
      assert.equal((await listed('admin-bot', id))?.latest_version, 2);
    });

    it('saves a new version when only the authority differs', async () => {
      const admin = await suite.agent('admin-bot');
      const { id } = await changedAfterPublish();
      const authority = await admin.ok<CreatedKnowledge>('write_knowledge', {
        knowledge_id: id,
        expected_version: 2,
        content: '# Checklist\n\nv2',
        authority: 'informational',
      });
      assert.partialDeepStrictEqual(authority, { version: 3, updated: true });
      assert.equal((await admin.ok<Read>('read_knowledge', { knowledge_id: id })).authority, 'informational');
    });

    it('publishes an exact version given as a numeric string, then an older version again', async () => {
      const admin = await suite.agent('admin-bot');
      const { id, title, v1, v3 } = await authorityChanged();
      assert.deepEqual(await admin.ok('publish_knowledge', { knowledge_id: id, version: '3' }), {
        knowledge_id: id,
        title,
        version_id: v3,
        version: 3,
        published: true,
      });
      assert.equal((await listed('admin-bot', id))?.publication_status, 'published');
      assert.deepEqual(await admin.ok('publish_knowledge', { knowledge_id: id, version: 1 }), {
        knowledge_id: id,
        title,
        version_id: v1,
        version: 1,
        published: true,
      });
      const item = await listed('admin-bot', id);
      assert.partialDeepStrictEqual(item, {
        published_version: 1,
        latest_version: 3,
        publication_status: 'unpublished_changes',
        has_unpublished_changes: true,
      });
    });

    it('publishes the version a write with publish: true saves; the same write again answers published: false', async () => {
      const admin = await suite.agent('admin-bot');
      const { id, title } = await authorityChanged();
      const live = await admin.ok<CreatedKnowledge>('write_knowledge', { knowledge_id: id, expected_version: 3, content: '# Checklist\n\nv4', publish: true });
      assert.partialDeepStrictEqual(live, { version: 4, updated: true, published: true, created: false });
      const item = await listed('admin-bot', id);
      assert.partialDeepStrictEqual(item, { published_version_id: live.version_id, published_version: 4, publication_status: 'published' });
      assert.deepEqual(await admin.ok('write_knowledge', { knowledge_id: id, expected_version: 4, content: '# Checklist\n\nv4', publish: true }), {
        knowledge_id: id,
        title,
        version_id: live.version_id,
        version: 4,
        updated: false,
        published: false,
        created: false,
      });
    });

    it('publishes an unpublished latest version on an unchanged write with publish: true, without a new version', async () => {
      const admin = await suite.agent('admin-bot');
      const { id, title, v4 } = await fourthPublished();
      await admin.ok('publish_knowledge', { knowledge_id: id, version: 2 });
      assert.deepEqual(await admin.ok('write_knowledge', { knowledge_id: id, expected_version: 4, content: '# Checklist\n\nv4', publish: true }), {
        knowledge_id: id,
        title,
        version_id: v4,
        version: 4,
        updated: false,
        published: true,
        created: false,
      });
    });

    it('replaces existing Knowledge with empty content, keeping the dates of the create', async () => {
      const admin = await suite.agent('admin-bot');
      const { id, reviewBy, expiresAt } = await fourthPublished();
      const empty = await admin.ok<CreatedKnowledge>('write_knowledge', { knowledge_id: id, expected_version: 4, content: '' });
      assert.partialDeepStrictEqual(empty, { version: 5, updated: true });
      const read = await admin.ok<Read>('read_knowledge', { knowledge_id: id });
      assert.partialDeepStrictEqual(read, { content: '', version: 5, published_version: 4, publication_status: 'unpublished_changes' });
      // The dates stayed those of the create.
      assert.partialDeepStrictEqual(read, { review_by: reviewBy, expires_at: expiresAt });
    });

    it('defaults new Knowledge to informational without dates, accepts a 200-character title and upper-case ids', async () => {
      const admin = await suite.agent('admin-bot');
      const title = `${suite.unique('T')}-`.padEnd(200, 'x');
      assert.equal(title.length, 200);
      const created = await createKnowledge(admin, title);
      assert.equal(created.title, title);
      const read = await admin.ok<Read>('read_knowledge', { knowledge_id: created.knowledge_id.toUpperCase() });
      assert.partialDeepStrictEqual(read, {
        knowledge_id: created.knowledge_id,
        authority: 'informational',
        review_by: null,
        expires_at: null,
        status: 'live',
      });
      // 200 characters that are not all one UTF-16 unit each.
      const wide = `${suite.unique('W')}-${'🚀'.repeat(200)}`;
      const wideTitle = [...wide].slice(0, 200).join('');
      assert.equal((await createKnowledge(admin, wideTitle)).title, wideTitle);
      // The title is trimmed.
      const padded = suite.unique('Padded');
      assert.equal((await admin.ok<CreatedKnowledge>('write_knowledge', { title: `  ${padded}\t`, expected_version: 0, content: 'x' })).title, padded);
      // Titles may repeat, as in Alignbase.
      const twin = await createKnowledge(admin, title);
      assert.notEqual(twin.knowledge_id, created.knowledge_id);
    });

    it('marks Knowledge expired from its expires_at date (UTC) on, live before it', async () => {
      const admin = await suite.agent('admin-bot');
      const cases: [string, string, string | undefined][] = [
        [suite.unique('Expired long ago'), '2020-01-31', '2020-01-01'],
        // Two days ahead, so that a run across midnight (UTC) does not change the answer.
        [suite.unique('Expires soon'), utcDate(2), undefined],
      ];
      for (const [title, expiresAt, reviewBy] of cases) {
        const created = await createKnowledge(admin, title, { expires_at: expiresAt, ...(reviewBy === undefined ? {} : { review_by: reviewBy }) });
        const read = await admin.ok<Read>('read_knowledge', { knowledge_id: created.knowledge_id });
        assert.partialDeepStrictEqual(read, { expires_at: expiresAt, review_by: reviewBy ?? null, status: expiresAt.startsWith('2020') ? 'expired' : 'live' });
        assert.equal((await listed('admin-bot', created.knowledge_id))?.status, read.status);
      }
      // On the day itself: expired. (Checked only when the UTC date did not change during the calls.)
      const before = utcDate();
      const today = await createKnowledge(admin, suite.unique('Expires today'), { expires_at: before, review_by: before });
      const read = await admin.ok<Read>('read_knowledge', { knowledge_id: today.knowledge_id });
      if (utcDate() === before) assert.equal(read.status, 'expired');
      // A review date alone never expires anything.
      const reviewed = await createKnowledge(admin, suite.unique('Review overdue'), { review_by: '2020-01-01' });
      assert.equal((await admin.ok<Read>('read_knowledge', { knowledge_id: reviewed.knowledge_id })).status, 'live');
    });

    it('ignores dates on writes of existing Knowledge but still refuses malformed ones', async () => {
      const admin = await suite.agent('admin-bot');
      const created = await createKnowledge(admin, suite.unique('Dated'), { review_by: '2030-01-01', expires_at: '2030-02-01' });
      const written = await admin.ok<CreatedKnowledge>('write_knowledge', {
        knowledge_id: created.knowledge_id,
        expected_version: 1,
        content: 'v2',
        review_by: '2031-01-01',
        expires_at: '2031-02-01',
      });
      assert.equal(written.version, 2);
      const read = await admin.ok<Read>('read_knowledge', { knowledge_id: created.knowledge_id });
      assert.partialDeepStrictEqual(read, { review_by: '2030-01-01', expires_at: '2030-02-01' });
      const before = await snapshot(suite.db, suite.tenantId);
      assert.equal(
        await admin.fail('write_knowledge', { knowledge_id: created.knowledge_id, expected_version: 2, content: 'v3', review_by: '01/02/2031' }),
        'review_by must use YYYY-MM-DD format',
      );
      assert.deepEqual(await snapshot(suite.db, suite.tenantId), before);
    });

    describe('answers every applicable error of the spec’s table verbatim, and a failed call changes nothing', () => {
      // Every test below reads the two Knowledge made here: one at version 2, never published,
      // and one never published. Their calls all fail, and each test checks that they changed
      // nothing, so no test depends on another's leftovers.
      let id: string;
      let unpublishedId: string;
      before(async () => {
        const admin = await suite.agent('admin-bot');
        id = (await createKnowledge(admin, suite.unique('Errors'))).knowledge_id;
        unpublishedId = (await createKnowledge(admin, suite.unique('Never published'))).knowledge_id;
        await admin.ok('write_knowledge', { knowledge_id: id, expected_version: 1, content: 'v2' });
      });

      /** Each call, made as `agentName`, fails with its text verbatim; together they change no row of the tenant and no listed Knowledge. */
      async function refusesAll(agentName: string, cases: readonly Refusal[]): Promise<void> {
        const admin = await suite.agent('admin-bot');
        const agent = await suite.agent(agentName);
        const rows = await snapshot(suite.db, suite.tenantId);
        const listBefore = await admin.ok('list_knowledge');
        for (const [tool, args, text] of cases) {
          assert.equal(await agent.fail(tool, args), text, `${agent.name} ${tool} ${JSON.stringify(args)}`);
        }
        assert.deepEqual(await snapshot(suite.db, suite.tenantId), rows);
        assert.deepEqual(await admin.ok('list_knowledge'), listBefore);
        const read = await admin.ok<Read>('read_knowledge', { knowledge_id: id });
        assert.partialDeepStrictEqual(read, { version: 2, content: 'v2', published_version: null });
      }

      it('answers invalid knowledge_id for an id that is not a UUID, in every Knowledge tool', async () => {
        await refusesAll('admin-bot', [
          ['read_knowledge', { knowledge_id: 'not-a-uuid' }, 'invalid knowledge_id'],
          ['read_knowledge', { knowledge_id: `${id}x` }, 'invalid knowledge_id'],
          ['publish_knowledge', { knowledge_id: '123' }, 'invalid knowledge_id'],
          ['write_knowledge', { knowledge_id: 'nope', expected_version: 1, content: 'x' }, 'invalid knowledge_id'],
          ['create_knowledge_draft', { knowledge_id: 'nope', base_version: 1, content: 'x' }, 'invalid knowledge_id'],
          ['list_knowledge_drafts', { knowledge_id: 'nope' }, 'invalid knowledge_id'],
        ]);
      });

      it('answers Knowledge not found for an id no Knowledge has, in every Knowledge tool', async () => {
        await refusesAll('admin-bot', [
          ['read_knowledge', { knowledge_id: RANDOM_ID }, 'Knowledge not found'],
          ['publish_knowledge', { knowledge_id: RANDOM_ID }, 'Knowledge not found'],
          ['write_knowledge', { knowledge_id: RANDOM_ID, expected_version: 1, content: 'x' }, 'Knowledge not found'],
          ['list_knowledge_drafts', { knowledge_id: RANDOM_ID }, 'Knowledge not found'],
          ['create_knowledge_draft', { knowledge_id: RANDOM_ID, base_version: 1, content: 'x' }, 'Knowledge not found'],
        ]);
      });

      it('answers that never published Knowledge has no published version', async () => {
        await refusesAll('admin-bot', [['read_knowledge', { knowledge_id: unpublishedId, version: 'published' }, 'this Knowledge has no published version']]);
      });

      it('answers Knowledge version not found for a version after the latest', async () => {
        await refusesAll('admin-bot', [
          ['read_knowledge', { knowledge_id: id, version: 3 }, 'Knowledge version not found'],
          ['read_knowledge', { knowledge_id: id, version: '99' }, 'Knowledge version not found'],
          ['publish_knowledge', { knowledge_id: id, version: 3 }, 'Knowledge version not found'],
          ['create_knowledge_draft', { knowledge_id: id, base_version: 3, content: 'x' }, 'Knowledge version not found'],
        ]);
      });

      it('refuses read selectors other than latest, published or a positive version number', async () => {
        await refusesAll('admin-bot', [
          ...['draft', 'Latest', 'PUBLISHED', '', '0', '-1', '1.0', ' 1', '1e1', '01'].map((version): Refusal => [
            'read_knowledge',
            { knowledge_id: id, version },
            'version must be latest, published, or a positive version number',
          ]),
          ...[0, -1, 1.5].map((version): Refusal => [
            'read_knowledge',
            { knowledge_id: id, version },
            'version must be latest, published, or a positive version number',
          ]),
        ]);
      });

      it('refuses publish selectors other than latest or a positive version number', async () => {
        await refusesAll('admin-bot', [
          ...['published', 'draft', '0', '', '2.5'].map((version): Refusal => [
            'publish_knowledge',
            { knowledge_id: id, version },
            'version must be latest or a positive version number',
          ]),
          ...[0, -2, 1.5].map((version): Refusal => [
            'publish_knowledge',
            { knowledge_id: id, version },
            'version must be latest or a positive version number',
          ]),
        ]);
      });

      it('answers a version conflict to a write whose expected_version is behind or ahead of the latest', async () => {
        await refusesAll('admin-bot', [
          ['write_knowledge', { knowledge_id: id, expected_version: 1, content: 'stale' }, 'version conflict: read the Knowledge again before writing'],
          ['write_knowledge', { knowledge_id: id, expected_version: 3, content: 'ahead' }, 'version conflict: read the Knowledge again before writing'],
          ['write_knowledge', { knowledge_id: id, expected_version: 1, content: 'v2' }, 'version conflict: read the Knowledge again before writing'],
        ]);
      });

      it('refuses an expected_version below 0, and a knowledge_id missing from a write or given with a create', async () => {
        await refusesAll('admin-bot', [
          ['write_knowledge', { knowledge_id: id, expected_version: -1, content: 'x' }, 'expected_version must be 0 for create or positive for write'],
          ['write_knowledge', { title: 'x', expected_version: -1, content: 'x' }, 'expected_version must be 0 for create or positive for write'],
          ['write_knowledge', { expected_version: 2, content: 'x' }, 'knowledge_id is required when expected_version is greater than 0'],
          ['write_knowledge', { title: 'T', expected_version: 1, content: 'x' }, 'knowledge_id is required when expected_version is greater than 0'],
          ['write_knowledge', { knowledge_id: id, title: 'T', expected_version: 0, content: 'x' }, 'knowledge_id must be omitted when expected_version is 0'],
        ]);
      });

      it('refuses a create without a title, with a title over 200 characters, or without content', async () => {
        await refusesAll('admin-bot', [
          ['write_knowledge', { expected_version: 0, content: 'x' }, 'title required'],
          ['write_knowledge', { title: '', expected_version: 0, content: 'x' }, 'title required'],
          ['write_knowledge', { title: ' \t\n ', expected_version: 0, content: 'x' }, 'title required'],
          ['write_knowledge', { title: 'x'.repeat(201), expected_version: 0, content: 'x' }, 'title too long'],
          ['write_knowledge', { title: '🚀'.repeat(201), expected_version: 0, content: 'x' }, 'title too long'],
          ['write_knowledge', { title: 'No content', expected_version: 0, content: '' }, 'content is required'],
        ]);
      });

      it('refuses content over 1 MiB of UTF-8, in every way Knowledge content arrives', async () => {
        await refusesAll('admin-bot', [
          ['write_knowledge', { title: 'Too big', expected_version: 0, content: 'x'.repeat(1024 * 1024 + 1) }, 'Knowledge content must be 1 MB or smaller'],
          ['write_knowledge', { title: 'Too big', expected_version: 0, content: 'é'.repeat(512 * 1024 + 1) }, 'Knowledge content must be 1 MB or smaller'],
          ['write_knowledge', { knowledge_id: id, expected_version: 2, content: 'x'.repeat(1024 * 1024 + 1) }, 'Knowledge content must be 1 MB or smaller'],
          ['create_knowledge_draft', { knowledge_id: id, base_version: 2, content: 'x'.repeat(1024 * 1024 + 1) }, 'Knowledge content must be 1 MB or smaller'],
          ['propose_knowledge', { title: 'Too big', content: '€'.repeat(349_526) }, 'Knowledge content must be 1 MB or smaller'],
        ]);
      });

      it('refuses review_by and expires_at that are not YYYY-MM-DD dates, and expires_at before review_by', async () => {
        await refusesAll('admin-bot', [
          ...['2026-1-01', '2026-02-30', '2026-13-01', 'tomorrow', '2026-06-23T00:00:00Z', '20260623', ''].flatMap((date): Refusal[] => [
            ['write_knowledge', { title: 'Dated', expected_version: 0, content: 'x', review_by: date }, 'review_by must use YYYY-MM-DD format'],
            ['write_knowledge', { title: 'Dated', expected_version: 0, content: 'x', expires_at: date }, 'expires_at must use YYYY-MM-DD format'],
          ]),
          [
            'write_knowledge',
            { title: 'Dated', expected_version: 0, content: 'x', review_by: '2030-02-01', expires_at: '2030-01-31' },
            'expires_at cannot be before review_by',
          ],
        ]);
      });

      it('answers forbidden to a Viewer that writes, publishes or creates Knowledge', async () => {
        await refusesAll('viewer-bot', [
          ['write_knowledge', { knowledge_id: id, expected_version: 2, content: 'viewer' }, 'forbidden'],
          ['publish_knowledge', { knowledge_id: id }, 'forbidden'],
          ['write_knowledge', { title: 'By a viewer', expected_version: 0, content: 'x' }, 'forbidden'],
        ]);
      });

      it('answers Knowledge not found to an agent that cannot read the Knowledge, in every Knowledge tool, and lists it none', async () => {
        await refusesAll(
          'outsider-bot',
          (
            [
              ['read_knowledge', { knowledge_id: id }],
              ['read_knowledge', { knowledge_id: id, version: 'published' }],
              ['publish_knowledge', { knowledge_id: id }],
              ['write_knowledge', { knowledge_id: id, expected_version: 2, content: 'outsider' }],
              ['create_knowledge_draft', { knowledge_id: id, base_version: 2, content: 'outsider' }],
              ['list_knowledge_drafts', { knowledge_id: id }],
            ] as const
          ).map(([tool, args]): Refusal => [tool, args, 'Knowledge not found']),
        );
        assert.deepEqual(await (await suite.agent('outsider-bot')).ok('list_knowledge'), { knowledge: [] });
      });
    });

    it('accepts equal review_by and expires_at, and either alone', async () => {
      const admin = await suite.agent('admin-bot');
      for (const dates of [{ review_by: '2030-05-05', expires_at: '2030-05-05' }, { review_by: '2030-05-05' }, { expires_at: '2030-05-05' }]) {
        const created = await createKnowledge(admin, suite.unique('Dates'), dates);
        const read = await admin.ok<Read>('read_knowledge', { knowledge_id: created.knowledge_id });
        assert.partialDeepStrictEqual(read, { review_by: dates.review_by ?? null, expires_at: dates.expires_at ?? null });
      }
    });
  });
}
