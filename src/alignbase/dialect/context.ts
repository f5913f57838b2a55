import { z } from 'zod';
import { readContextAttachment } from '../context/attachments.ts';
import { currentContext } from '../context/current-context.ts';
import { defineTool, jsonReply } from '../../mcp/tool.ts';
import { ALIGNBASE_BUNDLE } from './bundle.ts';
import { READ } from './schemas.ts';

export const getCurrentContextTool = defineTool({
  name: 'get_current_context',
  dialect: 'alignbase',
  title: 'Get current context',
  description:
    'Loads the published Knowledge and Skills routed to the calling agent, plus every routed Memory and up to 10 new messages from other agents (marked read as they are issued; read_inbox returns the rest), as one markdown bundle. Call it at the start of every new conversation. If it fails, tell the user Alignbase context could not be loaded and ask whether to continue without it.',
  input: z.object({}).strict(),
  annotations: { ...READ, idempotentHint: false },
  scopes: ['context.read'],
  async run({ caller, services, audit }) {
    return { text: await currentContext(services.db, caller, ALIGNBASE_BUNDLE, audit) };
  },
});

export const readContextAttachmentTool = defineTool({
  name: 'read_context_attachment',
  dialect: 'alignbase',
  title: 'Read context attachment',
  description:
    'Reads one attachment of an exact saved Knowledge, Skill, or Artifact version, at most 256 KiB per call. Start with offset 0; while eof is false call again with offset = next_offset, then join the decoded chunks in order. version must be an exact positive number; verify version_id stays the same across chunks. Access is checked on every call.',
  input: z
    .object({
      context_type: z.string().describe('knowledge, skill, or artifact'),
      context_id: z.string(),
      version: z.union([z.number(), z.string()]).describe('An exact positive version number.'),
      path: z.string(),
      offset: z.number().int().optional(),
    })
    .strict(),
  output: z.object({
    data_base64: z.string(),
    offset: z.number().int(),
    next_offset: z.number().int(),
    size: z.number().int(),
    eof: z.boolean(),
    media_type: z.string(),
    version_id: z.string(),
  }),
  annotations: READ,
  scopes: ['context.read'],
  async run({ caller, services, audit }, args) {
    const chunk = await readContextAttachment(
      services,
      caller,
      { contextType: args.context_type, contextId: args.context_id, version: args.version, path: args.path, offset: args.offset },
      audit,
    );
    return jsonReply({
      data_base64: chunk.data.toString('base64'),
      offset: chunk.offset,
      next_offset: chunk.nextOffset,
      size: chunk.size,
      eof: chunk.eof,
      media_type: chunk.mediaType,
      version_id: chunk.versionId,
    });
  },
});
