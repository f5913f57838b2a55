import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { openStore } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import type {
  AcceptResultJson as AcceptResult,
  RejectResultJson as RejectResult,
  ReviewDetailJson as ReviewDetail,
  ReviewItemJson as ReviewItem,
} from '../../src/alignbase/index.ts';
import type { Db } from '../../src/store/db.ts';
import { tryLockFolder } from '../../src/store/folder-lock.ts';
import { GLOBEX_KNOWLEDGE_OWNER_ORG, REVIEW_AGENTS, SKILL_MD, b64, pick, records } from '../support/fixtures.ts';
import { connectClient } from '../support/gateway.ts';
import type { CliStore, RunResult, Served } from './support.ts';
import { TOKEN_LINE, cliEnv, cliStoreBackends, kgw, lines, lookedIn, serve, writeIn } from './support.ts';

const ORG = `tenant: acme
name: Acme Inc.
language: en
people:
  - { email: alice@acme.test, name: Alice }
  - { email: bob@acme.test, name: Bob }
${REVIEW_AGENTS}`;

const RUN_SH = '#!/bin/sh\necho checking\n';
const TABLE_CSV = 'step,owner\n1,alice\n';

/** A tool call that must succeed; its structured content. */
async function call<T = Record<string, unknown>>(client: Client, name: string, args: Record<string, unknown>): Promise<T> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const first = result.content[0];
  assert.notEqual(result.isError, true, `${name}: ${first?.type === 'text' ? first.text : ''}`);
  return result.structuredContent as T;
}

/** The bytes of one attachment, read in chunks through read_context_attachment. */
async function attachment(client: Client, type: string, id: string, version: number, path: string): Promise<string> {
  const chunks: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const chunk = await call<{ data_base64: string; next_offset: number; eof: boolean }>(client, 'read_context_attachment', {
      context_type: type,
      context_id: id,
      version,
      path,
      offset,
    });
    chunks.push(Buffer.from(chunk.data_base64, 'base64'));
    offset = chunk.next_offset;
    if (chunk.eof) return Buffer.concat(chunks).toString('utf8');
  }
}

const ok = (run: RunResult, what: string): string => {
  assert.equal(run.code, 0, `${what}: ${run.stderr}`);
  assert.equal(run.stderr, '', what);
  return run.stdout;
};

/** A run that fails with `code` and exactly one line on stderr. */
const failed = (run: RunResult, code: 1 | 2, line: string | RegExp): void => {
  assert.equal(run.code, code, run.stderr);
  assert.equal(run.stdout, '');
  const [only, ...more] = lines(run.stderr);
  assert.deepEqual(more, [], run.stderr);
  if (typeof line === 'string') assert.equal(only, line);
  else assert.match(only ?? '', line);
};

for (const backend of cliStoreBackends()) {
  describe(`kgw review on ${backend.name}`, () => {
    let store: CliStore;
    let gateway: Served | undefined;
    const clients: Client[] = [];
    let writer: Client;
    let drafter: Client;
    const ids: Record<string, string> = {};
    const id = (name: string): string => {
      const value = ids[name];
      assert.ok(value !== undefined, `no id ${name}`);
      return value;
    };

    const review = (...args: string[]) => kgw(['review', ...args], store.env);
    const json = async <T>(...args: string[]): Promise<T> => JSON.parse(ok(await review(...args, '--json'), args.join(' '))) as T;

    async function connect(tenant: string, principal: string): Promise<Client> {
      assert.ok(gateway);
      const token = ok(await kgw(['token', 'create', '--tenant', tenant, '--principal', principal, '--scopes', 'context.write'], store.env), 'token create');
      assert.match(token, TOKEN_LINE);
      const client = await connectClient(`${gateway.url}/alignbase/mcp`, token.trim());
      clients.push(client);
      return client;
    }

    async function stopGateway(): Promise<void> {
      for (const client of clients.splice(0)) await client.close();
      await gateway?.stop();
      gateway = undefined;
    }

    /** The store opened from the test (no kgw process may hold an embedded data folder meanwhile). */
    async function withDb<T>(work: (db: Db) => Promise<T>): Promise<T> {
      const lock =
        store.databaseUrl === undefined ? tryLockFolder(store.dataDir, { pid: process.pid, role: 'cli', startedAt: new Date().toISOString() }) : undefined;
      if (lock !== undefined && !('lock' in lock)) throw new Error(`the data folder is held by pid ${lock.heldBy.pid}`);
      const db = await openStore(loadConfig({ KGW_DATA_DIR: store.dataDir, ...(store.databaseUrl === undefined ? {} : { DATABASE_URL: store.databaseUrl }) }));
      try {
        return await work(db);
      } finally {
        await db.close();
        lock?.lock.release();
      }
    }

    before(async () => {
      store = await backend.open();
      ok(await kgw(['apply', await writeIn(store.workDir, 'org.yaml', ORG)], store.env), 'apply acme');
      ok(await kgw(['apply', await writeIn(store.workDir, 'globex.yaml', GLOBEX_KNOWLEDGE_OWNER_ORG)], store.env), 'apply globex');
      gateway = await serve(store.env, { timeoutMs: 120_000 });
      writer = await connect('acme', 'writer-bot');
      drafter = await connect('acme', 'draft-bot');
      const hank = await connect('globex', 'globex-bot');

      // Every draft and proposal is made by the agents through the real MCP tools.
      const knowledge = async (title: string, content: string, authority = 'informational') =>
        (await call<{ knowledge_id: string }>(writer, 'write_knowledge', { title, expected_version: 0, content, authority })).knowledge_id;
      const draft = async (knowledgeId: string, content: string, rationale?: string) =>
        (
          await call<{ draft_id: string }>(drafter, 'create_knowledge_draft', {
            knowledge_id: knowledgeId,
            base_version: 1,
            content,
            ...(rationale === undefined ? {} : { rationale }),
          })
        ).draft_id;

      ids.checklist = await knowledge('Release checklist', '# Release\n\n- build\n- test\n', 'must_follow');
      ids.checklistDraft = await draft(ids.checklist, '# Release\n\n- build\n- test\n- tag\n', 'Tagging was missing');
      const skill = await call<{ skill_id: string }>(writer, 'create_skill', {
        skill_md: SKILL_MD('release-check', 'Checks a release.', 'Run the script.'),
        attachments: [{ path: 'scripts/run.sh', data_base64: b64(RUN_SH) }],
      });
      ids.skill = skill.skill_id;
      ids.skillDraft = (
        await call<{ draft_id: string }>(drafter, 'create_skill_draft', {
          skill_id: ids.skill,
          base_version: 1,
          skill_md: SKILL_MD('release-check', 'Checks a release before deployment.', 'Run the script twice.'),
        })
      ).draft_id;
      ids.proposal = (
        await call<{ proposal_id: string }>(drafter, 'propose_knowledge', {
          title: 'Rollback plan',
          content: '# Rollback\n\nRevert the tag.',
          rationale: 'We have none',
          authority: 'must_follow',
          attachments: [{ path: 'steps.csv', data_base64: b64(TABLE_CSV) }],
        })
      ).proposal_id;
      ids.stale = await knowledge('Moving target', 'one\n');
      ids.staleDraft = await draft(ids.stale, 'one, drafted\n');
      await call(writer, 'write_knowledge', { knowledge_id: ids.stale, expected_version: 1, content: 'two\n' });
      ids.rejectable = await knowledge('Doubtful', 'facts\n');
      ids.rejectDraft = await draft(ids.rejectable, 'rumours\n');
      ids.race = await knowledge('Race', 'v1\n');
      ids.raceDraft = await draft(ids.race, 'v2 by draft\n');
      const theirs = (await call<{ knowledge_id: string }>(hank, 'write_knowledge', { title: 'Theirs', expected_version: 0, content: 'x' })).knowledge_id;
      ids.theirDraft = (await call<{ draft_id: string }>(hank, 'create_knowledge_draft', { knowledge_id: theirs, base_version: 1, content: 'y' })).draft_id;
      // The embedded store is reviewed locally (the CLI takes the folder); the last test runs under a gateway again.
      await stopGateway();
    });
    after(async () => {
      await stopGateway();
      await store.dispose();
    });

    it('list shows the open drafts and proposals as a table and as JSON', async () => {
      const items = await json<ReviewItem[]>('list', '--tenant', 'acme');
      const fields = ['id', 'kind', 'type', 'name', 'base_version', 'current_version', 'is_stale', 'author_email', 'agent_name'] as const;
      assert.deepEqual(
        items.map((i) => pick(i, fields)),
        records(fields, [
          [id('checklistDraft'), 'draft', 'knowledge', 'Release checklist', 1, 1, false, 'bob@acme.test', 'draft-bot'],
          [id('skillDraft'), 'draft', 'skill', 'release-check', 1, 1, false, 'bob@acme.test', 'draft-bot'],
          [id('proposal'), 'proposal', 'knowledge', 'Rollback plan', null, null, false, 'bob@acme.test', 'draft-bot'],
          [id('staleDraft'), 'draft', 'knowledge', 'Moving target', 1, 2, true, 'bob@acme.test', 'draft-bot'],
          [id('rejectDraft'), 'draft', 'knowledge', 'Doubtful', 1, 1, false, 'bob@acme.test', 'draft-bot'],
          [id('raceDraft'), 'draft', 'knowledge', 'Race', 1, 1, false, 'bob@acme.test', 'draft-bot'],
        ]),
      );
      assert.equal(items[0]?.rationale, 'Tagging was missing');

      const [header, ...rows] = lines(ok(await review('list', '--tenant', 'acme'), 'list'));
      assert.match(header ?? '', /^ID +KIND +TYPE +NAME +BASE→CURRENT +STALE +AUTHOR +CREATED$/);
      const created = (i: number) => items[i]?.created_at.replace(/\.\d{3}Z$/, 'Z');
      assert.deepEqual(
        rows.map((r) => r.split(/ {2,}/)),
        [
          [id('checklistDraft'), 'draft', 'knowledge', 'Release checklist', '1→1', 'no', 'draft-bot (bob@acme.test)', created(0)],
          [id('skillDraft'), 'draft', 'skill', 'release-check', '1→1', 'no', 'draft-bot (bob@acme.test)', created(1)],
          [id('proposal'), 'proposal', 'knowledge', 'Rollback plan', 'new', '-', 'draft-bot (bob@acme.test)', created(2)],
          [id('staleDraft'), 'draft', 'knowledge', 'Moving target', '1→2', 'yes', 'draft-bot (bob@acme.test)', created(3)],
          [id('rejectDraft'), 'draft', 'knowledge', 'Doubtful', '1→1', 'no', 'draft-bot (bob@acme.test)', created(4)],
          [id('raceDraft'), 'draft', 'knowledge', 'Race', '1→1', 'no', 'draft-bot (bob@acme.test)', created(5)],
        ],
      );
      assert.deepEqual(
        (await json<ReviewItem[]>('list', '--tenant', 'globex')).map((i) => i.id),
        [id('theirDraft')],
      );
      failed(await review('list', '--tenant', 'initech'), 1, `kgw: tenant "initech" not found${lookedIn(store)}`);
    });

    it('show prints a draft with a diff against its base version, and a proposal with its files', async () => {
      const draft = id('checklistDraft');
      const text = ok(await review('show', draft, '--tenant', 'acme'), 'show');
      assert.equal(
        text,
        [
          `Draft:      ${draft} (open)`,
          `Knowledge:  Release checklist (${id('checklist')})`,
          'Base:       version 1',
          'Author:     draft-bot (agent of bob@acme.test)',
          `Created:    ${text.match(/^Created: +(\S+)$/m)?.[1]}`,
          'Authority:  must_follow (kept from version 1)',
          'Rationale:  Tagging was missing',
          '',
          '--- Knowledge "Release checklist" version 1',
          `+++ draft ${draft}`,
          '@@ -2,3 +2,4 @@',
          ' ',
          ' - build',
          ' - test',
          '+- tag',
          '',
        ].join('\n'),
      );
      const detail = await json<ReviewDetail>('show', draft, '--tenant', 'acme');
      assert.partialDeepStrictEqual(detail, { content: '# Release\n\n- build\n- test\n- tag\n', status: 'open' });
      assert.deepEqual(detail.base, { version: 1, content: '# Release\n\n- build\n- test\n' });

      const stale = ok(await review('show', id('staleDraft'), '--tenant', 'acme'), 'show stale');
      assert.match(stale, /^Base: +version 1; the Knowledge is now at version 2 \(stale\)$/m);
      assert.match(stale, /^Against the latest version 2 \(what accepting with --force changes\):\n\n--- Knowledge "Moving target" version 2\n/m);

      const skill = ok(await review('show', id('skillDraft'), '--tenant', 'acme'), 'show skill');
      assert.match(skill, new RegExp(`^Files: +kept from version 1:\n +scripts/run\\.sh \\(\\S+, ${Buffer.byteLength(RUN_SH)} bytes\\)$`, 'm'));
      assert.match(skill, /^-description: Checks a release\.\n\+description: Checks a release before deployment\.$/m);

      const proposal = ok(await review('show', id('proposal'), '--tenant', 'acme'), 'show proposal');
      assert.match(proposal, new RegExp(`^Proposal: +${id('proposal')} \\(open\\)\nKnowledge: +Rollback plan \\(new\\)\n`));
      assert.match(proposal, /^Authority: +must_follow$/m);
      assert.match(proposal, new RegExp(`^Files: +steps\\.csv \\(text/csv, ${Buffer.byteLength(TABLE_CSV)} bytes\\)$`, 'm'));
      assert.ok(proposal.endsWith('\n\n# Rollback\n\nRevert the tag.\n'), proposal);
    });

    it('accept saves a Knowledge draft (--publish) and a Skill draft keeping its files; the reviewer is recorded', async () => {
      const draft = id('checklistDraft');
      assert.equal(
        ok(await review('accept', draft, '--tenant', 'acme', '--as', 'alice@acme.test', '--publish'), 'accept'),
        `accepted draft ${draft}: Knowledge "Release checklist" saved as version 2, published\n`,
      );
      const shown = await json<ReviewDetail>('show', draft, '--tenant', 'acme');
      assert.partialDeepStrictEqual(shown, { status: 'accepted', decided_by: 'alice@acme.test', result_version: 2 });
      assert.match(ok(await review('show', draft, '--tenant', 'acme'), 'show accepted'), /^Decision: +accepted as version 2 at \S+Z by alice@acme\.test$/m);

      const skill = await json<AcceptResult>('accept', id('skillDraft'), '--tenant', 'acme');
      assert.partialDeepStrictEqual(skill, {
        kind: 'draft',
        type: 'skill',
        name: 'release-check',
        version: 2,
        saved: true,
        published: false,
        decided_by: null,
      });
      assert.ok(!(await json<ReviewItem[]>('list', '--tenant', 'acme')).some((i) => i.id === draft || i.id === id('skillDraft')), 'no longer listed');
    });

    it('a stale draft is refused naming both versions, and accepted with --force', async () => {
      const draft = id('staleDraft');
      failed(
        await review('accept', draft, '--tenant', 'acme'),
        1,
        `kgw: draft ${draft} is stale: it was written on version 1 of the Knowledge "Moving target", which is now at version 2; accepting it would replace version 2 (review it and accept with --force to do so)`,
      );
      assert.equal(
        ok(await review('accept', draft, '--tenant', 'acme', '--force'), 'accept --force'),
        `accepted draft ${draft}: Knowledge "Moving target" saved as version 3 (stale: written on version 1, replaced version 2)\n`,
      );
    });

    it('reject records a note; deciding twice is refused', async () => {
      const draft = id('rejectDraft');
      const rejected = await json<RejectResult>('reject', draft, '--tenant', 'acme', '--as', 'bob@acme.test', '--note', 'Not sourced');
      assert.partialDeepStrictEqual(rejected, { status: 'rejected', kind: 'draft', name: 'Doubtful', note: 'Not sourced', decided_by: 'bob@acme.test' });
      const shown = await json<ReviewDetail>('show', draft, '--tenant', 'acme');
      assert.partialDeepStrictEqual(shown, { status: 'rejected', decision_note: 'Not sourced', decided_by: 'bob@acme.test' });
      failed(
        await review('reject', draft, '--tenant', 'acme'),
        1,
        new RegExp(`^kgw: draft ${draft} was already rejected at \\S+Z; only open drafts and proposals can be decided$`),
      );
      failed(await review('accept', draft, '--tenant', 'acme'), 1, /was already rejected/);
      failed(await review('reject', id('checklistDraft'), '--tenant', 'acme'), 1, /was already accepted/);
    });

    it('of two concurrent accepts of one draft exactly one succeeds', async () => {
      const draft = id('raceDraft');
      const runs = await Promise.all([review('accept', draft, '--tenant', 'acme'), review('accept', draft, '--tenant', 'acme')]);
      const winners = runs.filter((r) => r.code === 0);
      assert.equal(winners.length, 1, runs.map((r) => r.stderr).join('\n'));
      assert.equal(winners[0]?.stdout, `accepted draft ${draft}: Knowledge "Race" saved as version 2\n`);
      const loser = runs.find((r) => r.code !== 0);
      assert.ok(loser);
      failed(loser, 1, new RegExp(`^kgw: draft ${draft} was already accepted at `));
    });

    it('refuses unknown and foreign ids, unknown reviewers and bad usage', async () => {
      const unknown = randomUUID();
      failed(await review('show', unknown, '--tenant', 'acme'), 1, `kgw: no draft or proposal "${unknown}" in tenant "acme"${lookedIn(store)}`);
      failed(
        await review('accept', id('theirDraft'), '--tenant', 'acme'),
        1,
        `kgw: no draft or proposal "${id('theirDraft')}" in tenant "acme"${lookedIn(store)}`,
      );
      failed(
        await review('accept', id('proposal'), '--tenant', 'acme', '--as', 'carol@acme.test'),
        1,
        `kgw: no person "carol@acme.test" in tenant "acme"${lookedIn(store)}`,
      );
      failed(
        await review('reject', id('proposal'), '--tenant', 'acme', '--as', 'draft-bot'),
        1,
        'kgw: the reviewer must be a person, named by email: "draft-bot"',
      );
      // Usage errors and help never open the store, so these run side by side.
      const [noTenant, noId, badOption, badCommand, help, listHelp, showHelp, acceptHelp, rejectHelp, helpReview, mainHelp, badEnvHelp] = await Promise.all([
        review('accept', id('proposal')),
        review('accept', '--tenant', 'acme'),
        review('list', '--tenant', 'acme', '--force'),
        review('approve'),
        review('--help'),
        review('list', '--help'),
        review('show', '--help'),
        review('accept', '-h'),
        review('reject', '--help'),
        kgw(['help', 'review'], store.env),
        kgw(['--help'], store.env),
        // Help is printed before the configuration is read.
        kgw(['review', 'accept', '--help'], cliEnv({ KGW_DATA_DIR: '/nonexistent/kgw', KGW_PORT: 'abc' })),
      ]);
      failed(noTenant, 2, 'kgw: --tenant is required (see "kgw review --help")');
      failed(noId, 2, 'kgw: expected one argument, got 0 (see "kgw review --help")');
      failed(badOption, 2, /^kgw: unknown option --force; the options are --tenant, /);
      failed(badCommand, 2, 'kgw: unknown review command "approve"; use list, show, accept or reject (see "kgw review --help")');
      for (const run of [help, listHelp, showHelp, acceptHelp, rejectHelp, helpReview, badEnvHelp])
        assert.match(ok(run, 'help'), /^Usage:\n {2}kgw review list --tenant SLUG \[--kind draft\|proposal\|brain\|email\] \[--json\]\n/);
      assert.match(ok(mainHelp, '--help'), /^ {2}review {6}list, show, accept and reject agents' drafts and proposals$/m);
      // The proposal is still open after all of that.
      assert.equal((await json<ReviewDetail>('show', id('proposal'), '--tenant', 'acme')).status, 'open');
    });

    it('every decision is audited on the cli surface, with the reviewer when --as named one', async () => {
      const events = await withDb((db) =>
        db.query<{ action: string; surface: string; reviewer: string | null; kind: string; item: string }>(
          `SELECT e.action, e.surface, p.email AS reviewer, e.details->>'kind' AS kind, coalesce(e.details->>'draft_id', e.details->>'proposal_id') AS item
             FROM audit_events e LEFT JOIN principals p ON p.tenant_id = e.tenant_id AND p.id = e.principal_id
            WHERE e.action LIKE 'review.%' ORDER BY e.at`,
        ),
      );
      const fields = ['action', 'surface', 'reviewer', 'kind', 'item'] as const;
      assert.deepEqual(
        events.map((e) => pick(e, fields)),
        records(fields, [
          ['review.accept', 'cli', 'alice@acme.test', 'draft', id('checklistDraft')],
          ['review.accept', 'cli', null, 'draft', id('skillDraft')],
          ['review.accept', 'cli', null, 'draft', id('staleDraft')],
          ['review.reject', 'cli', 'bob@acme.test', 'draft', id('rejectDraft')],
          ['review.accept', 'cli', null, 'draft', id('raceDraft')],
        ]),
      );
    });

    it('through a running gateway: accepts the proposal; the agents read the results over MCP', async () => {
      gateway = await serve(store.env, { timeoutMs: 120_000 });
      const accepted = await json<AcceptResult>('accept', id('proposal'), '--tenant', 'acme', '--publish');
      assert.partialDeepStrictEqual(accepted, { kind: 'proposal', name: 'Rollback plan', version: 1, published: true });
      assert.deepEqual(await json<ReviewItem[]>('list', '--tenant', 'acme'), []);
      assert.equal(ok(await review('list', '--tenant', 'acme'), 'empty list'), 'no open drafts, proposals, brain inbox items or email drafts in acme\n');

      const reader = await connect('acme', 'draft-bot');
      const created = await call<{ title: string; content: string; authority: string; version: number; is_published_version: boolean }>(
        reader,
        'read_knowledge',
        {
          knowledge_id: accepted.resource_id,
          version: 'published',
        },
      );
      assert.partialDeepStrictEqual(created, {
        title: 'Rollback plan',
        content: '# Rollback\n\nRevert the tag.',
        authority: 'must_follow',
        version: 1,
        is_published_version: true,
      });
      assert.equal(await attachment(reader, 'knowledge', accepted.resource_id, 1, 'steps.csv'), TABLE_CSV);

      const checklist = await call<{ content: string; authority: string; version: number }>(reader, 'read_knowledge', {
        knowledge_id: id('checklist'),
        version: 'published',
      });
      assert.partialDeepStrictEqual(checklist, { content: '# Release\n\n- build\n- test\n- tag\n', authority: 'must_follow', version: 2 });
      const skill = await call<{ skill_md: string; description: string; version: number; attachments: { path: string }[] }>(reader, 'read_skill', {
        skill_id: id('skill'),
      });
      assert.partialDeepStrictEqual(skill, { version: 2, description: 'Checks a release before deployment.' });
      assert.deepEqual(
        skill.attachments.map((a) => a.path),
        ['scripts/run.sh'],
      );
      assert.equal(await attachment(reader, 'skill', id('skill'), 2, 'scripts/run.sh'), RUN_SH);
      const drafts = await call<{ drafts: unknown[] }>(reader, 'list_knowledge_drafts', { knowledge_id: id('checklist') });
      assert.deepEqual(drafts.drafts, [], 'an accepted draft is no longer open');
    });

    it('shows the escapes in agent-written titles, drafts and rationales instead of sending them to the terminal', async () => {
      // Clear screen, window title, a hidden hyperlink, C1 CSI, a carriage return, bidi override and isolates, a line break.
      const title = 'Evil \x1b[2J\x1b]0;pwned\x07 \x1b]8;;http://evil.test\x1b\\link\x1b]8;;\x1b\\ \u009b31mred \u202etxt.exe\u2066x\u2069\rover\nforged';
      const content = '# Notes\n\n\x1b[31mred\x1b[0m \u009b2J\u202eright-to-left\n';
      gateway ??= await serve(store.env, { timeoutMs: 120_000 });
      const hostileWriter = await connect('acme', 'writer-bot');
      const hostileDrafter = await connect('acme', 'draft-bot');
      const knowledgeId = (await call<{ knowledge_id: string }>(hostileWriter, 'write_knowledge', { title, expected_version: 0, content: 'plain\n' }))
        .knowledge_id;
      const draft = (
        await call<{ draft_id: string }>(hostileDrafter, 'create_knowledge_draft', {
          knowledge_id: knowledgeId,
          base_version: 1,
          content,
          rationale: 'Because\x1b]0;owned\x07\nof \u2067this\u2069',
        })
      ).draft_id;
      await call(hostileWriter, 'write_knowledge', { knowledge_id: knowledgeId, expected_version: 1, content: 'plain, v2\n' });

      // eslint-disable-next-line no-control-regex -- the control characters are what is looked for
      const raw = /[\u001b\u0007\u000d\u0080-\u009f\u202a-\u202e\u2066-\u2069]/;
      const clean = (text: string, what: string): string => {
        assert.doesNotMatch(text, raw, what);
        return text;
      };
      const shownTitle =
        'Evil \\x1b[2J\\x1b]0;pwned\\x07 \\x1b]8;;http://evil.test\\x1b\\link\\x1b]8;;\\x1b\\ \\x9b31mred \\u202etxt.exe\\u2066x\\u2069\\x0dover\\x0aforged';

      const list = clean(ok(await review('list', '--tenant', 'acme'), 'list'), 'list');
      const rows = lines(list).slice(1);
      assert.equal(rows.length, 1, 'the line break in the title forged no row');
      assert.ok(rows[0]?.includes('Evil \\x1b[2J\\x1b]0;pwned\\x07'), rows[0]);

      const shown = clean(ok(await review('show', draft, '--tenant', 'acme'), 'show'), 'show');
      assert.ok(lines(shown).includes(`Knowledge:  ${shownTitle} (${knowledgeId})`), shown);
      assert.match(shown, /^Rationale: +Because\\x1b\]0;owned\\x07\n +of \\u2067this\\u2069$/m);
      assert.match(shown, /^\+\\x1b\[31mred\\x1b\[0m \\x9b2J\\u202eright-to-left$/m);

      // --json is exact: C1 and bidi characters as \u escapes too, which parse back to the same text.
      const json = clean(ok(await review('show', draft, '--tenant', 'acme', '--json'), 'show --json'), 'show --json');
      const detail = JSON.parse(json) as ReviewDetail;
      assert.partialDeepStrictEqual(detail, { name: title, content, rationale: 'Because\x1b]0;owned\x07\nof \u2067this\u2069' });
      for (const escape of ['\\u001b[2J', '\\u009b31m', '\\u202e', '\\u2066', '\\r']) assert.ok(json.includes(escape), escape);

      // An error names the Knowledge too. Error texts may hold several lines (an org file's problems), so the
      // title's line break stays one there; everything else is shown.
      const refused = await review('accept', draft, '--tenant', 'acme');
      assert.equal(refused.code, 1);
      assert.ok(clean(refused.stderr, 'stale error').includes(`of the Knowledge "${shownTitle.replace('\\x0a', '\n')}"`), refused.stderr);

      const accepted = clean(ok(await review('accept', draft, '--tenant', 'acme', '--force'), 'accept --force'), 'accept');
      assert.equal(lines(accepted).length, 1);
      assert.ok(accepted.startsWith(`accepted draft ${draft}: Knowledge "${shownTitle}" saved as version 3`), accepted);
    });
  });
}
