import { randomUUID } from 'node:crypto';
import type { PrincipalAccess } from '../../access/principal-access.ts';
import type { Queryable, Transaction } from '../../../store/db.ts';
import { quote } from '../problems.ts';
import { displayNameRule, emailRule } from '../rules.ts';
import type { PlannedStep } from '../section.ts';
import { defineSection, DuplicateCheck, readEntries } from '../section.ts';
import type { Located } from '../yaml-reader.ts';
import { ACCESS_COLUMNS, ACCESS_KEYS, accessChanges, accessSettings, accessValues, readAccess, writeAccess } from './access-keys.ts';
import type { PasswordSpec } from './password.ts';
import { loadPasswordHashes, planPassword, readPassword } from './password.ts';
import type { MailboxSettings } from '../../mail/mailbox.ts';
import { loadMailboxes, readMailbox, sameMailbox } from './mailbox.ts';

interface PersonSpec {
  readonly email: Located;
  readonly name: string;
  readonly access: PrincipalAccess;
  readonly password: PasswordSpec;
  readonly mailbox: MailboxSettings | null;
  /** A tenant administrator (the console's Admin pages); false when left out, as the file is the whole truth. */
  readonly admin: boolean;
}

/**
 * `people:` — each person by email (their identity, stored lower-case) with a display name,
 * their access attributes (access-keys.ts), optionally a password (password.ts) and a mailbox
 * for the email drafts they approve (mailbox.ts), and whether they administer the tenant
 * (`admin: true`: tokens and the audit log in the console).
 */
export const peopleSection = defineSection<PersonSpec[]>({
  key: 'people',

  read(slot, context) {
    const { reader, declared } = context;
    const duplicates = new DuplicateCheck('person');
    return readEntries(slot, context, (item) => {
      const fields = reader.fields(item, ['email', 'name', ...ACCESS_KEYS, 'password_env', 'mailbox', 'admin'], ['email', 'name']);
      if (!fields) return undefined;
      const emailSlot = fields.get('email');
      const nameSlot = fields.get('name');
      const email = emailSlot && reader.string(emailSlot, emailRule);
      const name = nameSlot && reader.string(nameSlot, displayNameRule);
      const access = readAccess(fields, reader, { policy: false });
      const password = readPassword(fields.get('password_env'), context);
      const mailbox = readMailbox(fields.get('mailbox'), context);
      const adminSlot = fields.get('admin');
      const admin = adminSlot === undefined ? { value: false } : reader.boolean(adminSlot);
      if (email) declared.add(email.value);
      if (!email || !duplicates.first(email, reader) || !name || !access || password === false || mailbox === false || !admin) return undefined;
      return { email, name: name.value, access, password, mailbox, admin: admin.value };
    });
  },

  async plan(people, { tx, tenant, principals }) {
    const hashes = await loadPasswordHashes(tx, tenant.id);
    const mailboxes = await loadMailboxes(tx, tenant.id);
    const admins = await loadTenantAdmins(tx, tenant.id);
    const storedHash = (email: string): string | null => {
      const id = principals.find(email)?.id;
      return (id !== undefined && hashes.get(id)) || null;
    };
    // scrypt is slow on purpose; checking and hashing everyone's password at once uses the thread pool.
    const passwords = await Promise.all(people.map((person) => planPassword(person.password, storedHash(person.email.value))));
    const steps: PlannedStep[] = [];
    for (const [index, person] of people.entries()) {
      const email = person.email.value;
      const { access } = person;
      const password = passwords[index];
      const existing = principals.find(email);
      if (!existing) {
        const id = randomUUID();
        principals.add(email, { id, kind: 'person', name: person.name, ownerId: null, access });
        const write = async (q: Transaction): Promise<void> => {
          await q.query(
            `INSERT INTO principals (tenant_id, id, kind, name, email, password_hash, mailbox, tenant_admin, ${ACCESS_COLUMNS})
             VALUES ($1, $2, 'person', $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
            [tenant.id, id, person.name, email, password?.hash ?? null, mailboxJson(person.mailbox), person.admin, ...accessValues(access)],
          );
        };
        const detail = [
          ...accessSettings(access),
          ...(person.admin ? ['admin true'] : []),
          ...(password ? [password.detail] : []),
          ...(person.mailbox ? ['mailbox set'] : []),
        ].join('; ');
        steps.push({ change: { action: 'create', kind: 'person', name: email, ...(detail ? { detail } : {}) }, write });
        continue;
      }
      const differences = [
        ...(existing.name === person.name ? [] : [`name ${quote(existing.name)} → ${quote(person.name)}`]),
        ...accessChanges(existing.access, access),
        ...(admins.has(existing.id) === person.admin ? [] : [`admin ${String(admins.has(existing.id))} → ${String(person.admin)}`]),
        ...(password ? [password.detail] : []),
        ...mailboxChange(mailboxes.get(existing.id) ?? null, person.mailbox),
      ];
      if (differences.length === 0) continue;
      const write = async (q: Transaction): Promise<void> => {
        await q.query('UPDATE principals SET name = $3, updated_at = now() WHERE tenant_id = $1 AND id = $2', [tenant.id, existing.id, person.name]);
        await writeAccess(q, tenant.id, existing.id, access);
        if (password) await q.query('UPDATE principals SET password_hash = $3 WHERE tenant_id = $1 AND id = $2', [tenant.id, existing.id, password.hash]);
        await q.query('UPDATE principals SET mailbox = $3, tenant_admin = $4 WHERE tenant_id = $1 AND id = $2', [
          tenant.id,
          existing.id,
          mailboxJson(person.mailbox),
          person.admin,
        ]);
      };
      steps.push({ change: { action: 'update', kind: 'person', name: email, detail: differences.join('; ') }, write });
    }
    return steps;
  },
});

/** The ids of the tenant's administrators now, to tell what the file changes. */
async function loadTenantAdmins(q: Queryable, tenantId: string): Promise<Set<string>> {
  const rows = await q.query<{ id: string }>("SELECT id FROM principals WHERE tenant_id = $1 AND kind = 'person' AND tenant_admin", [tenantId]);
  return new Set(rows.map((row) => row.id));
}

const mailboxJson = (mailbox: MailboxSettings | null): string | null => (mailbox === null ? null : JSON.stringify(mailbox));

function mailboxChange(stored: MailboxSettings | null, wanted: MailboxSettings | null): string[] {
  if (sameMailbox(stored, wanted)) return [];
  return [stored === null ? 'mailbox set' : wanted === null ? 'mailbox removed' : 'mailbox changed'];
}
