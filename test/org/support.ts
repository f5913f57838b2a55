import assert from 'node:assert/strict';
import { it } from 'node:test';
import { isKgwError } from '../../src/kernel/errors.ts';
import type { BlobStore } from '../../connectors/blob/contract.ts';
import { applyOrgFile, readReferencedFiles } from '../../src/org-sections.ts';
import type { Db } from '../../src/store/db.ts';
import { cliTrail } from '../support/audit.ts';

/** The example org file of docs/org-file.md. */
export const ACME = `tenant: acme
name: Acme Inc.
language: en
people:
  - email: Alice@Acme.test
    name: Alice
agents:
  - name: release-bot
    owner: alice@acme.test
groups:
  - name: eng
    members: [release-bot, alice@acme.test]
teams:
  - slug: docs
    name: Docs team
    members: { alice@acme.test: admin, release-bot: editor }
`;

export interface DirectoryView {
  tenant: { name: string; language: string } | undefined;
  people: Record<string, string>;
  agents: Record<string, string>;
  groups: Record<string, string[]>;
  teams: Record<string, { name: string; members: Record<string, string> }>;
}

/** A tenant's directory as the file would name it: people by email, agents by name. */
export async function directoryOf(db: Db, slug: string): Promise<DirectoryView> {
  const [tenant] = await db.query<{ id: string; name: string; language: string }>('SELECT id, name, language FROM tenants WHERE slug = $1', [slug]);
  const view: DirectoryView = { tenant: tenant && { name: tenant.name, language: tenant.language }, people: {}, agents: {}, groups: {}, teams: {} };
  if (!tenant) return view;
  const principals = await db.query<{ id: string; kind: string; name: string; email: string | null; owner_id: string | null }>(
    'SELECT id, kind, name, email, owner_id FROM principals WHERE tenant_id = $1',
    [tenant.id],
  );
  const reference = new Map(principals.map((p) => [p.id, p.email ?? p.name]));
  for (const p of principals) {
    if (p.kind === 'person') view.people[p.email ?? '?'] = p.name;
    else view.agents[p.name] = reference.get(p.owner_id ?? '') ?? '?';
  }
  const groups = await db.query<{ name: string; principal_id: string | null }>(
    `SELECT g.name, m.principal_id FROM groups g LEFT JOIN group_members m ON m.tenant_id = g.tenant_id AND m.group_id = g.id WHERE g.tenant_id = $1`,
    [tenant.id],
  );
  for (const g of groups) {
    const members = (view.groups[g.name] ??= []);
    if (g.principal_id !== null) members.push(reference.get(g.principal_id) ?? '?');
  }
  for (const members of Object.values(view.groups)) members.sort();
  const teams = await db.query<{ slug: string; name: string; principal_id: string | null; role: string | null }>(
    `SELECT t.slug, t.name, m.principal_id, m.role FROM teams t LEFT JOIN team_members m ON m.tenant_id = t.tenant_id AND m.team_id = t.id WHERE t.tenant_id = $1`,
    [tenant.id],
  );
  for (const t of teams) {
    const team = (view.teams[t.slug] ??= { name: t.name, members: {} });
    if (t.principal_id !== null) team.members[reference.get(t.principal_id) ?? '?'] = t.role ?? '?';
  }
  return view;
}

/** Every directory and access row of every tenant, timestamps included: equal snapshots mean nothing was written. */
export async function snapshot(db: Db): Promise<Record<string, unknown[]>> {
  const tables = {
    tenants: 'id',
    principals: 'tenant_id, id',
    groups: 'tenant_id, id',
    group_members: 'tenant_id, group_id, principal_id',
    teams: 'tenant_id, id',
    team_members: 'tenant_id, team_id, principal_id',
    team_shares: 'tenant_id, id',
    context_resources: 'tenant_id, id',
    context_versions: 'tenant_id, resource_id, version',
    context_grants: 'tenant_id, id',
    context_routes: 'tenant_id, id',
    org_applied_content: 'tenant_id, resource_id',
  };
  const result: Record<string, unknown[]> = {};
  for (const [table, order] of Object.entries(tables)) result[table] = await db.query(`SELECT * FROM ${table} ORDER BY ${order}`);
  return result;
}

/** A bad org file and the `[line, message]` of each problem it must be refused with. */
export interface RefusalCase {
  readonly title: string;
  readonly source: string;
  readonly errors: readonly (readonly [number, string])[];
  /** The org file's folder, where its `file:` and `dir:` values are read as `kgw apply` reads them. */
  readonly folder?: string;
}

/**
 * Checks, on the given store, that each case is refused as one validation error listing every
 * problem with its line (message and details), in a real run and a dry run, and that nothing
 * in the database changed.
 */
export function itRefuses(store: () => Db, cases: readonly RefusalCase[], env: Record<string, string> = {}, blob?: () => BlobStore): void {
  for (const { title, source, errors, folder } of cases) {
    it(`refuses ${title} with the line of each problem and writes nothing`, async () => {
      const db = store();
      const rows = await snapshot(db);
      const files = folder === undefined ? {} : await readReferencedFiles(source, folder);
      for (const dryRun of [false, true]) {
        await assert.rejects(applyOrgFile(db, { source, dryRun, env, files, blob: blob?.() }, cliTrail(db)), (error) => {
          assert.ok(isKgwError(error, 'validation'), String(error));
          assert.deepEqual(error.details, { errors: errors.map(([line, message]) => ({ line, message })) });
          assert.equal(error.message, errors.map(([line, message]) => `org.yaml:${line}: ${message}`).join('\n'));
          return true;
        });
      }
      assert.deepEqual(await snapshot(db), rows);
    });
  }
}
