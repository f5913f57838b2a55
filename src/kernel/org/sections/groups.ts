import { randomUUID } from 'node:crypto';
import type { Transaction } from '../../../store/db.ts';
import { groupNameRule, principalReferenceRule } from '../rules.ts';
import type { PlannedStep } from '../section.ts';
import { defineSection, DuplicateCheck, readEntries } from '../section.ts';
import type { Located } from '../yaml-reader.ts';
import { planMembership, resolveMembers } from './members.ts';

interface GroupSpec {
  readonly name: Located;
  readonly members: { reference: Located; role: null }[];
}

/** `groups:` — each group by name (its identity) with its complete list of members. */
export const groupsSection = defineSection<GroupSpec[]>({
  key: 'groups',

  read(slot, context) {
    const { reader } = context;
    const duplicates = new DuplicateCheck('group');
    return readEntries(slot, context, (item) => {
      const fields = reader.fields(item, ['name', 'members'], ['name', 'members']);
      if (!fields) return undefined;
      const nameSlot = fields.get('name');
      const membersSlot = fields.get('members');
      const name = nameSlot && reader.string(nameSlot, groupNameRule);
      if (name) context.declaredGroups.add(name.value);
      const memberSlots = membersSlot && reader.list(membersSlot);
      const repeated = new DuplicateCheck('member');
      const members: GroupSpec['members'] = [];
      for (const memberSlot of memberSlots ?? []) {
        const reference = reader.string(memberSlot, principalReferenceRule);
        if (reference && repeated.first(reference, reader)) members.push({ reference, role: null });
      }
      if (!name || !duplicates.first(name, reader) || !memberSlots) return undefined;
      return { name, members };
    });
  },

  async plan(specs, { tx, tenant, principals, groups, problems }) {
    const stored = await loadGroups(tx, tenant.id);
    const steps: PlannedStep[] = [];
    for (const group of specs) {
      const name = group.name.value;
      const desired = resolveMembers(group.members, principals, problems);
      let existing = stored.get(name);
      if (!existing) {
        existing = { id: randomUUID(), members: new Map() };
        const id = existing.id;
        groups.add(name, id); // so that grants and routes can name the new group
        const write = async (q: Transaction): Promise<void> => {
          await q.query('INSERT INTO groups (tenant_id, id, name) VALUES ($1, $2, $3)', [tenant.id, id, name]);
        };
        steps.push({ change: { action: 'create', kind: 'group', name }, write });
      }
      const groupId = existing.id;
      steps.push(
        ...planMembership({
          kind: 'group member',
          container: `group ${name}`,
          current: existing.members,
          desired,
          principals,
          writes: {
            add: async (q, principalId) => {
              await q.query('INSERT INTO group_members (tenant_id, group_id, principal_id) VALUES ($1, $2, $3)', [tenant.id, groupId, principalId]);
            },
            // Group members have no role; planMembership never asks for a change.
            changeRole: () => Promise.resolve(),
            remove: async (q, principalId) => {
              await q.query('DELETE FROM group_members WHERE tenant_id = $1 AND group_id = $2 AND principal_id = $3', [tenant.id, groupId, principalId]);
            },
          },
        }),
      );
    }
    return steps;
  },
});

async function loadGroups(tx: Transaction, tenantId: string): Promise<Map<string, { id: string; members: Map<string, null> }>> {
  const rows = await tx.query<{ id: string; name: string; principal_id: string | null }>(
    `SELECT g.id, g.name, m.principal_id
       FROM groups g LEFT JOIN group_members m ON m.tenant_id = g.tenant_id AND m.group_id = g.id
      WHERE g.tenant_id = $1`,
    [tenantId],
  );
  const groups = new Map<string, { id: string; members: Map<string, null> }>();
  for (const row of rows) {
    const group = groups.get(row.name) ?? { id: row.id, members: new Map<string, null>() };
    groups.set(row.name, group);
    if (row.principal_id !== null) group.members.set(row.principal_id, null);
  }
  return groups;
}
