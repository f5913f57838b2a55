import type { ContextRole, ContextType } from '../access/context-roles.ts';
import { grantContextRole, revokeContextGrant } from '../access/grants.ts';
import type { Grantee } from '../access/grants.ts';
import type { Transaction } from '../../store/db.ts';
import { contextRoleRule } from './rules.ts';
import type { PlanContext, PlannedStep } from '../../kernel/org/section.ts';
import { CONTEXT_RESOURCES } from './resource-index.ts';
import { defineSection, DuplicateCheck, readEntries } from '../../kernel/org/section.ts';
import type { Located } from '../../kernel/org/yaml-reader.ts';
import type { PartyRef, ResourceRef } from './context-references.ts';
import { partyLabel, readGrantTarget, readParty, resolveParty, resolveResource, resourceLabel } from './context-references.ts';

interface GrantSpec {
  readonly to: Located<PartyRef>;
  readonly on: Located<ResourceRef>;
  readonly role: ContextRole;
}

/** One grant by ids, as the file wants it or as it is stored. */
interface GrantRow {
  readonly principalId: string | null;
  readonly groupId: string | null;
  readonly type: ContextType;
  readonly resourceId: string | null;
  readonly role: ContextRole;
}

const identity = (row: Omit<GrantRow, 'role'>): string => [row.principalId ?? '', row.groupId ?? '', row.type, row.resourceId ?? '*'].join('|');
const granteeOf = (row: GrantRow): Grantee => (row.groupId !== null ? { groupId: row.groupId } : { principalId: row.principalId ?? '' });

/**
 * `grants:` — context roles (Alignbase) for agents, people and groups, on one resource or a
 * whole type. When the section is present its list is the tenant's complete set of grants:
 * missing ones are added, changed roles updated, and grants the file does not list removed.
 * A grantee and target appear at most once (re-granting replaces the role, see grants.ts).
 */
export const grantsSection = defineSection<GrantSpec[]>({
  key: 'grants',
  references: [CONTEXT_RESOURCES],

  read(slot, context) {
    const { reader } = context;
    const duplicates = new DuplicateCheck('grant');
    return readEntries(slot, context, (item) => {
      const fields = reader.fields(item, ['to', 'on', 'role'], ['to', 'on', 'role']);
      if (!fields) return undefined;
      const toSlot = fields.get('to');
      const onSlot = fields.get('on');
      const roleSlot = fields.get('role');
      const to = toSlot && readParty(toSlot, reader, { people: true });
      const on = onSlot && readGrantTarget(onSlot, reader);
      const role = roleSlot && reader.string(roleSlot, contextRoleRule);
      if (!to || !on || !role) return undefined;
      const pair = { value: `${to.value.label} on ${on.value.label}`, line: fields.line, path: item.path };
      if (!duplicates.first(pair, reader)) return undefined;
      return { to, on, role: role.value as ContextRole };
    });
  },

  async plan(grants, context) {
    const { tx, tenant } = context;
    const stored = new Map((await loadGrants(tx, tenant.id)).map((row) => [identity(row), row]));
    const desired = new Map<string, GrantRow>();
    for (const grant of grants) {
      const party = resolveParty(grant.to, context);
      const resourceId = resolveResource(grant.on, context);
      if (party === undefined || resourceId === undefined) continue;
      const row: GrantRow = {
        principalId: 'principalId' in party ? party.principalId : null,
        groupId: 'groupId' in party ? party.groupId : null,
        type: grant.on.value.type,
        resourceId,
        role: grant.role,
      };
      desired.set(identity(row), row);
    }
    const steps: PlannedStep[] = [];
    for (const [key, row] of desired) {
      const was = stored.get(key);
      if (was?.role === row.role) continue;
      const on = resourceLabel(context, row.type, row.resourceId);
      const detail = was ? `on ${on}: role ${was.role} → ${row.role}` : `on ${on} as ${row.role}`;
      steps.push({
        change: { action: was ? 'update' : 'add', kind: 'grant', name: partyLabel(context, row.principalId, row.groupId), detail },
        write: (q) => write(q, context, row),
      });
    }
    const removed = [...stored]
      .filter(([key]) => !desired.has(key))
      .map(([, row]) => ({ row, name: partyLabel(context, row.principalId, row.groupId), on: resourceLabel(context, row.type, row.resourceId) }));
    removed.sort((a, b) => a.name.localeCompare(b.name) || a.on.localeCompare(b.on));
    for (const { row, name, on } of removed) {
      const write = async (q: Transaction): Promise<void> => {
        await revokeContextGrant(q, { tenantId: tenant.id, grantee: granteeOf(row), type: row.type, resourceId: row.resourceId ?? undefined });
      };
      steps.push({ change: { action: 'remove', kind: 'grant', name, detail: `on ${on}` }, write });
    }
    return steps;
  },
});

async function write(q: Transaction, context: PlanContext, row: GrantRow): Promise<void> {
  await grantContextRole(q, { tenantId: context.tenant.id, grantee: granteeOf(row), type: row.type, resourceId: row.resourceId ?? undefined, role: row.role });
}

async function loadGrants(tx: Transaction, tenantId: string): Promise<GrantRow[]> {
  return tx.query<GrantRow>(
    `SELECT principal_id AS "principalId", group_id AS "groupId", resource_type AS type, resource_id AS "resourceId", role
       FROM context_grants WHERE tenant_id = $1`,
    [tenantId],
  );
}
