import { z } from 'zod';
import {
  CAPABILITIES,
  EVENT_TYPES,
  HOOKS,
  HOOK_EVENT_TYPES,
  MAX_CAPABILITIES,
  PATTERNS,
  SUBJECT_TYPES,
  TRANSPORTS,
  recordActivityEvent,
  recordHookEvent,
  reportInstallation,
  startHookSession,
} from '../activity/activity.ts';
import type { Scope } from '../../kernel/access/scopes.ts';
import { defineTool, jsonReply } from '../../mcp/tool.ts';
import { ALIGNBASE_BUNDLE } from './bundle.ts';
import { WRITE } from './schemas.ts';

/*
 * The Activity tools (docs/alignbase.md, "Activity"). Every object is strict and every string
 * bounded by a conservative pattern, so there is no room for transcripts, reasoning, tool
 * payloads or environment values; anything else is refused before the core runs.
 */

// The spec: context.read for any MCP call, activity.write for these tools.
const SCOPES: readonly Scope[] = ['context.read', 'activity.write'];

const installationId = z.uuid().describe('The local_installation_id that report_installation_capabilities returned.');
const sessionId = z.string().regex(PATTERNS.sessionId).describe("The client's own session id: letters, digits and . _ : -, at most 128 characters.");
const occurredAt = z.iso.datetime({ offset: true }).describe('When it happened (ISO 8601 instant); at most 7 days old and 5 minutes ahead. Omitted: now.');
const status = z.enum(['ok', 'error']).describe('ok (default) or error.');
const errorCode = z
  .string()
  .regex(PATTERNS.errorCode)
  .describe('A short machine code for a failure (letters, digits, _ . -; at most 64 characters); only with status error.');

/** How an event ended, last in both event objects: the client's and the hook's. */
const outcomeFields = { status: status.optional(), error_code: errorCode.optional() };

export const reportInstallationCapabilitiesTool = defineTool({
  name: 'report_installation_capabilities',
  dialect: 'alignbase',
  title: 'Report installation capabilities',
  description:
    'Registers this client installation of the calling agent after installation or a connection test: the integration, transport and supported capability names. Returns a local_installation_id to keep and reuse; pass it back to update what the installation supports (registered: false). An agent may have several installations. ' +
    `Capabilities: ${CAPABILITIES.join(', ')}.`,
  input: z
    .object({
      integration: z
        .string()
        .regex(PATTERNS.integration)
        .describe('The client, e.g. claude-code: lower-case letters, digits and . _ -, at most 100 characters.'),
      transport: z.enum(TRANSPORTS),
      capabilities: z.array(z.enum(CAPABILITIES)).max(MAX_CAPABILITIES).describe('The capability names this installation supports; unknown names are refused.'),
      client_version: z.string().regex(PATTERNS.clientVersion).optional().describe('The client version, e.g. 1.2.3 (at most 50 characters).'),
      local_installation_id: installationId.optional().describe('Omit to register a new installation; pass a returned id to update it.'),
    })
    .strict(),
  output: z.object({
    local_installation_id: z.string(),
    registered: z.boolean().describe('true for a new installation, false when an existing one was updated'),
    capabilities: z.array(z.enum(CAPABILITIES)),
  }),
  annotations: WRITE,
  scopes: SCOPES,
  async run({ caller, services, audit }, args) {
    const result = await reportInstallation(services.db, caller, args, audit);
    return jsonReply({ local_installation_id: result.installationId, registered: result.registered, capabilities: result.capabilities });
  },
});

/** What record_activity_event and record_hook_activity_event answer: the event's id. */
const recordedOutput = z.object({ event_id: z.string(), recorded: z.literal(true) });
const recordedWire = (eventId: string) => ({ event_id: eventId, recorded: true as const });

export const recordActivityEventTool = defineTool({
  name: 'record_activity_event',
  dialect: 'alignbase',
  title: 'Record activity event',
  description:
    'Records one allowed lifecycle event for an installation this agent reported, when Activity is enabled. Each type needs a reported capability: connection_tested (connection_test), context_loaded (context_load), skill_installed and skill_removed (skills_install), skill_updated (skills_update), session_started and session_ended (session_lifecycle). Skill events name the Skill as subject; the others take none. Send names and codes only, never content.',
  input: z
    .object({
      local_installation_id: installationId,
      event: z
        .object({
          type: z.enum(EVENT_TYPES),
          occurred_at: occurredAt.optional(),
          subject: z
            .object({ type: z.enum(SUBJECT_TYPES), id: z.uuid(), version: z.number().int().positive().max(2_147_483_647).optional() })
            .strict()
            .optional()
            .describe('The resource the event is about, by id (skill events: the Skill).'),
          ...outcomeFields,
        })
        .strict(),
    })
    .strict(),
  output: recordedOutput,
  annotations: WRITE,
  scopes: SCOPES,
  async run({ caller, services, audit }, args) {
    const { eventId } = await recordActivityEvent(services.db, caller, args, audit);
    return jsonReply(recordedWire(eventId));
  },
});

export const startHookSessionTool = defineTool({
  name: 'start_hook_session',
  dialect: 'alignbase',
  title: 'Start hook session',
  description:
    'For an installed session-start or prompt-submit hook (the installation reported session_start_hook or prompt_submit_hook). Records the session start once per session_id and returns the current context: the text is the same markdown bundle get_current_context returns; structured content adds session_id, hook, started (false when this session had already started) and activity_enabled.',
  input: z.object({ local_installation_id: installationId, hook: z.enum(HOOKS), session_id: sessionId }).strict(),
  output: z.object({
    session_id: z.string(),
    hook: z.enum(HOOKS),
    started: z.boolean().describe('true only for the call that recorded this session start'),
    activity_enabled: z.boolean().describe('false when Activity is disabled for the tenant: the context is returned and nothing is recorded'),
    context: z.string().describe('The current context bundle (markdown), as get_current_context returns it'),
  }),
  annotations: { ...WRITE, idempotentHint: true },
  scopes: SCOPES,
  async run({ caller, services, audit }, args) {
    const result = await startHookSession(services.db, caller, args, ALIGNBASE_BUNDLE, audit);
    return {
      text: result.context,
      structured: {
        session_id: result.sessionId,
        hook: result.hook,
        started: result.started,
        activity_enabled: result.activityEnabled,
        context: result.context,
      },
    };
  },
});

export const recordHookActivityEventTool = defineTool({
  name: 'record_hook_activity_event',
  dialect: 'alignbase',
  title: 'Record hook activity event',
  description:
    'For an installed lifecycle hook: records one native event and refreshes the coverage of its hook. Types and the capability each needs: prompt_submitted (prompt_submit_hook), tool_used (tool_use_hook; tool_name names the tool, never its input or output), session_stopped (stop_hook), session_ended (session_end_hook). Refused when Activity is disabled.',
  input: z
    .object({
      local_installation_id: installationId,
      session_id: sessionId,
      event: z
        .object({
          type: z.enum(HOOK_EVENT_TYPES),
          occurred_at: occurredAt.optional(),
          tool_name: z
            .string()
            .regex(PATTERNS.toolName)
            .optional()
            .describe('tool_used only: the tool name (letters, digits, _ . : -; at most 100 characters).'),
          ...outcomeFields,
        })
        .strict(),
    })
    .strict(),
  output: recordedOutput,
  annotations: WRITE,
  scopes: SCOPES,
  async run({ caller, services, audit }, args) {
    const { eventId } = await recordHookEvent(services.db, caller, args, audit);
    return jsonReply(recordedWire(eventId));
  },
});
