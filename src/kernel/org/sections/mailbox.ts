import type { MailboxSettings } from '../../mail/mailbox.ts';
import { parseImapUrl } from '../../mail/mailbox.ts';
import { unsafeName } from '../../text.ts';
import type { Queryable } from '../../../store/db.ts';
import type { ValueRule } from '../rules.ts';
import { characters, envNameRule } from '../rules.ts';
import type { ReadContext } from '../section.ts';
import type { Slot } from '../yaml-reader.ts';

/**
 * A person's `mailbox:`, where the email drafts they approve are put (docs/company-brain.md,
 * "Email drafts"): `password_env` names the variable that holds the IMAP password, read by the
 * `kgw review accept` that approves, never stored; `user` (default: the person's email), `url`
 * (default: KGW_MAIL_IMAP_URL) and `folder` (default: the server's Drafts folder) are stored.
 * Left out, the person has no mailbox, and their approved drafts are .eml files in the data
 * folder.
 */

const loginRule: ValueRule = {
  expected: 'an IMAP user name (1 to 254 characters, no spaces or control characters)',
  valid: (value) => value.length <= 254 && /^[^\s\p{Cc}]+$/u.test(value),
};

const urlRule: ValueRule = {
  expected: 'an imap:// or imaps:// URL with only a host and a port, such as imaps://mail.example.com',
  valid: (value) => typeof parseImapUrl(value) !== 'string',
};

const folderRule: ValueRule = {
  expected: 'a folder name (1 to 200 characters, no control or bidirectional formatting characters)',
  valid: (value) => value.trim() !== '' && characters(value) <= 200 && unsafeName(value) === undefined,
};

/** Reads `mailbox:`; null when left out or empty, false when wrong (the problem is reported). */
export function readMailbox(slot: Slot | undefined, context: ReadContext): MailboxSettings | null | false {
  const { reader } = context;
  if (!slot || reader.isEmpty(slot)) return null;
  const fields = reader.fields(slot, ['user', 'password_env', 'url', 'folder'], ['password_env']);
  if (!fields) return false;
  const read = (key: string, rule: ValueRule): string | undefined | false => {
    const at = fields.get(key);
    if (!at) return undefined;
    return reader.string(at, rule)?.value ?? false;
  };
  const passwordEnv = read('password_env', envNameRule);
  const user = read('user', loginRule);
  const url = read('url', urlRule);
  const folder = read('folder', folderRule);
  if (passwordEnv === false || passwordEnv === undefined || user === false || url === false || folder === false) return false;
  return {
    password_env: passwordEnv,
    ...(user === undefined ? {} : { user }),
    ...(url === undefined ? {} : { url }),
    ...(folder === undefined ? {} : { folder }),
  };
}

/** The same settings whatever order they were written in. */
export const sameMailbox = (a: MailboxSettings | null, b: MailboxSettings | null): boolean =>
  a === null || b === null ? a === b : a.password_env === b.password_env && a.user === b.user && a.url === b.url && a.folder === b.folder;

/** The stored mailboxes of the tenant's people who have one, by principal id. */
export async function loadMailboxes(q: Queryable, tenantId: string): Promise<Map<string, MailboxSettings>> {
  const rows = await q.query<{ id: string; mailbox: MailboxSettings }>(
    "SELECT id, mailbox FROM principals WHERE tenant_id = $1 AND kind = 'person' AND mailbox IS NOT NULL",
    [tenantId],
  );
  return new Map(rows.map((row) => [row.id, row.mailbox]));
}
