import type { Caller } from '../../kernel/access/caller.ts';
import { ensure } from '../versions/access.ts';
import type { ReasonFacts } from '../../kernel/errors.ts';
import { refuse } from './refusals.ts';
import type { Capability, EventType, Hook, HookEventType, SubjectType, Transport } from './vocabulary.ts';
import { EVENT_RULES, FUTURE_SLACK_MS, MAX_AGE_MS } from './vocabulary.ts';

/*
 * The inputs of the Activity tools (already shaped by their schemas) and the checks that need
 * no store: who may report, when an event may have happened, which fields go together.
 */

export interface InstallationReport {
  integration: string;
  transport: Transport;
  capabilities: readonly Capability[];
  client_version?: string | undefined;
  local_installation_id?: string | undefined;
}

export interface ActivityEventInput {
  local_installation_id: string;
  event: {
    type: EventType;
    occurred_at?: string | undefined;
    subject?: { type: SubjectType; id: string; version?: number | undefined } | undefined;
    status?: 'ok' | 'error' | undefined;
    error_code?: string | undefined;
  };
}

export interface HookSessionInput {
  local_installation_id: string;
  hook: Hook;
  session_id: string;
}

export interface HookEventInput {
  local_installation_id: string;
  session_id: string;
  event: {
    type: HookEventType;
    occurred_at?: string | undefined;
    tool_name?: string | undefined;
    status?: 'ok' | 'error' | undefined;
    error_code?: string | undefined;
  };
}

/** Only agents report activity; a person's connection is refused like any missing role. */
export const ensureAgent = (caller: Caller): void => ensure(caller.principal.kind === 'agent');

/** When the event happened: the client's instant inside the allowed window, else now. */
export function occurredAt(value: string | undefined, now: number): Date {
  if (value === undefined) return new Date(now);
  const at = Date.parse(value);
  if (!Number.isFinite(at) || at > now + FUTURE_SLACK_MS || at < now - MAX_AGE_MS) throw refuse.occurredAt();
  return new Date(at);
}

/** The event's status (ok by default); an error code only comes with an error. */
export function checkStatus(event: { status?: 'ok' | 'error' | undefined; error_code?: string | undefined }): 'ok' | 'error' {
  const status = event.status ?? 'ok';
  if (event.error_code !== undefined && status !== 'error') throw refuse.errorCode();
  return status;
}

/** An event of a type that takes a subject names one of its type; the others name none. */
export function checkSubject(event: ActivityEventInput['event']): void {
  const rule = EVENT_RULES[event.type];
  if (rule.subject === 'none' && event.subject !== undefined) throw refuse.subjectNotAllowed(event.type);
  if (rule.subject !== 'none' && event.subject?.type !== rule.subject) throw refuse.subjectRequired(event.type, rule.subject);
}

/** A tool name only comes with tool_used. */
export function checkToolName(event: HookEventInput['event']): void {
  if (event.tool_name !== undefined && event.type !== 'tool_used') throw refuse.toolName();
}

export function requireCapability(
  installation: { readonly capabilities: readonly Capability[] },
  capability: Capability,
  what: ReasonFacts['capability_not_reported']['what'],
): void {
  if (!installation.capabilities.includes(capability)) throw refuse.capability(what, capability);
}
