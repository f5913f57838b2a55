import type { ConsolePerson, InboxDetail, InboxEntry, InboxSource } from '../../console/contract.ts';
import type { Text } from '../../console/text.ts';
import { fill } from '../../console/text.ts';
import { diffView, textView } from '../../console/views.ts';
import { html } from '../../http/pages/html.ts';
import { isKgwError, notFound } from '../../kernel/errors.ts';
import { visibleText } from '../../kernel/text.ts';
import { canCreate, canPublish } from '../access/context-decisions.ts';
import type { ContextRole, ContextType } from '../access/context-roles.ts';
import type { ContextRoleTable } from '../access/grants.ts';
import { contextRoleTable, effectiveContextRole } from '../access/grants.ts';
import type { ReviewDetail, ReviewItem } from '../context/review.ts';
import { acceptReview, listReviews, rejectReview, showReview } from '../context/review.ts';

/**
 * Alignbase's part of the console inbox: the drafts agents propose for Knowledge and Skills,
 * and their proposals of new Knowledge, decided through `kgw review`'s own functions
 * (src/alignbase/context/review.ts) as the person signed in. Who decides (docs/console.md):
 * a draft, a Publisher of its Knowledge or Skill, who may read it for review (the spec's
 * read_*_draft) and publish what accepting saves; a proposal, who may create that Knowledge
 * (Editor on All Knowledge), and publish it at once only as a Publisher there.
 */

const KINDS = [
  { id: 'knowledge_draft', label: { en: 'Knowledge draft', de: 'Knowledge-Entwurf' } },
  { id: 'skill_draft', label: { en: 'Skill draft', de: 'Skill-Entwurf' } },
  { id: 'knowledge_proposal', label: { en: 'New Knowledge proposal', de: 'Vorschlag für neues Knowledge' } },
] as const;

const T = {
  rationale: { en: 'Why, as the agent says', de: 'Begründung des Agenten' },
  diff: { en: 'Version {v} → this draft', de: 'Version {v} → dieser Entwurf' },
  diffLatest: { en: 'The latest version {v} → this draft (what accepting replaces)', de: 'Neueste Version {v} → dieser Entwurf (was Annehmen ersetzt)' },
  same: { en: 'The draft equals version {v}: accepting saves nothing new.', de: 'Der Entwurf gleicht Version {v}: Annehmen speichert nichts Neues.' },
  proposed: { en: 'The proposed Knowledge', de: 'Das vorgeschlagene Knowledge' },
  authority: { en: 'Authority: {a}', de: 'Verbindlichkeit: {a}' },
  files: { en: 'Files it keeps: {files}', de: 'Dateien, die bleiben: {files}' },
  publish: { en: 'Publish what accepting saves', de: 'Das Gespeicherte veröffentlichen' },
  force: {
    en: 'Accept although it is stale (it replaces the latest version)',
    de: 'Trotz Veraltung annehmen (ersetzt die neueste Version)',
  },
  savedAs: { en: 'Saved as version {v}.', de: 'Als Version {v} gespeichert.' },
  created: { en: 'Created as Knowledge {id}.', de: 'Als Knowledge {id} angelegt.' },
} as const satisfies Record<string, Text>;

const kindOf = (item: Pick<ReviewItem, 'kind' | 'type'>): (typeof KINDS)[number]['id'] =>
  item.kind === 'proposal' ? 'knowledge_proposal' : item.type === 'skill' ? 'skill_draft' : 'knowledge_draft';

const fromOf = (item: ReviewItem): string | null =>
  item.agentName !== null ? `${item.agentName}${item.authorName === null ? '' : ` (${item.authorName})`}` : (item.authorName ?? item.authorEmail);

const entryOf = (item: ReviewItem): InboxEntry => ({
  id: item.id,
  kind: kindOf(item),
  title: item.name,
  from: fromOf(item),
  createdAt: item.createdAt,
  stale: item.isStale,
});

/** The person's role on a type's resource, or on the whole type (resourceId undefined). */
type RoleOf = (type: ContextType, resourceId: string | undefined) => Promise<ContextRole | undefined>;

/** Each role asked once from the database. */
const roleFromDb =
  (who: ConsolePerson): RoleOf =>
  (type, resourceId) =>
    effectiveContextRole(who.services.db, who.tenant.id, who.person.id, type, resourceId);

/** Every role from one read of the person's grants per type: the listing asks for many items' roles. */
function roleFromTables(who: ConsolePerson): RoleOf {
  const tables = new Map<ContextType, Promise<ContextRoleTable>>();
  return async (type, resourceId) => {
    let table = tables.get(type);
    if (table === undefined) tables.set(type, (table = contextRoleTable(who.services.db, who.tenant.id, who.person.id, type)));
    const read = await table;
    return resourceId === undefined ? read.typeRole : read.roleOn(resourceId);
  };
}

/** What the person may do with an item: decide it at all, and publish what accepting saves. */
async function rights(
  who: ConsolePerson,
  roleOf: RoleOf,
  item: Pick<ReviewItem, 'kind' | 'type' | 'resourceId'>,
): Promise<{ decide: boolean; publish: boolean }> {
  const scopes = who.caller.scopes;
  if (item.kind === 'draft' && item.resourceId !== null) {
    const publisher = canPublish(await roleOf(item.type, item.resourceId), scopes);
    return { decide: publisher, publish: publisher };
  }
  const onAll = await roleOf('knowledge', undefined);
  return { decide: canCreate('knowledge', onAll, scopes), publish: canPublish(onAll, scopes) };
}

/** The item if the person may decide it; an item they may not, or of no such id, is unknown. */
async function decidable(who: ConsolePerson, id: string): Promise<{ detail: ReviewDetail; publish: boolean } | undefined> {
  let detail: ReviewDetail;
  try {
    detail = await showReview(who.services.db, { tenant: who.tenant.slug, id });
  } catch (error) {
    if (isKgwError(error) && (error.code === 'not_found' || error.code === 'validation')) return undefined;
    throw error;
  }
  const may = await rights(who, roleFromDb(who), detail);
  return may.decide ? { detail, publish: may.publish } : undefined;
}

function changesOf(who: ConsolePerson, detail: ReviewDetail) {
  const { lang } = who;
  const rationale = detail.rationale === null ? '' : html`<h3>${T.rationale[lang]}</h3><p>${visibleText(detail.rationale)}</p>`;
  const files =
    detail.attachments.length === 0 ? '' : html`<p class="note">${fill(T.files[lang], { files: detail.attachments.map((a) => a.path).join(', ') })}</p>`;
  const authority = detail.authority === null ? '' : html`<p class="note">${fill(T.authority[lang], { a: detail.authority })}</p>`;
  if (detail.kind === 'proposal') return html`${rationale}<h3>${T.proposed[lang]}</h3>${authority}${textView(detail.content, T.proposed[lang])}${files}`;
  const base = detail.base?.version ?? 0;
  const diff =
    detail.diff === null || detail.diff === ''
      ? html`<p>${fill(T.same[lang], { v: String(base) })}</p>`
      : html`<h3>${fill(T.diff[lang], { v: String(base) })}</h3>${diffView(detail.diff, fill(T.diff[lang], { v: String(base) }))}`;
  const latest =
    detail.diffLatest === null || detail.latest === null
      ? ''
      : html`<h3>${fill(T.diffLatest[lang], { v: String(detail.latest.version) })}</h3>${diffView(detail.diffLatest, fill(T.diffLatest[lang], { v: String(detail.latest.version) }))}`;
  return html`${rationale}${latest}${diff}${authority}${files}`;
}

export const alignbaseInbox: InboxSource = {
  id: 'alignbase',
  kinds: KINDS,
  async list(who) {
    const items = await listReviews(who.services.db, { tenant: who.tenant.slug });
    const entries: InboxEntry[] = [];
    const roleOf = roleFromTables(who);
    for (const item of items) if ((await rights(who, roleOf, item)).decide) entries.push(entryOf(item));
    return entries;
  },
  async show(who, id): Promise<InboxDetail | undefined> {
    const found = await decidable(who, id);
    if (found === undefined) return undefined;
    const { detail, publish } = found;
    const { lang } = who;
    const decided =
      detail.status === 'open'
        ? undefined
        : {
            outcome: detail.status,
            by: detail.decidedBy,
            at: detail.decidedAt,
            note: detail.decisionNote,
            result:
              detail.status !== 'accepted'
                ? undefined
                : detail.resultVersion !== null
                  ? html`<p>${fill(T.savedAs[lang], { v: String(detail.resultVersion) })}</p>`
                  : detail.resultResourceId !== null
                    ? html`<p>${fill(T.created[lang], { id: detail.resultResourceId })}</p>`
                    : undefined,
          };
    const acceptFields = html`${publish ? html`<label class="check"><input type="checkbox" name="publish" value="on"> ${T.publish[lang]}</label>` : ''}${
      detail.isStale ? html`<label class="check"><input type="checkbox" name="force" value="on"> ${T.force[lang]}</label>` : ''
    }`;
    return { entry: entryOf(detail), decided, changes: changesOf(who, detail), acceptFields };
  },
  async accept(who, id, form) {
    const found = await decidable(who, id);
    if (found === undefined) throw notFound(`no draft or proposal "${id}"`);
    // Publishing is asked for only of one who may publish: the form offers it to no one else.
    const publish = form.get('publish') === 'on' && found.publish;
    await acceptReview(who.services.db, who.audit, { tenant: who.tenant.slug, id, as: who.person.email, publish, force: form.get('force') === 'on' });
  },
  async reject(who, id, note) {
    if ((await decidable(who, id)) === undefined) throw notFound(`no draft or proposal "${id}"`);
    await rejectReview(who.services.db, who.audit, { tenant: who.tenant.slug, id, as: who.person.email, note });
  },
};
