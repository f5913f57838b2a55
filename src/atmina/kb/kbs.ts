import { randomUUID } from 'node:crypto';
import type { Caller } from '../../kernel/access/caller.ts';
import type { AuditTrail } from '../../kernel/audit/trail.ts';
import { enqueue } from '../../kernel/outbox/outbox.ts';
import { unsafeName } from '../../kernel/text.ts';
import type { Db, Queryable, Transaction } from '../../store/db.ts';
import type { KbWithAccess } from './access.ts';
import { accessibleKbs, kbFor } from './access.ts';
import { kbFileEntries } from './projection.ts';
import type { FileRow, Kb, KbRow, KbVisibility, LocationPolicy } from './queries.ts';
import { FILE_COLUMNS, KB_COLUMNS, KB_FROM, KB_VISIBILITIES, LOCATION_POLICIES, toFile, toKb } from './queries.ts';
import { quoted, refuseKb } from './refusals.ts';
import { teamSettings } from './settings.ts';
import { adminTeam } from './team-choice.ts';

/**
 * Knowledge Bases: list, create, update, archive and restore. A KB belongs to one team; its
 * Admins (and Admin shares) manage it. Archiving hides a KB and its files from every tool and
 * from search; restoring (the CLI) brings both back. docs/atmina.md has the rules.
 */

export const KB_NAME_MAX = 200;
export const KB_DESCRIPTION_MAX = 2000;
export const KB_SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;
const SLUG_MAX = 63;

// The first key of the advisory lock that serialises slug choices within a tenant: creating
// and renaming KBs is rare, and one lock makes "is this slug free" and the insert one step.
const SLUG_LOCK_CLASS = 727_013;

/** A KB with the caller's access, as list_kbs shows it. */
export type ListedKb = KbWithAccess;

/** list_kbs: every live KB the caller may use (search-only public ones included), by slug. */
export async function listKbs(db: Queryable, caller: Caller): Promise<ListedKb[]> {
  return accessibleKbs(db, caller);
}

export interface CreateKbInput {
  readonly name: string;
  readonly slug?: string | undefined;
  readonly description?: string | undefined;
  readonly visibility?: KbVisibility | undefined;
  readonly locationPolicy?: LocationPolicy | undefined;
  /** The owning team, by slug or id; omitted: the caller's current team (team-choice.ts). */
  readonly team?: string | undefined;
}

function checkName(raw: string): string {
  const name = raw.trim();
  if (name === '') throw refuseKb.invalidField('name', 'must not be empty');
  if ([...name].length > KB_NAME_MAX) throw refuseKb.invalidField('name', `must be at most ${KB_NAME_MAX} characters`);
  const unsafe = unsafeName(name);
  if (unsafe !== undefined) throw refuseKb.invalidField('name', unsafe);
  return name;
}

function checkSlug(slug: string): string {
  if (!KB_SLUG.test(slug)) throw refuseKb.invalidField('slug', 'must be 1 to 63 lower-case letters, digits and hyphens, starting with a letter or digit');
  return slug;
}

function checkDescription(description: string): string {
  if ([...description].length > KB_DESCRIPTION_MAX) throw refuseKb.invalidField('description', `must be at most ${KB_DESCRIPTION_MAX} characters`);
  return description;
}

function checkChoice<T extends string>(field: string, value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value)) throw refuseKb.invalidField(field, `must be one of ${allowed.join(', ')}`);
  return value as T;
}

/**
 * The slug a name suggests: letters without their accents, lower case, other characters runs
 * of hyphens, at most 63 long; `kb` when nothing of the name is left (a name in a script
 * without Latin letters).
 */
export function slugFromName(name: string): string {
  const base = name
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+/, '')
    .slice(0, SLUG_MAX)
    .replace(/-+$/, '');
  return base === '' ? 'kb' : base;
}

async function lockSlugs(tx: Queryable, tenantId: string): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [SLUG_LOCK_CLASS, tenantId]);
}

async function slugTaken(tx: Queryable, tenantId: string, slug: string): Promise<boolean> {
  return (await tx.query('SELECT 1 FROM kbs WHERE tenant_id = $1 AND slug = $2', [tenantId, slug])).length > 0;
}

/** The derived slug itself when free, else the first free `slug-2`, `slug-3`, ... (under the slug lock). */
async function freeSlug(tx: Queryable, tenantId: string, base: string): Promise<string> {
  const rows = await tx.query<{ slug: string }>(`SELECT slug FROM kbs WHERE tenant_id = $1 AND (slug = $2 OR slug LIKE $2 || '-%')`, [tenantId, base]);
  const taken = new Set(rows.map((r) => r.slug));
  if (!taken.has(base)) return base;
  for (let n = 2; ; n += 1) {
    const suffix = `-${n}`;
    const candidate = `${base.slice(0, SLUG_MAX - suffix.length).replace(/-+$/, '')}${suffix}`;
    if (!taken.has(candidate)) return candidate;
  }
}

/** The refusals of create_kb's choice of owning team: creating needs the Admin role as a member of it. */
const OWNING_TEAM = { notAdmin: refuseKb.teamRole };

async function kbById(q: Queryable, tenantId: string, id: string): Promise<Kb> {
  const [row] = await q.query<KbRow>(`SELECT ${KB_COLUMNS} FROM ${KB_FROM} WHERE k.tenant_id = $1 AND k.id = $2`, [tenantId, id]);
  if (row === undefined) throw new Error(`KB ${id} vanished inside its own transaction`);
  return toKb(row);
}

/** create_kb: a KB of the caller's team (the one named, or its current team), with a slug of its own or one derived from the name. */
export async function createKb(db: Db, caller: Caller, input: CreateKbInput, audit: AuditTrail): Promise<ListedKb> {
  const name = checkName(input.name);
  const slug = input.slug === undefined ? undefined : checkSlug(input.slug);
  const description = checkDescription(input.description ?? '');
  const asked = input.visibility === undefined ? undefined : checkChoice('visibility', input.visibility, KB_VISIBILITIES);
  const locationPolicy = checkChoice('location_policy', input.locationPolicy ?? 'visible', LOCATION_POLICIES);
  const tenantId = caller.tenant.id;
  return db.tx(async (tx) => {
    const team = await adminTeam(tx, caller, input.team, OWNING_TEAM);
    // Unasked, the visibility is the owning team's default (team settings; `team` unless changed).
    const visibility = asked ?? (await teamSettings(tx, tenantId, team.id)).defaultKbVisibility;
    await lockSlugs(tx, tenantId);
    if (slug !== undefined && (await slugTaken(tx, tenantId, slug))) throw refuseKb.slugTaken(slug);
    const chosen = slug ?? (await freeSlug(tx, tenantId, slugFromName(name)));
    const id = randomUUID();
    await tx.query(
      `INSERT INTO kbs (tenant_id, id, team_id, slug, name, description, visibility, location_policy, created_by, updated_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)`,
      [tenantId, id, team.id, chosen, name, description, visibility, locationPolicy, caller.principal.id],
    );
    await audit.recordIn(tx, 'kb.create', [{ type: 'kb', id, changed: true }], { team_id: team.id, visibility, location_policy: locationPolicy });
    return { kb: await kbById(tx, tenantId, id), access: 'admin' };
  });
}

export interface UpdateKbInput {
  readonly kbId: string;
  readonly name?: string | undefined;
  readonly slug?: string | undefined;
  readonly description?: string | undefined;
  readonly visibility?: KbVisibility | undefined;
  readonly locationPolicy?: LocationPolicy | undefined;
}

export interface UpdatedKb extends ListedKb {
  /** The fields that changed, by their wire names; empty when the KB already was as asked. */
  readonly changed: readonly string[];
}

/** update_kb (Admin): changes the fields given; the others stay. A slug another KB of the tenant uses is a `conflict`. */
export async function updateKb(db: Db, caller: Caller, input: UpdateKbInput, audit: AuditTrail): Promise<UpdatedKb> {
  const wanted = {
    name: input.name === undefined ? undefined : checkName(input.name),
    slug: input.slug === undefined ? undefined : checkSlug(input.slug),
    description: input.description === undefined ? undefined : checkDescription(input.description),
    visibility: input.visibility === undefined ? undefined : checkChoice('visibility', input.visibility, KB_VISIBILITIES),
    location_policy: input.locationPolicy === undefined ? undefined : checkChoice('location_policy', input.locationPolicy, LOCATION_POLICIES),
  };
  if (Object.values(wanted).every((value) => value === undefined))
    throw refuseKb.invalidField('update_kb', 'give at least one of name, slug, description, visibility, location_policy');
  const tenantId = caller.tenant.id;
  return db.tx(async (tx) => {
    const { kb, access } = await kbFor(tx, caller, input.kbId, 'admin', 'changing a Knowledge Base', { lock: 'update' });
    const current = { name: kb.name, slug: kb.slug, description: kb.description, visibility: kb.visibility, location_policy: kb.locationPolicy };
    const changed = (Object.keys(wanted) as (keyof typeof wanted)[]).filter((key) => wanted[key] !== undefined && wanted[key] !== current[key]);
    if (changed.length === 0) return { kb, access, changed };
    if (wanted.slug !== undefined && changed.includes('slug')) {
      await lockSlugs(tx, tenantId);
      if (await slugTaken(tx, tenantId, wanted.slug)) throw refuseKb.slugTaken(wanted.slug);
    }
    const next = { ...current, ...Object.fromEntries(changed.map((key) => [key, wanted[key]])) };
    await tx.query(
      `UPDATE kbs SET name = $3, slug = $4, description = $5, visibility = $6, location_policy = $7, updated_at = clock_timestamp(), updated_by = $8
        WHERE tenant_id = $1 AND id = $2`,
      [tenantId, kb.id, next.name, next.slug, next.description, next.visibility, next.location_policy, caller.principal.id],
    );
    await audit.recordIn(tx, 'kb.update', [{ type: 'kb', id: kb.id, changed: true }], { fields: changed });
    // The caller stays Admin whatever the visibility: private keeps the team's Admins and every share.
    return { kb: await kbById(tx, tenantId, kb.id), access, changed };
  });
}

/** The confirmation delete_kb needs: the KB's slug, exactly. */
export interface ArchiveKbInput {
  readonly kbId: string;
  readonly confirm: string;
}

/**
 * delete_kb (Admin): archives the KB once `confirm` is its slug. Nothing is erased: the KB, its
 * files and their history stay in the store, hidden from every tool and from search, until
 * `restoreKb` brings them back.
 */
export async function archiveKb(db: Db, caller: Caller, input: ArchiveKbInput, audit: AuditTrail): Promise<Kb> {
  return db.tx(async (tx) => {
    const { kb } = await kbFor(tx, caller, input.kbId, 'admin', 'deleting a Knowledge Base', { lock: 'update' });
    if (input.confirm !== kb.slug) throw refuseKb.confirmation('confirm', kb.slug, `archive Knowledge Base ${quoted(kb.slug)}`);
    await tx.query('UPDATE kbs SET archived_at = clock_timestamp(), archived_by = $3 WHERE tenant_id = $1 AND id = $2', [
      caller.tenant.id,
      kb.id,
      caller.principal.id,
    ]);
    const files = await enqueueLiveFiles(tx, caller.tenant.id, kb.id, 'delete');
    await audit.recordIn(tx, 'kb.archive', [{ type: 'kb', id: kb.id, changed: true }], { files });
    return kbById(tx, caller.tenant.id, kb.id);
  });
}

/**
 * Brings an archived KB back with its files (for the CLI, which has no caller of the tenant:
 * the operator decides; its trail names the tenant). A KB that is not archived stays as it is;
 * returns undefined when the tenant has no such KB.
 */
export async function restoreKb(db: Db, input: { tenantId: string; kbId: string }, audit: AuditTrail): Promise<{ kb: Kb; restored: boolean } | undefined> {
  return db.tx(async (tx) => {
    const [row] = await tx.query<{ archived_at: Date | null }>('SELECT archived_at FROM kbs WHERE tenant_id = $1 AND id = $2 FOR UPDATE', [
      input.tenantId,
      input.kbId,
    ]);
    if (row === undefined) return undefined;
    if (row.archived_at === null) return { kb: await kbById(tx, input.tenantId, input.kbId), restored: false };
    await tx.query('UPDATE kbs SET archived_at = NULL, archived_by = NULL, updated_at = clock_timestamp() WHERE tenant_id = $1 AND id = $2', [
      input.tenantId,
      input.kbId,
    ]);
    const files = await enqueueLiveFiles(tx, input.tenantId, input.kbId, 'upsert');
    await audit.recordIn(tx, 'kb.restore', [{ type: 'kb', id: input.kbId, changed: true }], { files });
    return { kb: await kbById(tx, input.tenantId, input.kbId), restored: true };
  });
}

/** Takes every live file of a KB out of (or back into) search and graph; returns how many files. */
async function enqueueLiveFiles(tx: Transaction, tenantId: string, kbId: string, operation: 'upsert' | 'delete'): Promise<number> {
  const rows = await tx.query<FileRow>(`SELECT ${FILE_COLUMNS} FROM kb_files f WHERE f.tenant_id = $1 AND f.kb_id = $2 AND f.deleted_at IS NULL`, [
    tenantId,
    kbId,
  ]);
  await enqueue(
    tx,
    rows.flatMap((row) => kbFileEntries(tenantId, toFile(row), operation)),
  );
  return rows.length;
}
