import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ImapFlow } from 'imapflow';
import { KgwError, validation } from '../errors.ts';

/**
 * A person's own mailbox, where an email draft they approve is put: never sent, only stored as
 * a draft for them to review, edit and send by hand (docs/company-brain.md, "Email drafts").
 *
 * - A person with a `mailbox:` in the org file: IMAP APPEND to their Drafts folder with the
 *   \Draft flag, logged in as `user` with the password in the environment variable
 *   `password_env` names (the password itself is never stored), at the mailbox's `url` or
 *   KGW_MAIL_IMAP_URL.
 * - A person without one: an .eml file in KGW_DATA_DIR/outbox-drafts/<person>/, which
 *   `kgw review show` points to.
 */

/** people[].mailbox in the org file, as stored on the principal. */
export interface MailboxSettings {
  /** The IMAP login; the person's email when left out. */
  readonly user?: string;
  /** The environment variable holding the password. */
  readonly password_env: string;
  /** imap:// or imaps:// URL of the server; KGW_MAIL_IMAP_URL when left out. */
  readonly url?: string;
  /** The folder drafts go to; the server's \Drafts folder (or "Drafts") when left out. */
  readonly folder?: string;
}

/** Time bounds of one IMAP delivery, so a decision never waits on a silent server for long. */
export const IMAP_TIMEOUTS = { connectionMs: 10_000, greetingMs: 10_000, socketMs: 30_000 } as const;

/** The folder a draft goes to when the server marks none with \Drafts and none was configured. */
const DEFAULT_DRAFTS = 'Drafts';

/** An IMAP server URL: imap:// (STARTTLS required off loopback) or imaps://, a host, an optional port, nothing else. */
export function parseImapUrl(raw: string): URL | string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not a URL such as imaps://mail.example.com';
  }
  if (url.protocol !== 'imap:' && url.protocol !== 'imaps:') return 'must be an imap:// or imaps:// URL';
  if (url.hostname === '') return 'must name a host';
  if (url.username !== '' || url.password !== '') return 'must not contain a user name or password (use the mailbox user and password_env)';
  if ((url.pathname !== '' && url.pathname !== '/') || url.search !== '' || url.hash !== '') return 'must be only a scheme, a host and a port';
  return url;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Where a draft was put, as `kgw review show` says it: an imap URL with folder and UID, or a file path. */
export type DraftLocation = string;

export interface Delivery {
  readonly person: { readonly email: string };
  readonly mailbox: MailboxSettings | null;
  /** KGW_MAIL_IMAP_URL of the deciding process, if set. */
  readonly defaultImapUrl: string | undefined;
  /** The environment the password is read from (that of the deciding `kgw` command). */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly dataDir: string;
  readonly approvalId: string;
  readonly message: Buffer;
}

export async function deliverDraft(d: Delivery): Promise<DraftLocation> {
  return d.mailbox === null ? writeEml(d) : appendImap(d, d.mailbox);
}

/** The folder name for a person: their email in lower case, anything but [a-z0-9.@+_-] as "_", so it cannot leave the outbox. */
export const personFolder = (email: string): string =>
  email
    .toLowerCase()
    .replace(/[^a-z0-9.@+_-]/g, '_')
    .replace(/^\.+/, '_');

async function writeEml(d: Delivery): Promise<DraftLocation> {
  const folder = path.join(d.dataDir, 'outbox-drafts', personFolder(d.person.email));
  await mkdir(folder, { recursive: true, mode: 0o700 });
  const file = path.join(folder, `${d.approvalId}.eml`);
  // Written whole or not at all: a reader never sees half a draft.
  const partial = `${file}.${process.pid}.partial`;
  await writeFile(partial, d.message, { mode: 0o600 });
  await rename(partial, file);
  return file;
}

const unavailable = (message: string): KgwError => new KgwError('unavailable', message);

async function appendImap(d: Delivery, mailbox: MailboxSettings): Promise<DraftLocation> {
  const rawUrl = mailbox.url ?? d.defaultImapUrl;
  if (rawUrl === undefined) throw validation(`${d.person.email} has a mailbox without a url, and KGW_MAIL_IMAP_URL is not set`);
  const url = parseImapUrl(rawUrl);
  if (typeof url === 'string') throw validation(`the mailbox URL of ${d.person.email} ${url}`);
  const password = d.env[mailbox.password_env];
  if (password === undefined || password === '') {
    throw validation(`the mailbox password of ${d.person.email} is read from ${mailbox.password_env}, which is not set in the environment of this command`);
  }
  const secure = url.protocol === 'imaps:';
  // Loaded here, not at start: only people with a mailbox need it, and it is 70 modules.
  const { ImapFlow } = await import('imapflow');
  const client = new ImapFlow({
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port === '' ? (secure ? 993 : 143) : Number(url.port),
    secure,
    // Off loopback, a password never crosses the network in clear: imap:// must upgrade.
    doSTARTTLS: secure || LOOPBACK.has(url.hostname) ? undefined : true,
    auth: { user: mailbox.user ?? d.person.email, pass: password },
    logger: false,
    disableAutoIdle: true,
    connectionTimeout: IMAP_TIMEOUTS.connectionMs,
    greetingTimeout: IMAP_TIMEOUTS.greetingMs,
    socketTimeout: IMAP_TIMEOUTS.socketMs,
  });
  // A connection error after connect() is also emitted; without a listener it would end the process.
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    throw unavailable(`could not sign in to the mailbox of ${d.person.email} at ${url.host}: ${imapReason(error)}`);
  }
  try {
    const folder = mailbox.folder ?? (await draftsFolder(client));
    let appended = await append(client, folder, d);
    if (appended === 'missing') {
      // A configured folder the mailbox does not have yet (RFC 3501's TRYCREATE): made, then tried again.
      await create(client, folder);
      appended = await append(client, folder, d);
    }
    if (appended === 'missing') throw unavailable(`the mailbox of ${d.person.email} has no folder ${folder}`);
    if (appended === false) throw unavailable(`the mailbox of ${d.person.email} did not take the draft in ${folder}`);
    const where = `${url.protocol}//${url.host}/${encodeURIComponent(appended.destination)}`;
    return appended.uid === undefined ? where : `${where};UID=${appended.uid}`;
  } finally {
    await client.logout().catch(() => client.close());
  }
}

/** APPEND with the \Draft flag; 'missing' when the server says the folder does not exist. */
async function append(client: ImapFlow, folder: string, d: Delivery): Promise<Awaited<ReturnType<ImapFlow['append']>> | 'missing'> {
  try {
    return await client.append(folder, d.message, ['\\Draft', '\\Seen']);
  } catch (error) {
    if ((error as { serverResponseCode?: string }).serverResponseCode === 'TRYCREATE') return 'missing';
    throw unavailable(`could not put the draft in ${folder} of ${d.person.email}: ${imapReason(error)}`);
  }
}

async function create(client: ImapFlow, folder: string): Promise<void> {
  try {
    await client.mailboxCreate(folder);
  } catch (error) {
    throw unavailable(`could not create the folder ${folder}: ${imapReason(error)}`);
  }
}

/** The server's \Drafts folder; else "Drafts", created when it does not exist. */
async function draftsFolder(client: ImapFlow): Promise<string> {
  let folders;
  try {
    folders = await client.list();
  } catch (error) {
    throw unavailable(`could not list the mailbox's folders: ${imapReason(error)}`);
  }
  const marked = folders.find((f) => f.specialUse === '\\Drafts' && f.specialUseSource === 'extension') ?? folders.find((f) => f.specialUse === '\\Drafts');
  if (marked !== undefined) return marked.path;
  if (!folders.some((f) => f.path === DEFAULT_DRAFTS)) await create(client, DEFAULT_DRAFTS);
  return DEFAULT_DRAFTS;
}

/** What went wrong, in a line: the server's own words when it answered, else the socket's code. */
function imapReason(error: unknown): string {
  if (!(error instanceof Error)) return 'unknown error';
  const e = error as Error & { responseText?: string; serverResponseCode?: string; code?: string; authenticationFailed?: boolean };
  if (e.authenticationFailed === true) return 'the server refused the user name or password';
  const text = e.responseText ?? e.message;
  return [e.serverResponseCode, e.code, text]
    .filter((part) => part !== undefined && part !== '')
    .join(': ')
    .slice(0, 300);
}
