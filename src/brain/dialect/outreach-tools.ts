import { z } from 'zod';
import { DRAFT_EMAIL_BOUNDS, isEmailAddress, proposeDraftEmail } from '../outreach.ts';
import { defineTool } from '../../mcp/tool.ts';
import { bounded, boundedLine } from './inbox-tools.ts';
import { DISPLAY, displayLanguage } from './texts.ts';

/*
 * Company Brain outreach: an email an agent proposes, for a manager to approve; on approval the
 * draft is put in the approver's own mailbox, and nothing is ever sent
 * (../shared/spec/company-brain-mcp.md, docs/company-brain.md "Email drafts").
 */

const { recipients, subjectChars, bodyChars } = DRAFT_EMAIL_BOUNDS;

const address = z
  .string()
  .max(DRAFT_EMAIL_BOUNDS.addressChars)
  .refine(isEmailAddress, 'must be one email address such as ana@example.com, without a display name');

export const proposeDraftEmailTool = defineTool({
  name: 'propose_draft_email',
  dialect: 'brain',
  title: 'Propose an email draft',
  description:
    "Creates a proposal for an email draft. Input: to (array of 1 to 10 email addresses), subject (string, 1 to 300 characters), bodyText (string, 1 to 20000 characters). Requires outreach:propose. It does not create the draft and it does not send anything: a manager must approve the proposal first, and on approval the draft is created in the approver's own mailbox for them to review, edit and send by hand. The approval id is derived from the content, so a replayed call resolves to the proposal that already exists.",
  input: z
    .object({
      to: z
        .array(address)
        .min(recipients.min)
        .max(recipients.max)
        .superRefine((list, ctx) => {
          const seen = new Set<string>();
          for (const [i, value] of list.entries()) {
            if (seen.has(value.toLowerCase())) ctx.addIssue({ code: 'custom', path: [i], message: 'names an address already in the list' });
            seen.add(value.toLowerCase());
          }
        })
        .describe('1 to 10 email addresses, each once.'),
      // One line: a line break in a subject would end the header.
      subject: boundedLine('subject', subjectChars.min, subjectChars.max),
      bodyText: bounded('bodyText', bodyChars.min, bodyChars.max).describe('Plain text, 1 to 20000 characters.'),
    })
    .strict(),
  // A replay resolves to the proposal that exists: calling twice is calling once.
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  scopes: ['outreach:propose'],
  async run({ caller, services, audit }, args) {
    const receipt = await proposeDraftEmail(services, caller.tenant.id, caller.principal.id, args, audit);
    const d = DISPLAY[displayLanguage(caller.tenant.language)];
    return {
      text: `receipt: approval_id=${receipt.id} kind=${receipt.kind} status=${receipt.status}\n${receipt.replayed ? d.draftExists(receipt.status) : d.draftProposed}`,
    };
  },
});

export const brainOutreachTools = [proposeDraftEmailTool];
