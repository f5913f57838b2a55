import { auditGroup } from '../../kernel/audit/audit-log.ts';
import { z } from 'zod';
import { createDraft, listDrafts, readDraft } from '../context/drafts.ts';
import { createSkill, listSkills, publishSkill, readSkill, writeSkill } from '../context/skills.ts';
import { defineTool, jsonReply } from '../../mcp/tool.ts';
import {
  IDEMPOTENT_WRITE,
  READ,
  WRITE,
  attachmentsInput,
  draftFields,
  isoDate,
  listItemFields,
  manifestEntry,
  readFields,
  versionSelector,
} from './schemas.ts';
import { checkAttachmentPaths } from '../context/skill-package.ts';
import type { PublishResult } from '../versions/publish.ts';
import type { CreateSkillInput, SkillItem, SkillVersion, WriteSkillResult } from '../context/skills.ts';
import { draftWire } from './drafts.ts';
import { ATTACHMENT_FORMAT, listItemWire, manifestWire, readWire } from './wire.ts';

const skillItem = z.object({ id: z.string(), name: z.string(), directory_name: z.string(), description: z.string(), ...listItemFields });

// A Skill's name is also its package's directory name.
const skillItemWire = (s: SkillItem) => ({ id: s.id, name: s.name, directory_name: s.name, description: s.description, ...listItemWire(s) });

function skillWire(s: SkillVersion) {
  return {
    skill_id: s.id,
    name: s.name,
    directory_name: s.name,
    description: s.description,
    ...readWire(s),
    skill_md: s.skillMd,
    attachment_format: ATTACHMENT_FORMAT,
    attachments: manifestWire(s.attachments),
  };
}

const publishWire = (r: PublishResult) => ({ skill_id: r.id, name: r.name, version_id: r.versionId, version: r.version, published: r.published });

export const listSkillsTool = defineTool({
  name: 'list_skills',
  dialect: 'alignbase',
  title: 'List Skills',
  description:
    'Lists Skills on which the calling agent has Viewer or higher. For local update checks, compare the installed metadata.alignbase-version-id to published_version_id for published installs, or latest_version_id for draft installs.',
  input: z.object({}).strict(),
  output: z.object({ skills: z.array(skillItem) }),
  annotations: READ,
  scopes: ['context.read'],
  async run({ caller, services, audit }) {
    const skills = await listSkills(services.db, caller);
    audit.touch(
      ...auditGroup(
        'skill',
        skills.map((s) => ({ id: s.id, version: s.latestVersion })),
      ),
    );
    return jsonReply({ skills: skills.map(skillItemWire) });
  },
});

export const readSkillTool = defineTool({
  name: 'read_skill',
  dialect: 'alignbase',
  title: 'Read Skill',
  description:
    'Reads one full Skill package version: skill_md and the attachment manifest (fetch each file with read_context_attachment). version: omitted or "latest", "published", or an exact version number. To install locally, prefer "published", write skill_md as SKILL.md under directory_name, and record install_metadata in the SKILL.md frontmatter metadata map.',
  input: z.object({ skill_id: z.string(), version: versionSelector.describe('latest, published, or a positive version number') }).strict(),
  output: z.object({
    skill_id: z.string(),
    name: z.string(),
    directory_name: z.string(),
    description: z.string(),
    ...readFields,
    skill_md: z.string(),
    attachment_format: z.literal('v1'),
    attachments: z.array(manifestEntry),
    install_metadata: z
      .object({
        'alignbase-origin': z.string(),
        'alignbase-skill-id': z.string(),
        'alignbase-channel': z.enum(['published', 'draft']),
        'alignbase-version': z.string(),
        'alignbase-version-id': z.string(),
      })
      .describe('The metadata.alignbase-* keys to record in the installed SKILL.md frontmatter.'),
  }),
  annotations: READ,
  scopes: ['context.read'],
  async run({ caller, services, audit }, args) {
    const skill = await readSkill(services, caller, { skillId: args.skill_id, version: args.version }, audit);
    return jsonReply({ ...skillWire(skill), install_metadata: installMetadata(`${services.config.publicUrl}/alignbase/mcp`, skill) });
  },
});

const packageInput = {
  skill_md: z.string().describe('The complete SKILL.md, starting with YAML frontmatter (name, description).'),
  attachments: attachmentsInput.optional(),
  review_by: isoDate.optional(),
  expires_at: isoDate.optional(),
};

/** The package fields create_skill and write_skill take, as the core names them. */
const packageOf = (args: z.infer<z.ZodObject<typeof packageInput>>): CreateSkillInput => ({
  skillMd: args.skill_md,
  attachments: args.attachments,
  reviewBy: args.review_by,
  expiresAt: args.expires_at,
});

/** A package's paths are refused in the package error's words before the gateway's own check of the text. */
const checkPackagePaths = (args: { attachments?: readonly unknown[] | undefined }) => checkAttachmentPaths(args.attachments, 'skill');

/** The saved version create_skill and write_skill answer with, before their own created or updated. */
const savedFields = {
  skill_id: z.string(),
  name: z.string(),
  directory_name: z.string(),
  version_id: z.string(),
  version: z.number().int(),
};

const savedWire = (r: Pick<WriteSkillResult, 'id' | 'name' | 'versionId' | 'version'>) => ({
  skill_id: r.id,
  name: r.name,
  directory_name: r.name,
  version_id: r.versionId,
  version: r.version,
});

export const createSkillTool = defineTool({
  name: 'create_skill',
  dialect: 'alignbase',
  title: 'Create Skill',
  description:
    'Creates a new Skill package from skill_md and optional attachments (path and data_base64; media types are detected from the bytes). Use it only when the user asks to add a Skill. New Skills are saved as latest versions and are not published until publish_skill succeeds.',
  input: z.object(packageInput).strict(),
  output: z.object({ ...savedFields, created: z.boolean() }),
  annotations: WRITE,
  scopes: ['context.write'],
  checkFirst: checkPackagePaths,
  async run({ caller, services, audit }, args) {
    const created = await createSkill(services, caller, packageOf(args), audit);
    return jsonReply({ ...savedWire(created), created: created.created });
  },
});

export const writeSkillTool = defineTool({
  name: 'write_skill',
  dialect: 'alignbase',
  title: 'Write Skill',
  description:
    'Replaces the full package of an existing Skill. Not a patch tool: send the complete SKILL.md; omit attachments to keep them, pass [] to clear them, or send the complete replacement set. expected_version is the latest version; a stale one fails with a version conflict.',
  input: z.object({ skill_id: z.string(), expected_version: z.number(), ...packageInput }).strict(),
  output: z.object({ ...savedFields, updated: z.boolean() }),
  annotations: WRITE,
  scopes: ['context.write'],
  checkFirst: checkPackagePaths,
  async run({ caller, services, audit }, args) {
    const written = await writeSkill(services, caller, { skillId: args.skill_id, expectedVersion: args.expected_version, ...packageOf(args) }, audit);
    return jsonReply({ ...savedWire(written), updated: written.updated });
  },
});

export const publishSkillTool = defineTool({
  name: 'publish_skill',
  dialect: 'alignbase',
  title: 'Publish Skill',
  description: 'Publishes a saved Skill version (omitted or "latest", or an exact version number). published: false means that version was already published.',
  input: z.object({ skill_id: z.string(), version: versionSelector.describe('latest or a positive version number') }).strict(),
  output: z.object({ skill_id: z.string(), name: z.string(), version_id: z.string(), version: z.number().int(), published: z.boolean() }),
  annotations: IDEMPOTENT_WRITE,
  scopes: ['context.write'],
  async run({ caller, services, audit }, args) {
    return jsonReply(publishWire(await publishSkill(services.db, caller, { skillId: args.skill_id, version: args.version }, audit)));
  },
});

export const createSkillDraftTool = defineTool({
  name: 'create_skill_draft',
  dialect: 'alignbase',
  title: 'Create Skill draft',
  description:
    'Proposes a draft SKILL.md replacement for one Skill on top of base_version. Skill drafts do not include package files and do not create saved versions; skill_md must pass the same frontmatter validation as write_skill.',
  input: z.object({ skill_id: z.string(), base_version: z.number(), skill_md: z.string(), rationale: z.string().optional() }).strict(),
  output: z.object({ draft_id: z.string(), skill_id: z.string(), base_version: z.number().int(), created: z.boolean() }),
  annotations: WRITE,
  scopes: ['context.write'],
  async run({ caller, services, audit }, args) {
    const draft = await createDraft(
      services.db,
      caller,
      'skill',
      { resourceId: args.skill_id, baseVersion: args.base_version, content: args.skill_md, rationale: args.rationale },
      audit,
    );
    return jsonReply({ draft_id: draft.draftId, skill_id: draft.resourceId, base_version: draft.baseVersion, created: draft.created });
  },
});

export const listSkillDraftsTool = defineTool({
  name: 'list_skill_drafts',
  dialect: 'alignbase',
  title: 'List Skill drafts',
  description: 'Lists the open drafts of one Skill (Viewer or higher), oldest first.',
  input: z.object({ skill_id: z.string() }).strict(),
  output: z.object({ drafts: z.array(z.object({ ...draftFields, skill_id: z.string() })) }),
  annotations: READ,
  scopes: ['context.read'],
  async run({ caller, services }, args) {
    const drafts = await listDrafts(services.db, caller, 'skill', args.skill_id);
    return jsonReply({ drafts: drafts.map((d) => ({ ...draftWire(d), skill_id: d.resourceId })) });
  },
});

export const readSkillDraftTool = defineTool({
  name: 'read_skill_draft',
  dialect: 'alignbase',
  title: 'Read Skill draft',
  description:
    'Reads one open Skill draft. Draft authors can read their own open drafts; agents with publish access on the Skill can read open drafts for review.',
  input: z.object({ draft_id: z.string() }).strict(),
  output: z.object({ ...draftFields, skill_id: z.string(), skill_md: z.string() }),
  annotations: READ,
  scopes: ['context.read'],
  async run({ caller, services, audit }, args) {
    const draft = await readDraft(services.db, caller, 'skill', args.draft_id, audit);
    return jsonReply({ ...draftWire(draft), skill_id: draft.resourceId, skill_md: draft.content });
  },
});

/** The metadata.alignbase-* keys a local install records (docs/alignbase.md, "Installing a Skill"). */
function installMetadata(origin: string, skill: Pick<SkillVersion, 'id' | 'version' | 'versionId' | 'isPublishedVersion'>) {
  return {
    'alignbase-origin': origin,
    'alignbase-skill-id': skill.id,
    // A published install tracks published_version_id, a draft install latest_version_id.
    'alignbase-channel': skill.isPublishedVersion ? ('published' as const) : ('draft' as const),
    'alignbase-version': String(skill.version),
    'alignbase-version-id': skill.versionId,
  };
}
