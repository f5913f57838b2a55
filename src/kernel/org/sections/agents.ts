import { randomUUID } from 'node:crypto';
import type { PrincipalAccess } from '../../access/principal-access.ts';
import type { Transaction } from '../../../store/db.ts';
import type { ValueRule } from '../rules.ts';
import { agentNameRule, emailRule } from '../rules.ts';
import type { PlannedStep } from '../section.ts';
import { defineSection, DuplicateCheck, readEntries } from '../section.ts';
import type { Located } from '../yaml-reader.ts';
import { ACCESS_COLUMNS, ACCESS_KEYS, accessChanges, accessSettings, accessValues, readAccess, writeAccess } from './access-keys.ts';

interface AgentSpec {
  readonly name: Located;
  readonly owner: Located;
  readonly access: PrincipalAccess;
}

// Only a person can own an agent, so the owner is always named by email.
const ownerRule: ValueRule = { ...emailRule, expected: "a person's email address" };

/**
 * `agents:` — each agent by name (its identity) with the person who owns it, its access
 * attributes and an optional policy that caps its team roles (access-keys.ts).
 */
export const agentsSection = defineSection<AgentSpec[]>({
  key: 'agents',

  read(slot, context) {
    const { reader, declared } = context;
    const duplicates = new DuplicateCheck('agent');
    return readEntries(slot, context, (item) => {
      const fields = reader.fields(item, ['name', 'owner', ...ACCESS_KEYS, 'policy'], ['name', 'owner']);
      if (!fields) return undefined;
      const nameSlot = fields.get('name');
      const ownerSlot = fields.get('owner');
      const name = nameSlot && reader.string(nameSlot, agentNameRule);
      const owner = ownerSlot && reader.string(ownerSlot, ownerRule);
      const access = readAccess(fields, reader, { policy: true });
      if (name) declared.add(name.value);
      if (!name || !duplicates.first(name, reader) || !owner || !access) return undefined;
      return { name, owner, access };
    });
  },

  plan(agents, { tenant, principals, problems }) {
    const steps: PlannedStep[] = [];
    for (const agent of agents) {
      const name = agent.name.value;
      const { access } = agent;
      const ownerId = principals.resolve(agent.owner, problems);
      if (ownerId === undefined) continue;
      const existing = principals.find(name);
      if (!existing) {
        const id = randomUUID();
        principals.add(name, { id, kind: 'agent', name, ownerId, access });
        const write = async (tx: Transaction): Promise<void> => {
          await tx.query(
            `INSERT INTO principals (tenant_id, id, kind, name, owner_id, ${ACCESS_COLUMNS}) VALUES ($1, $2, 'agent', $3, $4, $5, $6, $7, $8, $9)`,
            [tenant.id, id, name, ownerId, ...accessValues(access)],
          );
        };
        const detail = [`owner ${agent.owner.value}`, ...accessSettings(access)].join('; ');
        steps.push({ change: { action: 'create', kind: 'agent', name, detail }, write });
        continue;
      }
      const ownerChanged = existing.ownerId !== ownerId;
      const from = existing.ownerId === null ? 'none' : principals.referenceOf(existing.ownerId);
      const differences = [...(ownerChanged ? [`owner ${from} → ${agent.owner.value}`] : []), ...accessChanges(existing.access, access)];
      if (differences.length === 0) continue;
      const write = async (tx: Transaction): Promise<void> => {
        if (ownerChanged)
          await tx.query('UPDATE principals SET owner_id = $3, updated_at = now() WHERE tenant_id = $1 AND id = $2', [tenant.id, existing.id, ownerId]);
        await writeAccess(tx, tenant.id, existing.id, access);
      };
      steps.push({ change: { action: 'update', kind: 'agent', name, detail: differences.join('; ') }, write });
    }
    return steps;
  },
});
