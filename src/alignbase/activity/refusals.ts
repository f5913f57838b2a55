import type { ReasonFacts } from '../../kernel/errors.ts';
import { refusal } from '../../kernel/errors.ts';
import type { Capability, SubjectType } from './vocabulary.ts';
import { MAX_INSTALLATIONS_PER_AGENT } from './vocabulary.ts';

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
