import { auditGroup } from '../../kernel/audit/audit-log.ts';
import { importedFromField, importedFromWire } from '../../mcp/imported-from.ts';
import { z } from 'zod';
import { createMemory, listMemories, readMemory, writeMemory } from '../context/memory.ts';
import { defineTool, jsonReply } from '../../mcp/tool.ts';
import { READ, WRITE } from './schemas.ts';

const assignmentState = z
  .enum(['always', 'available'])
  .describe('always when routed to this agent (directly or through a Group), else available; independent of permission');

export const listMemoriesTool = defineTool({
  name: 'list_memories',
  dialect: 'alignbase',
  title: 'List Memories',
  description:
    'Lists every active Memory the calling agent may read through direct or Group permission, routed or not. Each result has memory_id, name, version_id, version, assignment_state and can_write (Editor or higher).',
  input: z.object({}).strict(),
  output: z.object({
    memories: z.array(
      z.object({
        memory_id: z.string(),
        name: z.string(),
        version_id: z.string(),
        version: z.number().int(),
        assignment_state: assignmentState,
        can_write: z.boolean(),
      }),
    ),
  }),
  annotations: READ,
  scopes: ['context.read'],
  async run({ caller, services, audit }) {
    const memories = await listMemories(services.db, caller);
    audit.touch(...auditGroup('memory', memories));
    return jsonReply({
      memories: memories.map((m) => ({
        memory_id: m.id,
        name: m.name,
        version_id: m.versionId,
        version: m.version,
        assignment_state: m.assignmentState,
        can_write: m.canWrite,
      })),
    });
  },
});

export const readMemoryTool = defineTool({
  name: 'read_memory',
  dialect: 'alignbase',
  title: 'Read Memory',
  description: 'Reads one permitted Memory (Viewer or higher) and returns its latest version, which write_memory needs as expected_version.',
  input: z.object({ memory_id: z.string() }).strict(),
  output: z.object({
    name: z.string(),
    content: z.string(),
    version_id: z.string(),
    version: z.number().int(),
    can_write: z.boolean(),
    assignment_state: assignmentState,
    memory_id: z.string(),
    ...importedFromField,
  }),
  annotations: READ,
  scopes: ['context.read'],
  async run({ caller, services, audit }, args) {
    const m = await readMemory(services.db, caller, { memoryId: args.memory_id }, audit);
    return jsonReply({
      name: m.name,
      content: m.content,
      version_id: m.versionId,
      version: m.version,
      can_write: m.canWrite,
      assignment_state: m.assignmentState,
      memory_id: m.id,
      ...importedFromWire(m.importedFrom),
    });
  },
});

export const createMemoryTool = defineTool({
  name: 'create_memory',
  dialect: 'alignbase',
  title: 'Create Memory',
  description:
    'Creates a Memory when the agent has Create permission on the Memory type. The new Memory is not routed automatically; admins manage its permissions and routes. Content must be 25 KB or smaller.',
  input: z.object({ name: z.string(), content: z.string() }).strict(),
  output: z.object({ memory_id: z.string(), name: z.string(), version_id: z.string(), version: z.number().int(), created: z.boolean() }),
  annotations: WRITE,
  scopes: ['context.read'],
  async run({ caller, services, audit }, args) {
    const m = await createMemory(services.db, caller, { name: args.name, content: args.content }, audit);
    return jsonReply({ memory_id: m.id, name: m.name, version_id: m.versionId, version: m.version, created: m.created });
  },
});

export const writeMemoryTool = defineTool({
  name: 'write_memory',
  dialect: 'alignbase',
  title: 'Write Memory',
  description:
    'Replaces the full content of one permitted Memory (not a patch). Requires Editor or higher, the memory_id and its exact latest version as expected_version. If the Memory changed since it was read, read it again, preserve relevant changes, and retry. Identical content returns updated: false. Content must be 25 KB or smaller.',
  input: z.object({ memory_id: z.string(), expected_version: z.number(), content: z.string() }).strict(),
  output: z.object({ name: z.string(), memory_id: z.string(), version_id: z.string(), version: z.number().int(), updated: z.boolean() }),
  annotations: WRITE,
  scopes: ['context.read'],
  async run({ caller, services, audit }, args) {
    const m = await writeMemory(services.db, caller, { memoryId: args.memory_id, expectedVersion: args.expected_version, content: args.content }, audit);
    return jsonReply({ name: m.name, memory_id: m.id, version_id: m.versionId, version: m.version, updated: m.updated });
  },
});
