import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AuditLog } from '../../src/kernel/audit/audit-log.ts';
import { AuditTrail } from '../../src/kernel/audit/trail.ts';
import { restoreKb } from '../../src/atmina/kb/kbs.ts';
import { storeBackends } from '../support/stores.ts';
import type { KbWire } from './support.ts';
import { KbSuite, assertAtminaError, backendLabel } from './support.ts';

const MISSING_ID = '0b1e7c5e-8f43-4d8e-9a51-3c2d1f0e9b7a';

for (const backend of storeBackends()) {
  describe(`Atmina Knowledge Bases on ${backendLabel(backend)}`, () => {
    let suite: KbSuite;
    before(async () => {
      suite = await KbSuite.open(backend);
    });
    after(async () => {
      await suite?.close();
    });

    async function listedSlug(agent: string, slug: string): Promise<KbWire | undefined> {
      const { kbs } = await (await suite.agent(agent)).ok<{ kbs: KbWire[] }>('list_kbs');
      return kbs.find((kb) => kb.slug === slug);
    }

    async function listed(agent: string, kbId: string): Promise<KbWire | undefined> {
      const { kbs } = await (await suite.agent(agent)).ok<{ kbs: KbWire[] }>('list_kbs');
      return kbs.find((kb) => kb.kb_id === kbId);
    }

    describe('create_kb', () => {
      it('creates a KB of the caller’s one Admin team with a slug from its name, team visibility and visible locations', async () => {
        const admin = await suite.agent('admin-bot');
        const name = suite.unique('Customer Übersicht');
        const kb = await admin.ok<KbWire>('create_kb', { name, description: 'What we know of customers.' });
        assert.partialDeepStrictEqual(kb, {
          slug: name.toLowerCase().replace('ü', 'u').replace(' ', '-'),
          name,
          description: 'What we know of customers.',
          visibility: 'team',
          location_policy: 'visible',
          team: { slug: 'docs', name: 'Docs team' },
          role: 'admin',
        });
      });

      it('derives the next free slug when the derived one is taken', async () => {
        const admin = await suite.agent('admin-bot');
        const first = await admin.ok<KbWire>('create_kb', { name: 'Runbooks' });
        const second = await admin.ok<KbWire>('create_kb', { name: 'Runbooks' });
        assert.deepEqual({ first: first.slug, second: second.slug }, { first: 'runbooks', second: 'runbooks-2' });
      });

      it('refuses a slug another KB of the organisation uses as a conflict, changing nothing', async () => {
        const taken = await suite.kb();
        const before = await suite.snapshot();
        const text = await (await suite.agent('support-bot')).fail('create_kb', { name: 'Other', slug: taken.slug });
        assertAtminaError(text, 'conflict', `the slug "${taken.slug}" is not available; choose another`);
        assert.deepEqual(await suite.snapshot(), before);
      });

      it('answers a slug held by a KB the caller cannot see exactly as one held by a KB it sees, so a hidden KB is not confirmed', async () => {
        const admin = await suite.agent('admin-bot');
        const seen = await suite.kb();
        // Another team's private KB and an archived one: admin-bot can see neither.
        const hidden = await suite.kb({ team: 'support', visibility: 'private' }, 'support-bot');
        const archived = await suite.kb();
        await admin.ok('delete_kb', { kb_id: archived.kb_id, confirm: archived.slug });
        assert.equal(await listedSlug('admin-bot', hidden.slug), undefined);
        const answers = async (slug: string) => {
          const mask = (text: string) => text.replace(JSON.stringify(slug), '"<slug>"');
          const own = await suite.kb();
          const created = await admin.call('create_kb', { name: 'Probe', team: 'docs', slug });
          const updated = await admin.call('update_kb', { kb_id: own.kb_id, slug });
          return [created, updated].map((r) => ({ isError: r.isError, content: r.content.map((c) => (c.type === 'text' ? mask(c.text) : c.type)) }));
        };
        const expected = await answers(seen.slug);
        assert.deepEqual(expected[0], {
          isError: true,
          content: ['conflict: the slug "<slug>" is not available; choose another, or leave slug out and one is derived from the name'],
        });
        assert.deepEqual(await answers(hidden.slug), expected);
        assert.deepEqual(await answers(archived.slug), expected);
      });

      it('creates the KB of an Admin of several teams in its current team when it names none, as the spec calls create_kb', async () => {
        const multi = await suite.agent('multi-bot');
        // multi-bot is Admin of docs and support: its current team is the first by slug.
        const me = await multi.ok<{ current_team: { slug: string } | null }>('whoami');
        assert.equal(me.current_team?.slug, 'docs');
        const kb = await multi.ok<KbWire>('create_kb', { name: suite.unique('Shared notes') });
        assert.partialDeepStrictEqual(kb, { team: { slug: 'docs' }, role: 'admin' });
      });

      it('refuses a team an Admin of several teams names that the organisation does not have, and changes nothing', async () => {
        const before = await suite.snapshot();
        const text = await (await suite.agent('multi-bot')).fail('create_kb', { name: 'Shared notes', team: 'nowhere' });
        assert.equal(text, 'validation: team: no team "nowhere" in this organisation; you are Admin of: docs, support');
        assert.deepEqual(await suite.snapshot(), before);
      });

      it('creates the KB in the team the caller names, by slug', async () => {
        const kb = await (await suite.agent('multi-bot')).ok<KbWire>('create_kb', { name: suite.unique('Support FAQ'), team: 'support' });
        assert.partialDeepStrictEqual(kb, { team: { slug: 'support' }, role: 'admin' });
      });

      it('refuses a caller who is Admin of no team (an Editor and Viewer elsewhere)', async () => {
        const text = await (await suite.agent('editor-bot')).fail('create_kb', { name: 'Mine' });
        // Left out of its tools/list, so refused before the tool runs.
        assert.equal(text, 'permission_denied: create_kb needs the Admin role in a team; you are Admin of no team as its member');
      });

      it('refuses an agent whose policy caps its Admin role to Viewer', async () => {
        const text = await (await suite.agent('capped-bot')).fail('create_kb', { name: 'Mine', team: 'docs' });
        assertAtminaError(text, 'permission_denied', 'create_kb needs the Admin role in a team');
      });

      it('refuses a team the organisation does not have as bad input', async () => {
        const text = await (await suite.agent('admin-bot')).fail('create_kb', { name: 'Mine', team: 'nowhere' });
        assert.equal(text, 'validation: team: no team "nowhere" in this organisation; you are Admin of: docs');
      });

      it('refuses an empty name and a name with bidirectional controls as validation, changing nothing', async () => {
        const admin = await suite.agent('admin-bot');
        const before = await suite.snapshot();
        assert.equal(await admin.fail('create_kb', { name: '  ' }), 'validation: name: must not be empty');
        assertAtminaError(await admin.fail('create_kb', { name: 'Hand\u202ebook' }), 'validation', 'name: must not contain bidirectional');
        assertAtminaError(await admin.fail('create_kb', { name: 'Handbook', slug: 'Not A Slug' }), 'validation', 'slug: must be 1 to 63');
        assertAtminaError(await admin.fail('create_kb', { name: 'Handbook', visibility: 'everyone' }), 'validation', 'visibility');
        assert.deepEqual(await suite.snapshot(), before);
      });
    });

    describe('list_kbs and who sees what', () => {
      it('shows a team KB to its members at their roles and to the shares, capped by agent policy', async () => {
        const kb = await suite.kb();
        const roles: Record<string, string | undefined> = {};
        for (const agent of ['admin-bot', 'editor-bot', 'viewer-bot', 'capped-bot', 'share-bot', 'eng-bot', 'support-bot', 'outsider-bot'])
          roles[agent] = (await listed(agent, kb.kb_id))?.role;
        assert.deepEqual(roles, {
          'admin-bot': 'admin',
          'editor-bot': 'editor',
          'viewer-bot': 'viewer',
          'capped-bot': 'viewer',
          'share-bot': 'editor',
          'eng-bot': 'viewer',
          'support-bot': undefined,
          'outsider-bot': undefined,
        });
      });

      it('shows a private KB to the owning team’s Admins and the shares only', async () => {
        const kb = await suite.kb({ visibility: 'private' });
        const roles: Record<string, string | undefined> = {};
        for (const agent of ['admin-bot', 'editor-bot', 'viewer-bot', 'share-bot', 'eng-bot']) roles[agent] = (await listed(agent, kb.kb_id))?.role;
        assert.deepEqual(roles, { 'admin-bot': 'admin', 'editor-bot': undefined, 'viewer-bot': undefined, 'share-bot': 'editor', 'eng-bot': 'viewer' });
      });

      it('shows a public KB to everyone in the organisation, for search only to those without a role', async () => {
        const kb = await suite.kb({ visibility: 'public' });
        assert.deepEqual(
          { outsider: (await listed('outsider-bot', kb.kb_id))?.role, viewer: (await listed('viewer-bot', kb.kb_id))?.role },
          { outsider: 'search', viewer: 'viewer' },
        );
      });

      it('refuses reading a public KB’s files to a caller who may only search it', async () => {
        const kb = await suite.kb({ visibility: 'public' });
        await suite.file(kb.kb_id, 'a.md', 'A');
        const text = await (await suite.agent('outsider-bot')).fail('read_file', { kb_id: kb.kb_id, path: 'a.md' });
        assert.equal(text, 'permission_denied: read_file needs the Viewer role on a Knowledge Base; you have search access at most');
      });

      it('never shows another tenant’s KBs', async () => {
        const theirs = await (await suite.agent('globex-bot', undefined, 'globex')).ok<KbWire>('create_kb', { name: 'Globex handbook', visibility: 'public' });
        assert.equal(await listed('outsider-bot', theirs.kb_id), undefined);
      });
    });

    describe('the same not_found for every KB the caller cannot see', () => {
      const EXPECTED = 'not_found: no Knowledge Base "<id>" is available to you; call list_kbs for the ones you can use, and do not guess identifiers';

      async function refusalFor(agent: string, kbId: string): Promise<string> {
        const text = await (await suite.agent(agent)).fail('list_files', { kb_id: kbId });
        return text.replace(JSON.stringify(kbId), '"<id>"');
      }

      it('answers a KB that does not exist so', async () => {
        assert.equal(await refusalFor('viewer-bot', MISSING_ID), EXPECTED);
      });

      it('answers a malformed id so', async () => {
        assert.equal(await refusalFor('viewer-bot', 'not an id'), EXPECTED);
      });

      it('answers another team’s KB, without a share, so', async () => {
        const theirs = await (await suite.agent('support-bot')).ok<KbWire>('create_kb', { name: suite.unique('Support only') });
        assert.equal(await refusalFor('viewer-bot', theirs.kb_id), EXPECTED);
      });

      it('answers a private KB to a member below Admin so', async () => {
        const kb = await suite.kb({ visibility: 'private' });
        assert.equal(await refusalFor('editor-bot', kb.kb_id), EXPECTED);
      });

      it('answers another tenant’s KB so, by id and by slug', async () => {
        const theirs = await (await suite.agent('globex-bot', undefined, 'globex')).ok<KbWire>('create_kb', { name: suite.unique('Globex secrets') });
        assert.deepEqual([await refusalFor('admin-bot', theirs.kb_id), await refusalFor('admin-bot', theirs.slug)], [EXPECTED, EXPECTED]);
      });

      it('answers a slug qualified by another tenant’s slug so, even naming that tenant’s own KB, and an unknown qualified slug so', async () => {
        const theirs = await (await suite.agent('globex-bot', undefined, 'globex')).ok<KbWire>('create_kb', { name: suite.unique('Globex plans') });
        const ours = await suite.kb();
        assert.deepEqual(
          [
            await refusalFor('admin-bot', `globex/${theirs.slug}`),
            await refusalFor('admin-bot', `globex/${ours.slug}`),
            await refusalFor('admin-bot', 'acme/no-such-kb'),
            await refusalFor('admin-bot', `acme/${ours.kb_id}`),
            await refusalFor('admin-bot', `acme/acme/${ours.slug}`),
          ],
          [EXPECTED, EXPECTED, EXPECTED, EXPECTED, EXPECTED],
        );
      });

      it('answers another team’s KB named by its tenant-qualified slug so', async () => {
        const theirs = await (await suite.agent('support-bot')).ok<KbWire>('create_kb', { name: suite.unique('Support qualified') });
        assert.equal(await refusalFor('viewer-bot', `acme/${theirs.slug}`), EXPECTED);
      });

      it('answers an archived KB so', async () => {
        const kb = await suite.kb();
        await (await suite.agent('admin-bot')).ok('delete_kb', { kb_id: kb.kb_id, confirm: kb.slug });
        assert.equal(await refusalFor('admin-bot', kb.kb_id), EXPECTED);
      });
    });

    describe('naming a KB by its tenant-qualified slug', () => {
      it('takes <tenant-slug>/<kb-slug> wherever a tool takes kb_id, as the bare slug and the id', async () => {
        const kb = await suite.kb();
        await suite.file(kb.kb_id, 'a.md', 'alpha');
        const editor = await suite.agent('editor-bot');
        const qualified = `acme/${kb.slug}`;
        assert.partialDeepStrictEqual(await editor.ok('list_files', { kb_id: qualified }), { kb_id: kb.kb_id, files: [{ path: 'a.md' }] });
        assert.partialDeepStrictEqual(await editor.ok('read_file', { kb_id: qualified, path: 'a.md' }), { kb_id: kb.kb_id, content: 'alpha' });
        assert.partialDeepStrictEqual(await editor.ok('write_file', { kb_id: qualified, path: 'b.md', mode: 'create', content: 'beta' }), {
          kb_id: kb.kb_id,
          version: 1,
        });
        assert.partialDeepStrictEqual(await (await suite.agent('admin-bot')).ok('update_kb', { kb_id: qualified, description: 'Qualified' }), {
          kb_id: kb.kb_id,
          changed: ['description'],
        });
      });
    });

    describe('update_kb', () => {
      it('changes the fields given, says which, and keeps the others', async () => {
        const kb = await suite.kb({ description: 'Old' });
        const updated = await (
          await suite.agent('admin-bot')
        ).ok<KbWire & { changed: string[] }>('update_kb', {
          kb_id: kb.kb_id,
          name: 'Renamed handbook',
          visibility: 'public',
          location_policy: 'flag_only',
          description: 'Old',
        });
        assert.partialDeepStrictEqual(updated, {
          kb_id: kb.kb_id,
          slug: kb.slug,
          name: 'Renamed handbook',
          description: 'Old',
          visibility: 'public',
          location_policy: 'flag_only',
          changed: ['name', 'visibility', 'location_policy'],
        });
      });

      it('finds the KB by its new slug after a slug change', async () => {
        const kb = await suite.kb();
        const admin = await suite.agent('admin-bot');
        const slug = `${kb.slug}-new`;
        await admin.ok('update_kb', { kb_id: kb.kb_id, slug });
        assert.partialDeepStrictEqual(await admin.ok('list_files', { kb_id: slug }), { kb_id: kb.kb_id, files: [] });
      });

      it('refuses an Editor as permission_denied, changing nothing', async () => {
        const kb = await suite.kb();
        const before = await suite.snapshot();
        const text = await (await suite.agent('editor-bot')).fail('update_kb', { kb_id: kb.kb_id, name: 'Mine now' });
        assert.equal(text, 'permission_denied: update_kb needs the Admin role on a Knowledge Base; you have Editor at most');
        assert.deepEqual(await suite.snapshot(), before);
      });

      it('refuses a call that changes no field as validation', async () => {
        const kb = await suite.kb();
        const text = await (await suite.agent('admin-bot')).fail('update_kb', { kb_id: kb.kb_id });
        assertAtminaError(text, 'validation', 'give at least one of');
      });

      it('refuses a slug another KB uses as a conflict', async () => {
        const [a, b] = [await suite.kb(), await suite.kb()];
        const text = await (await suite.agent('admin-bot')).fail('update_kb', { kb_id: a.kb_id, slug: b.slug });
        assertAtminaError(text, 'conflict', 'is not available');
      });
    });

    describe('delete_kb and restoring', () => {
      it('refuses without the KB’s slug as confirmation, changing nothing', async () => {
        const kb = await suite.kb();
        const before = await suite.snapshot();
        const text = await (await suite.agent('admin-bot')).fail('delete_kb', { kb_id: kb.kb_id, confirm: 'yes' });
        assert.equal(text, `validation: confirm must be "${kb.slug}" to archive Knowledge Base "${kb.slug}"; nothing was changed`);
        assert.deepEqual(await suite.snapshot(), before);
      });

      it('refuses an Editor', async () => {
        const kb = await suite.kb();
        assertAtminaError(await (await suite.agent('editor-bot')).fail('delete_kb', { kb_id: kb.kb_id, confirm: kb.slug }), 'permission_denied');
      });

      it('archives the KB: it leaves list_kbs, and its files leave search and graph', async () => {
        const kb = await suite.kb();
        const file = await suite.file(kb.kb_id, 'a.md', 'A');
        const archived = await (await suite.agent('admin-bot')).ok('delete_kb', { kb_id: kb.kb_id, confirm: kb.slug });
        assert.partialDeepStrictEqual(archived, { kb_id: kb.kb_id, slug: kb.slug, archived: true });
        assert.equal(await listed('admin-bot', kb.kb_id), undefined);
        const rows = await suite.db.query<{ projection: string; operation: string }>(
          `SELECT projection, operation FROM outbox WHERE resource_key = $1 ORDER BY id`,
          [`kb_file:${file.file_id}`],
        );
        assert.deepEqual(
          rows
            .slice(-2)
            .map((r) => `${r.projection} ${r.operation}`)
            .sort(),
          ['graph delete', 'search delete'],
        );
      });

      it('restores an archived KB with its files (the CLI’s operation)', async () => {
        const kb = await suite.kb();
        await suite.file(kb.kb_id, 'a.md', 'A');
        const admin = await suite.agent('admin-bot');
        await admin.ok('delete_kb', { kb_id: kb.kb_id, confirm: kb.slug });
        const trail = AuditTrail.forSurface(new AuditLog(suite.db), 'cli').about({ tenantId: await suite.tenantIdOf() });
        const restored = await restoreKb(suite.db, { tenantId: await suite.tenantIdOf(), kbId: kb.kb_id }, trail);
        assert.partialDeepStrictEqual(restored, { restored: true, kb: { id: kb.kb_id, archivedAt: undefined } });
        assert.partialDeepStrictEqual(await admin.ok('read_file', { kb_id: kb.kb_id, path: 'a.md' }), { content: 'A' });
      });
    });
  });
}
