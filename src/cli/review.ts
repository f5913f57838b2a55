import path from 'node:path';
import { loadConfig } from '../config.ts';
import type { BrainDecisionJson as BrainDecision, BrainDetailJson as BrainDetail, BrainItemJson as BrainItem, NodeTierJson } from '../brain/index.ts';
import type {
  AcceptResultJson as AcceptResult,
  RejectResultJson as RejectResult,
  ReviewDetailJson as ReviewDetail,
  ReviewItemJson as ReviewItem,
} from '../alignbase/index.ts';
import { readSource } from './apply.ts';
import { withOps } from './session.ts';
import { jsonText, print, visible } from './terminal.ts';
import { UsageError, parseCommand, requireOptions, table, when } from './usage.ts';

export const reviewHelp = `Usage:
  kgw review list --tenant SLUG [--kind draft|proposal|brain|email] [--json]
  kgw review show ID --tenant SLUG [--json]
  kgw review accept ID --tenant SLUG [--as EMAIL] [--publish] [--force] [--apply FILE] [--json]
  kgw review reject ID --tenant SLUG [--as EMAIL] [--note TEXT] [--json]

Agents submit drafts (create_knowledge_draft, create_skill_draft: a full replacement of one
Knowledge or SKILL.md) and proposals (propose_knowledge: a new Knowledge). Nothing they submit
becomes a version until a person accepts it here. Company Brain inbox items (write_inbox,
propose_onboarding_action) are listed here too, as kind brain, and email drafts
(propose_draft_email) as kind email: accepting one needs --as a manager or admin of the brain.
An onboarding action is applied to the brain then, all or nothing; an email draft is put in
the approver's own mailbox as a draft (IMAP, when the org file gives them a mailbox, its
password read from the variable its password_env names in this command's environment; else an
.eml file in the data folder), never sent (docs/company-brain.md, "Decisions", "Email drafts").

list     the open drafts and proposals of a tenant, oldest first. BASE→CURRENT: the version
         a draft was written on and the latest version now; STALE: the latter is newer.
show     one draft or proposal in full: a draft as a diff against the version it was written
         on (and, when stale, against the latest version); a proposal with its content and
         files. --json adds the versions' full texts. An onboarding action shows the access
         of each brain node it names, now → after the action.
accept   saves a draft as the next version (a Knowledge keeps its authority and files, a Skill
         its files; a new SKILL.md name renames the Skill) or creates a proposal's Knowledge,
         created by the proposing agent. --publish publishes the resulting version. A stale
         draft is refused unless --force (which replaces the newer version).
         An onboarding action needs --as a person who sees every node it names, as it is
         and as it would be (it stays pending otherwise).
         A brain inbox item (an observation, a correction, ...) is acknowledged; --apply FILE
         (a brain file, as kgw brain import reads) applies its nodes and relations with the
         decision, all or nothing.
reject   marks it rejected; --note records why.

--as EMAIL  the person of the tenant who decides, recorded with the decision; without it the
            decision is recorded as the CLI operator's. Every decision is audited.`;

const TENANT = { tenant: { type: 'string' } } as const;
const KINDS = ['draft', 'proposal', 'brain', 'email'] as const;

/** A brain inbox item's one line in the list: its inbox kind, and an onboarding action's name and risk. */
const brainType = (i: BrainItem): string => (i.action === null ? i.type : `${i.action} (${i.risk ?? '?'} risk)`);

/** A node's tier as the show text says it: the literal, with its department or project. */
const tierText = (t: NodeTierJson): string =>
  t.department !== undefined ? `department (${named(t.department)})` : t.project !== undefined ? `project (${named(t.project)})` : t.access;

/** One node an action names: its access now and after, side by side, so a decider sees what it would declassify or hide. */
function accessLine(a: BrainDetail['access'][number]): string {
  const now = a.current === null ? 'none (no such node now)' : tierText(a.current);
  const after = a.new === null ? (a.current === null ? 'none' : 'removed') : tierText(a.new);
  return `[${named(a.node)}] ${now === after ? `${now} (unchanged)` : `${now} → ${after}`}`;
}

function brainShowText(d: BrainDetail): string {
  const head = fields([
    [d.type === 'email_draft' ? 'Email draft' : 'Brain inbox item', `${d.id} (${d.status})`],
    ['Kind', d.type],
    ['To', d.recipients.length === 0 ? undefined : d.recipients.map(named).join(', ')],
    ['Action', d.action === null ? undefined : `${d.action} (${d.risk ?? '?'} risk)`],
    [d.type === 'email_draft' ? 'Subject' : 'Title', named(d.title)],
    ['Author', named(d.author_email ?? d.author_name ?? 'unknown')],
    ['Created', when(d.created_at)],
    ['Related', d.related_node_ids.length === 0 ? undefined : d.related_node_ids.map((id) => `[${named(id)}]`).join(', ')],
    ['Access', d.access.length === 0 ? undefined : d.access.map(accessLine).join('\n')],
    ['Decision', d.decided_at === null ? undefined : `${d.status} at ${when(d.decided_at)} by ${d.decided_by ?? 'unknown'}`],
    ['Note', d.decision_note],
    ['Draft', d.delivered_to === null ? undefined : named(d.delivered_to)],
  ]);
  const body = d.details !== null ? JSON.stringify(JSON.parse(d.details), null, 2) : d.body;
  return `${head}\n\n${visible(body)}`;
}

function brainDecisionText(r: BrainDecision): string {
  const what = r.action === null ? r.type : `${r.type} ${r.action}`;
  const item = r.type === 'email_draft' ? 'email draft' : 'brain inbox item';
  return [
    `${r.status} ${item} ${r.id} (${what}) as ${r.decided_by}`,
    ...r.applied.map((line) => `  ${line}`),
    ...(r.delivered_to === null ? [] : [`  draft put in ${named(r.delivered_to)} (not sent)`]),
  ].join('\n');
}

const LABEL = { knowledge: 'Knowledge', skill: 'Skill' } as const;

/** A name inside a line of the CLI's own: an agent's line break in it must not start another. */
const named = (text: string): string => visible(text, { inline: true });

/** The person who submitted it, and the agent when an agent did. */
function author(item: ReviewItem, long = false): string {
  const person = named(item.author_email ?? item.author_name ?? 'unknown');
  if (item.agent_name === null) return person;
  return long ? `${named(item.agent_name)} (agent of ${person})` : `${named(item.agent_name)} (${person})`;
}

function versions(item: ReviewItem): string {
  return item.kind === 'proposal' ? 'new' : `${item.base_version}→${item.current_version}`;
}

function clip(text: string, max = 48): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}

function fields(rows: readonly (readonly [string, string | null | undefined])[]): string {
  const shown = rows.filter((r): r is readonly [string, string] => r[1] !== null && r[1] !== undefined);
  const width = Math.max(...shown.map(([label]) => label.length)) + 3;
  return shown.map(([label, value]) => `${`${label}:`.padEnd(width)}${value.replace(/\n/g, `\n${' '.repeat(width)}`)}`).join('\n');
}

function files(detail: ReviewDetail): string | undefined {
  if (detail.attachments.length === 0) return undefined;
  const list = detail.attachments.map((a) => `${a.path} (${a.media_type}, ${a.size} bytes)`).join('\n');
  return detail.kind === 'draft' ? `kept from version ${detail.current_version}:\n${list}` : list;
}

function decision(detail: ReviewDetail): string | undefined {
  if (detail.status === 'open' || detail.decided_at === null) return undefined;
  const by = detail.decided_by === null ? 'the CLI operator' : detail.decided_by;
  let result = '';
  if (detail.status === 'accepted') result = detail.kind === 'draft' ? ` as version ${detail.result_version}` : ` as Knowledge ${detail.result_resource_id}`;
  return `${detail.status}${result} at ${when(detail.decided_at)} by ${by}`;
}

function showText(d: ReviewDetail): string {
  const head = fields([
    [d.kind === 'draft' ? 'Draft' : 'Proposal', `${d.id} (${d.status})`],
    [LABEL[d.type], d.kind === 'draft' ? `${named(d.name)} (${d.resource_id})` : `${named(d.name)} (new)`],
    [
      'Base',
      d.kind === 'draft' ? `version ${d.base_version}${d.is_stale ? `; the ${LABEL[d.type]} is now at version ${d.current_version} (stale)` : ''}` : undefined,
    ],
    ['Author', author(d, true)],
    ['Created', when(d.created_at)],
    ['Authority', d.authority === null ? undefined : `${d.authority}${d.kind === 'draft' ? ` (kept from version ${d.current_version})` : ''}`],
    ['Files', files(d)],
    ['Rationale', d.rationale],
    ['Decision', decision(d)],
    ['Note', d.decision_note],
  ]);
  if (d.kind === 'proposal') return `${head}\n\n${d.content}`;
  const parts = [head, ''];
  if (d.diff === '') parts.push(`(the draft equals version ${d.base_version})`);
  else parts.push((d.diff ?? '').replace(/\n$/, ''));
  if (d.diff_latest !== null) {
    parts.push('', `Against the latest version ${d.current_version} (what accepting with --force changes):`, '');
    parts.push(d.diff_latest === '' ? `(the draft equals version ${d.current_version})` : d.diff_latest.replace(/\n$/, ''));
  }
  return parts.join('\n');
}

function acceptText(r: AcceptResult): string {
  if (r.kind === 'proposal')
    return `accepted proposal ${r.id}: created Knowledge "${named(r.name)}" (${r.resource_id}) at version ${r.version}${r.published ? ', published' : ''}`;
  const what = r.saved ? `saved as version ${r.version}` : `unchanged at version ${r.version} (the draft equals it)`;
  const published = r.published ? ', published' : '';
  const forced = r.forced ? ` (stale: written on version ${r.base_version}, replaced version ${r.previous_version})` : '';
  return `accepted draft ${r.id}: ${LABEL[r.type]} "${named(r.name)}" ${what}${published}${forced}`;
}

function rejectText(r: RejectResult): string {
  return r.kind === 'draft' ? `rejected draft ${r.id} (${LABEL[r.type]} "${named(r.name)}")` : `rejected proposal ${r.id} ("${named(r.name)}")`;
}

const answer = (json: boolean | undefined, value: unknown, text: () => string): void => print(json === true ? jsonText(value) : text());

export async function reviewCommand(argv: readonly string[]): Promise<void> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === '--help' || sub === '-h') return void print(reviewHelp);
  switch (sub) {
    case 'list': {
      const { values, help } = parseCommand(rest, { ...TENANT, kind: { type: 'string' }, json: { type: 'boolean' } }, { min: 0, max: 0 });
      if (help) return void print(reviewHelp);
      const { tenant } = requireOptions(values, 'tenant');
      const kind = values.kind;
      if (kind !== undefined && !(KINDS as readonly string[]).includes(kind)) throw new UsageError(`--kind must be one of ${KINDS.join(', ')}`);
      const [all, inbox] = await withOps(
        loadConfig(),
        async (run) =>
          [
            kind === 'brain' || kind === 'email' ? [] : await run('review.list', { tenant }),
            kind === undefined || kind === 'brain' || kind === 'email' ? await run('review.brain.list', { tenant }) : [],
          ] as const,
      );
      const items = all.filter((i) => kind === undefined || i.kind === kind);
      const brain = inbox.filter((i) => kind === undefined || i.kind === kind);
      if (values.json === true) return void print(jsonText([...items, ...brain]));
      if (items.length === 0 && brain.length === 0)
        return void print(
          `no open ${kind === 'brain' ? 'brain inbox items' : kind === 'email' ? 'email drafts' : kind === undefined ? 'drafts, proposals, brain inbox items or email drafts' : `${kind}s`} in ${tenant}`,
        );
      if (brain.length > 0) {
        print(
          table(
            ['ID', 'KIND', 'TYPE', 'TITLE', 'AUTHOR', 'CREATED'],
            brain.map((i) => [i.id, i.kind, brainType(i), clip(i.title), named(i.author_email ?? i.author_name ?? 'unknown'), when(i.created_at)]),
          ),
        );
        if (items.length === 0) return;
        print('');
      }
      if (items.length === 0) return;
      print(
        table(
          ['ID', 'KIND', 'TYPE', 'NAME', 'BASE→CURRENT', 'STALE', 'AUTHOR', 'CREATED'],
          items.map((i) => [
            i.id,
            i.kind,
            i.type,
            clip(i.name),
            versions(i),
            i.kind === 'proposal' ? '-' : i.is_stale ? 'yes' : 'no',
            author(i),
            when(i.created_at),
          ]),
        ),
      );
      return;
    }
    case 'show': {
      const { values, positionals, help } = parseCommand(rest, { ...TENANT, json: { type: 'boolean' } }, { min: 1, max: 1 });
      if (help) return void print(reviewHelp);
      const { tenant } = requireOptions(values, 'tenant');
      const id = positionals[0] ?? '';
      await withOps(loadConfig(), async (run) => {
        if (await run('review.brain.is', { tenant, id })) {
          const detail = await run('review.brain.show', { tenant, id });
          return answer(values.json, detail, () => brainShowText(detail));
        }
        const detail = await run('review.show', { tenant, id });
        answer(values.json, detail, () => showText(detail));
      });
      return;
    }
    case 'accept': {
      const { values, positionals, help } = parseCommand(
        rest,
        { ...TENANT, as: { type: 'string' }, publish: { type: 'boolean' }, force: { type: 'boolean' }, apply: { type: 'string' }, json: { type: 'boolean' } },
        { min: 1, max: 1 },
      );
      if (help) return void print(reviewHelp);
      const { tenant } = requireOptions(values, 'tenant');
      const id = positionals[0] ?? '';
      const apply = values.apply === undefined ? undefined : { source: await readSource(values.apply), fileName: path.basename(values.apply) };
      await withOps(loadConfig(), async (run) => {
        if (await run('review.brain.is', { tenant, id })) {
          // The approver's mailbox password, from this command's environment: only that variable is sent.
          const passwordEnv = await run('review.brain.password-env', { tenant, as: values.as });
          const password = passwordEnv === null ? undefined : process.env[passwordEnv];
          const env = passwordEnv === null || password === undefined ? {} : { [passwordEnv]: password };
          const result = await run('review.brain.accept', { tenant, id, as: values.as, env, apply });
          return answer(values.json, result, () => brainDecisionText(result));
        }
        if (apply !== undefined) throw new UsageError('--apply is for Company Brain inbox items');
        const result = await run('review.accept', { tenant, id, as: values.as, publish: values.publish === true, force: values.force === true });
        answer(values.json, result, () => acceptText(result));
      });
      return;
    }
    case 'reject': {
      const { values, positionals, help } = parseCommand(
        rest,
        { ...TENANT, as: { type: 'string' }, note: { type: 'string' }, json: { type: 'boolean' } },
        { min: 1, max: 1 },
      );
      if (help) return void print(reviewHelp);
      const { tenant } = requireOptions(values, 'tenant');
      const id = positionals[0] ?? '';
      await withOps(loadConfig(), async (run) => {
        if (await run('review.brain.is', { tenant, id })) {
          const result = await run('review.brain.reject', { tenant, id, as: values.as, note: values.note });
          return answer(values.json, result, () => brainDecisionText(result));
        }
        const result = await run('review.reject', { tenant, id, as: values.as, note: values.note });
        answer(values.json, result, () => rejectText(result));
      });
      return;
    }
    default:
      throw new UsageError(`unknown review command "${sub}"; use list, show, accept or reject`);
  }
}
