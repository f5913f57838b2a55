import { randomUUID } from 'node:crypto';
import type { Transaction } from '../../store/db.ts';
import { quote } from './problems.ts';
import { displayNameRule, languageRule, slugRule } from './rules.ts';
import type { PlannedStep } from './section.ts';
import type { Fields, Located, YamlReader } from './yaml-reader.ts';

/** The top-level keys that describe the tenant itself; every other top-level key is a section. */
export const TENANT_KEYS = ['tenant', 'name', 'language'] as const;
export const DEFAULT_LANGUAGE = 'en';

/** What the file says about the tenant; a value is undefined when it could not be read. */
export interface TenantSpec {
  readonly slug: Located | undefined;
  readonly name: string | undefined;
  readonly language: string | undefined;
}

export function readTenant(fields: Fields, reader: YamlReader): TenantSpec {
  const slug = fields.get('tenant');
  const name = fields.get('name');
  const language = fields.get('language');
  return {
    slug: slug && reader.string(slug, slugRule),
    name: name && reader.string(name, displayNameRule)?.value,
    // The file is the whole truth: leaving the language out means the default, not "keep".
    language: language ? reader.string(language, languageRule)?.value : DEFAULT_LANGUAGE,
  };
}

// Any constant of our own; with the two-key form of the lock it cannot meet the migration lock.
const ORG_APPLY_LOCK_CLASS = 727_002;

/**
 * Serialises the writers of one tenant's directory and brain (org applies, brain imports and
 * approvals) until the transaction ends (re-entrant): each reads the graph before and after its
 * change to enqueue the difference, which must not interleave with another's.
 */
export async function lockTenantSlug(tx: Transaction, slug: string): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [ORG_APPLY_LOCK_CLASS, slug]);
}

/** The tenant's id (new when it does not exist yet, and then created by the steps). */
export interface PlannedTenant {
  readonly id: string;
  readonly existed: boolean;
  readonly steps: PlannedStep[];
}

/**
 * Locks the tenant's slug for the rest of the transaction, then plans its row. Taking the
 * lock before reading anything serialises concurrent applies of the same tenant even when
 * the tenant does not exist yet (a row lock needs a row), so the second one plans against
 * what the first committed instead of failing on a unique key. A dry run takes it too, so
 * it sees the same rows as an apply would.
 */
export async function planTenant(tx: Transaction, spec: TenantSpec & { slug: Located }): Promise<PlannedTenant> {
  const slug = spec.slug.value;
  await lockTenantSlug(tx, slug);
  const [row] = await tx.query<{ id: string; name: string; language: string }>('SELECT id, name, language FROM tenants WHERE slug = $1', [slug]);
  const name = spec.name ?? row?.name ?? slug;
  const language = spec.language ?? row?.language ?? DEFAULT_LANGUAGE;

  if (!row) {
    const id = randomUUID();
    const write = async (q: Transaction): Promise<void> => {
      await q.query('INSERT INTO tenants (id, slug, name, language) VALUES ($1, $2, $3, $4)', [id, slug, name, language]);
    };
    return { id, existed: false, steps: [{ change: { action: 'create', kind: 'tenant', name: slug }, write }] };
  }

  const differences: string[] = [];
  if (row.name !== name) differences.push(`name ${quote(row.name)} → ${quote(name)}`);
  if (row.language !== language) differences.push(`language ${row.language} → ${language}`);
  if (differences.length === 0) return { id: row.id, existed: true, steps: [] };
  const write = async (q: Transaction): Promise<void> => {
    await q.query('UPDATE tenants SET name = $2, language = $3, updated_at = now() WHERE id = $1', [row.id, name, language]);
  };
  return { id: row.id, existed: true, steps: [{ change: { action: 'update', kind: 'tenant', name: slug, detail: differences.join('; ') }, write }] };
}
