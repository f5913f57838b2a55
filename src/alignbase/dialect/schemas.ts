import { importedFromField } from '../../mcp/imported-from.ts';
import { z } from 'zod';

/**
 * Pieces the Alignbase tool schemas share. Inputs are deliberately permissive where the spec
 * names the error text (ids, version selectors, dates, expected_version): the core checks them
 * and answers in the spec's words, instead of a generic schema error.
 */

export const versionSelector = z.union([z.string(), z.number()]).optional();
export const isoDate = z.string().describe('YYYY-MM-DD');
export const authority = z.enum(['informational', 'must_follow']);
export const attachmentsInput = z
  .array(z.object({ path: z.string().describe('Relative path in the package.'), data_base64: z.string().describe('The file, base64 encoded.') }).strict())
  .describe('Package files other than SKILL.md.');

const nullableString = z.string().nullable();

export const capabilityFields = {
  can_read: z.boolean(),
  can_draft: z.boolean().describe('True only when the connection can write and the agent has Proposer or higher.'),
  can_edit: z.boolean().describe('True only when the connection can write and the agent has Editor or higher.'),
  can_publish: z.boolean().describe('True only when the connection can write and the agent has Publisher or higher.'),
};

const freshnessFields = {
  review_by: nullableString,
  expires_at: nullableString,
  status: z.enum(['live', 'expired']),
  publication_status: z.enum(['unpublished', 'published', 'unpublished_changes']),
};

export const listItemFields = {
  current_version_id: z.string(),
  current_version: z.number().int(),
  latest_version_id: z.string(),
  latest_version: z.number().int(),
  published_version_id: nullableString,
  published_version: z.number().int().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  current_version_created_at: z.string(),
  latest_version_created_at: z.string(),
  published_version_created_at: nullableString,
  ...freshnessFields,
  has_unpublished_changes: z.boolean(),
  ...capabilityFields,
};

export const readFields = {
  version_id: z.string(),
  version: z.number().int(),
  latest_version: z.number().int(),
  published_version: z.number().int().nullable(),
  is_published_version: z.boolean(),
  has_unpublished_changes: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
  version_created_at: z.string(),
  ...freshnessFields,
  ...capabilityFields,
  ...importedFromField,
};

export const draftFields = {
  draft_id: z.string(),
  base_version: z.number().int(),
  current_version: z.number().int(),
  is_stale: z.boolean(),
  author_name: nullableString,
  author_email: nullableString,
  agent_name: nullableString,
  rationale: nullableString,
  created_at: z.string(),
  created_by_this_agent: z.boolean(),
  ...importedFromField,
};

export const manifestEntry = z.object({
  path: z.string(),
  media_type: z.string(),
  size: z.number().int(),
  digest_encoding: z.enum(['text', 'binary']),
});

export const READ = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;
export const WRITE = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false } as const;
export const IDEMPOTENT_WRITE = { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;
