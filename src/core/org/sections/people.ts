import { randomUUID } from 'node:crypto';
import type { Transaction } from '../../../store/db.ts';
import { quote } from '../problems.ts';
import { displayNameRule, emailRule } from '../rules.ts';
import type { PlannedStep } from '../section.ts';
import { defineSection, DuplicateCheck, readEntries } from '../section.ts';
import type { Located } from '../yaml-reader.ts';

interface PersonSpec {
  readonly email: Located;
  readonly name: string;
}

/** `people:` — each person by email (their identity, stored lower-case) with a display name. */
export const peopleSection = defineSection<PersonSpec[]>({
  key: 'people',

  read(slot, context) {
    const { reader, declared } = context;
    const duplicates = new DuplicateCheck('person');
    return readEntries(slot, context, (item) => {
      const fields = reader.fields(item, ['email', 'name'], ['email', 'name']);
      if (!fields) return undefined;
      const emailSlot = fields.get('email');
      const nameSlot = fields.get('name');
      const email = emailSlot && reader.string(emailSlot, emailRule);
      const name = nameSlot && reader.string(nameSlot, displayNameRule);
      if (email) declared.add(email.value);
      if (!email || !duplicates.first(email, reader) || !name) return undefined;
      return { email, name: name.value };
    });
  },

  plan(people, { tenant, principals }) {
    const steps: PlannedStep[] = [];
    for (const person of people) {
      const email = person.email.value;
      const existing = principals.find(email);
      if (!existing) {
        const id = randomUUID();
        principals.add(email, { id, kind: 'person', name: person.name, ownerId: null });
        const write = async (tx: Transaction): Promise<void> => {
          await tx.query("INSERT INTO principals (tenant_id, id, kind, name, email) VALUES ($1, $2, 'person', $3, $4)", [tenant.id, id, person.name, email]);
        };
        steps.push({ change: { action: 'create', kind: 'person', name: email }, write });
      } else if (existing.name !== person.name) {
        const write = async (tx: Transaction): Promise<void> => {
          await tx.query('UPDATE principals SET name = $3, updated_at = now() WHERE tenant_id = $1 AND id = $2', [tenant.id, existing.id, person.name]);
        };
        steps.push({ change: { action: 'update', kind: 'person', name: email, detail: `name ${quote(existing.name)} → ${quote(person.name)}` }, write });
      }
    }
    return steps;
  },
});
