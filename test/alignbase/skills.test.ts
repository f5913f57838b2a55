import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { blobKey } from '../../connectors/blob/contract.ts';
import { storeBackends } from '../support/stores.ts';
import type { CreatedSkill } from './support.ts';
import {
  SKILL_CREATE,
  SKILL_ITEM,
  SKILL_MD,
  SKILL_PUBLISH,
  SKILL_READ,
  SKILL_WRITE,
  Suite,
  assertShape,
  b64,
  backendLabel,
  createSkill,
  snapshot,
  utcDate,
} from './support.ts';

type Item = Record<string, unknown> & { id: string; name: string };
type Manifest = { path: string; media_type: string; size: number; digest_encoding: string }[];
type Read = Record<string, unknown> & { skill_id: string; name: string; version_id: string; version: number; skill_md: string; attachments: Manifest };
type Written = { skill_id: string; name: string; directory_name: string; version_id: string; version: number; updated: boolean };

const RANDOM_ID = '5d0c2a8e-1f3b-4c6d-8e9f-0a1b2c3d4e5f';
const MiB = 1024 * 1024;
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(64)]);
const PACKAGE_ERROR = 'invalid skill package: ';

for (const backend of storeBackends()) {
  describe(`Alignbase Skill tools on ${backendLabel(backend)}`, () => {
    let suite: Suite;
    before(async () => {
      suite = await Suite.open(backend);
    });
    after(async () => {
      await suite?.close();
    });

    async function listed(id: string, agentName = 'admin-bot'): Promise<Item | undefined> {
      const { skills } = await (await suite.agent(agentName)).ok<{ skills: Item[] }>('list_skills');
      for (const item of skills) assertShape('list_skills item', item, SKILL_ITEM);
      return skills.find((s) => s.id === id);
    }

    it('creates, lists, reads and publishes a package with the spec’s shapes', async () => {
      const admin = await suite.agent('admin-bot');
      const name = suite.unique('release-check');
      const skillMd = SKILL_MD(name, 'Check a release before deployment.');
      const reviewBy = utcDate(10);
      const expiresAt = utcDate(20);
      const created = await admin.ok<CreatedSkill>('create_skill', {
        skill_md: skillMd,
        attachments: [
          { path: 'references/example.md', data_base64: b64('Reference text') },
          { path: 'assets/example.png', data_base64: b64(PNG) },
          { path: 'scripts/run', data_base64: b64('#!/usr/bin/env bash\necho ok\n') },
        ],
        review_by: reviewBy,
        expires_at: expiresAt,
      });
      assertShape('create_skill', created, SKILL_CREATE);
      assert.deepEqual({ ...created, skill_id: '', version_id: '' }, { skill_id: '', name, directory_name: name, version_id: '', version: 1, created: true });
      const id = created.skill_id;

      let item = await listed(id);
      assert.ok(item);
      assert.partialDeepStrictEqual(item, { name, directory_name: name, description: 'Check a release before deployment.' });
      assert.partialDeepStrictEqual(item, {
        latest_version_id: created.version_id,
        current_version_id: created.version_id,
        latest_version: 1,
        published_version_id: null,
        published_version: null,
      });
      assert.partialDeepStrictEqual(item, {
        review_by: reviewBy,
        expires_at: expiresAt,
        status: 'live',
        publication_status: 'unpublished',
        has_unpublished_changes: true,
      });
      assert.partialDeepStrictEqual(item, { can_read: true, can_draft: true, can_edit: true, can_publish: true });

      const read = await admin.ok<Read>('read_skill', { skill_id: id });
      assertShape('read_skill', read, SKILL_READ);
      assert.partialDeepStrictEqual(read, {
        skill_id: id,
        name,
        directory_name: name,
        description: 'Check a release before deployment.',
        version_id: created.version_id,
        version: 1,
        latest_version: 1,
        published_version: null,
        is_published_version: false,
        has_unpublished_changes: true,
      });
      assert.equal(read.skill_md, skillMd);
      assert.equal(read.attachment_format, 'v1');
      // Sorted by path; media types detected from the bytes.
      assert.deepEqual(read.attachments, [
        { path: 'assets/example.png', media_type: 'image/png', size: PNG.length, digest_encoding: 'binary' },
        { path: 'references/example.md', media_type: 'text/markdown', size: 14, digest_encoding: 'text' },
        { path: 'scripts/run', media_type: 'text/x-shellscript', size: 28, digest_encoding: 'text' },
      ]);
      assert.deepEqual(read.install_metadata, {
        'alignbase-origin': `${suite.running.gateway.services.config.publicUrl}/alignbase/mcp`,
        'alignbase-skill-id': id,
        'alignbase-channel': 'draft',
        'alignbase-version': '1',
        'alignbase-version-id': created.version_id,
      });

      const published = await admin.ok('publish_skill', { skill_id: id });
      assertShape('publish_skill', published, SKILL_PUBLISH);
      assert.deepEqual(published, { skill_id: id, name, version_id: created.version_id, version: 1, published: true });
      assert.deepEqual(await admin.ok('publish_skill', { skill_id: id, version: 1 }), { ...published, published: false });
      item = await listed(id);
      assert.partialDeepStrictEqual(item, {
        published_version_id: created.version_id,
        published_version: 1,
        publication_status: 'published',
        has_unpublished_changes: false,
      });
      const readPublished = await admin.ok<Read>('read_skill', { skill_id: id, version: 'published' });
      assert.partialDeepStrictEqual(readPublished, {
        version_id: created.version_id,
        is_published_version: true,
        install_metadata: { 'alignbase-channel': 'published' },
      });
    });

    it('marks a Skill expired from its expires_at date on, still listed and readable', async () => {
      const admin = await suite.agent('admin-bot');
      const expired = await createSkill(admin, suite.unique('expired'), { review_by: '2020-01-01', expires_at: '2020-02-01' });
      const live = await createSkill(admin, suite.unique('fresh'), { expires_at: utcDate(2) });
      assert.deepEqual(
        { expired: (await listed(expired.skill_id))?.status, live: (await listed(live.skill_id))?.status },
        { expired: 'expired', live: 'live' },
      );
      const read = await admin.ok<Read>('read_skill', { skill_id: expired.skill_id });
      assert.partialDeepStrictEqual(read, { status: 'expired', review_by: '2020-01-01', expires_at: '2020-02-01' });
    });

    it('keeps omitted attachments, clears them with [], replaces the set, and keeps each version’s own files', async () => {
      const admin = await suite.agent('admin-bot');
      const name = suite.unique('files');
      const created = await createSkill(admin, name, {
        attachments: [
          { path: 'a.md', data_base64: b64('A') },
          { path: 'b.txt', data_base64: b64('B') },
        ],
      });
      const id = created.skill_id;
      const manifest = async (version?: number) =>
        (await admin.ok<Read>('read_skill', version === undefined ? { skill_id: id } : { skill_id: id, version })).attachments.map((a) => a.path);

      // Omitted: kept, with a changed SKILL.md.
      const kept = await admin.ok<Written>('write_skill', { skill_id: id, expected_version: 1, skill_md: SKILL_MD(name, 'Second description.') });
      assertShape('write_skill', kept, SKILL_WRITE);
      assert.deepEqual({ ...kept, version_id: '' }, { skill_id: id, name, directory_name: name, version_id: '', version: 2, updated: true });
      assert.deepEqual(await manifest(), ['a.md', 'b.txt']);
      assert.equal((await listed(id))?.description, 'Second description.');

      // The same SKILL.md with a different file set: a new version.
      const replaced = await admin.ok<Written>('write_skill', {
        skill_id: id,
        expected_version: 2,
        skill_md: SKILL_MD(name, 'Second description.'),
        attachments: [{ path: 'c/d.json', data_base64: b64('{"x":1}') }],
      });
      assert.partialDeepStrictEqual(replaced, { version: 3, updated: true });
      const read = await admin.ok<Read>('read_skill', { skill_id: id });
      assert.deepEqual(read.attachments, [{ path: 'c/d.json', media_type: 'application/json', size: 7, digest_encoding: 'text' }]);

      // []: cleared.
      const cleared = await admin.ok<Written>('write_skill', {
        skill_id: id,
        expected_version: 3,
        skill_md: SKILL_MD(name, 'Second description.'),
        attachments: [],
      });
      assert.partialDeepStrictEqual(cleared, { version: 4, updated: true });
      assert.deepEqual(await manifest(), []);

      // [] again, or omitted, with the same SKILL.md: nothing to save.
      for (const attachments of [[], undefined]) {
        const same = await admin.ok<Written>('write_skill', {
          skill_id: id,
          expected_version: 4,
          skill_md: SKILL_MD(name, 'Second description.'),
          ...(attachments === undefined ? {} : { attachments }),
        });
        assert.deepEqual(same, { ...cleared, updated: false });
      }

      // The same files sent again in another order: unchanged too.
      const two = [
        { path: 'x.md', data_base64: b64('X') },
        { path: 'y.md', data_base64: b64('Y') },
      ];
      const withTwo = await admin.ok<Written>('write_skill', {
        skill_id: id,
        expected_version: 4,
        skill_md: SKILL_MD(name, 'Second description.'),
        attachments: two,
      });
      assert.equal(withTwo.version, 5);
      const again = await admin.ok<Written>('write_skill', {
        skill_id: id,
        expected_version: 5,
        skill_md: SKILL_MD(name, 'Second description.'),
        attachments: [...two].reverse(),
      });
      assert.deepEqual(again, { ...withTwo, updated: false });

      // Old versions keep their own files.
      assert.deepEqual(await manifest(1), ['a.md', 'b.txt']);
      assert.deepEqual(await manifest(3), ['c/d.json']);
      assert.deepEqual(await manifest(4), []);
      assert.equal((await listed(id))?.latest_version, 5);
    });

    it('answers a metadata-only change with the existing version and updated: true, an unchanged write with updated: false', async () => {
      const admin = await suite.agent('admin-bot');
      const name = suite.unique('dated');
      const created = await createSkill(admin, name, { review_by: '2030-01-01' });
      const id = created.skill_id;
      await admin.ok('publish_skill', { skill_id: id });
      const before = await listed(id);

      const dated = await admin.ok<Written>('write_skill', {
        skill_id: id,
        expected_version: 1,
        skill_md: SKILL_MD(name),
        review_by: '2030-02-01',
        expires_at: '2030-03-01',
      });
      assert.deepEqual(dated, { skill_id: id, name, directory_name: name, version_id: created.version_id, version: 1, updated: true });
      const after = await listed(id);
      assert.partialDeepStrictEqual(after, {
        review_by: '2030-02-01',
        expires_at: '2030-03-01',
        latest_version: 1,
        latest_version_id: created.version_id,
        publication_status: 'published',
      });
      assert.equal(after?.latest_version_created_at, before?.latest_version_created_at);

      // Omitted dates keep the stored ones; the same dates again change nothing.
      for (const dates of [{}, { review_by: '2030-02-01' }, { review_by: '2030-02-01', expires_at: '2030-03-01' }]) {
        const same = await admin.ok<Written>('write_skill', { skill_id: id, expected_version: 1, skill_md: SKILL_MD(name), ...dates });
        assert.deepEqual(same, { ...dated, updated: false }, JSON.stringify(dates));
      }
      // Order is checked against the kept date.
      const snap = await snapshot(suite.db, suite.tenantId);
      assert.equal(
        await admin.fail('write_skill', { skill_id: id, expected_version: 1, skill_md: SKILL_MD(name), expires_at: '2030-01-15' }),
        'expires_at cannot be before review_by',
      );
      assert.equal(
        await admin.fail('write_skill', { skill_id: id, expected_version: 1, skill_md: SKILL_MD(name), review_by: '2030-03-02' }),
        'expires_at cannot be before review_by',
      );
      assert.equal(
        await admin.fail('write_skill', { skill_id: id, expected_version: 1, skill_md: SKILL_MD(name), review_by: '2030-3-02' }),
        'review_by must use YYYY-MM-DD format',
      );
      assert.equal(
        await admin.fail('write_skill', { skill_id: id, expected_version: 1, skill_md: SKILL_MD(name), expires_at: '2030-02-31' }),
        'expires_at must use YYYY-MM-DD format',
      );
      assert.deepEqual(await snapshot(suite.db, suite.tenantId), snap);

      // A package change and a date change together: one new version.
      const both = await admin.ok<Written>('write_skill', {
        skill_id: id,
        expected_version: 1,
        skill_md: SKILL_MD(name, 'New words.'),
        expires_at: '2031-01-01',
      });
      assert.partialDeepStrictEqual(both, { version: 2, updated: true });
      const item = await listed(id);
      assert.partialDeepStrictEqual(item, {
        expires_at: '2031-01-01',
        latest_version: 2,
        published_version: 1,
        publication_status: 'unpublished_changes',
        has_unpublished_changes: true,
      });
    });

    it('renames through the frontmatter name and refuses a name another Skill has', async () => {
      const admin = await suite.agent('admin-bot');
      const oldName = suite.unique('old-name');
      const newName = suite.unique('new-name');
      const other = suite.unique('other-skill');
      const created = await createSkill(admin, oldName);
      await createSkill(admin, other);

      const renamed = await admin.ok<Written>('write_skill', { skill_id: created.skill_id, expected_version: 1, skill_md: SKILL_MD(newName) });
      assert.deepEqual(
        { ...renamed, version_id: '' },
        { skill_id: created.skill_id, name: newName, directory_name: newName, version_id: '', version: 2, updated: true },
      );
      assert.partialDeepStrictEqual(await listed(created.skill_id), { name: newName, directory_name: newName });
      const latest = await admin.ok<Read>('read_skill', { skill_id: created.skill_id });
      assert.partialDeepStrictEqual(latest, { name: newName, directory_name: newName });
      // Version 1 is still the package it was.
      const first = await admin.ok<Read>('read_skill', { skill_id: created.skill_id, version: 1 });
      assert.partialDeepStrictEqual(first, { name: oldName, directory_name: oldName, skill_md: SKILL_MD(oldName) });
      // The old name is free again.
      await createSkill(admin, oldName);

      const snap = await snapshot(suite.db, suite.tenantId);
      assert.equal(await admin.fail('create_skill', { skill_md: SKILL_MD(other) }), `${PACKAGE_ERROR}a skill named "${other}" already exists`);
      assert.equal(
        await admin.fail('write_skill', { skill_id: created.skill_id, expected_version: 2, skill_md: SKILL_MD(other) }),
        `${PACKAGE_ERROR}a skill named "${other}" already exists`,
      );
      assert.deepEqual(await snapshot(suite.db, suite.tenantId), snap);
      assert.equal((await listed(created.skill_id))?.name, newName);
    });

    it('validates SKILL.md frontmatter and attachments through the tools', async () => {
      const admin = await suite.agent('admin-bot');
      const target = await createSkill(admin, suite.unique('target'));
      const good = SKILL_MD('valid-name');
      const snap = await snapshot(suite.db, suite.tenantId);
      const skillMdCases: [string, RegExp][] = [
        ['no frontmatter at all', /^invalid skill package: skill_md must start with YAML frontmatter/],
        ['---\nname: x\ndescription: y\n', /^invalid skill package: frontmatter must close with a --- line$/],
        ['---\ndescription: y\n---\n', /^invalid skill package: frontmatter must include name$/],
        ['---\nname: x\n---\n', /^invalid skill package: frontmatter must include description$/],
        ['---\nname: Release-Check\ndescription: y\n---\n', /^invalid skill package: name must use lowercase letters, numbers, and single hyphens/],
        ['---\nname: release--check\ndescription: y\n---\n', /^invalid skill package: name cannot contain consecutive hyphens/],
        [`---\nname: ${'a'.repeat(65)}\ndescription: y\n---\n`, /^invalid skill package: name cannot exceed 64 characters/],
        ['---\nname: x\ndescription: "  "\n---\n', /^invalid skill package: description cannot be empty$/],
        [`---\nname: x\ndescription: ${'d'.repeat(1025)}\n---\n`, /^invalid skill package: description cannot exceed 1024 characters/],
        [`---\nname: x\ndescription: y\ncompatibility: ${'c'.repeat(501)}\n---\n`, /^invalid skill package: compatibility cannot exceed 500 characters/],
        ['---\nname: x\ndescription: y\nname: z\n---\n', /^invalid skill package: frontmatter has a duplicate key "name"/],
        ['---\n[1, 2\n---\n', /^invalid skill package: frontmatter is not valid YAML/],
      ];
      for (const [skillMd, error] of skillMdCases) {
        assert.match(await admin.fail('create_skill', { skill_md: skillMd }), error, `create_skill ${JSON.stringify(skillMd)}`);
        assert.match(
          await admin.fail('write_skill', { skill_id: target.skill_id, expected_version: 1, skill_md: skillMd }),
          error,
          `write_skill ${JSON.stringify(skillMd)}`,
        );
        assert.match(
          await admin.fail('create_skill_draft', { skill_id: target.skill_id, base_version: 1, skill_md: skillMd }),
          error,
          `create_skill_draft ${JSON.stringify(skillMd)}`,
        );
      }
      const attachmentCases: [{ path: string; data_base64: string }[], RegExp][] = [
        [
          [{ path: 'SKILL.md', data_base64: b64('x') }],
          /^invalid skill package: attachments\[0\]\.path "SKILL\.md" is not allowed: send SKILL\.md as skill_md/,
        ],
        [[{ path: '/etc/passwd', data_base64: b64('x') }], /^invalid skill package: attachments\[0\]\.path "\/etc\/passwd" must be relative/],
        [[{ path: '../up.md', data_base64: b64('x') }], /^invalid skill package: attachments\[0\]\.path "\.\.\/up\.md" must not contain \.\.$/],
        [[{ path: 'a\\b.md', data_base64: b64('x') }], /must not use backslashes/],
        [[{ path: 'a/./b.md', data_base64: b64('x') }], /needs normalization/],
        [[{ path: 'nul\u0000.md', data_base64: b64('x') }], /must not contain null bytes/],
        [[{ path: `${'p'.repeat(513)}`, data_base64: b64('x') }], /cannot exceed 512 characters/],
        [
          [
            { path: 'dup.md', data_base64: b64('x') },
            { path: 'dup.md', data_base64: b64('y') },
          ],
          /^invalid skill package: attachments\[1\]\.path "dup\.md" duplicates attachments\[0\]\.path "dup\.md"$/,
        ],
        [[{ path: 'empty.md', data_base64: '' }], /^invalid skill package: attachments\[0\] \("empty\.md"\) must have non-empty data_base64$/],
        [[{ path: 'bad.md', data_base64: 'not base64!' }], /^invalid skill package: attachments\[0\]\.data_base64 \("bad\.md"\) is not valid base64/],
      ];
      for (const [attachments, error] of attachmentCases) {
        assert.match(await admin.fail('create_skill', { skill_md: good, attachments }), error, JSON.stringify(attachments).slice(0, 100));
        assert.match(await admin.fail('write_skill', { skill_id: target.skill_id, expected_version: 1, skill_md: SKILL_MD(target.name), attachments }), error);
      }
      assert.deepEqual(await snapshot(suite.db, suite.tenantId), snap);

      // Accepted frontmatter: metadata of any YAML, license, allowed-tools, unknown keys, CRLF.
      const rich = await admin.ok<CreatedSkill>('create_skill', {
        skill_md: `---\r\nname: ${suite.unique('rich')}\r\ndescription: >\r\n  Folded description.\r\nlicense: MIT\r\nallowed-tools: [Read, Write]\r\nmetadata:\r\n  nested: { a: [1, 2] }\r\nmodel: any\r\n---\r\nBody\r\n`,
      });
      assert.equal((await admin.ok<Read>('read_skill', { skill_id: rich.skill_id })).description, 'Folded description.');
    });

    it('refuses oversize packages: a file over 2 MiB, more than 3 MiB in all, 501 files', async () => {
      const admin = await suite.agent('admin-bot');
      const name = suite.unique('big');
      const target = await createSkill(admin, name, {
        attachments: [
          { path: 'half.bin', data_base64: b64(randomBytes(1.5 * MiB)) },
          { path: 'more.bin', data_base64: b64(randomBytes(1.5 * MiB - 100)) },
        ],
      });
      const snap = await snapshot(suite.db, suite.tenantId);
      const skillMd = SKILL_MD(suite.unique('too-big'));
      assert.match(
        await admin.fail('create_skill', { skill_md: skillMd, attachments: [{ path: 'huge.bin', data_base64: b64(randomBytes(2 * MiB + 1)) }] }),
        /^invalid skill package: attachments\[0\] \("huge\.bin"\) cannot exceed 2 MiB decoded, got 2097153 bytes$/,
      );
      assert.match(
        await admin.fail('create_skill', {
          skill_md: skillMd,
          attachments: [1, 2].map((n) => ({ path: `part-${n}.bin`, data_base64: b64(randomBytes(1.5 * MiB + 1)) })),
        }),
        /^invalid skill package: total decoded package content cannot exceed 3 MiB \(3145728 bytes\), got \d+ bytes/,
      );
      const files = Array.from({ length: 500 }, (_, n) => ({ path: `f/${n}.txt`, data_base64: b64(`file ${n}`) }));
      assert.match(
        await admin.fail('create_skill', { skill_md: skillMd, attachments: files }),
        /^invalid skill package: a package cannot include more than 500 files, got 501/,
      );
      // Kept attachments count with a new SKILL.md.
      assert.match(
        await admin.fail('write_skill', { skill_id: target.skill_id, expected_version: 1, skill_md: SKILL_MD(name, 'Grown.', 'x'.repeat(200)) }),
        /^invalid skill package: total package content cannot exceed 3 MiB, got \d+ bytes with the kept attachments$/,
      );
      assert.deepEqual(await snapshot(suite.db, suite.tenantId), snap);

      // The limits themselves are accepted: a 2 MiB file, 500 files with SKILL.md.
      const exact = await admin.ok<CreatedSkill>('create_skill', {
        skill_md: SKILL_MD(suite.unique('exact')),
        attachments: [{ path: 'two.bin', data_base64: b64(randomBytes(2 * MiB)) }],
      });
      assert.equal((await admin.ok<Read>('read_skill', { skill_id: exact.skill_id })).attachments[0]?.size, 2 * MiB);
      const many = await admin.ok<CreatedSkill>('create_skill', { skill_md: SKILL_MD(suite.unique('many')), attachments: files.slice(0, 499) });
      assert.equal((await admin.ok<Read>('read_skill', { skill_id: many.skill_id })).attachments.length, 499);
    });

    it('stores no attachment bytes for a write_skill that is refused', async () => {
      const admin = await suite.agent('admin-bot');
      const name = suite.unique('guarded-bytes');
      const created = await createSkill(admin, name);
      await admin.ok('write_skill', { skill_id: created.skill_id, expected_version: 1, skill_md: SKILL_MD(name, 'v2') });
      const blob = suite.running.gateway.services.blob;
      const attempts: [string, Record<string, unknown>, string][] = [
        ['outsider-bot', { skill_id: created.skill_id, expected_version: 2 }, 'skill not found'],
        ['outsider-bot', { skill_id: RANDOM_ID, expected_version: 1 }, 'skill not found'],
        ['viewer-bot', { skill_id: created.skill_id, expected_version: 2 }, 'forbidden'],
        ['proposer-bot', { skill_id: created.skill_id, expected_version: 2 }, 'forbidden'],
        ['editor-bot', { skill_id: created.skill_id, expected_version: 1 }, 'version conflict: read the skill again before writing'],
        [
          'editor-bot',
          { skill_id: created.skill_id, expected_version: 2, expires_at: '2030-01-01', review_by: '2030-02-01' },
          'expires_at cannot be before review_by',
        ],
      ];
      const snap = await snapshot(suite.db, suite.tenantId);
      for (const [agentName, args, text] of attempts) {
        const bytes = randomBytes(4096);
        const result = await (
          await suite.agent(agentName)
        ).fail('write_skill', { ...args, skill_md: SKILL_MD(name, 'refused'), attachments: [{ path: 'payload.bin', data_base64: b64(bytes) }] });
        assert.equal(result, text, agentName);
        assert.equal(await blob.head(blobKey(createHash('sha256').update(bytes).digest('hex'))), undefined, `${agentName}: ${text} stored no bytes`);
      }
      assert.deepEqual(await snapshot(suite.db, suite.tenantId), snap);
    });

    it('answers every applicable error of the spec’s table verbatim, and a failed call changes nothing', async () => {
      const admin = await suite.agent('admin-bot');
      const viewer = await suite.agent('viewer-bot');
      const outsider = await suite.agent('outsider-bot');
      const name = suite.unique('errors');
      const created = await createSkill(admin, name);
      const id = created.skill_id;
      await admin.ok('write_skill', { skill_id: id, expected_version: 1, skill_md: SKILL_MD(name, 'v2') });
      const snap = await snapshot(suite.db, suite.tenantId);
      const listBefore = await admin.ok('list_skills');
      const md = SKILL_MD(name, 'v3');
      const readSelector = 'version must be latest, published, or a positive version number';
      const publishSelector = 'version must be latest or a positive version number';
      const conflict = 'version conflict: read the skill again before writing';
      const cases: [string, Record<string, unknown>, string][] = [
        ['read_skill', { skill_id: 'skill' }, 'invalid skill_id'],
        ['write_skill', { skill_id: name, expected_version: 2, skill_md: md }, 'invalid skill_id'],
        ['publish_skill', { skill_id: '' }, 'invalid skill_id'],
        ['create_skill_draft', { skill_id: 'x', base_version: 1, skill_md: md }, 'invalid skill_id'],
        ['list_skill_drafts', { skill_id: 'x' }, 'invalid skill_id'],
        ['read_skill', { skill_id: RANDOM_ID }, 'skill not found'],
        ['write_skill', { skill_id: RANDOM_ID, expected_version: 1, skill_md: md }, 'skill not found'],
        ['publish_skill', { skill_id: RANDOM_ID }, 'skill not found'],
        ['list_skill_drafts', { skill_id: RANDOM_ID }, 'skill not found'],
        ['create_skill_draft', { skill_id: RANDOM_ID, base_version: 1, skill_md: md }, 'skill not found'],
        ['read_skill', { skill_id: id, version: 'published' }, 'this skill has no published version'],
        ['read_skill', { skill_id: id, version: 3 }, 'skill version not found'],
        ['read_skill', { skill_id: id, version: '3' }, 'skill version not found'],
        ['publish_skill', { skill_id: id, version: 3 }, 'skill version not found'],
        ['create_skill_draft', { skill_id: id, base_version: 3, skill_md: md }, 'skill version not found'],
        ...(['draft', '', '0', '-1', '1.5', 0, -1, 2.5] as const).map((version): [string, Record<string, unknown>, string] => [
          'read_skill',
          { skill_id: id, version },
          readSelector,
        ]),
        ...(['published', 'x', '0', 0, -3] as const).map((version): [string, Record<string, unknown>, string] => [
          'publish_skill',
          { skill_id: id, version },
          publishSelector,
        ]),
        ['write_skill', { skill_id: id, expected_version: 1, skill_md: md }, conflict],
        ['write_skill', { skill_id: id, expected_version: 3, skill_md: md }, conflict],
        ['write_skill', { skill_id: id, expected_version: 1, skill_md: SKILL_MD(name, 'v2') }, conflict],
        ['write_skill', { skill_id: id, expected_version: 0, skill_md: md }, 'expected_version must be positive'],
        ['write_skill', { skill_id: id, expected_version: -1, skill_md: md }, 'expected_version must be positive'],
        ['create_skill', { skill_md: SKILL_MD(suite.unique('dated')), review_by: '2030/01/01' }, 'review_by must use YYYY-MM-DD format'],
        ['create_skill', { skill_md: SKILL_MD(suite.unique('dated')), expires_at: '2030-1-1' }, 'expires_at must use YYYY-MM-DD format'],
        [
          'create_skill',
          { skill_md: SKILL_MD(suite.unique('dated')), review_by: '2030-01-02', expires_at: '2030-01-01' },
          'expires_at cannot be before review_by',
        ],
      ];
      for (const [tool, args, text] of cases) assert.equal(await admin.fail(tool, args), text, `${tool} ${JSON.stringify(args)}`);
      for (const [tool, args] of [
        ['write_skill', { skill_id: id, expected_version: 2, skill_md: md }],
        ['publish_skill', { skill_id: id }],
        ['create_skill', { skill_md: SKILL_MD(suite.unique('by-viewer')) }],
      ] as const) {
        assert.equal(await viewer.fail(tool, args), 'forbidden', `viewer ${tool}`);
      }
      for (const [tool, args] of [
        ['read_skill', { skill_id: id }],
        ['read_skill', { skill_id: id, version: 'published' }],
        ['write_skill', { skill_id: id, expected_version: 2, skill_md: md }],
        ['publish_skill', { skill_id: id }],
        ['create_skill_draft', { skill_id: id, base_version: 2, skill_md: md }],
        ['list_skill_drafts', { skill_id: id }],
      ] as const) {
        assert.equal(await outsider.fail(tool, args), 'skill not found', `outsider ${tool}`);
      }
      assert.deepEqual(await outsider.ok('list_skills'), { skills: [] });
      assert.deepEqual(await snapshot(suite.db, suite.tenantId), snap);
      assert.deepEqual(await admin.ok('list_skills'), listBefore);
      const read = await admin.ok<Read>('read_skill', { skill_id: id });
      assert.partialDeepStrictEqual(read, { version: 2, description: 'v2', published_version: null });

      // A Knowledge id is no Skill id, and the other way round.
      const knowledge = await admin.ok<{ knowledge_id: string }>('write_knowledge', { title: suite.unique('Not a skill'), expected_version: 0, content: 'x' });
      assert.equal(await admin.fail('read_skill', { skill_id: knowledge.knowledge_id }), 'skill not found');
      assert.equal(await admin.fail('publish_skill', { skill_id: knowledge.knowledge_id }), 'skill not found');
      assert.equal(await admin.fail('read_knowledge', { knowledge_id: id }), 'Knowledge not found');
      assert.equal(await admin.fail('list_knowledge_drafts', { knowledge_id: id }), 'Knowledge not found');
      assert.equal(await admin.fail('write_knowledge', { knowledge_id: id, expected_version: 2, content: 'x' }), 'Knowledge not found');
      assert.equal(await admin.fail('read_context_attachment', { context_type: 'knowledge', context_id: id, version: 1, path: 'x' }), 'Knowledge not found');
    });
  });
}
