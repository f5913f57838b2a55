import type { ContextType } from '../../../src/alignbase/access/context-roles.ts';
import { createContextResource } from '../../../src/alignbase/access/resources.ts';
import { applyOrgFile } from '../../../src/org-sections.ts';
import type { Db } from '../../../src/store/db.ts';
import { cliTrail } from '../../support/audit.ts';

/** Two tenants with the same names in each, so that a leak across tenants would show. */
export const orgFile = (slug: string): string => `tenant: ${slug}
name: ${slug}
people:
  - { email: alice@${slug}.test, name: Alice }
agents:
  - { name: bot, owner: alice@${slug}.test }
  - { name: helper, owner: alice@${slug}.test }
  - { name: newcomer, owner: alice@${slug}.test }
groups:
  - { name: eng, members: [bot, alice@${slug}.test] }
  - { name: ops, members: [helper] }
`;

export interface World {
  readonly tenantId: string;
  /** Principal and group ids by the file's name for them. */
  readonly ids: Readonly<Record<string, string>>;
  /** Resource ids by `type:name`. */
  readonly resources: Readonly<Record<string, string>>;
}

/** Applies orgFile(slug) and creates the named resources; returns every id by name. */
export async function buildWorld(db: Db, slug: string, resources: readonly [ContextType, string][]): Promise<World> {
  await applyOrgFile(db, { source: orgFile(slug) }, cliTrail(db));
  const [tenant] = await db.query<{ id: string }>('SELECT id FROM tenants WHERE slug = $1', [slug]);
  const tenantId = tenant?.id ?? '';
  const ids: Record<string, string> = {};
  for (const row of await db.query<{ id: string; ref: string }>('SELECT id, coalesce(email, name) AS ref FROM principals WHERE tenant_id = $1', [tenantId]))
    ids[row.ref] = row.id;
  for (const row of await db.query<{ id: string; name: string }>('SELECT id, name FROM groups WHERE tenant_id = $1', [tenantId]))
    ids[`group:${row.name}`] = row.id;
  const created: Record<string, string> = {};
  await db.tx(async (tx) => {
    for (const [type, name] of resources)
      created[`${type}:${name}`] = (await createContextResource(tx, { tenantId, type, name, createdBy: ids[`alice@${slug}.test`] })).id;
  });
  return { tenantId, ids, resources: created };
}

export function id(map: Readonly<Record<string, string>>, key: string): string {
  const value = map[key];
  if (value === undefined) throw new Error(`no id for ${key}`);
  return value;
}
