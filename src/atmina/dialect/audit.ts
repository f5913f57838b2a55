import { z } from 'zod';
import { iso } from '../../kernel/instants.ts';
import type { AuditEventView } from '../kb/audit.ts';
import { AUDIT_PAGE, auditLog, getAuditEvent } from '../kb/audit.ts';
import { defineTool, jsonReply } from '../../mcp/tool.ts';
import { READ } from './schemas.ts';

const actor = z
  .object({ principal_id: z.string(), kind: z.enum(['person', 'agent']).nullable(), name: z.string().nullable() })
  .nullable()
  .describe(
    'Who acted; kind and name are null once the principal is gone; null for an operator’s action or an anonymous search (its details say anonymous: true).',
  );

const compactEvent = z.object({
  event_id: z.string().describe('Pass it to get_audit_event.'),
  at: z.string(),
  actor,
  tool: z.string().nullable().describe('The MCP tool; null outside MCP (the CLI, sign-in).'),
  action: z.string().describe('What happened, e.g. kb.file.patch, kb.share, team.settings.update, or tool_call for a read.'),
  result: z.enum(['ok', 'error']),
  error_code: z.string().nullable(),
  kb_ids: z.array(z.string()).describe('The Knowledge Bases the event names that you may audit.'),
  file_ids: z.array(z.string()),
  query: z.string().optional().describe('A search’s query text, unless the team’s privacy setting leaves it out.'),
});

function compactWire(event: AuditEventView): z.infer<typeof compactEvent> {
  return {
    event_id: event.id,
    at: iso(event.at),
    actor: event.actor === undefined ? null : { principal_id: event.actor.id, kind: event.actor.kind ?? null, name: event.actor.name ?? null },
    tool: event.tool ?? null,
    action: event.action,
    result: event.result,
    error_code: event.errorCode ?? null,
    kb_ids: [...event.kbIds],
    file_ids: [...event.fileIds],
    ...(event.query === undefined ? {} : { query: event.query }),
  };
}

export const auditLogTool = defineTool({
  name: 'audit_log',
  dialect: 'atmina',
  title: 'Audit log',
  description:
    'Compact audit events of the Knowledge Bases you are Editor or Admin on, and of the teams where you are, newest first. Filter by kb_id, actor (a principal id), tool and a time range (from inclusive, to exclusive, ISO 8601); page with next_cursor. Query text may be absent: team privacy settings control it. Use get_audit_event for one event’s detail.',
  input: z
    .object({
      kb_id: z.string().optional().describe('Only events of this Knowledge Base (kb_id or slug; you must be Editor on it).'),
      actor: z.string().optional().describe('Only events of this principal id.'),
      tool: z.string().optional().describe('Only calls of this tool, e.g. write_file.'),
      from: z.string().optional().describe('Events at or after this ISO 8601 instant.'),
      to: z.string().optional().describe('Events before this ISO 8601 instant.'),
      limit: z.number().int().min(1).max(AUDIT_PAGE.max).optional().describe(`Events per page, 1 to ${AUDIT_PAGE.max}; default ${AUDIT_PAGE.default}.`),
      cursor: z.string().optional().describe('next_cursor of the previous page; omit for the first page.'),
    })
    .strict(),
  output: z.object({
    events: z.array(compactEvent),
    next_cursor: z.string().nullable().describe('Pass it as cursor for the next page; null on the last page.'),
  }),
  annotations: READ,
  scopes: ['context.read'],
  minimumRole: 'editor',
  async run({ caller, services }, args) {
    const page = await auditLog(services.db, caller, {
      kbId: args.kb_id,
      actor: args.actor,
      tool: args.tool,
      from: args.from,
      to: args.to,
      limit: args.limit,
      cursor: args.cursor,
    });
    return jsonReply({ events: page.events.map(compactWire), next_cursor: page.nextCursor ?? null });
  },
});

export const getAuditEventTool = defineTool({
  name: 'get_audit_event',
  dialect: 'atmina',
  title: 'Audit event',
  description:
    'One audit event with the diagnostic detail you may see: surface, request id, the resources and versions it names, and its details. Find the event_id with audit_log first. Query text may be absent: team privacy settings control it.',
  input: z.object({ event_id: z.string().describe('An event_id from audit_log.') }).strict(),
  output: compactEvent.omit({ query: true }).extend({
    surface: z.string().describe('mcp, cli, oauth or console.'),
    dialect: z.string().nullable(),
    request_id: z.string().nullable().describe('The request id the gateway answered as x-request-id.'),
    team_ids: z.array(z.string()),
    resources: z.array(z.record(z.string(), z.unknown())).describe('What the event names: type, id and, for versions, before and after.'),
    details: z.record(z.string(), z.unknown()).describe('Identifiers and metadata of the action; never content.'),
  }),
  annotations: READ,
  scopes: ['context.read'],
  minimumRole: 'editor',
  async run({ caller, services }, args) {
    const event = await getAuditEvent(services.db, caller, args.event_id);
    const { query: _query, ...compact } = compactWire(event);
    return jsonReply({
      ...compact,
      surface: event.surface,
      dialect: event.dialect ?? null,
      request_id: event.requestId ?? null,
      team_ids: [...event.teamIds],
      resources: event.resources.map((resource) => ({ ...resource })),
      details: { ...event.details },
    });
  },
});
