import { randomUUID } from 'node:crypto';
import type { Transaction } from '../../store/db.ts';
import type { ContextType } from '../access/context-roles.ts';
import type { NewVersion } from '../versions/versions.ts';
import type { ResourceHead, SavedVersion, HeadRow } from '../versions/queries.ts';
import { createWithFirstVersion, getVersions, publishVersion, saveVersion, versionKey, writeDates } from '../versions/versions.ts';
import { CONTEXT_RESOURCES, resourceKey } from './resource-index.ts';
import { HEAD_COLUMNS, toHead } from '../versions/queries.ts';
import { quotePath } from '../../kernel/org/referenced-files.ts';
import { decodeBase64, lookUpFile, readReference, utf8Text } from '../../kernel/org/file-entries.ts';
import { dateRule } from '../../kernel/org/rules.ts';
import { contentRule } from './rules.ts';
import type { PlanContext, PlannedStep, ReadContext } from '../../kernel/org/section.ts';
import type { Fields, Located, Slot, YamlReader } from '../../kernel/org/yaml-reader.ts';
import type { AppliedContent, AppliedType } from './applied-content.ts';
import { remember, replacesSince, standing } from './applied-content.ts';

/**
 * What the `knowledge`, `skills` and `memories` sections share: the staleness dates,
 * `publish`, `content` or `file:` (the file found with the kernel's file-entries.ts), the
 * resource heads they plan against and the steps that create or update a resource.
 */

/** The staleness dates an entry declares; null when left out (the file is the whole truth). */
export interface Dates {
  readonly reviewBy: string | null;
  readonly expiresAt: string | null;
}

export const DATE_KEYS = ['review_by', 'expires_at'] as const;

/** `review_by` and `expires_at`, each a YYYY-MM-DD date, the expiry not before the review. */
export function readDates(fields: Fields, reader: YamlReader): Dates | undefined {
  const read = (key: string): Located | null | undefined => {
    const slot = fields.get(key);
    return slot ? reader.string(slot, dateRule) : null;
  };
  const reviewBy = read('review_by');
  const expiresAt = read('expires_at');
  if (reviewBy === undefined || expiresAt === undefined) return undefined;
  if (reviewBy && expiresAt && expiresAt.value < reviewBy.value) {
    reader.fail(expiresAt, `${expiresAt.path}: ${expiresAt.value} is before review_by ${reviewBy.value}`);
    return undefined;
  }
  return { reviewBy: reviewBy?.value ?? null, expiresAt: expiresAt?.value ?? null };
}

/** `publish: true|false`, false when left out. */
export function readPublish(fields: Fields, reader: YamlReader): boolean | undefined {
  const slot = fields.get('publish');
  if (!slot) return false;
  return reader.boolean(slot)?.value;
}

/** The text of an entry, written inline (`content`) or in a file next to the org file (`file`). */
export interface EntryContent {
  /** The text, located at the `content` or `file` key. */
  readonly text: Located;
  /** The normalised path a `file:` names; undefined for `content`. */
  readonly file: string | undefined;
}

/** How messages describe an entry's text: `itself` "the markdown itself", `kind` "Knowledge content is markdown". */
export interface ContentWords {
  readonly itself: string;
  readonly kind: string;
}

/**
 * `content` (the text itself, at least one character) or `file` (a path to it, whose file must
 * be UTF-8 text and not empty, and is kept exactly): one of them, never both.
 */
export function readContent(item: Slot, fields: Fields, context: ReadContext, words: ContentWords): EntryContent | undefined {
  const { reader } = context;
  const contentSlot = fields.get('content');
  const fileSlot = fields.get('file');
  if (contentSlot && fileSlot) reader.fail(fileSlot, `${item.path} has both content and file; give one of them`);
  else if (contentSlot) {
    const text = reader.string(contentSlot, contentRule);
    return text && { text, file: undefined };
  } else if (fileSlot) {
    const reference = readReference(fileSlot, reader);
    const data = reference && lookUpFile(reference, context.files, reader);
    const text = reference && data !== undefined ? fileText(reference, data, reader, words) : undefined;
    return reference && text !== undefined ? { text: { ...reference, value: text }, file: reference.value } : undefined;
  } else reader.fail(item, `${item.path} needs content (${words.itself}) or file (a path to it)`);
  return undefined;
}

/** The text of a `file:`: UTF-8, not empty, kept exactly as the file holds it. */
function fileText(reference: Located, data: string, reader: YamlReader, words: ContentWords): string | undefined {
  const bytes = decodeBase64(data);
  const text = bytes && utf8Text(bytes);
  if (bytes === undefined) reader.fail(reference, `${reference.path}: ${quotePath(reference.value)} was not sent as base64`);
  else if (text === undefined) reader.fail(reference, `${reference.path}: ${quotePath(reference.value)} is not UTF-8 text; ${words.kind}`);
  else if (text === '') reader.fail(reference, `${reference.path}: ${quotePath(reference.value)} is empty`);
  else return text;
  return undefined;
}

/**
 * The active heads of `type` with one of `names` (or, with `archived`, every head), locked for
 * this transaction so that a concurrent write_knowledge or write_skill cannot slip a version in
 * between the plan and its writes.
 */
export async function loadHeads(
  tx: Transaction,
  tenantId: string,
  type: ContextType,
  names: readonly string[],
  options: { archived: boolean },
): Promise<Map<string, ResourceHead[]>> {
  const heads = new Map<string, ResourceHead[]>();
  if (names.length === 0) return heads;
  const rows = await tx.query<HeadRow>(
    `SELECT ${HEAD_COLUMNS} FROM context_resources r
      WHERE r.tenant_id = $1 AND r.type = $2 AND r.name = ANY($3::text[])${options.archived ? '' : " AND r.status = 'active'"}
      ORDER BY r.id FOR UPDATE`,
    [tenantId, type, [...new Set(names)]],
  );
  for (const row of rows) {
    const head = toHead(row);
    heads.set(head.name, [...(heads.get(head.name) ?? []), head]);
  }
  return heads;
}

/**
 * The one active head of `name` (loadHeads), or undefined when there is none. When several
 * active resources share the title or name (`described`: `Knowledge titled "Handbook"`), the
 * file cannot tell which one it declares: that is reported at `at` and the answer is null, so
 * the entry plans nothing.
 */
export function soleHead(
  context: PlanContext,
  heads: ReadonlyMap<string, readonly ResourceHead[]>,
  name: string,
  at: Located,
  described: string,
): ResourceHead | null | undefined {
  const matches = heads.get(name) ?? [];
  if (matches.length <= 1) return matches[0];
  context.problems.add(
    at.line,
    `${at.path}: tenant "${context.tenant.slug}" has ${matches.length} ${described}; the file cannot tell which one it declares (rename all but one)`,
  );
  return null;
}

/** The date differences of a stored head from the file's dates. */
export function dateChanges(head: Pick<ResourceHead, 'reviewBy' | 'expiresAt'> | undefined, dates: Dates): string[] {
  const changes: string[] = [];
  const was = { review_by: head?.reviewBy ?? null, expires_at: head?.expiresAt ?? null };
  const now = { review_by: dates.reviewBy, expires_at: dates.expiresAt };
  for (const key of DATE_KEYS) {
    if (was[key] !== now[key]) changes.push(head === undefined ? `${key} ${now[key]}` : `${key} ${was[key] ?? 'none'} → ${now[key] ?? 'none'}`);
  }
  return changes;
}

/**
 * The steps for a listed resource that does not exist yet. Its id is chosen now and indexed, so
 * that grants and routes later in the file can name it; the write creates it with `version` as
 * version 1 and the file's `dates`, and remembers `sha256` as what the file applied there
 * (applied-content.ts). `details` are the kind's own words for what it creates, the dates follow;
 * `publish` publishes version 1, and `prepare` is the step's work outside the database (Skill files).
 */
export function createSteps(
  context: PlanContext,
  kind: AppliedType,
  name: string,
  create: {
    version: NewVersion;
    sha256: string;
    dates?: Dates | undefined;
    details?: readonly string[] | undefined;
    publish?: boolean | undefined;
    prepare?: (() => Promise<void>) | undefined;
  },
): PlannedStep[] {
  const tenantId = context.tenant.id;
  const id = randomUUID();
  context.indexOf(CONTEXT_RESOURCES).add(resourceKey(kind, name), id);
  const write = async (q: Transaction): Promise<void> => {
    const resource = {
      tenantId,
      type: kind,
      name,
      id,
      createdBy: undefined,
      reviewBy: create.dates?.reviewBy ?? undefined,
      expiresAt: create.dates?.expiresAt ?? undefined,
    };
    await createWithFirstVersion(q, resource, create.version);
    await remember(q, tenantId, { id, type: kind }, { sha256: create.sha256, version: 1 });
  };
  const detail = [...(create.details ?? []), ...(create.dates === undefined ? [] : dateChanges(undefined, create.dates))].join('; ');
  const steps: PlannedStep[] = [
    { change: { action: 'create', kind, name, ...(detail ? { detail } : {}) }, write, ...(create.prepare ? { prepare: create.prepare } : {}) },
  ];
  // Memory has no published version: its sections never ask.
  if (create.publish === true && kind !== 'memory') steps.push(...publishStep(context, kind, name, { id, publishedVersion: undefined }, 1));
  return steps;
}

/** `publish: true`: publishes `version` unless it already is the published one. */
export function publishStep(
  context: PlanContext,
  kind: 'knowledge' | 'skill',
  name: string,
  head: { id: string; publishedVersion: number | undefined },
  version: number,
): PlannedStep[] {
  if (head.publishedVersion === version) return [];
  const detail = head.publishedVersion === undefined ? `version ${version}` : `version ${head.publishedVersion} → ${version}`;
  const write = async (q: Transaction): Promise<void> => {
    await publishVersion(q, context.tenant.id, head, version);
  };
  return [{ change: { action: 'publish', kind, name, detail }, write }];
}

/** The latest saved version of each of `heads`, read in one query; undefined for a head without one. */
export async function latestVersions(
  tx: Transaction,
  tenantId: string,
  heads: ReadonlyMap<string, readonly ResourceHead[]>,
): Promise<(head: ResourceHead) => SavedVersion | undefined> {
  const stored = [...heads.values()].flat().filter((head) => head.latestVersion > 0);
  const latest = await getVersions(
    tx,
    tenantId,
    stored.map((head) => ({ resourceId: head.id, version: head.latestVersion })),
  );
  return (head) => latest.get(versionKey(head.id, head.latestVersion));
}

/**
 * The steps for a listed Knowledge or Skill that exists. `sha256` is the file's content for it
 * (applied-content.ts) and `applied` what the file last applied there. When the file says what
 * it said then, nothing is saved, whatever was saved since (a reviewer's accepted draft stays
 * latest and stays published), and a listed publish only applies to the file's own version.
 * Otherwise `differences` says what the file changes against the latest version (none: that
 * version already holds the file's content, which is recorded); a change saves `version` as
 * the next one, says which versions written since the file's last apply it replaces, and is
 * recorded. Changed dates are written in the same step, and a listed publish points at the
 * version that results. `prepare` is the step's work outside the database (Skill files).
 */
export function updateSteps(
  context: PlanContext,
  kind: 'knowledge' | 'skill',
  name: string,
  head: ResourceHead,
  change: {
    differences: readonly string[];
    version: NewVersion;
    dates: Dates;
    publish: boolean;
    sha256: string;
    applied: AppliedContent | undefined;
    prepare?: (() => Promise<void>) | undefined;
  },
): PlannedStep[] {
  const tenantId = context.tenant.id;
  const steps: PlannedStep[] = [];
  const dates = dateChanges(head, change.dates);
  const where = standing(change.sha256, change.applied);
  if (where.unchanged) {
    // The file says what it said when it last applied its content here: what was saved since stays.
    if (dates.length > 0)
      steps.push({ change: { action: 'update', kind, name, detail: dates.join('; ') }, write: (q) => writeDates(q, tenantId, head.id, change.dates) });
    if (change.publish && where.applied.version === head.latestVersion) steps.push(...publishStep(context, kind, name, head, head.latestVersion));
    return steps;
  }
  const saves = change.differences.length > 0;
  const number = saves ? head.latestVersion + 1 : head.latestVersion;
  const replaces = saves ? replacesSince(where.applied, head.latestVersion) : undefined;
  const detail = saves
    ? [...change.differences, `version ${head.latestVersion} → ${number}`, ...(replaces === undefined ? [] : [replaces]), ...dates]
    : [`version ${head.latestVersion} already holds the file's content`, ...dates];
  const write = async (q: Transaction): Promise<void> => {
    if (saves) await saveVersion(q, tenantId, head, change.version);
    await remember(q, tenantId, { id: head.id, type: kind }, { sha256: change.sha256, version: number });
    if (dates.length > 0) await writeDates(q, tenantId, head.id, change.dates);
  };
  steps.push({ change: { action: 'update', kind, name, detail: detail.join('; ') }, write, ...(change.prepare ? { prepare: change.prepare } : {}) });
  if (change.publish) steps.push(...publishStep(context, kind, name, head, number));
  return steps;
}
