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

const RANDOM_ID = '0b1e7c5e-8f43-4d8e-9a51-3c2d1f0e9b7a';

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

    it('creates, lists, reads, writes and publishes with the spec’s shapes and publication transitions', async () => {
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
      assertShape('write_knowledge', created, KNOWLEDGE_WRITE);
      assert.deepEqual(
        { ...created, knowledge_id: '', version_id: '' },
        { knowledge_id: '', title, version_id: '', version: 1, updated: true, published: false, created: true },
      );
      const id = created.knowledge_id;
      const v1 = created.version_id;

      // Saved, never published.
      let item = await listed('admin-bot', id);
      assert.ok(item);
      assert.equal(item.title, title);
      assert.deepEqual(
        [
          item.current_version_id,
          item.current_version,
          item.latest_version_id,
          item.latest_version,
          item.published_version_id,
          item.published_version,
          item.published_version_created_at,
        ],
        [v1, 1, v1, 1, null, null, null],
      );
      assert.equal(item.current_version_created_at, item.latest_version_created_at);
      assert.deepEqual([item.review_by, item.expires_at, item.status], [reviewBy, expiresAt, 'live']);
      assert.deepEqual([item.publication_status, item.has_unpublished_changes], ['unpublished', true]);
      assert.deepEqual([item.can_read, item.can_draft, item.can_edit, item.can_publish], [true, true, true, true]);

      let read = await admin.ok<Read>('read_knowledge', { knowledge_id: id });
      assertShape('read_knowledge', read, KNOWLEDGE_READ);
      assert.deepEqual(
        [
          read.knowledge_id,
          read.title,
          read.version_id,
          read.version,
          read.latest_version,
          read.published_version,
          read.is_published_version,
          read.has_unpublished_changes,
          read.content,
          read.authority,
          read.publication_status,
        ],
        [id, title, v1, 1, 1, null, false, true, '# Checklist\n\nv1', 'must_follow', 'unpublished'],
      );
      assert.equal(read.created_at, item.created_at);
      assert.equal(read.version_created_at, item.latest_version_created_at);

      // Publish the latest; again is published: false.
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
      item = await listed('admin-bot', id);
      assert.deepEqual(
        [item?.published_version_id, item?.published_version, item?.publication_status, item?.has_unpublished_changes],
        [v1, 1, 'published', false],
      );
      assert.equal(item?.published_version_created_at, item?.latest_version_created_at);

      // A new version, authority omitted: kept.
      const written = await admin.ok<CreatedKnowledge>('write_knowledge', { knowledge_id: id, expected_version: 1, content: '# Checklist\n\nv2' });
      assertShape('write_knowledge', written, KNOWLEDGE_WRITE);
      assert.deepEqual(
        { ...written, version_id: '' },
        { knowledge_id: id, title, version_id: '', version: 2, updated: true, published: false, created: false },
      );
      assert.notEqual(written.version_id, v1);
      const v2 = written.version_id;
      read = await admin.ok<Read>('read_knowledge', { knowledge_id: id, version: 'latest' });
      assert.deepEqual(
        [read.version_id, read.version, read.authority, read.content, read.is_published_version, read.published_version],
        [v2, 2, 'must_follow', '# Checklist\n\nv2', false, 1],
      );
      assert.deepEqual([read.publication_status, read.has_unpublished_changes], ['unpublished_changes', true]);
      item = await listed('admin-bot', id);
      assert.deepEqual([item?.latest_version_id, item?.latest_version, item?.published_version_id, item?.published_version], [v2, 2, v1, 1]);
      assert.deepEqual([item?.publication_status, item?.has_unpublished_changes], ['unpublished_changes', true]);
      assert.notEqual(item?.published_version_created_at, null);

      // Every selector; version ids are stable.
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
        assert.deepEqual([got.version_id, got.content, got.is_published_version], [versionId, content, versionId === v1], `version ${String(version)}`);
        assert.equal(got.latest_version, 2);
      }

      // The same content and authority: updated: false, no version.
      const same = await admin.ok<CreatedKnowledge>('write_knowledge', {
        knowledge_id: id,
        expected_version: 2,
        content: '# Checklist\n\nv2',
        authority: 'must_follow',
      });
      assert.deepEqual(same, { knowledge_id: id, title, version_id: v2, version: 2, updated: false, published: false, created: false });
      assert.equal((await listed('admin-bot', id))?.latest_version, 2);

      // Only the authority differs: a new version.
      const authority = await admin.ok<CreatedKnowledge>('write_knowledge', {
        knowledge_id: id,
        expected_version: 2,
        content: '# Checklist\n\nv2',
        authority: 'informational',
      });
      assert.deepEqual([authority.version, authority.updated], [3, true]);
      assert.equal((await admin.ok<Read>('read_knowledge', { knowledge_id: id })).authority, 'informational');

      // Publishing an exact version (a numeric string), then an older one again.
      assert.deepEqual(await admin.ok('publish_knowledge', { knowledge_id: id, version: '3' }), {
        knowledge_id: id,
        title,
        version_id: authority.version_id,
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
      item = await listed('admin-bot', id);
      assert.deepEqual(
        [item?.published_version, item?.latest_version, item?.publication_status, item?.has_unpublished_changes],
        [1, 3, 'unpublished_changes', true],
      );

      // publish: true with a write; then an unchanged write with publish: true of the published latest.
      const live = await admin.ok<CreatedKnowledge>('write_knowledge', { knowledge_id: id, expected_version: 3, content: '# Checklist\n\nv4', publish: true });
      assert.deepEqual([live.version, live.updated, live.published, live.created], [4, true, true, false]);
      item = await listed('admin-bot', id);
      assert.deepEqual([item?.published_version_id, item?.published_version, item?.publication_status], [live.version_id, 4, 'published']);
      assert.deepEqual(await admin.ok('write_knowledge', { knowledge_id: id, expected_version: 4, content: '# Checklist\n\nv4', publish: true }), {
        knowledge_id: id,
        title,
        version_id: live.version_id,
        version: 4,
        updated: false,
        published: false,
        created: false,
      });

      // An unchanged write with publish: true publishes the unpublished latest without a new version.
      await admin.ok('publish_knowledge', { knowledge_id: id, version: 2 });
      assert.deepEqual(await admin.ok('write_knowledge', { knowledge_id: id, expected_version: 4, content: '# Checklist\n\nv4', publish: true }), {
        knowledge_id: id,
        title,
        version_id: live.version_id,
        version: 4,
        updated: false,
        published: true,
        created: false,
      });

      // Empty content replaces an existing Knowledge.
      const empty = await admin.ok<CreatedKnowledge>('write_knowledge', { knowledge_id: id, expected_version: 4, content: '' });
      assert.deepEqual([empty.version, empty.updated], [5, true]);
      read = await admin.ok<Read>('read_knowledge', { knowledge_id: id });
      assert.deepEqual([read.content, read.version, read.published_version, read.publication_status], ['', 5, 4, 'unpublished_changes']);
      // The dates stayed those of the create.
      assert.deepEqual([read.review_by, read.expires_at], [reviewBy, expiresAt]);
    });

    it('defaults new Knowledge to informational without dates, accepts a 200-character title and upper-case ids', async () => {
      const admin = await suite.agent('admin-bot');
      const title = `${suite.unique('T')}-`.padEnd(200, 'x');
      assert.equal(title.length, 200);
      const created = await createKnowledge(admin, title);
      assert.equal(created.title, title);
      const read = await admin.ok<Read>('read_knowledge', { knowledge_id: created.knowledge_id.toUpperCase() });
      assert.deepEqual(
        [read.knowledge_id, read.authority, read.review_by, read.expires_at, read.status],
        [created.knowledge_id, 'informational', null, null, 'live'],
      );
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
        assert.deepEqual([read.expires_at, read.review_by, read.status], [expiresAt, reviewBy ?? null, expiresAt.startsWith('2020') ? 'expired' : 'live']);
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
      assert.deepEqual([read.review_by, read.expires_at], ['2030-01-01', '2030-02-01']);
      const before = await snapshot(suite.db, suite.tenantId);
      assert.equal(
        await admin.fail('write_knowledge', { knowledge_id: created.knowledge_id, expected_version: 2, content: 'v3', review_by: '01/02/2031' }),
        'review_by must use YYYY-MM-DD format',
      );
      assert.deepEqual(await snapshot(suite.db, suite.tenantId), before);
    });

    it('answers every applicable error of the spec’s table verbatim, and a failed call changes nothing', async () => {
      const admin = await suite.agent('admin-bot');
      const viewer = await suite.agent('viewer-bot');
      const outsider = await suite.agent('outsider-bot');
      const title = suite.unique('Errors');
      const created = await createKnowledge(admin, title);
      const id = created.knowledge_id;
      const unpublished = await createKnowledge(admin, suite.unique('Never published'));
      await admin.ok('write_knowledge', { knowledge_id: id, expected_version: 1, content: 'v2' });

      const before = await snapshot(suite.db, suite.tenantId);
      const listBefore = await admin.ok('list_knowledge');
      const cases: [string, Record<string, unknown>, string][] = [
        // invalid knowledge_id
        ['read_knowledge', { knowledge_id: 'not-a-uuid' }, 'invalid knowledge_id'],
        ['read_knowledge', { knowledge_id: `${id}x` }, 'invalid knowledge_id'],
        ['publish_knowledge', { knowledge_id: '123' }, 'invalid knowledge_id'],
        ['write_knowledge', { knowledge_id: 'nope', expected_version: 1, content: 'x' }, 'invalid knowledge_id'],
        ['create_knowledge_draft', { knowledge_id: 'nope', base_version: 1, content: 'x' }, 'invalid knowledge_id'],
        ['list_knowledge_drafts', { knowledge_id: 'nope' }, 'invalid knowledge_id'],
        // Knowledge not found: nonexistent
        ['read_knowledge', { knowledge_id: RANDOM_ID }, 'Knowledge not found'],
        ['publish_knowledge', { knowledge_id: RANDOM_ID }, 'Knowledge not found'],
        ['write_knowledge', { knowledge_id: RANDOM_ID, expected_version: 1, content: 'x' }, 'Knowledge not found'],
        ['list_knowledge_drafts', { knowledge_id: RANDOM_ID }, 'Knowledge not found'],
        ['create_knowledge_draft', { knowledge_id: RANDOM_ID, base_version: 1, content: 'x' }, 'Knowledge not found'],
        // this Knowledge has no published version
        ['read_knowledge', { knowledge_id: unpublished.knowledge_id, version: 'published' }, 'this Knowledge has no published version'],
        // Knowledge version not found
        ['read_knowledge', { knowledge_id: id, version: 3 }, 'Knowledge version not found'],
        ['read_knowledge', { knowledge_id: id, version: '99' }, 'Knowledge version not found'],
        ['publish_knowledge', { knowledge_id: id, version: 3 }, 'Knowledge version not found'],
        ['create_knowledge_draft', { knowledge_id: id, base_version: 3, content: 'x' }, 'Knowledge version not found'],
        // read selectors
        ...['draft', 'Latest', 'PUBLISHED', '', '0', '-1', '1.0', ' 1', '1e1', '01'].map((version): [string, Record<string, unknown>, string] => [
          'read_knowledge',
          { knowledge_id: id, version },
          'version must be latest, published, or a positive version number',
        ]),
        ...[0, -1, 1.5].map((version): [string, Record<string, unknown>, string] => [
          'read_knowledge',
          { knowledge_id: id, version },
          'version must be latest, published, or a positive version number',
        ]),
        // publish selectors
        ...['published', 'draft', '0', '', '2.5'].map((version): [string, Record<string, unknown>, string] => [
          'publish_knowledge',
          { knowledge_id: id, version },
          'version must be latest or a positive version number',
        ]),
        ...[0, -2, 1.5].map((version): [string, Record<string, unknown>, string] => [
          'publish_knowledge',
          { knowledge_id: id, version },
          'version must be latest or a positive version number',
        ]),
        // version conflicts: behind and ahead
        ['write_knowledge', { knowledge_id: id, expected_version: 1, content: 'stale' }, 'version conflict: read the Knowledge again before writing'],
        ['write_knowledge', { knowledge_id: id, expected_version: 3, content: 'ahead' }, 'version conflict: read the Knowledge again before writing'],
        ['write_knowledge', { knowledge_id: id, expected_version: 1, content: 'v2' }, 'version conflict: read the Knowledge again before writing'],
        // expected_version and knowledge_id
        ['write_knowledge', { knowledge_id: id, expected_version: -1, content: 'x' }, 'expected_version must be 0 for create or positive for write'],
        ['write_knowledge', { title: 'x', expected_version: -1, content: 'x' }, 'expected_version must be 0 for create or positive for write'],
        ['write_knowledge', { expected_version: 2, content: 'x' }, 'knowledge_id is required when expected_version is greater than 0'],
        ['write_knowledge', { title: 'T', expected_version: 1, content: 'x' }, 'knowledge_id is required when expected_version is greater than 0'],
        ['write_knowledge', { knowledge_id: id, title: 'T', expected_version: 0, content: 'x' }, 'knowledge_id must be omitted when expected_version is 0'],
        // create rules
        ['write_knowledge', { expected_version: 0, content: 'x' }, 'title required'],
        ['write_knowledge', { title: '', expected_version: 0, content: 'x' }, 'title required'],
        ['write_knowledge', { title: ' \t\n ', expected_version: 0, content: 'x' }, 'title required'],
        ['write_knowledge', { title: 'x'.repeat(201), expected_version: 0, content: 'x' }, 'title too long'],
        ['write_knowledge', { title: '🚀'.repeat(201), expected_version: 0, content: 'x' }, 'title too long'],
        ['write_knowledge', { title: 'No content', expected_version: 0, content: '' }, 'content is required'],
        // 1 MiB of UTF-8 at most, in every way Knowledge content arrives
        ['write_knowledge', { title: 'Too big', expected_version: 0, content: 'x'.repeat(1024 * 1024 + 1) }, 'Knowledge content must be 1 MB or smaller'],
        ['write_knowledge', { title: 'Too big', expected_version: 0, content: 'é'.repeat(512 * 1024 + 1) }, 'Knowledge content must be 1 MB or smaller'],
        ['write_knowledge', { knowledge_id: id, expected_version: 2, content: 'x'.repeat(1024 * 1024 + 1) }, 'Knowledge content must be 1 MB or smaller'],
        ['create_knowledge_draft', { knowledge_id: id, base_version: 2, content: 'x'.repeat(1024 * 1024 + 1) }, 'Knowledge content must be 1 MB or smaller'],
        ['propose_knowledge', { title: 'Too big', content: '€'.repeat(349_526) }, 'Knowledge content must be 1 MB or smaller'],
        // dates
        ...['2026-1-01', '2026-02-30', '2026-13-01', 'tomorrow', '2026-06-23T00:00:00Z', '20260623', ''].flatMap(
          (date): [string, Record<string, unknown>, string][] => [
            ['write_knowledge', { title: 'Dated', expected_version: 0, content: 'x', review_by: date }, 'review_by must use YYYY-MM-DD format'],
            ['write_knowledge', { title: 'Dated', expected_version: 0, content: 'x', expires_at: date }, 'expires_at must use YYYY-MM-DD format'],
          ],
        ),
        [
          'write_knowledge',
          { title: 'Dated', expected_version: 0, content: 'x', review_by: '2030-02-01', expires_at: '2030-01-31' },
          'expires_at cannot be before review_by',
        ],
        // forbidden: readable but not writable
        ['write_knowledge', { knowledge_id: id, expected_version: 2, content: 'viewer' }, 'forbidden'],
        ['publish_knowledge', { knowledge_id: id }, 'forbidden'],
        ['write_knowledge', { title: 'By a viewer', expected_version: 0, content: 'x' }, 'forbidden'],
      ];
      for (const [tool, args, text] of cases) {
        const agent = text === 'forbidden' ? viewer : admin;
        assert.equal(await agent.fail(tool, args), text, `${agent.name} ${tool} ${JSON.stringify(args)}`);
      }
      // Not readable is not found, for every Knowledge tool.
      for (const [tool, args] of [
        ['read_knowledge', { knowledge_id: id }],
        ['read_knowledge', { knowledge_id: id, version: 'published' }],
        ['publish_knowledge', { knowledge_id: id }],
        ['write_knowledge', { knowledge_id: id, expected_version: 2, content: 'outsider' }],
        ['create_knowledge_draft', { knowledge_id: id, base_version: 2, content: 'outsider' }],
        ['list_knowledge_drafts', { knowledge_id: id }],
      ] as const) {
        assert.equal(await outsider.fail(tool, args), 'Knowledge not found', `outsider ${tool}`);
      }
      assert.deepEqual(await outsider.ok('list_knowledge'), { knowledge: [] });

      assert.deepEqual(await snapshot(suite.db, suite.tenantId), before);
      assert.deepEqual(await admin.ok('list_knowledge'), listBefore);
      const read = await admin.ok<Read>('read_knowledge', { knowledge_id: id });
      assert.deepEqual([read.version, read.content, read.published_version], [2, 'v2', null]);
    });

    it('accepts equal review_by and expires_at, and either alone', async () => {
      const admin = await suite.agent('admin-bot');
      for (const dates of [{ review_by: '2030-05-05', expires_at: '2030-05-05' }, { review_by: '2030-05-05' }, { expires_at: '2030-05-05' }]) {
        const created = await createKnowledge(admin, suite.unique('Dates'), dates);
        const read = await admin.ok<Read>('read_knowledge', { knowledge_id: created.knowledge_id });
        assert.deepEqual([read.review_by, read.expires_at], [dates.review_by ?? null, dates.expires_at ?? null]);
      }
    });
  });
}
