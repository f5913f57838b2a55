/*
 * The vocabulary of Activity (docs/alignbase.md, "Activity"): the transports, capabilities,
 * event types and hooks an installation may name, and the bounded patterns of every
 * free-standing name. Nothing outside these lists is stored.
 */

export const TRANSPORTS = ['stdio', 'streamable-http', 'sse'] as const;
export type Transport = (typeof TRANSPORTS)[number];

/** Every capability an installation may report; anything else is refused. */
export const CAPABILITIES = [
  'connection_test',
  'context_load',
  'skills_install',
  'skills_update',
  'session_lifecycle',
  'session_start_hook',
  'prompt_submit_hook',
  'tool_use_hook',
  'stop_hook',
  'session_end_hook',
] as const;
export type Capability = (typeof CAPABILITIES)[number];
export const MAX_CAPABILITIES = 50;

export const SUBJECT_TYPES = ['knowledge', 'skill', 'memory', 'artifact'] as const;
export type SubjectType = (typeof SUBJECT_TYPES)[number];

/** record_activity_event: each type, the capability it needs and the subject it takes. */
export const EVENT_RULES = {
  connection_tested: { capability: 'connection_test', subject: 'none' },
  context_loaded: { capability: 'context_load', subject: 'none' },
  skill_installed: { capability: 'skills_install', subject: 'skill' },
  skill_removed: { capability: 'skills_install', subject: 'skill' },
  skill_updated: { capability: 'skills_update', subject: 'skill' },
  session_started: { capability: 'session_lifecycle', subject: 'none' },
  session_ended: { capability: 'session_lifecycle', subject: 'none' },
} as const satisfies Record<string, { capability: Capability; subject: 'none' | SubjectType }>;
export type EventType = keyof typeof EVENT_RULES;
export const EVENT_TYPES = Object.keys(EVENT_RULES) as [EventType, ...EventType[]];

/** start_hook_session: the hook and the capability that installs it. */
export const HOOK_CAPABILITY = { session_start: 'session_start_hook', prompt_submit: 'prompt_submit_hook' } as const satisfies Record<string, Capability>;
export type Hook = keyof typeof HOOK_CAPABILITY;
export const HOOKS = Object.keys(HOOK_CAPABILITY) as [Hook, ...Hook[]];

/** record_hook_activity_event: each native event and the hook capability it comes from. */
export const HOOK_EVENT_CAPABILITY = {
  prompt_submitted: 'prompt_submit_hook',
  tool_used: 'tool_use_hook',
  session_stopped: 'stop_hook',
  session_ended: 'session_end_hook',
} as const satisfies Record<string, Capability>;
export type HookEventType = keyof typeof HOOK_EVENT_CAPABILITY;
export const HOOK_EVENT_TYPES = Object.keys(HOOK_EVENT_CAPABILITY) as [HookEventType, ...HookEventType[]];

/** The bounded shapes of every free-standing name (the migration checks the same patterns). */
export const PATTERNS = {
  integration: /^[a-z0-9][a-z0-9._-]{0,99}$/,
  clientVersion: /^[A-Za-z0-9][A-Za-z0-9._+-]{0,49}$/,
  sessionId: /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/,
  toolName: /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}$/,
  errorCode: /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/,
} as const;

/** An event may be this much ahead of the gateway's clock, or this old. */
export const FUTURE_SLACK_MS = 5 * 60_000;
export const MAX_AGE_MS = 7 * 86_400_000;
/** Installations per agent; a client that never keeps its id cannot grow the table without end. */
export const MAX_INSTALLATIONS_PER_AGENT = 100;
