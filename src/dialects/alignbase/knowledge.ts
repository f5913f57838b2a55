import { z } from 'zod';
import { createDraft, listDrafts, proposeKnowledge, readDraft } from '../../core/context/drafts.ts';
import { listKnowledge, publishKnowledge, readKnowledge, writeKnowledge } from '../../core/context/knowledge.ts';
import { defineTool, jsonReply } from '../../mcp/tool.ts';
import {
  IDEMPOTENT_WRITE,
  READ,
  WRITE,
  attachmentsInput,
  authority,
  draftFields,
  isoDate,
  listItemFields,
  manifestEntry,
  readFields,
  versionSelector,
} from './schemas.ts';
import { checkAttachmentPaths } from '../../core/context/skill-package.ts';

const knowledgeItem = z.object({ knowledge_id: z.string(), title: z.string(), ...listItemFields });

export const listKnowledgeTool = defineTool({
  name: 'list_knowledge',
  dialect: 'alignbase',
  title: 'List Knowledge',
  description:
    'Lists Knowledge on which the calling agent has Viewer or higher, with its latest and published versions, freshness and what this connection may do (can_read, can_draft, can_edit, can_publish). Use it before reading, editing, or publishing when you do not already have a knowledge_id.',
  input: z.object({}).strict(),
  output: z.object({ knowledge: z.array(knowledgeItem) }),
  annotations: READ,
  scopes: ['context.read'],
  async run({ caller, services, audit }) {
    const knowledge = await listKnowledge(services.db, caller);
    audit.touch(...knowledge.map((k) => ({ type: 'knowledge', id: k.knowledge_id, version: k.latest_version, version_id: k.latest_version_id })));
    return jsonReply({ knowledge });
  },
});

export const readKnowledgeTool = defineTool({
  name: 'read_knowledge',
  dialect: 'alignbase',
  title: 'Read Knowledge',
  description:
    'Reads one full Knowledge version. version: omitted or "latest" (latest saved), "published" (the version get_current_context delivers), or an exact positive version number. Before editing, read with version "latest" and pass the returned version as expected_version to write_knowledge.',
  input: z.object({ knowledge_id: z.string(), version: versionSelector.describe('latest, published, or a positive version number') }).strict(),
  output: z.object({
    knowledge_id: z.string(),
    title: z.string(),
    ...readFields,
    content: z.string(),
    authority,
    attachment_format: z.literal('v1'),
    attachments: z.array(manifestEntry),
  }),
  annotations: READ,
  scopes: ['context.read'],
  async run({ caller, services, audit }, args) {
    return jsonReply(await readKnowledge(services.db, caller, args, audit));
  },
});

export const writeKnowledgeTool = defineTool({
  name: 'write_knowledge',
  dialect: 'alignbase',
  title: 'Write Knowledge',
  description:
    'Creates a new Knowledge (expected_version 0, title and content, no knowledge_id) or replaces the full content of an existing one (knowledge_id and its latest version as expected_version). Not a patch tool: send the complete markdown. A stale expected_version fails with a version conflict; unchanged content and authority return updated: false. Set publish: true only when the user wants the version published immediately.',
  input: z
    .object({
      knowledge_id: z.string().optional(),
      expected_version: z.number().describe('0 to create, or the latest version to replace'),
      title: z.string().optional().describe('Required when expected_version is 0.'),
      content: z.string(),
      authority: authority.optional().describe('New Knowledge defaults to informational; omitted on updates keeps the existing value.'),
      publish: z.boolean().optional(),
      review_by: isoDate.optional().describe('YYYY-MM-DD; only used when creating.'),
      expires_at: isoDate.optional().describe('YYYY-MM-DD; only used when creating.'),
    })
    .strict(),
  output: z.object({
    knowledge_id: z.string(),
    title: z.string(),
    version_id: z.string(),
    version: z.number().int(),
    updated: z.boolean(),
    published: z.boolean(),
    created: z.boolean(),
  }),
  annotations: WRITE,
  scopes: ['context.write'],
  async run({ caller, services, audit }, args) {
    return jsonReply({ ...(await writeKnowledge(services.db, caller, args, audit)) });
  },
});

export const publishKnowledgeTool = defineTool({
  name: 'publish_knowledge',
  dialect: 'alignbase',
  title: 'Publish Knowledge',
  description:
    'Publishes a saved Knowledge version (omitted or "latest", or an exact version number). Agents receive it through get_current_context when it is active and has an Always route. published: false means that version was already published.',
  input: z.object({ knowledge_id: z.string(), version: versionSelector.describe('latest or a positive version number') }).strict(),
  output: z.object({ knowledge_id: z.string(), title: z.string(), version_id: z.string(), version: z.number().int(), published: z.boolean() }),
  annotations: IDEMPOTENT_WRITE,
  scopes: ['context.write'],
  async run({ caller, services, audit }, args) {
    return jsonReply(await publishKnowledge(services.db, caller, args, audit));
  },
});

export const createKnowledgeDraftTool = defineTool({
  name: 'create_knowledge_draft',
  dialect: 'alignbase',
  title: 'Create Knowledge draft',
  description:
    'Proposes a draft replacement for one Knowledge: the full proposed content on top of base_version (from read_knowledge or list_knowledge). Drafts do not create saved versions and are not distributed by get_current_context; a reviewer accepts or rejects them.',
  input: z.object({ knowledge_id: z.string(), base_version: z.number(), content: z.string(), rationale: z.string().optional() }).strict(),
  output: z.object({ draft_id: z.string(), knowledge_id: z.string(), base_version: z.number().int(), created: z.boolean() }),
  annotations: WRITE,
  scopes: ['context.write'],
  async run({ caller, services, audit }, args) {
    const draft = await createDraft(
      services.db,
      caller,
      'knowledge',
      { id: args.knowledge_id, base_version: args.base_version, content: args.content, rationale: args.rationale },
      audit,
    );
    return jsonReply({ draft_id: draft.draft_id, knowledge_id: draft.id, base_version: draft.base_version, created: draft.created });
  },
});

export const proposeKnowledgeTool = defineTool({
  name: 'propose_knowledge',
  dialect: 'alignbase',
  title: 'Propose Knowledge',
  description:
    'Proposes brand-new Knowledge for human review: a title, full markdown content, an optional rationale, authority and optional v1 attachments. Creates no saved or published Knowledge until a person accepts the proposal. Returns a proposal_id.',
  input: z
    .object({
      title: z.string(),
      content: z.string(),
      rationale: z.string().optional(),
      authority: authority.optional(),
      attachments: attachmentsInput.optional(),
    })
    .strict(),
  output: z.object({ proposal_id: z.string(), title: z.string(), status: z.literal('open'), created: z.boolean() }),
  annotations: WRITE,
  scopes: ['context.write'],
  checkFirst: (args) => checkAttachmentPaths(args.attachments, 'attachments'),
  async run({ caller, services, audit }, args) {
    return jsonReply(await proposeKnowledge(services, caller, args, audit));
  },
});

export const listKnowledgeDraftsTool = defineTool({
  name: 'list_knowledge_drafts',
  dialect: 'alignbase',
  title: 'List Knowledge drafts',
  description:
    'Lists the open drafts of one Knowledge (Viewer or higher), oldest first, with is_stale when the Knowledge has moved past the draft’s base version.',
  input: z.object({ knowledge_id: z.string() }).strict(),
  output: z.object({ drafts: z.array(z.object({ ...draftFields, knowledge_id: z.string() })) }),
  annotations: READ,
  scopes: ['context.read'],
  async run({ caller, services }, args) {
    const drafts = await listDrafts(services.db, caller, 'knowledge', args.knowledge_id);
    return jsonReply({ drafts: drafts.map(({ id, ...rest }) => ({ ...rest, knowledge_id: id })) });
  },
});

export const readKnowledgeDraftTool = defineTool({
  name: 'read_knowledge_draft',
  dialect: 'alignbase',
  title: 'Read Knowledge draft',
  description:
    'Reads one open Knowledge draft. Draft authors can read their own open drafts; agents with publish access on the Knowledge can read open drafts for review.',
  input: z.object({ draft_id: z.string() }).strict(),
  output: z.object({ ...draftFields, knowledge_id: z.string(), content: z.string() }),
  annotations: READ,
  scopes: ['context.read'],
  async run({ caller, services, audit }, args) {
    const { id, ...draft } = await readDraft(services.db, caller, 'knowledge', args.draft_id, audit);
    return jsonReply({ ...draft, knowledge_id: id });
  },
});
