import type { ContextType } from '../../../src/alignbase/access/context-roles.ts';
import { createContextResource } from '../../../src/alignbase/access/resources.ts';
import { applyOrgFile } from '../../../src/org-sections.ts';
import type { Db } from '../../../src/store/db.ts';
import { cliTrail } from '../../support/audit.ts';

/** A tenant for the grants and routes sections: two agents, a person and a group. */
export const BASE = `tenant: acme
name: Acme Inc.
people:
  - { email: alice@acme.test, name: Alice }
agents:
  - { name: release-bot, owner: alice@acme.test }
  - { name: triage-bot, owner: alice@acme.test }
groups:
  - { name: eng, members: [release-bot, alice@acme.test] }
`;

/** The resources those sections name, made directly (as the tools would) rather than declared by the file. */
export const RESOURCES: [ContextType, string][] = [
  ['knowledge', 'Handbook'],
  ['knowledge', 'Release: checklist'],
  ['skill', 'release-check'],
  ['memory', 'Working state'],
  ['artifact', 'Q3 report'],
];

/** Applies BASE and creates RESOURCES; returns the tenant id. */
export async function prepare(db: Db): Promise<string> {
  await applyOrgFile(db, { source: BASE }, cliTrail(db));
  const [tenant] = await db.query<{ id: string }>("SELECT id FROM tenants WHERE slug = 'acme'");
  const tenantId = tenant?.id ?? '';
  await db.tx(async (tx) => {
    for (const [type, name] of RESOURCES) await createContextResource(tx, { tenantId, type, name });
  });
  return tenantId;
}
