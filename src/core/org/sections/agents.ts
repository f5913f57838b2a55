import { randomUUID } from 'node:crypto';
import type { Transaction } from '../../../store/db.ts';
import type { ValueRule } from '../rules.ts';
import { agentNameRule, emailRule } from '../rules.ts';
import type { PlannedStep } from '../section.ts';
import { defineSection, DuplicateCheck, readEntries } from '../section.ts';
import type { Located } from '../yaml-reader.ts';

interface AgentSpec {
  readonly name: Located;
  readonly owner: Located;
}

// Only a person can own an agent, so the owner is always named by email.
const ownerRule: ValueRule = { ...emailRule, expected: "a person's email address" };

/** `agents:` — each agent by name (its identity) with the person who owns it. */
export const agentsSection = defineSection<AgentSpec[]>({
  key: 'agents',

  read(slot, context) {
    const { reader, declared } = context;
    const duplicates = new DuplicateCheck('agent');
    return readEntries(slot, context, (item) => {
      const fields = reader.fields(item, ['name', 'owner'], ['name', 'owner']);
      if (!fields) return undefined;
      const nameSlot = fields.get('name');
      const ownerSlot = fields.get('owner');
      const name = nameSlot && reader.string(nameSlot, agentNameRule);
      const owner = ownerSlot && reader.string(ownerSlot, ownerRule);
      if (name) declared.add(name.value);
      if (!name || !duplicates.first(name, reader) || !owner) return undefined;
      return { name, owner };
    });
  },

  plan(agents, { tenant, principals, problems }) {
    const steps: PlannedStep[] = [];
    for (const agent of agents) {
      const name = agent.name.value;
      const ownerId = principals.resolve(agent.owner, problems);
      if (ownerId === undefined) continue;
      const existing = principals.find(name);
      if (!existing) {
        const id = randomUUID();
        principals.add(name, { id, kind: 'agent', name, ownerId });
        const write = async (tx: Transaction): Promise<void> => {
          await tx.query("INSERT INTO principals (tenant_id, id, kind, name, owner_id) VALUES ($1, $2, 'agent', $3, $4)", [tenant.id, id, name, ownerId]);
        };
        steps.push({ change: { action: 'create', kind: 'agent', name, detail: `owner ${agent.owner.value}` }, write });
      } else if (existing.ownerId !== ownerId) {
        const from = existing.ownerId === null ? 'none' : principals.referenceOf(existing.ownerId);
        const write = async (tx: Transaction): Promise<void> => {
          await tx.query('UPDATE principals SET owner_id = $3, updated_at = now() WHERE tenant_id = $1 AND id = $2', [tenant.id, existing.id, ownerId]);
        };
        steps.push({ change: { action: 'update', kind: 'agent', name, detail: `owner ${from} → ${agent.owner.value}` }, write });
      }
    }
    return steps;
  },
});
