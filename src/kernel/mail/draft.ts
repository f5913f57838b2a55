/**
 * An approved email proposal as a message: RFC 5322 with MIME, built by nodemailer's composer
 * (header encoding of any script, line folding, quoted-printable bodies), never by hand. The
 * message is only ever stored as a draft (IMAP APPEND or an .eml file): nothing here sends.
 */

export interface DraftEmail {
  /** The approval id: it makes the Message-ID, so a draft put twice is seen as one message. */
  readonly approvalId: string;
  /** The approver, whose draft it becomes. */
  readonly from: { readonly name: string; readonly address: string };
  readonly to: readonly string[];
  readonly subject: string;
  readonly bodyText: string;
  readonly date: Date;
  /**
   * Marks the message as an unsent draft with `X-Unsent: 1`, for a draft stored as a file: a
   * mail client opens such an .eml as a draft to edit and send, not as a received message. A
   * draft put in an IMAP mailbox has the \Draft flag instead.
   */
  readonly unsent: boolean;
}

/** The host part of every draft's Message-ID: a name of ours that no mail server claims. */
const MESSAGE_ID_DOMAIN = 'knowledge-gateway.invalid';

export const draftMessageId = (approvalId: string): string => `<${approvalId}@${MESSAGE_ID_DOMAIN}>`;

export async function composeDraft(draft: DraftEmail): Promise<Buffer> {
  // Loaded on the first approved email, not by every process at start.
  const { default: MailComposer } = await import('nodemailer/lib/mail-composer/index.js');
  const composer = new MailComposer({
    from: { name: draft.from.name, address: draft.from.address },
    to: [...draft.to],
    subject: draft.subject,
    text: draft.bodyText,
    date: draft.date,
    messageId: draftMessageId(draft.approvalId),
    headers: { 'X-KGW-Approval-Id': draft.approvalId, ...(draft.unsent ? { 'X-Unsent': '1' } : {}) },
    // No attachments from paths or URLs can reach this composer (only text is given), and
    // nothing it builds is ever fetched from disk or network.
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  return composer.compile().build();
}
