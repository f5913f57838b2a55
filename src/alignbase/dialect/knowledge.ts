import { auditGroup } from '../../kernel/audit/audit-log.ts';
import { z } from 'zod';
import { createDraft, listDrafts, proposeKnowledge, readDraft } from '../context/drafts.ts';
import { listKnowledge, publishKnowledge, readKnowledge, writeKnowledge } from '../context/knowledge.ts';
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
import { checkAttachmentPaths } from '../context/skill-package.ts';
import type { PublishResult } from '../versions/publish.ts';
import type { KnowledgeItem, KnowledgeVersion, WriteKnowledgeResult } from '../context/knowledge.ts';
import { draftWire } from './drafts.ts';
import { ATTACHMENT_FORMAT, listItemWire, manifestWire, readWire } from './wire.ts';

const knowledgeItem = z.object({ knowledge_id: z.string(), title: z.string(), ...listItemFields });

const knowledgeItemWire = (k: KnowledgeItem) => ({ knowledge_id: k.id, title: k.title, ...listItemWire(k) });

function knowledgeWire(k: KnowledgeVersion) {
  return {
    knowledge_id: k.id,
    title: k.title,
    ...readWire(k),
    content: k.content,
    authority: k.authority,
    // Knowledge from an accepted proposal may carry files; read them with read_context_attachment.
    attachment_format: ATTACHMENT_FORMAT,
    attachments: manifestWire(k.attachments),
  };
}

const writeWire = (r: WriteKnowledgeResult) => ({
  knowledge_id: r.id,
  title: r.title,
  version_id: r.versionId,
  version: r.version,
  updated: r.updated,
  published: r.published,
  created: r.created,
});

const publishWire = (r: PublishResult) => ({ knowledge_id: r.id, title: r.name, version_id: r.versionId, version: r.version, published: r.published });

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
    audit.touch(
      ...auditGroup(
        'knowledge',
        knowledge.map((k) => ({ id: k.id, version: k.latestVersion })),
      ),
    );
    return jsonReply({ knowledge: knowledge.map(knowledgeItemWire) });
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
    return jsonReply(knowledgeWire(await readKnowledge(services.db, caller, { knowledgeId: args.knowledge_id, version: args.version }, audit)));
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
    const written = await writeKnowledge(
      services.db,
      caller,
      {
        knowledgeId: args.knowledge_id,
        expectedVersion: args.expected_version,
        title: args.title,
        content: args.content,
        authority: args.authority,
        publish: args.publish,
        reviewBy: args.review_by,
        expiresAt: args.expires_at,
      },
      audit,
    );
    return jsonReply(writeWire(written));
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
    return jsonReply(publishWire(await publishKnowledge(services.db, caller, { knowledgeId: args.knowledge_id, version: args.version }, audit)));
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
      { resourceId: args.knowledge_id, baseVersion: args.base_version, content: args.content, rationale: args.rationale },
      audit,
    );
    return jsonReply({ draft_id: draft.draftId, knowledge_id: draft.resourceId, base_version: draft.baseVersion, created: draft.created });
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
    const proposal = await proposeKnowledge(services, caller, args, audit);
    return jsonReply({ proposal_id: proposal.proposalId, title: proposal.title, status: proposal.status, created: proposal.created });
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
    return jsonReply({ drafts: drafts.map((d) => ({ ...draftWire(d), knowledge_id: d.resourceId })) });
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
    const draft = await readDraft(services.db, caller, 'knowledge', args.draft_id, audit);
    return jsonReply({ ...draftWire(draft), content: draft.content, knowledge_id: draft.resourceId });
  },
});
