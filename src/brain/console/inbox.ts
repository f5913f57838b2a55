import type { ConsolePerson, InboxDecided, InboxDetail, InboxEntry, InboxSource } from '../../console/contract.ts';
import type { Lang, Text } from '../../console/text.ts';
import { fill } from '../../console/text.ts';
import { compareView, readable, textView } from '../../console/views.ts';
import type { SafeHtml } from '../../http/pages/html.ts';
import { html } from '../../http/pages/html.ts';
import { principalAccess } from '../../kernel/directory/principals.ts';
import type { TierViewer } from '../../kernel/directory/tiers.ts';
import { visibleAtTier } from '../../kernel/directory/tiers.ts';
import { isKgwError, notFound, validation } from '../../kernel/errors.ts';
import type { DraftEmail } from '../../kernel/mail/draft.ts';
import type { MailboxSettings } from '../../kernel/mail/mailbox.ts';
import { parseImapUrl } from '../../kernel/mail/mailbox.ts';
import { accessText, relationText, sees } from '../action-reach.ts';
import type { InboxItemKind } from '../inbox.ts';
import type { BrainNode } from '../model.ts';
import type { BrainReviewDetail, BrainReviewItem, NodeChange } from '../review.ts';
import { acceptBrainReview, actionLine, actionNodeChanges, approverMailbox, listBrainReviews, rejectBrainReview, showBrainReview } from '../review.ts';
import { visibleText } from '../../kernel/text.ts';

/**
 * The Company Brain's part of the console inbox: what agents register with write_inbox, the
 * onboarding actions managers' agents propose and the email drafts of propose_draft_email,
 * listed, shown and decided through `kgw review`'s own functions (src/brain/review.ts) as the
 * person signed in. Who decides is what acceptBrainReview's approver() requires: a person whose
 * brain_role is manager or admin; to anyone else the brain inbox is empty, and each of its items
 * unknown (docs/company-brain.md, "Decisions").
 */

const KINDS = [
  { id: 'brain_observation', label: { en: 'Brain observation', de: 'Brain-Beobachtung' } },
  { id: 'brain_correction', label: { en: 'Brain correction', de: 'Brain-Korrektur' } },
  { id: 'brain_proposal', label: { en: 'Brain proposal', de: 'Brain-Vorschlag' } },
  { id: 'brain_work_output', label: { en: 'Brain work output', de: 'Brain-Arbeitsergebnis' } },
  { id: 'onboarding_action', label: { en: 'Onboarding action', de: 'Onboarding-Aktion' } },
  { id: 'email_draft', label: { en: 'Email draft', de: 'E-Mail-Entwurf' } },
] as const;

/** The form field of the accept form that takes the mailbox password, when the gateway does not have it. */
const PASSWORD_FIELD = 'mailbox_password';

const T = {
  body: { en: 'What the agent wrote', de: 'Was der Agent geschrieben hat' },
  related: { en: 'Related nodes', de: 'Zugehörige Knoten' },
  noRelated: { en: 'No related nodes.', de: 'Keine zugehörigen Knoten.' },
  acknowledge: {
    en: 'Accepting acknowledges it; the brain is not changed.',
    de: 'Annehmen bestätigt den Eintrag; das Brain bleibt unverändert.',
  },
  action: { en: 'Action: {action} ({risk} risk)', de: 'Aktion: {action} ({risk} Risiko)' },
  low: { en: 'low', de: 'geringes' },
  medium: { en: 'medium', de: 'mittleres' },
  high: { en: 'high', de: 'hohes' },
  addsRelation: { en: 'Adds the relation', de: 'Fügt die Beziehung hinzu' },
  removesRelation: { en: 'Removes the relation', de: 'Entfernt die Beziehung' },
  nodeCaption: { en: 'Node {id}: as it is now and as accepting leaves it', de: 'Knoten {id}: wie er jetzt ist und wie Annehmen ihn hinterlässt' },
  nodeCaptionDecided: {
    en: 'Node {id}: as the brain holds it now and as the action sets it',
    de: 'Knoten {id}: wie das Brain ihn jetzt hält und wie die Aktion ihn setzt',
  },
  field: { en: 'Field', de: 'Feld' },
  now: { en: 'Now', de: 'Jetzt' },
  after: { en: 'After accepting', de: 'Nach dem Annehmen' },
  asSet: { en: 'As the action sets it', de: 'Wie die Aktion ihn setzt' },
  type: { en: 'Type', de: 'Typ' },
  title: { en: 'Title', de: 'Titel' },
  summary: { en: 'Summary', de: 'Zusammenfassung' },
  access: { en: 'Access tier', de: 'Zugriffsstufe' },
  tags: { en: 'Tags', de: 'Schlagwörter' },
  metadata: { en: 'Metadata', de: 'Metadaten' },
  mark: { en: 'Mark', de: 'Markierung' },
  verified: { en: 'Verified', de: 'Geprüft' },
  reviewBy: { en: 'Review by', de: 'Prüfen bis' },
  emailAs: { en: 'The email as it will appear', de: 'Die E-Mail, wie sie erscheinen wird' },
  mailFrom: { en: 'From', de: 'Von' },
  mailTo: { en: 'To', de: 'An' },
  mailSubject: { en: 'Subject', de: 'Betreff' },
  mailBody: { en: 'Text of the email', de: 'Text der E-Mail' },
  toMailbox: {
    en: 'Accepting puts it in your mailbox {mailbox} as a draft for you to review, edit and send yourself. Nothing is sent.',
    de: 'Annehmen legt sie als Entwurf in Ihr Postfach {mailbox}, damit Sie sie prüfen, bearbeiten und selbst senden. Es wird nichts gesendet.',
  },
  toFile: {
    en: 'You have no mailbox in the organisation file: accepting saves it as an .eml draft file in the gateway’s data folder. Nothing is sent.',
    de: 'Sie haben kein Postfach in der Organisationsdatei: Annehmen speichert sie als .eml-Entwurfsdatei im Datenordner des Gateways. Es wird nichts gesendet.',
  },
  password: { en: 'Password of your mailbox {mailbox}', de: 'Passwort Ihres Postfachs {mailbox}' },
  passwordNote: {
    en: 'Used for this decision only, never stored.',
    de: 'Nur für diese Entscheidung verwendet, nie gespeichert.',
  },
  passwordMissing: { en: 'Enter the password of your mailbox {mailbox}.', de: 'Geben Sie das Passwort Ihres Postfachs {mailbox} ein.' },
  applied: { en: 'What accepting changed in the brain:', de: 'Was das Annehmen im Brain geändert hat:' },
  acknowledged: { en: 'Acknowledged.', de: 'Bestätigt.' },
  inMailbox: { en: 'The draft was put in the mailbox (not sent):', de: 'Der Entwurf wurde ins Postfach gelegt (nicht gesendet):' },
  inFile: { en: 'The draft was saved as a file (not sent):', de: 'Der Entwurf wurde als Datei gespeichert (nicht gesendet):' },
} as const satisfies Record<string, Text>;

/** A text of several lines (a body) as shown. */
const block = (text: string): string => visibleText(text);

const kindOf = (kind: InboxItemKind): (typeof KINDS)[number]['id'] => (kind === 'onboarding_action' || kind === 'email_draft' ? kind : `brain_${kind}`);

const fromOf = (item: BrainReviewItem): string | null => {
  const who = item.authorName ?? item.authorEmail;
  return who === null ? null : readable(who);
};

/**
 * The brain inbox keeps no base an item was written on: an action is checked against the brain
 * as it is when it is decided, and a refusal says what no longer fits. So no item is stale.
 */
const entryOf = (item: BrainReviewItem): InboxEntry => ({
  id: item.id,
  kind: kindOf(item.kind),
  title: readable(item.title),
  from: fromOf(item),
  createdAt: item.createdAt,
  stale: false,
});

/** What the person sees of the brain when they may decide its items (brain_role manager or admin, as approver() requires); else undefined. */
async function deciderOf(who: ConsolePerson): Promise<TierViewer | undefined> {
  const access = await principalAccess(who.services.db, who.tenant.id, who.person.id);
  return access?.brainRole === 'manager' || access?.brainRole === 'admin' ? access : undefined;
}

interface Decidable {
  readonly detail: BrainReviewDetail;
  /** An onboarding action's nodes now and after; empty for any other item. */
  readonly nodes: readonly NodeChange[];
  readonly viewer: TierViewer;
}

/**
 * The item, if the person may decide it and may see everything it shows.
 *
 * Tiers: an onboarding action that names a node the person does not see, as the node is now or
 * as the action would leave it, is left out of their list and unknown to show(), as an item of
 * another tenant is. Showing it without the hidden node's fields was the other choice, but the
 * action's own details (title, summary, tags of an add_node or update_node) are that node's
 * fields, and its id alone can tell what it is about; and the person could not accept it anyway
 * (applyAction refuses one who does not see every node). Rejecting it is left to a manager who
 * sees it, or to `kgw review reject`. The same holds for details that no longer match the
 * action's schema: what they name cannot be told, so they are shown to no one here.
 */
async function decidable(who: ConsolePerson, id: string, viewer?: TierViewer): Promise<Decidable | undefined> {
  const decider = viewer ?? (await deciderOf(who));
  if (decider === undefined) return undefined;
  let detail: BrainReviewDetail;
  try {
    detail = await showBrainReview(who.services.db, { tenant: who.tenant.slug, id });
  } catch (error) {
    if (isKgwError(error) && (error.code === 'not_found' || error.code === 'validation')) return undefined;
    throw error;
  }
  if (detail.action === null) return { detail, nodes: [], viewer: decider };
  if (detail.details === null) return undefined;
  const nodes = await actionNodeChanges(who.services.db, who.tenant, detail.action, detail.details);
  if (nodes === undefined) return undefined;
  const hidden = nodes.some(({ current, proposed }) => (current !== null && !sees(decider, current)) || (proposed !== null && !sees(decider, proposed)));
  return hidden ? undefined : { detail, nodes, viewer: decider };
}

/** A node's fields as the compare table shows them, one line each; null where the field is empty. */
function fieldsOf(node: BrainNode | null): Readonly<Record<NodeField, string | null>> | null {
  if (node === null) return null;
  const text = (value: string): string | null => (value === '' ? null : readable(value));
  return {
    type: node.type,
    title: text(node.title),
    summary: text(node.summary),
    access: readable(accessText(node)),
    tags: text(node.tags.join(', ')),
    metadata: text(
      Object.entries(node.metadata)
        .map(([key, value]) => `${key}: ${String(value)}`)
        .join('; '),
    ),
    mark: node.mark,
    verified: node.verifiedAt,
    reviewBy: node.reviewBy,
  };
}

const NODE_FIELDS = ['type', 'title', 'summary', 'access', 'tags', 'metadata', 'mark', 'verified', 'reviewBy'] as const;
type NodeField = (typeof NODE_FIELDS)[number];

const riskText = (lang: Lang, risk: string | null): string => (risk === 'low' || risk === 'medium' || risk === 'high' ? T[risk][lang] : '?');

/** An onboarding action: what it does, and each node it names with every field now and after, side by side. */
function actionChanges(lang: Lang, detail: BrainReviewDetail, nodes: readonly NodeChange[]): SafeHtml {
  const action = detail.action!;
  const head = html`<p>${fill(T.action[lang], { action, risk: riskText(lang, detail.risk) })}</p>`;
  const details = detail.details ?? {};
  const relation =
    action === 'add_relation' || action === 'remove_relation'
      ? html`<p>${action === 'add_relation' ? T.addsRelation[lang] : T.removesRelation[lang]}: <code>${readable(relationText(details as { from: string; verb: string; to: string }))}</code></p>`
      : '';
  const decided = detail.status !== 'pending';
  const tables = nodes.map(({ node, current, proposed }) => {
    const now = fieldsOf(current);
    const after = fieldsOf(proposed);
    return compareView(
      fill((decided ? T.nodeCaptionDecided : T.nodeCaption)[lang], { id: readable(node) }),
      { field: T.field[lang], now: T.now[lang], after: (decided ? T.asSet : T.after)[lang] },
      NODE_FIELDS.map((field) => ({ field: T[field][lang], now: now?.[field] ?? null, after: after?.[field] ?? null })),
    );
  });
  return html`${head}${relation}${tables}`;
}

/** The mailbox as a person reads it: its login and server (the gateway's KGW_MAIL_IMAP_URL when the org file names none). */
function mailboxName(who: ConsolePerson, mailbox: MailboxSettings): string {
  const raw = mailbox.url ?? who.services.config.mail.imapUrl;
  const url = raw === undefined ? undefined : parseImapUrl(raw);
  const user = mailbox.user ?? who.person.email;
  return readable(url === undefined || typeof url === 'string' ? user : `${user} (${url.host})`);
}

/**
 * An email draft as it will appear: built as the DraftEmail acceptBrainReview composes
 * (src/kernel/mail/draft.ts) — From the approver, who is the person signed in (once decided,
 * the one who decided), To the recipients, the title as Subject, the body as its plain text.
 */
function emailChanges(who: ConsolePerson, detail: BrainReviewDetail, mailbox: MailboxSettings | null): SafeHtml {
  const { lang } = who;
  const draft: Omit<DraftEmail, 'date'> = {
    approvalId: detail.id,
    from: { name: who.person.name, address: who.person.email },
    to: detail.recipients,
    subject: detail.title,
    bodyText: detail.body,
    unsent: mailbox === null,
  };
  const from = detail.status === 'pending' ? `${draft.from.name} <${draft.from.address}>` : (detail.decidedBy ?? '—');
  const where =
    detail.status !== 'pending'
      ? ''
      : html`<p class="note">${mailbox === null ? T.toFile[lang] : fill(T.toMailbox[lang], { mailbox: mailboxName(who, mailbox) })}</p>`;
  return html`<h3>${T.emailAs[lang]}</h3>
<dl class="facts">
<dt>${T.mailFrom[lang]}</dt><dd>${readable(from)}</dd>
<dt>${T.mailTo[lang]}</dt><dd>${draft.to.map(readable).join(', ')}</dd>
<dt>${T.mailSubject[lang]}</dt><dd>${readable(draft.subject)}</dd>
</dl>
${textView(block(draft.bodyText), T.mailBody[lang])}
${where}`;
}

/** An observation, correction, proposal or work output: its text, and the related nodes the person sees (of the others not even the ids). */
async function itemChanges(who: ConsolePerson, detail: BrainReviewDetail, viewer: TierViewer): Promise<SafeHtml> {
  const { lang } = who;
  const related: string[] = [];
  for (const id of detail.relatedNodeIds) {
    // As write_inbox checked them for its author: in the graph store, at the node's tier now.
    const found = await who.services.graph.node({ tenantId: who.tenant.id, id });
    if (found !== undefined && visibleAtTier(viewer, { access: found.node.access, department: found.node.department, project: found.node.project }))
      related.push(id);
  }
  return html`<h3>${T.body[lang]}</h3>
${textView(block(detail.body), T.body[lang])}
<h3>${T.related[lang]}</h3>
${related.length === 0 ? html`<p>${T.noRelated[lang]}</p>` : html`<ul>${related.map((id) => html`<li><code>${readable(id)}</code></li>`)}</ul>`}
${detail.status === 'pending' ? html`<p class="note">${T.acknowledge[lang]}</p>` : ''}`;
}

/**
 * What accepting did: an action's line (the decision stores none; actionLine says it in the
 * decision's words), where an email draft went. Any other item was acknowledged; what a brain
 * file given with `kgw review accept --apply` changed with it is not kept, so not said here.
 */
function resultOf(lang: Lang, detail: BrainReviewDetail): SafeHtml | undefined {
  if (detail.status !== 'accepted') return undefined;
  if (detail.action !== null && detail.details !== null)
    return html`<p>${T.applied[lang]}</p><ul><li><code>${readable(actionLine(detail.action, detail.details))}</code></li></ul>`;
  if (detail.kind === 'email_draft' && detail.deliveredTo !== null)
    return html`<p>${detail.deliveredTo.startsWith('imap') ? T.inMailbox[lang] : T.inFile[lang]} <code>${readable(detail.deliveredTo)}</code></p>`;
  return html`<p>${T.acknowledged[lang]}</p>`;
}

/**
 * The gateway's own configuration variables: never sent to a mailbox server, whatever an org
 * file's password_env names (its url could name a server of anyone's).
 */
const GATEWAY_VARIABLE = /^(?:KGW_|S3_|MEILI_|NEO4J_|DATABASE_URL$)/;

/**
 * Where an email approval finds the approver's mailbox password (docs/company-brain.md,
 * "Decisions"). `kgw review accept` sends the variable password_env names from its own
 * environment; a person in the console has no environment of their own. So the gateway's is
 * used when the variable is set there (an operator who keeps mailbox passwords with the
 * gateway); otherwise the accept form asks for it, and the typed password goes to this one
 * decision as that variable, as the CLI sends it: it is never stored, logged or shown again.
 * A person without a mailbox gets an .eml file, and needs none.
 */
function gatewayPassword(mailbox: MailboxSettings | null): 'none' | 'gateway' | 'ask' {
  if (mailbox === null) return 'none';
  const value = GATEWAY_VARIABLE.test(mailbox.password_env) ? undefined : process.env[mailbox.password_env];
  return value === undefined || value === '' ? 'ask' : 'gateway';
}

function passwordField(who: ConsolePerson, mailbox: MailboxSettings): SafeHtml {
  const { lang } = who;
  return html`<label>${fill(T.password[lang], { mailbox: mailboxName(who, mailbox) })} <input type="password" name="${PASSWORD_FIELD}" autocomplete="off" required></label>
<p class="note">${T.passwordNote[lang]}</p>`;
}

/** The environment acceptBrainReview reads the password from: the one variable, and nothing else. */
function passwordEnv(who: ConsolePerson, mailbox: MailboxSettings | null, form: URLSearchParams): Readonly<Record<string, string>> {
  const source = gatewayPassword(mailbox);
  if (mailbox === null || source === 'none') return {};
  const name = mailbox.password_env;
  if (source === 'gateway') return { [name]: process.env[name] ?? '' };
  const typed = form.get(PASSWORD_FIELD) ?? '';
  if (typed === '') throw validation(fill(T.passwordMissing[who.lang], { mailbox: mailboxName(who, mailbox) }));
  return { [name]: typed };
}

export const brainInbox: InboxSource = {
  id: 'brain',
  kinds: KINDS,
  async list(who) {
    const viewer = await deciderOf(who);
    if (viewer === undefined) return [];
    const entries: InboxEntry[] = [];
    for (const item of await listBrainReviews(who.services.db, { tenant: who.tenant.slug })) {
      // Only an onboarding action names nodes it could hide: it alone is looked at in full.
      if (item.action === null || (await decidable(who, item.id, viewer)) !== undefined) entries.push(entryOf(item));
    }
    return entries;
  },
  async show(who, id): Promise<InboxDetail | undefined> {
    const found = await decidable(who, id);
    if (found === undefined) return undefined;
    const { detail, nodes, viewer } = found;
    const { lang } = who;
    const decided: InboxDecided | undefined =
      detail.status === 'pending'
        ? undefined
        : {
            outcome: detail.status,
            by: detail.decidedBy,
            at: detail.decidedAt,
            note: detail.decisionNote === null ? null : block(detail.decisionNote),
            result: resultOf(lang, detail),
          };
    let changes: SafeHtml;
    let acceptFields: SafeHtml | undefined;
    if (detail.kind === 'onboarding_action') changes = actionChanges(lang, detail, nodes);
    else if (detail.kind === 'email_draft') {
      const mailbox = await approverMailbox(who.services.db, who.tenant.id, who.person.id);
      changes = emailChanges(who, detail, mailbox);
      if (mailbox !== null && detail.status === 'pending' && gatewayPassword(mailbox) === 'ask') acceptFields = passwordField(who, mailbox);
    } else changes = await itemChanges(who, detail, viewer);
    return { entry: entryOf(detail), decided, changes, acceptFields };
  },
  async accept(who, id, form) {
    const found = await decidable(who, id);
    if (found === undefined) throw notFound(`no brain inbox item "${id}"`);
    const { detail } = found;
    const { config, db } = who.services;
    // A decided item goes to the core as it is, which refuses it as decided (a conflict) before any mailbox is asked.
    const env =
      detail.kind === 'email_draft' && detail.status === 'pending' ? passwordEnv(who, await approverMailbox(db, who.tenant.id, who.person.id), form) : {};
    await acceptBrainReview(
      db,
      who.audit,
      { tenant: who.tenant.slug, id, as: who.person.email },
      { dataDir: config.dataDir, defaultImapUrl: config.mail.imapUrl, env },
    );
  },
  async reject(who, id, note) {
    if ((await decidable(who, id)) === undefined) throw notFound(`no brain inbox item "${id}"`);
    await rejectBrainReview(who.services.db, who.audit, { tenant: who.tenant.slug, id, as: who.person.email, note });
  },
};
