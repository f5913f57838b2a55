import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { storeBackends } from '../support/stores.ts';
import type { KbWire } from './support.ts';
import { KbSuite, assertAtminaError, backendLabel } from './support.ts';

interface SettingsWire {
  team: { team_id: string; slug: string; name: string };
  audit_query_text: string;
  contribution_note_days: number;
  default_kb_visibility: string;
  updated_at: string | null;
  changed?: string[];
}

for (const backend of storeBackends()) {
  describe(`Atmina team settings on ${backendLabel(backend)}`, () => {
    let suite: KbSuite;
    before(async () => {
      suite = await KbSuite.open(backend);
    });
    after(async () => {
      await suite?.close();
    });

    async function settingsRows(): Promise<unknown> {
      const tenantId = await suite.tenantIdOf();
      return suite.db.query(
        'SELECT team_id, audit_query_text, contribution_note_days, default_kb_visibility, updated_at::text FROM team_settings WHERE tenant_id = $1 ORDER BY team_id',
        [tenantId],
      );
    }

    it('answers the defaults of a team that changed nothing', async () => {
      const settings = await (await suite.agent('support-bot')).ok<SettingsWire>('get_team_settings');
      assert.partialDeepStrictEqual(settings, {
        team: { slug: 'support', name: 'Support' },
        audit_query_text: 'record',
        contribution_note_days: 14,
        default_kb_visibility: 'team',
        updated_at: null,
      });
    });

    it('answers an Admin of several teams its current team’s settings when it names none, and the team it names', async () => {
      const multi = await suite.agent('multi-bot');
      assert.partialDeepStrictEqual(await multi.ok<SettingsWire>('get_team_settings'), { team: { slug: 'docs' } });
      assert.partialDeepStrictEqual(await multi.ok<SettingsWire>('get_team_settings', { team: 'support' }), { team: { slug: 'support' } });
      assert.equal(
        await multi.fail('get_team_settings', { team: 'nowhere' }),
        'validation: team: no team "nowhere" in this organisation; you are Admin of: docs, support',
      );
    });

    it('changes the settings given, keeps the others and audits the change with before and after', async () => {
      const admin = await suite.agent('support-bot');
      const updated = await admin.ok<SettingsWire>('update_team_settings', { audit_query_text: 'omit', contribution_note_days: 30 });
      assert.partialDeepStrictEqual(updated, {
        audit_query_text: 'omit',
        contribution_note_days: 30,
        default_kb_visibility: 'team',
        changed: ['audit_query_text', 'contribution_note_days'],
      });
      assert.ok(updated.updated_at !== null);
      const tenantId = await suite.tenantIdOf();
      const [event] = await suite.db.query<{ resources: unknown; details: unknown }>(
        "SELECT resources, details FROM audit_events WHERE tenant_id = $1 AND action = 'team.settings.update' ORDER BY at DESC LIMIT 1",
        [tenantId],
      );
      assert.deepEqual(event, {
        resources: [{ type: 'team', id: updated.team.team_id, changed: true }],
        details: {
          fields: ['audit_query_text', 'contribution_note_days'],
          before: { audit_query_text: 'record', contribution_note_days: 14 },
          after: { audit_query_text: 'omit', contribution_note_days: 30 },
        },
      });
      assert.partialDeepStrictEqual(await admin.ok<SettingsWire>('get_team_settings'), { audit_query_text: 'omit', contribution_note_days: 30 });
    });

    it('answers changed: [] and records no change when the settings already are as asked', async () => {
      const admin = await suite.agent('support-bot');
      await admin.ok('update_team_settings', { contribution_note_days: 21 });
      const tenantId = await suite.tenantIdOf();
      const count = async () =>
        (
          await suite.db.query<{ n: number }>("SELECT count(*)::int AS n FROM audit_events WHERE tenant_id = $1 AND action = 'team.settings.update'", [
            tenantId,
          ])
        )[0]?.n;
      const before = await count();
      const again = await admin.ok<SettingsWire>('update_team_settings', { contribution_note_days: 21 });
      assert.deepEqual({ changed: again.changed, events: await count() }, { changed: [], events: before });
    });

    it('gives a new KB the team’s default visibility when create_kb asks for none; an asked one wins', async () => {
      const admin = await suite.agent('admin-bot');
      await admin.ok('update_team_settings', { default_kb_visibility: 'private' });
      try {
        const defaulted = await admin.ok<KbWire>('create_kb', { name: suite.unique('Default private') });
        const asked = await admin.ok<KbWire>('create_kb', { name: suite.unique('Asked public'), visibility: 'public' });
        assert.deepEqual({ defaulted: defaulted.visibility, asked: asked.visibility }, { defaulted: 'private', asked: 'public' });
      } finally {
        await admin.ok('update_team_settings', { default_kb_visibility: 'team' });
      }
    });

    it('refuses an Editor, a Viewer and an Admin whose agent policy caps it to Viewer, changing nothing', async () => {
      const before = await settingsRows();
      for (const agent of ['editor-bot', 'viewer-bot', 'capped-bot']) {
        const text = await (await suite.agent(agent)).fail('update_team_settings', { team: 'docs', contribution_note_days: 3 });
        // Admin of no team as a member: the settings tools are left out of their lists and refused before they run.
        assert.equal(text, 'permission_denied: update_team_settings needs the Admin role in a team; you are Admin of no team as its member');
      }
      // An Admin of another team is refused by the tool itself.
      const other = await (await suite.agent('support-bot')).fail('update_team_settings', { team: 'docs', contribution_note_days: 3 });
      assertAtminaError(other, 'permission_denied', 'the settings of team "docs" need the Admin role there');
      assert.equal(
        await (await suite.agent('eng-bot')).fail('get_team_settings'),
        'permission_denied: get_team_settings needs the Admin role in a team; you are Admin of no team as its member',
      );
      assert.deepEqual(await settingsRows(), before);
    });

    it('answers a team of another tenant as one the organisation does not have', async () => {
      const text = await (await suite.agent('globex-bot', undefined, 'globex')).fail('get_team_settings', { team: 'docs' });
      assertAtminaError(text, 'validation', 'team: no team "docs" in this organisation');
    });

    it('refuses bad input as validation, changing nothing', async () => {
      const admin = await suite.agent('support-bot');
      const before = await settingsRows();
      for (const days of [0, 366, 1.5])
        assert.equal(
          await admin.fail('update_team_settings', { contribution_note_days: days }),
          'validation: contribution_note_days: must be a whole number of days from 1 to 365',
        );
      assertAtminaError(await admin.fail('update_team_settings', { audit_query_text: 'maybe' }), 'validation', 'audit_query_text');
      assertAtminaError(await admin.fail('update_team_settings', {}), 'validation', 'give at least one of');
      assertAtminaError(await admin.fail('update_team_settings', { colour: 'blue' }), 'validation');
      assert.deepEqual(await settingsRows(), before);
    });
  });
}
