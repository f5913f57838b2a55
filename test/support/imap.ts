import { ImapFlow } from 'imapflow';
import type { AddressObject } from 'mailparser';

/*
 * The IMAP server the mail tests read drafts back from: Dovecot on loopback, started by
 * test/services/dovecot.sh, which prints KGW_TEST_IMAP_URL and the one password every user
 * logs in with (KGW_TEST_IMAP_PASSWORD). Required in CI; elsewhere the suites skip without it.
 */

export interface ImapServer {
  readonly url: string;
  readonly password: string;
  /** The environment a decision reads mailbox passwords from (password_env: KGW_TEST_IMAP_PASSWORD). */
  readonly env: Readonly<Record<string, string>>;
  readonly skip: string | false;
}

export function imapServer(): ImapServer {
  const url = process.env.KGW_TEST_IMAP_URL ?? '';
  const password = process.env.KGW_TEST_IMAP_PASSWORD ?? '';
  if ((url === '' || password === '') && process.env.CI === 'true') {
    throw new Error('KGW_TEST_IMAP_URL and KGW_TEST_IMAP_PASSWORD must be set in CI (eval "$(bash test/services/dovecot.sh)")');
  }
  return {
    url,
    password,
    env: { KGW_TEST_IMAP_PASSWORD: password },
    skip: url === '' ? 'KGW_TEST_IMAP_URL is not set (eval "$(bash test/services/dovecot.sh)")' : false,
  };
}

export interface StoredDraft {
  readonly uid: number;
  readonly flags: ReadonlySet<string>;
  readonly messageId: string | undefined;
  readonly source: Buffer;
}

/** Every message of `folder` in `user`'s mailbox, with its lasting flags and raw source; none when the folder does not exist. */
export async function readDrafts(user: string, folder: string): Promise<StoredDraft[]> {
  const { url, password } = imapServer();
  const at = new URL(url);
  const client = new ImapFlow({ host: at.hostname, port: Number(at.port), secure: false, auth: { user, pass: password }, logger: false });
  client.on('error', () => undefined);
  await client.connect();
  try {
    if (!(await client.list()).some((f) => f.path === folder)) return [];
    const lock = await client.getMailboxLock(folder);
    try {
      const drafts: StoredDraft[] = [];
      if (client.mailbox === false || client.mailbox.exists === 0) return drafts;
      for await (const message of client.fetch('1:*', { uid: true, flags: true, envelope: true, source: true })) {
        // \Recent belongs to the session that first sees a message, not to the message.
        const flags = new Set([...(message.flags ?? [])].filter((flag) => flag !== '\\Recent'));
        drafts.push({ uid: message.uid, flags, messageId: message.envelope?.messageId, source: message.source ?? Buffer.alloc(0) });
      }
      return drafts;
    } finally {
      lock.release();
    }
  } finally {
    await client.logout();
  }
}

/** The addresses of a parsed To header. */
export const addresses = (to: AddressObject | AddressObject[] | undefined): string[] =>
  (Array.isArray(to) ? to : to === undefined ? [] : [to]).flatMap((group) => group.value.map((a) => a.address ?? ''));
