import { z } from 'zod';
import { proposeOnboardingAction } from '../inbox.ts';
import { ACTION_CATALOG, ONBOARDING_ACTION_NAMES, ONBOARDING_ACTIONS, onboardingStatus } from '../onboarding.ts';
import { brainViewer } from '../read.ts';
import { permissionDenied, validation } from '../../kernel/errors.ts';
import { issuesText } from '../../kernel/zod-issues.ts';
import { defineTool, jsonReply } from '../../mcp/tool.ts';
import { boundedLine } from './inbox-tools.ts';
import { DISPLAY, displayLanguage } from './texts.ts';

/*
 * Company Brain onboarding: where the organisation stands (counts and step states only) and the
 * actions an agent may propose, with their exact schemas (docs/company-brain.md, "Onboarding").
 */

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

export const getOnboardingStatusTool = defineTool({
  name: 'get_onboarding_status',
  dialect: 'brain',
  title: 'Get onboarding status',
  description:
    'How far the organization is through the seven onboarding steps, how ready its evidence is, and which area is required next. No input. Returns counts and step state, never the people roster or document contents. Read-only.',
  input: z.object({}).strict(),
  annotations: READ_ONLY,
  scopes: ['brain:read'],
  async run({ caller, services }) {
    const status = await onboardingStatus(services.db, caller.tenant.id, new Date());
    const d = DISPLAY[displayLanguage(caller.tenant.language)];
    const done = status.steps.filter((s) => s.state === 'done').length;
    const e = status.evidence;
    return {
      text: [
        `onboarding: next=${status.next ?? 'none'} done=${done}/${status.steps.length}`,
        ...status.steps.map((s) => `[step:${s.step}] ${s.state} count=${s.count}`),
        `evidence: nodes=${e.nodes} current=${e.current} stale=${e.stale} unverified=${e.unverified} marked=${e.marked}`,
        status.next === undefined ? d.onboardingComplete : d.onboardingNext(status.next),
      ].join('\n'),
    };
  },
});

export const getOnboardingActionCatalogTool = defineTool({
  name: 'get_onboarding_action_catalog',
  dialect: 'brain',
  title: 'Get onboarding action catalog',
  description:
    'Every supported onboarding proposal action with its exact JSON Schema and risk level. No input. Call it before you propose, instead of guessing field names or enum values. Read-only.',
  input: z.object({}).strict(),
  annotations: READ_ONLY,
  scopes: ['brain:read'],
  run() {
    return Promise.resolve(jsonReply({ actions: ACTION_CATALOG.map((entry) => ({ ...entry })) }));
  },
});

export const proposeOnboardingActionTool = defineTool({
  name: 'propose_onboarding_action',
  dialect: 'brain',
  title: 'Propose onboarding action',
  description:
    "Submits one validated onboarding change to the approval inbox. Input: action (one of the catalog's action names), summary (string, 3 to 160 characters, shown to the approver), details (object matching the selected action's schema). Manager or admin token required, plus brain:propose. Never applies the change itself.",
  input: z
    .object({
      action: z.enum(ONBOARDING_ACTION_NAMES).describe("One of get_onboarding_action_catalog's action names."),
      summary: boundedLine('summary', 3, 160).describe('3 to 160 characters, shown to the approver.'),
      // Any object here; the action's own schema checks it in `run`, with paths under details.
      details: z.looseObject({}).describe("An object matching the action's JSON Schema in the catalog."),
    })
    .strict(),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  scopes: ['brain:propose'],
  async run({ caller, services, audit }, args) {
    const viewer = await brainViewer(services, caller);
    // The role first: a viewer's proposal is refused whatever its details say.
    if (viewer.access.brainRole !== 'manager' && viewer.access.brainRole !== 'admin')
      throw permissionDenied('propose_onboarding_action needs a manager or admin brain role');
    const parsed = ONBOARDING_ACTIONS[args.action].details.safeParse(args.details);
    if (!parsed.success)
      throw validation(
        issuesText(
          parsed.error.issues.map((issue) => ({ ...issue, path: ['details', ...issue.path] })),
          'labelled',
        ),
      );
    const receipt = await proposeOnboardingAction(
      services,
      viewer,
      caller.principal.id,
      { action: args.action, summary: args.summary, details: parsed.data },
      audit,
    );
    const d = DISPLAY[displayLanguage(viewer.language)];
    return {
      text: `receipt: inbox_id=${receipt.id} kind=${receipt.kind} status=${receipt.status} action=${args.action} risk=${ONBOARDING_ACTIONS[args.action].risk}\n${d.inboxRegistered}`,
    };
  },
});

export const brainOnboardingTools = [getOnboardingStatusTool, getOnboardingActionCatalogTool, proposeOnboardingActionTool];
