import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { storeBackends } from '../support/stores.ts';
import { seedOrg } from '../support/gateway.ts';
import { Browser, PASSWORD, authorizeQuery, pkcePair, registerClient, setPassword, startOAuthGateway } from '../oauth/support.ts';
import type { KbWire } from './support.ts';
import { ACME_KB_ORG, ATMINA_PATH, KbSuite, assertAtminaError, backendLabel } from './support.ts';

interface ShareWire {
  grant_id: string;
  kb_id: string;
  target: Record<string, unknown>;
  role: string;
  previous_role: string | null;
  changed: boolean;
}

interface InviteWire extends ShareWire {
  status: 'shared' | 'invited';
}

const MISSING_ID = '0b1e7c5e-8f43-4d8e-9a51-3c2d1f0e9b7a';

for (const backend of storeBackends()) {
  describe(`Atmina sharing on ${backendLabel(backend)}`, () => {
    let suite: KbSuite;
    before(async () => {
      suite = await KbSuite.open(backend);
    });
    after(async () => {
      await suite?.close();
    });

    async function roleOf(agent: string, kbId: string, tenant?: string): Promise<string | undefined> {
      const { kbs } = await (await suite.agent(agent, undefined, tenant)).ok<{ kbs: KbWire[] }>('list_kbs');
      return kbs.find((kb) => kb.kb_id === kbId)?.role;
    }

    /** Every KB share of the tenant, to show that a refused call changed nothing. */
    async function shares(tenant = suite.tenant): Promise<unknown> {
      const tenantId = await suite.tenantIdOf(tenant);
      return suite.db.query('SELECT id, kb_id, grantee_team_id, principal_id, invited_email, role FROM kb_shares WHERE tenant_id = $1 ORDER BY id', [tenantId]);
    }

    describe('share_kb', () => {
      it('gives a principal without any role the shared role at once, and revoke_share takes it away at once', async () => {
        const kb = await suite.kb();
        const admin = await suite.agent('admin-bot');
        const share = await admin.ok<ShareWire>('share_kb', { kb_id: kb.kb_id, principal_id: await suite.principalId('outsider-bot'), role: 'editor' });
        assert.partialDeepStrictEqual(share, {
          kb_id: kb.kb_id,
          target: { type: 'principal', kind: 'agent', name: 'outsider-bot' },
          role: 'editor',
          previous_role: null,
          changed: true,
        });
        const outsider = await suite.agent('outsider-bot');
        await outsider.ok('write_file', { kb_id: kb.kb_id, path: 'shared.md', mode: 'create', content: 'hello\n' });

        const revoked = await admin.ok('revoke_share', { kb_id: kb.kb_id, grant_id: share.grant_id });
        assert.deepEqual(revoked, { grant_id: share.grant_id, kb_id: kb.kb_id, role: 'editor', revoked: true });
        // Without the share outsider-bot has no role anywhere, so read_file is no longer its tool.
        assert.equal(
          await outsider.fail('read_file', { kb_id: kb.kb_id, path: 'shared.md' }),
          'permission_denied: read_file needs the Viewer role on a Knowledge Base; you have no role on any Knowledge Base or team',
        );
        assert.equal(await roleOf('outsider-bot', kb.kb_id), undefined);
      });

      it('opens a private KB to the principal it is shared with', async () => {
        const kb = await suite.kb({ visibility: 'private' });
        assert.equal(await roleOf('viewer-bot', kb.kb_id), undefined);
        await (await suite.agent('admin-bot')).ok('share_kb', { kb_id: kb.kb_id, principal_id: await suite.principalId('viewer-bot'), role: 'viewer' });
        assert.equal(await roleOf('viewer-bot', kb.kb_id), 'viewer');
      });

      it('gives every member of a team it is shared with the role, whatever their role in that team', async () => {
        const kb = await suite.kb();
        const share = await (await suite.agent('admin-bot')).ok<ShareWire>('share_kb', { kb_id: kb.kb_id, team: 'support', role: 'editor' });
        assert.partialDeepStrictEqual(share, { target: { type: 'team', slug: 'support', name: 'Support' }, role: 'editor' });
        assert.deepEqual(
          { supportAdmin: await roleOf('support-bot', kb.kb_id), eng: await roleOf('eng-bot', kb.kb_id) },
          { supportAdmin: 'editor', eng: 'viewer' },
        );
      });

      it('adds to a team role and never lowers it', async () => {
        const kb = await suite.kb();
        await (await suite.agent('admin-bot')).ok('share_kb', { kb_id: kb.kb_id, principal_id: await suite.principalId('editor-bot'), role: 'viewer' });
        assert.equal(await roleOf('editor-bot', kb.kb_id), 'editor');
      });

      it('is capped by an agent’s policy: an Admin share gives a Viewer-capped agent Viewer', async () => {
        const kb = await suite.kb({ team: 'support' }, 'support-bot');
        await (await suite.agent('support-bot')).ok('share_kb', { kb_id: kb.kb_id, principal_id: await suite.principalId('capped-bot'), role: 'admin' });
        assert.equal(await roleOf('capped-bot', kb.kb_id), 'viewer');
        const text = await (await suite.agent('capped-bot')).fail('write_file', { kb_id: kb.kb_id, path: 'a.md', mode: 'create', content: 'x' });
        assertAtminaError(text, 'permission_denied', 'you have Viewer');
      });

      it('replaces the role when shared again, and answers changed: false when the role is already so', async () => {
        const kb = await suite.kb();
        const admin = await suite.agent('admin-bot');
        const target = { kb_id: kb.kb_id, principal_id: await suite.principalId('outsider-bot') };
        const first = await admin.ok<ShareWire>('share_kb', { ...target, role: 'viewer' });
        const second = await admin.ok<ShareWire>('share_kb', { ...target, role: 'admin' });
        const third = await admin.ok<ShareWire>('share_kb', { ...target, role: 'admin' });
        assert.deepEqual(
          {
            second: { grant: second.grant_id, previous: second.previous_role, changed: second.changed },
            third: { grant: third.grant_id, changed: third.changed },
          },
          { second: { grant: first.grant_id, previous: 'viewer', changed: true }, third: { grant: first.grant_id, changed: false } },
        );
        assert.equal(await roleOf('outsider-bot', kb.kb_id), 'admin');
      });

      it('keeps one share of concurrent shares of one target, with the role of the last one applied', async () => {
        const kb = await suite.kb();
        const admin = await suite.agent('admin-bot');
        const principalId = await suite.principalId('outsider-bot');
        const roles = Array.from({ length: 12 }, (_, n) => (['viewer', 'editor', 'admin'] as const)[n % 3]);
        const answers = await Promise.all(roles.map((role) => admin.ok<ShareWire>('share_kb', { kb_id: kb.kb_id, principal_id: principalId, role })));
        const tenantId = await suite.tenantIdOf();
        const rows = await suite.db.query<{ id: string; role: string }>('SELECT id, role FROM kb_shares WHERE tenant_id = $1 AND kb_id = $2', [
          tenantId,
          kb.kb_id,
        ]);
        const [last] = await suite.db.query<{ role: string }>(
          "SELECT details->>'role' AS role FROM audit_events WHERE tenant_id = $1 AND action = 'kb.share' AND resources @> $2::jsonb ORDER BY at DESC LIMIT 1",
          [tenantId, JSON.stringify([{ type: 'kb', id: kb.kb_id }])],
        );
        assert.equal(rows.length, 1);
        assert.deepEqual({ grants: [...new Set(answers.map((a) => a.grant_id))], role: rows[0]?.role }, { grants: [rows[0]?.id], role: last?.role });
      });

      it('refuses an Editor, changing nothing', async () => {
        const kb = await suite.kb();
        const before = await shares();
        const text = await (
          await suite.agent('editor-bot')
        ).fail('share_kb', { kb_id: kb.kb_id, principal_id: await suite.principalId('outsider-bot'), role: 'viewer' });
        // Admin nowhere, so share_kb is left out of editor-bot's tools and refused before it runs.
        assert.equal(text, 'permission_denied: share_kb needs the Admin role on a Knowledge Base; you have Editor at most');
        assert.deepEqual(await shares(), before);
      });

      it('answers a principal or team of another tenant like a missing one, changing nothing', async () => {
        const kb = await suite.kb();
        const admin = await suite.agent('admin-bot');
        const before = await shares();
        const globexBot = await suite.principalId('globex-bot', 'globex');
        const [ops] = await suite.db.query<{ id: string }>(
          "SELECT t.id FROM teams t JOIN tenants n ON n.id = t.tenant_id WHERE n.slug = 'globex' AND t.slug = 'ops'",
        );
        const texts = [
          await admin.fail('share_kb', { kb_id: kb.kb_id, principal_id: globexBot, role: 'viewer' }),
          await admin.fail('share_kb', { kb_id: kb.kb_id, principal_id: MISSING_ID, role: 'viewer' }),
          await admin.fail('share_kb', { kb_id: kb.kb_id, team: ops?.id, role: 'viewer' }),
          await admin.fail('share_kb', { kb_id: kb.kb_id, team: 'ops', role: 'viewer' }),
        ];
        for (const text of texts) assertAtminaError(text, 'not_found', 'in this organisation');
        assert.equal(texts[0], `not_found: no person, agent or team "${globexBot}" in this organisation; whoami and list_kbs show identifiers you can use`);
        assert.deepEqual(await shares(), before);
      });

      it('answers a KB of another tenant as not found to its would-be Admin', async () => {
        const kb = await suite.kb();
        const text = await (await suite.agent('globex-bot', undefined, 'globex')).fail('share_kb', { kb_id: kb.kb_id, team: 'ops', role: 'admin' });
        assertAtminaError(text, 'not_found', `no Knowledge Base "${kb.kb_id}" is available to you`);
      });

      it('refuses bad input as validation, changing nothing', async () => {
        const kb = await suite.kb();
        const admin = await suite.agent('admin-bot');
        const principalId = await suite.principalId('outsider-bot');
        const before = await shares();
        assertAtminaError(await admin.fail('share_kb', { kb_id: kb.kb_id, principal_id: principalId, role: 'owner' }), 'validation', 'role');
        assertAtminaError(
          await admin.fail('share_kb', { kb_id: kb.kb_id, principal_id: principalId, team: 'support', role: 'viewer' }),
          'validation',
          'exactly one of principal_id and team',
        );
        assertAtminaError(await admin.fail('share_kb', { kb_id: kb.kb_id, role: 'viewer' }), 'validation', 'exactly one of principal_id and team');
        assertAtminaError(
          await admin.fail('share_kb', { kb_id: kb.kb_id, team: 'docs', role: 'viewer' }),
          'validation',
          'team: is the team that owns this Knowledge Base',
        );
        assert.deepEqual(await shares(), before);
      });
    });

    describe('invite_to_kb', () => {
      it('shares with a person of the organisation at once', async () => {
        const kb = await suite.kb({ team: 'support' }, 'support-bot');
        const invite = await (await suite.agent('support-bot')).ok<InviteWire>('invite_to_kb', { kb_id: kb.kb_id, email: ' Alice@Acme.test ', role: 'editor' });
        assert.partialDeepStrictEqual(invite, {
          status: 'shared',
          target: { type: 'principal', kind: 'person', name: 'Alice' },
          role: 'editor',
          changed: true,
        });
        assert.equal(await roleOf('alice@acme.test', kb.kb_id), 'editor');
      });

      it('leaves an invitation to an unknown email pending, giving nobody access, and revoke_share removes it', async () => {
        const kb = await suite.kb({ visibility: 'private' });
        const admin = await suite.agent('admin-bot');
        const invite = await admin.ok<InviteWire>('invite_to_kb', { kb_id: kb.kb_id, email: 'dora@acme.test', role: 'viewer' });
        assert.partialDeepStrictEqual(invite, { status: 'invited', target: { type: 'invitation', email: 'dora@acme.test' }, role: 'viewer' });
        assert.equal(await roleOf('outsider-bot', kb.kb_id), undefined);
        await admin.ok('revoke_share', { kb_id: kb.kb_id, grant_id: invite.grant_id });
        const tenantId = await suite.tenantIdOf();
        assert.deepEqual(await suite.db.query('SELECT id FROM kb_shares WHERE tenant_id = $1 AND id = $2', [tenantId, invite.grant_id]), []);
      });

      it('is accepted when a person with that email signs in for the first time, keeping its grant id', async () => {
        const kb = await suite.kb({ visibility: 'private' });
        const invite = await (await suite.agent('admin-bot')).ok<InviteWire>('invite_to_kb', { kb_id: kb.kb_id, email: 'carol@acme.test', role: 'editor' });
        // The organisation gains Carol afterwards, and she signs in with her password.
        await seedOrg(suite.db, ACME_KB_ORG.replace('people:\n', 'people:\n  - { email: carol@acme.test, name: Carol }\n'));
        await setPassword(suite.db, 'acme', 'carol@acme.test', PASSWORD);
        const oauth = await startOAuthGateway(suite.db);
        try {
          const query = authorizeQuery({ client: await registerClient(oauth.url), challenge: pkcePair().challenge });
          const signedIn = await new Browser(oauth.url).signIn(query, 'acme', 'carol@acme.test', PASSWORD);
          assert.equal(signedIn.status, 303, signedIn.text);
        } finally {
          await oauth.close();
        }
        const carolId = await suite.principalId('carol@acme.test');
        const tenantId = await suite.tenantIdOf();
        const [row] = await suite.db.query('SELECT principal_id, invited_email, role FROM kb_shares WHERE tenant_id = $1 AND id = $2', [
          tenantId,
          invite.grant_id,
        ]);
        assert.deepEqual(row, { principal_id: carolId, invited_email: null, role: 'editor' });
        const carol = await suite.connect('carol@acme.test', 'context.read context.write', { path: ATMINA_PATH });
        const { kbs } = await carol.ok<{ kbs: KbWire[] }>('list_kbs');
        assert.partialDeepStrictEqual(
          kbs.find((listed) => listed.kb_id === kb.kb_id),
          { role: 'editor' },
        );
        const [event] = await suite.db.query("SELECT surface, principal_id FROM audit_events WHERE tenant_id = $1 AND action = 'kb.invitation.accept'", [
          tenantId,
        ]);
        assert.deepEqual(event, { surface: 'oauth', principal_id: carolId });
      });

      it('replaces the role of a pending invitation when the same email is invited again', async () => {
        const kb = await suite.kb();
        const admin = await suite.agent('admin-bot');
        const first = await admin.ok<InviteWire>('invite_to_kb', { kb_id: kb.kb_id, email: 'erin@acme.test', role: 'viewer' });
        const again = await admin.ok<InviteWire>('invite_to_kb', { kb_id: kb.kb_id, email: 'ERIN@acme.test', role: 'admin' });
        assert.partialDeepStrictEqual(again, { grant_id: first.grant_id, status: 'invited', role: 'admin', previous_role: 'viewer', changed: true });
      });

      it('refuses an address that is not an email, and a Viewer, changing nothing', async () => {
        const kb = await suite.kb();
        const before = await shares();
        assertAtminaError(
          await (await suite.agent('admin-bot')).fail('invite_to_kb', { kb_id: kb.kb_id, email: 'not an email', role: 'viewer' }),
          'validation',
          'email:',
        );
        assertAtminaError(
          await (await suite.agent('viewer-bot')).fail('invite_to_kb', { kb_id: kb.kb_id, email: 'x@acme.test', role: 'viewer' }),
          'permission_denied',
          'you have Viewer',
        );
        assert.deepEqual(await shares(), before);
      });
    });

    describe('revoke_share', () => {
      it('answers a grant id of another KB, a missing one and a malformed one as not found, changing nothing', async () => {
        const kb = await suite.kb();
        const other = await suite.kb();
        const admin = await suite.agent('admin-bot');
        const share = await admin.ok<ShareWire>('share_kb', { kb_id: other.kb_id, principal_id: await suite.principalId('outsider-bot'), role: 'viewer' });
        const before = await shares();
        for (const grantId of [share.grant_id, MISSING_ID, 'nope'])
          assert.equal(
            await admin.fail('revoke_share', { kb_id: kb.kb_id, grant_id: grantId }),
            `not_found: no share "${grantId}" of this Knowledge Base; share_kb and invite_to_kb answer the grant_id to revoke`,
          );
        assert.deepEqual(await shares(), before);
      });

      it('answers a grant id of another tenant as not found to that tenant’s Admin, changing nothing', async () => {
        const kb = await suite.kb();
        const share = await (await suite.agent('admin-bot')).ok<ShareWire>('share_kb', { kb_id: kb.kb_id, team: 'eng', role: 'viewer' });
        const globex = await suite.agent('globex-bot', undefined, 'globex');
        const own = await globex.ok<KbWire>('create_kb', { name: suite.unique('Ops notes') });
        const before = await shares();
        assertAtminaError(await globex.fail('revoke_share', { kb_id: own.kb_id, grant_id: share.grant_id }), 'not_found', 'no share');
        assert.deepEqual(await shares(), before);
      });

      it('refuses an Editor, changing nothing', async () => {
        const kb = await suite.kb();
        const share = await (await suite.agent('admin-bot')).ok<ShareWire>('share_kb', { kb_id: kb.kb_id, team: 'eng', role: 'editor' });
        const before = await shares();
        assertAtminaError(
          await (await suite.agent('editor-bot')).fail('revoke_share', { kb_id: kb.kb_id, grant_id: share.grant_id }),
          'permission_denied',
          'needs the Admin role',
        );
        assert.deepEqual(await shares(), before);
      });
    });
  });
}
