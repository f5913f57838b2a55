import { auditGroup } from '../../kernel/audit/audit-log.ts';
import { importedFromField, importedFromWire } from '../../mcp/imported-from.ts';
import { z } from 'zod';
import { listArtifacts, readArtifact, writeArtifact } from '../context/artifacts.ts';
import { defineTool, jsonReply } from '../../mcp/tool.ts';
import { READ, WRITE, attachmentsInput, manifestEntry } from './schemas.ts';
import { checkAttachmentPaths } from '../context/skill-package.ts';
import type { ArtifactVersion } from '../context/artifacts.ts';
import { iso } from '../../kernel/instants.ts';
import { ATTACHMENT_FORMAT, manifestWire } from './wire.ts';

function artifactWire(a: ArtifactVersion) {
  const p = a.provenance;
  return {
    artifact_id: a.id,
    name: a.name,
    version_id: a.versionId,
    version: a.version,
    latest_version: a.latestVersion,
    markdown: a.markdown,
    attachment_format: ATTACHMENT_FORMAT,
    attachments: manifestWire(a.attachments),
    package_digest: a.digest,
    source_task: a.sourceTask ?? null,
    provenance:
      p === undefined
        ? null
        : { agent_name: p.agentName ?? null, author_name: p.authorName ?? null, author_email: p.authorEmail ?? null, saved_at: iso(p.savedAt) },
    created_at: iso(a.createdAt),
    updated_at: iso(a.updatedAt),
    version_created_at: iso(a.versionCreatedAt),
    can_edit: a.canEdit,
    ...importedFromWire(a.importedFrom),
  };
}

export const listArtifactsTool = defineTool({
  name: 'list_artifacts',
  dialect: 'alignbase',
  title: 'List Artifacts',
  description: 'Lists the Artifacts this agent may read (Viewer or higher), with each Artifact ID, name, and current version.',
  input: z.object({}).strict(),
  output: z.object({
    artifacts: z.array(
      z.object({
        artifact_id: z.string(),
        name: z.string(),
        current_version: z.number().int(),
        current_version_id: z.string(),
        package_digest: z.string().nullable(),
        updated_at: z.string(),
        can_edit: z.boolean(),
      }),
    ),
  }),
  annotations: READ,
  scopes: ['context.read'],
  async run({ caller, services, audit }) {
    const artifacts = await listArtifacts(services.db, caller);
    audit.touch(...auditGroup('artifact', artifacts));
    return jsonReply({
      artifacts: artifacts.map((a) => ({
        artifact_id: a.id,
        name: a.name,
        current_version: a.version,
        current_version_id: a.versionId,
        package_digest: a.digest ?? null,
        updated_at: iso(a.updatedAt),
        can_edit: a.canEdit,
      })),
    });
  },
});

export const readArtifactTool = defineTool({
  name: 'read_artifact',
  dialect: 'alignbase',
  title: 'Read Artifact',
  description:
    'Reads one Artifact package: Markdown, file manifest, version ID, package digest and provenance when present. version: omitted or "latest", or a positive version number (Artifacts have no published selector). Fetch files with read_context_attachment (context_type "artifact").',
  input: z.object({ artifact_id: z.string(), version: z.union([z.string(), z.number()]).optional().describe('latest or a positive version number') }).strict(),
  output: z.object({
    artifact_id: z.string(),
    name: z.string(),
    version_id: z.string(),
    version: z.number().int(),
    latest_version: z.number().int(),
    markdown: z.string(),
    attachment_format: z.literal('v1'),
    attachments: z.array(manifestEntry),
    package_digest: z.string(),
    source_task: z.string().nullable(),
    provenance: z
      .object({ agent_name: z.string().nullable(), author_name: z.string().nullable(), author_email: z.string().nullable(), saved_at: z.string() })
      .nullable()
      .describe('Who saved this version: the agent and the person it acts for.'),
    created_at: z.string(),
    updated_at: z.string(),
    version_created_at: z.string(),
    can_edit: z.boolean(),
    ...importedFromField,
  }),
  annotations: READ,
  scopes: ['context.read'],
  async run({ caller, services, audit }, args) {
    return jsonReply(artifactWire(await readArtifact(services.db, caller, { artifactId: args.artifact_id, version: args.version }, audit)));
  },
});

export const writeArtifactTool = defineTool({
  name: 'write_artifact',
  dialect: 'alignbase',
  title: 'Write Artifact',
  description:
    'Saves an Artifact package as a new immutable version: a name, Markdown, optional files and expected_version (0 to create, or the exact latest version to replace). Omitted attachments keep the existing files, [] clears them, a supplied array replaces the full set. source_task is kept when omitted and cleared by an empty string. Creating needs Artifact Create permission; replacing needs Editor.',
  input: z
    .object({
      artifact_id: z.string().optional().describe('Required when expected_version is greater than 0.'),
      expected_version: z.number(),
      name: z.string().optional().describe('Required when creating; a different name renames the Artifact.'),
      markdown: z.string(),
      attachments: attachmentsInput.optional(),
      source_task: z.string().optional(),
    })
    .strict(),
  output: z.object({
    artifact_id: z.string(),
    name: z.string(),
    version_id: z.string(),
    version: z.number().int(),
    package_digest: z.string().nullable(),
    updated: z.boolean(),
    created: z.boolean(),
  }),
  annotations: WRITE,
  scopes: ['context.write'],
  checkFirst: (args) => checkAttachmentPaths(args.attachments, 'artifact'),
  async run({ caller, services, audit }, args) {
    const written = await writeArtifact(
      services,
      caller,
      {
        artifactId: args.artifact_id,
        expectedVersion: args.expected_version,
        name: args.name,
        markdown: args.markdown,
        attachments: args.attachments,
        sourceTask: args.source_task,
      },
      audit,
    );
    return jsonReply({
      artifact_id: written.id,
      name: written.name,
      version_id: written.versionId,
      version: written.version,
      package_digest: written.digest ?? null,
      updated: written.updated,
      created: written.created,
    });
  },
});
