import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AuditLog } from '../../src/kernel/audit/audit-log.ts';
import type { AuditResource } from '../../src/kernel/audit/audit-log.ts';
import { storeBackends } from '../support/stores.ts';
import { KbSuite, assertAtminaError, backendLabel } from './support.ts';

interface EventWire {
  event_id: string;
  at: string;
  actor: { principal_id: string; kind: string | null; name: string | null } | null;
  tool: string | null;
  action: string;
  result: string;
  error_code: string | null;
  kb_ids: string[];
  file_ids: string[];
  query?: string;
}

interface PageWire {
  events: EventWire[];
  next_cursor: string | null;
}

interface DetailWire extends Omit<EventWire, 'query'> {
  surface: string;
  dialect: string | null;
  request_id: string | null;
  team_ids: string[];
  resources: Record<string, unknown>[];
  details: Record<string, unknown>;
}

const MISSING_ID = '0b1e7c5e-8f43-4d8e-9a51-3c2d1f0e9b7a';

for (const backend of storeBackends()) {
  describe(`Atmina audit tools on ${backendLabel(backend)}`, () => {
    let suite: KbSuite;
    before(async () => {
      suite = await KbSuite.open(backend);
    });
    after(async () => {
      await suite?.close();
    });

    /** An event written straight into the log, as a search will audit its query. */
    async function searchEvent(resources: AuditResource[], query: string): Promise<string> {
      const tenantId = await suite.tenantIdOf();
      await suite.db.tx((tx) =>
        new AuditLog(suite.db).appendIn(tx, {
          tenantId,
          surface: 'mcp',
          principalId: undefined,
          dialect: 'atmina',
          tool: 'search',
          action: 'tool_call',
          result: 'ok',
          resources,
          details: { query, results: 3 },
        }),
      );
      const [row] = await suite.db.query<{ id: string }>("SELECT id FROM audit_events WHERE tenant_id = $1 AND tool = 'search' ORDER BY at DESC LIMIT 1", [
        tenantId,
      ]);
      assert.ok(row);
      return row.id;
    }

    describe('audit_log', () => {
      it('shows an Editor the events of a KB, newest first, with actor, tool, action, result and file ids', async () => {
        const kb = await suite.kb();
        const file = await suite.file(kb.kb_id, 'notes.md', 'hello\n');
        const page = await (await suite.agent('editor-bot')).ok<PageWire>('audit_log', { kb_id: kb.kb_id });
        const adminId = await suite.principalId('admin-bot');
        assert.partialDeepStrictEqual(page.events, [
          {
            actor: { principal_id: adminId, kind: 'agent', name: 'admin-bot' },
            tool: 'write_file',
            action: 'kb.file.create',
            result: 'ok',
            error_code: null,
            kb_ids: [kb.kb_id],
            file_ids: [file.file_id],
          },
          { tool: 'create_kb', action: 'kb.create', kb_ids: [kb.kb_id], file_ids: [] },
        ]);
        assert.equal(page.events.length, 2);
      });

      it('pages with next_cursor without repeating or skipping an event', async () => {
        const kb = await suite.kb();
        for (const name of ['a.md', 'b.md', 'c.md']) await suite.file(kb.kb_id, name, name);
        const editor = await suite.agent('editor-bot');
        const seen: string[] = [];
        let cursor: string | undefined;
        do {
          const page: PageWire = await editor.ok<PageWire>('audit_log', { kb_id: kb.kb_id, limit: 1, ...(cursor === undefined ? {} : { cursor }) });
          seen.push(...page.events.map((event) => event.action));
          cursor = page.next_cursor ?? undefined;
        } while (cursor !== undefined);
        assert.deepEqual(seen, ['kb.file.create', 'kb.file.create', 'kb.file.create', 'kb.create']);
      });

      it('filters by actor, tool and time range', async () => {
        const kb = await suite.kb();
        const start = new Date().toISOString();
        await (await suite.agent('editor-bot')).ok('write_file', { kb_id: kb.kb_id, path: 'e.md', mode: 'create', content: 'e' });
        const editor = await suite.agent('editor-bot');
        const editorId = await suite.principalId('editor-bot');
        const byActor = await editor.ok<PageWire>('audit_log', { kb_id: kb.kb_id, actor: editorId });
        const byTool = await editor.ok<PageWire>('audit_log', { kb_id: kb.kb_id, tool: 'create_kb' });
        const since = await editor.ok<PageWire>('audit_log', { kb_id: kb.kb_id, from: start });
        const until = await editor.ok<PageWire>('audit_log', { kb_id: kb.kb_id, to: start });
        assert.deepEqual(
          {
            byActor: byActor.events.map((e) => e.action),
            byTool: byTool.events.map((e) => e.action),
            since: since.events.map((e) => e.action),
            until: until.events.map((e) => e.action),
          },
          { byActor: ['kb.file.create'], byTool: ['kb.create'], since: ['kb.file.create'], until: ['kb.create'] },
        );
      });

      it('refuses a Viewer of the KB, and a caller who is Editor of nothing', async () => {
        // editor-bot is Editor in docs and Viewer in support: audit_log is its tool, but not on support's KB.
        const kb = await suite.kb({ team: 'support' }, 'support-bot');
        assert.equal(
          await (await suite.agent('editor-bot')).fail('audit_log', { kb_id: kb.kb_id }),
          'permission_denied: reading the audit log needs the Editor role on this Knowledge Base; you have Viewer',
        );
        // Left out of eng-bot's tool list (Viewer everywhere), so refused before it runs.
        assert.equal(
          await (await suite.agent('eng-bot')).fail('audit_log'),
          'permission_denied: audit_log needs the Editor role on a Knowledge Base; you have Viewer at most',
        );
      });

      it('answers a KB of another team without a share, and of another tenant, as not found', async () => {
        const kb = await suite.kb();
        // support-bot audits its own team's KBs, and this one is out of its reach.
        assertAtminaError(await (await suite.agent('support-bot')).fail('audit_log', { kb_id: kb.kb_id }), 'not_found', 'no Knowledge Base');
        assertAtminaError(
          await (await suite.agent('globex-bot', undefined, 'globex')).fail('audit_log', { kb_id: kb.kb_id }),
          'not_found',
          'no Knowledge Base',
        );
      });

      it('leaves out the events of KBs the caller may not audit', async () => {
        const support = await suite.kb({ team: 'support' }, 'support-bot');
        const { events } = await (await suite.agent('editor-bot')).ok<PageWire>('audit_log', { limit: 100 });
        assert.ok(events.every((event) => !event.kb_ids.includes(support.kb_id)));
      });

      it('shows an Editor of a team the changes of its settings', async () => {
        await (await suite.agent('admin-bot')).ok('update_team_settings', { contribution_note_days: 9 });
        const { events } = await (await suite.agent('editor-bot')).ok<PageWire>('audit_log', { tool: 'update_team_settings' });
        assert.partialDeepStrictEqual(events, [{ action: 'team.settings.update', kb_ids: [] }]);
      });

      it('refuses bad input as validation', async () => {
        const editor = await suite.agent('editor-bot');
        const kb = await suite.kb();
        assert.equal(await editor.fail('audit_log', { from: 'yesterday' }), 'validation: from: must be an ISO 8601 instant such as 2026-01-31T09:00:00Z');
        assert.equal(await editor.fail('audit_log', { actor: 'admin-bot' }), 'validation: actor: must be a principal id (whoami shows yours)');
        assert.equal(await editor.fail('audit_log', { from: '2026-02-01T00:00:00Z', to: '2026-01-01T00:00:00Z' }), 'validation: to: must not be before from');
        assertAtminaError(await editor.fail('audit_log', { limit: 0 }), 'validation', 'limit');
        const { next_cursor: cursor } = await editor.ok<PageWire>('audit_log', { limit: 1 });
        assert.ok(cursor !== null);
        assert.equal(
          await editor.fail('audit_log', { kb_id: kb.kb_id, limit: 1, cursor }),
          'validation: cursor: not a cursor this tool returned; start again without it',
        );
      });
    });

    describe('get_audit_event', () => {
      it('answers an event with its permitted detail', async () => {
        const kb = await suite.kb();
        const { events } = await (await suite.agent('editor-bot')).ok<PageWire>('audit_log', { kb_id: kb.kb_id });
        const [created] = events;
        assert.ok(created);
        const event = await (await suite.agent('editor-bot')).ok<DetailWire>('get_audit_event', { event_id: created.event_id });
        assert.partialDeepStrictEqual(event, {
          event_id: created.event_id,
          surface: 'mcp',
          dialect: 'atmina',
          tool: 'create_kb',
          action: 'kb.create',
          kb_ids: [kb.kb_id],
          team_ids: [],
          resources: [{ type: 'kb', id: kb.kb_id, changed: true }],
          details: { team_id: kb.team.team_id, visibility: 'team', location_policy: 'visible' },
        });
        assert.ok(event.request_id !== null);
      });

      it('answers an event of a KB the caller may not audit like a missing one', async () => {
        const support = await suite.kb({ team: 'support' }, 'support-bot');
        const { events } = await (await suite.agent('support-bot')).ok<PageWire>('audit_log', { kb_id: support.kb_id });
        const [created] = events;
        assert.ok(created);
        for (const [agent, tenant] of [
          ['editor-bot', undefined],
          ['share-bot', undefined],
          ['globex-bot', 'globex'],
        ] as const) {
          assert.equal(
            await (await suite.agent(agent, undefined, tenant)).fail('get_audit_event', { event_id: created.event_id }),
            `not_found: no audit event "${created.event_id}" is available to you; audit_log lists the ones you can read`,
          );
        }
        assert.equal(
          await (await suite.agent('editor-bot')).fail('get_audit_event', { event_id: MISSING_ID }),
          `not_found: no audit event "${MISSING_ID}" is available to you; audit_log lists the ones you can read`,
        );
      });

      it('shows of an event naming a KB the caller may not audit only the KBs it may, without files or details', async () => {
        const docs = await suite.kb();
        const support = await suite.kb({ team: 'support' }, 'support-bot');
        const id = await searchEvent(
          [
            { type: 'kb', id: docs.kb_id },
            { type: 'kb', id: support.kb_id },
            { type: 'kb_file', id: MISSING_ID },
          ],
          'mixed',
        );
        const event = await (await suite.agent('editor-bot')).ok<DetailWire>('get_audit_event', { event_id: id });
        assert.deepEqual(
          { kb_ids: event.kb_ids, file_ids: event.file_ids, resources: event.resources, details: event.details },
          { kb_ids: [docs.kb_id], file_ids: [], resources: [{ type: 'kb', id: docs.kb_id }], details: {} },
        );
      });
    });

    describe('query-text privacy', () => {
      it('shows a search’s query text while the team records it, and leaves it out once the team says omit', async () => {
        const kb = await suite.kb();
        const id = await searchEvent([{ type: 'kb', id: kb.kb_id }], 'customer data retention');
        const editor = await suite.agent('editor-bot');
        const recorded = await editor.ok<PageWire>('audit_log', { kb_id: kb.kb_id, tool: 'search' });
        assert.partialDeepStrictEqual(recorded.events, [{ event_id: id, query: 'customer data retention' }]);

        await (await suite.agent('admin-bot')).ok('update_team_settings', { audit_query_text: 'omit' });
        try {
          const omitted = await editor.ok<PageWire>('audit_log', { kb_id: kb.kb_id, tool: 'search' });
          const event = await editor.ok<DetailWire>('get_audit_event', { event_id: id });
          assert.deepEqual({ listed: omitted.events.map((e) => 'query' in e), details: event.details }, { listed: [false], details: { results: 3 } });
        } finally {
          await (await suite.agent('admin-bot')).ok('update_team_settings', { audit_query_text: 'record' });
        }
      });
    });
  });
}
