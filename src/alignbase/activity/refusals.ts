import type { ReasonFacts } from '../../kernel/errors.ts';
import { refusal } from '../../kernel/errors.ts';
import type { Capability, SubjectType } from './vocabulary.ts';
import { MAX_INSTALLATIONS_PER_AGENT } from './vocabulary.ts';
import type { Subject } from '../versions/refusals.ts';

/** The reasons of Activity, merged into the kernel's ReasonFacts below. */
export interface ActivityReasonFacts {
  installation_not_found: Record<string, never>;
  activity_disabled: Record<string, never>;
  /** `what` needs a capability the installation did not report: an event type or a hook. */
  capability_not_reported: { what: { event: string } | { hook: string } | { hookEvent: string }; capability: string };
  invalid_occurred_at: Record<string, never>;
  subject_required: { eventType: string; subject: Subject };
  subject_not_allowed: { eventType: string };
  error_code_without_error: Record<string, never>;
  tool_name_not_allowed: Record<string, never>;
  installation_limit: { max: number };
}

// The kernel's ReasonFacts gains these reasons, so a KgwError carries them as one `Reason`.
declare module '../../kernel/errors.ts' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface ReasonFacts extends ActivityReasonFacts {}
}

/** The refusals of Activity, each with its machine reason; the messages are plain English. */
export const refuse = {
  installationNotFound: () =>
    refusal('not_found', 'installation_not_found', {}, 'installation not found: register the installation first and use the id it returns'),
  disabled: () => refusal('permission_denied', 'activity_disabled', {}, 'Activity is disabled for this tenant; nothing was recorded'),
  capability: (what: ReasonFacts['capability_not_reported']['what'], capability: Capability) =>
    refusal('permission_denied', 'capability_not_reported', { what, capability }, `the installation did not report the "${capability}" capability this needs`),
  occurredAt: () => refusal('validation', 'invalid_occurred_at', {}, 'occurred_at must be within the last 7 days and at most 5 minutes in the future'),
  subjectRequired: (eventType: string, subject: SubjectType) =>
    refusal('validation', 'subject_required', { eventType, subject }, `event type "${eventType}" needs a subject of type ${subject}`),
  subjectNotAllowed: (eventType: string) => refusal('validation', 'subject_not_allowed', { eventType }, `event type "${eventType}" takes no subject`),
  errorCode: () => refusal('validation', 'error_code_without_error', {}, 'error_code is only allowed with status "error"'),
  toolName: () => refusal('validation', 'tool_name_not_allowed', {}, 'tool_name is only allowed for tool_used'),
  tooManyInstallations: () =>
    refusal(
      'conflict',
      'installation_limit',
      { max: MAX_INSTALLATIONS_PER_AGENT },
      `an agent may have at most ${MAX_INSTALLATIONS_PER_AGENT} installations; reuse an installation id`,
    ),
};
