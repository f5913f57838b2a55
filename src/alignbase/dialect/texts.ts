import type { ActivityReasonFacts } from '../activity/refusals.ts';
import type { MessageReasonFacts } from '../messages/refusals.ts';
import type { PackageKind, Subject, VersionReasonFacts } from '../versions/refusals.ts';
import type { KernelReason, ReasonFacts } from '../../kernel/errors.ts';

/**
 * Every refusal of the Alignbase dialect in its spec's words: the "Common Errors" table word for
 * word, and the gateway's own texts where the spec is silent (docs/alignbase.md). The core
 * refuses by reason and facts; this table words each reason.
 */

const ID_FIELD: Readonly<Record<Subject | 'draft', string>> = {
  knowledge: 'knowledge_id',
  skill: 'skill_id',
  memory: 'memory_id',
  artifact: 'artifact_id',
  draft: 'draft_id',
};

const NOT_FOUND: Readonly<Record<Subject | 'draft' | 'attachment', string>> = {
  knowledge: 'Knowledge not found',
  skill: 'skill not found',
  memory: 'Memory not found',
  artifact: 'Artifact not found',
  draft: 'draft not found',
  attachment: 'attachment not found',
};

/** How a resource is named inside a sentence ("read the Knowledge again"). */
const NAMED: Readonly<Record<Subject, string>> = { knowledge: 'Knowledge', skill: 'skill', memory: 'Memory', artifact: 'Artifact' };

export const PACKAGE_PREFIX: Readonly<Record<PackageKind, string>> = {
  skill: 'invalid skill package: ',
  attachments: 'invalid attachments: ',
  artifact: 'invalid artifact package: ',
};

const SELECTOR: Readonly<Record<ReasonFacts['invalid_selector']['accepts'], string>> = {
  latest_published_exact: 'version must be latest, published, or a positive version number',
  latest_exact: 'version must be latest or a positive version number',
  exact: 'version must be an exact positive version number',
};

const CONTENT_TOO_LARGE: Readonly<Record<Subject, string>> = {
  knowledge: 'Knowledge content must be 1 MB or smaller',
  skill: 'SKILL.md cannot exceed 1 MiB',
  memory: 'Memory content must be 25 KB or smaller',
  artifact: 'markdown cannot exceed 1 MiB',
};

const capabilityWhat = (what: ReasonFacts['capability_not_reported']['what']): string =>
  'event' in what ? `event type "${what.event}"` : 'hook' in what ? `the ${what.hook} hook` : `hook event "${what.hookEvent}"`;

/**
 * The reasons Alignbase tools can meet: its own (versioned content, messages, Activity) and the
 * kernel's. Those another product adds (Atmina's Knowledge Bases, Company Brain) have no
 * Alignbase words: alignbaseText shows their message.
 */
export type AlignbaseReason = keyof VersionReasonFacts | keyof MessageReasonFacts | keyof ActivityReasonFacts | KernelReason;

export const TEXTS: { readonly [R in AlignbaseReason]: (facts: ReasonFacts[R]) => string } = {
  invalid_id: ({ type }) => `invalid ${ID_FIELD[type]}`,
  not_found: ({ type }) => NOT_FOUND[type],
  no_published_version: ({ type }) => `this ${NAMED[type]} has no published version`,
  version_not_found: ({ type }) => `${NAMED[type]} version not found`,
  version_conflict: ({ type }) =>
    type === 'memory'
      ? 'memory_changed: read Memory again, preserve relevant changes, and retry'
      : `version conflict: read the ${NAMED[type]} again before writing`,
  forbidden: ({ type }) => (type === 'memory' ? 'memory_write_forbidden: the agent lacks Editor permission on this Memory; keep it read-only' : 'forbidden'),
  invalid_selector: ({ accepts }) => SELECTOR[accepts],
  invalid_date: ({ field }) => `${field} must use YYYY-MM-DD format`,
  dates_out_of_order: () => 'expires_at cannot be before review_by',
  invalid_expected_version: ({ create }) => (create ? 'expected_version must be 0 for create or positive for write' : 'expected_version must be positive'),
  id_required: ({ type }) => `${ID_FIELD[type]} is required when expected_version is greater than 0`,
  id_omitted: ({ type }) => `${ID_FIELD[type]} must be omitted when expected_version is 0`,
  title_required: () => 'title required',
  title_too_long: () => 'title too long',
  name_required: () => 'name required',
  name_too_long: () => 'name too long',
  content_required: ({ type }) => (type === 'artifact' ? 'markdown is required' : 'content is required'),
  content_too_large: ({ type }) => CONTENT_TOO_LARGE[type],
  invalid_package: (facts) => `${PACKAGE_PREFIX[facts.package]}${facts.problem}`,
  invalid_base_version: () => 'base_version must be positive',
  text_too_long: ({ field, max }) => `${field} cannot exceed ${max} characters`,
  invalid_context_type: () => 'context_type must be knowledge, skill, or artifact',
  invalid_offset: ({ size }) => (size === undefined ? 'offset must be a non-negative integer' : `offset must not exceed the attachment size (${size})`),
  context_too_large: ({ bytes }) => `current context exceeds the 8 MiB limit (${bytes} bytes); route fewer Skills or Memories to this agent, or shorten them`,
  recipients_count: ({ max }) => `recipients must list 1 to ${max} agents or Groups`,
  recipient_type: () => 'recipient type must be agent or group',
  invalid_recipient_id: () => 'invalid recipient id',
  recipient_twice: () => 'each recipient may be listed only once',
  send_to_self: () => 'an agent cannot send context to itself',
  empty_message: () => 'send a message, Artifacts, or both',
  message_too_long: ({ max }) => `message cannot exceed ${max.toLocaleString('en-US')} characters`,
  artifacts_count: ({ max }) => `at most ${max} Artifacts per message`,
  artifact_twice: () => 'each Artifact may be listed only once',
  invalid_access: () => 'access must be viewer or editor',
  invalid_idempotency_key: () => 'idempotency_key must be a UUID',
  idempotency_key_reused: () => 'idempotency_key was already used with different input',
  invalid_inbox_offset: () => 'offset must be a whole number of 0 or more',
  offset_without_include_read: () => 'offset is only used with include_read: true',
  recipient_not_found: ({ recipientType, id }) => `recipient not found: ${recipientType} ${id}`,
  group_without_agents: ({ name }) => `Group "${name}" has no other agents to receive the message`,
  installation_not_found: () => 'installation not found: call report_installation_capabilities and use the local_installation_id it returns',
  activity_disabled: () => 'activity_disabled: Activity is disabled for this tenant; nothing was recorded',
  capability_not_reported: ({ what, capability }) =>
    `capability_not_reported: ${capabilityWhat(what)} needs the "${capability}" capability; report it with report_installation_capabilities first`,
  invalid_occurred_at: () => 'occurred_at must be within the last 7 days and at most 5 minutes in the future',
  subject_required: ({ eventType, subject }) => `event type "${eventType}" needs a subject of type ${subject}`,
  subject_not_allowed: ({ eventType }) => `event type "${eventType}" takes no subject`,
  error_code_without_error: () => 'error_code is only allowed with status "error"',
  tool_name_not_allowed: () => 'tool_name is only allowed for tool_used',
  installation_limit: ({ max }) => `installation_limit: an agent may have at most ${max} installations; reuse a local_installation_id`,
  // No Alignbase tool reads a projection today; worded for the day one does.
  backend_unavailable: ({ role }) => `unavailable: the ${role === 'search' ? 'search engine' : 'graph store'} did not answer; try again shortly`,
};
