import { z } from 'zod';
import { INBOX_BOUNDS, INBOX_KINDS, writeInbox } from '../inbox.ts';
import { brainViewer } from '../read.ts';
import { unsafeName } from '../../kernel/text.ts';
import { defineTool } from '../../mcp/tool.ts';
import { DISPLAY, displayLanguage } from './texts.ts';

/*
 * Company Brain's proposal tools. write_inbox registers an item for a manager to decide on and
 * never writes to the graph (../shared/spec/company-brain-mcp.md).
 */

/**
 * A text of `min` to `max` characters, the bounds in the JSON Schema. JSON Schema counts UTF-16
 * units and PostgreSQL's CHECK code points: a text within the schema's maximum is within the
 * CHECK's, and the refinement holds the minimum in code points too (two emoji are four units).
 */
export const bounded = (what: string, min: number, max: number) =>
  z
    .string()
    .min(min)
    .max(max)
    .refine((v) => [...v].length >= min, `${what} must be at least ${min} characters`)
    .describe(`${min} to ${max} characters.`);

/** A bounded text shown on one line to a person (a title, a summary): no control or bidirectional formatting characters either. */
export const boundedLine = (what: string, min: number, max: number) =>
  bounded(what, min, max).refine((v) => unsafeName(v) === undefined, `${what} must not contain control or bidirectional formatting characters`);

export const writeInboxTool = defineTool({
  name: 'write_inbox',
  dialect: 'brain',
  title: 'Write to the inbox',
  description:
    "Registers a proposal in the organization's inbox. Never writes to the brain. Input: kind (one of observation, correction, proposal, work_output), title (string, 3 to 120 characters), body (string, 10 to 4000 characters), relatedNodeIds (optional array of up to 10 node ids). Requires brain:propose. Returns a receipt with the inbox id, the kind and the status.",
  input: z
    .object({
      kind: z.enum(INBOX_KINDS).describe('observation, correction, proposal or work_output.'),
      title: boundedLine('title', INBOX_BOUNDS.titleChars.min, INBOX_BOUNDS.titleChars.max),
      body: bounded('body', INBOX_BOUNDS.bodyChars.min, INBOX_BOUNDS.bodyChars.max),
      relatedNodeIds: z
        .array(z.string().min(1).max(300))
        .max(INBOX_BOUNDS.relatedNodes)
        .optional()
        .describe('Up to 10 ids of nodes you can see, as shown in [brackets].'),
    })
    .strict(),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  scopes: ['brain:propose'],
  async run({ caller, services, audit }, args) {
    const viewer = await brainViewer(services, caller);
    const receipt = await writeInbox(
      services,
      viewer,
      caller.principal.id,
      { kind: args.kind, title: args.title, body: args.body, relatedNodeIds: args.relatedNodeIds ?? [] },
      audit,
    );
    const d = DISPLAY[displayLanguage(viewer.language)];
    return { text: `receipt: inbox_id=${receipt.id} kind=${receipt.kind} status=${receipt.status}\n${d.inboxRegistered}` };
  },
});

export const brainProposalTools = [writeInboxTool];
