import { z } from 'zod';
import { iso } from '../../kernel/instants.ts';
import { archiveKb, createKb, listKbs, updateKb } from '../kb/kbs.ts';
import { defineTool, jsonReply } from '../../mcp/tool.ts';
import { DESTRUCTIVE, IDEMPOTENT_WRITE, READ, WRITE, kbId, kbOutput, kbWire, locationPolicy, visibility } from './schemas.ts';

const name = z.string().describe('Display name, 1 to 200 characters.');
const slug = z.string().describe('Unique in the organisation: 1 to 63 lower-case letters, digits and hyphens.');
const description = z.string().describe('What the KB holds, at most 2000 characters.');

export const listKbsTool = defineTool({
  name: 'list_kbs',
  dialect: 'atmina',
  title: 'List Knowledge Bases',
  description:
    'The Knowledge Bases you can use, with their kb_id, slug, owning team and your role (search, viewer, editor or admin). Call it after whoami. If a KB is absent, do not guess its identifier: you lack access or are connected to the wrong team.',
  input: z.object({}).strict(),
  output: z.object({ kbs: z.array(kbOutput) }),
  annotations: READ,
  scopes: ['context.read'],
  async run({ caller, services, audit }) {
    const kbs = await listKbs(services.db, caller);
    audit.touch(...kbs.map(({ kb }) => ({ type: 'kb', id: kb.id })));
    return jsonReply({ kbs: kbs.map(kbWire) });
  },
});

export const createKbTool = defineTool({
  name: 'create_kb',
  dialect: 'atmina',
  title: 'Create Knowledge Base',
  description:
    'Creates a Knowledge Base owned by your current team (whoami: current_team), or by the team you name where you are Admin. The slug is derived from the name when omitted.',
  input: z
    .object({
      name,
      slug: slug.optional(),
      description: description.optional(),
      visibility: visibility.optional().describe('Default team.'),
      location_policy: locationPolicy.optional().describe('Default visible.'),
      team: z.string().optional().describe('The owning team, by slug or team_id. Default: your current team, the first by slug where you are Admin.'),
    })
    .strict(),
  output: kbOutput,
  annotations: WRITE,
  scopes: ['context.write'],
  minimumRole: 'team_admin',
  async run({ caller, services, audit }, args) {
    const created = await createKb(
      services.db,
      caller,
      {
        name: args.name,
        slug: args.slug,
        description: args.description,
        visibility: args.visibility,
        locationPolicy: args.location_policy,
        team: args.team,
      },
      audit,
    );
    return jsonReply(kbWire(created));
  },
});

export const updateKbTool = defineTool({
  name: 'update_kb',
  dialect: 'atmina',
  title: 'Update Knowledge Base',
  description: 'Changes a Knowledge Base’s name, slug, description, visibility or location_policy (Admin). Fields left out stay as they are.',
  input: z
    .object({
      kb_id: kbId,
      name: name.optional(),
      slug: slug.optional(),
      description: description.optional(),
      visibility: visibility.optional(),
      location_policy: locationPolicy.optional(),
    })
    .strict(),
  output: kbOutput.extend({ changed: z.array(z.string()).describe('The fields that changed; empty when the KB already was as asked.') }),
  annotations: IDEMPOTENT_WRITE,
  scopes: ['context.write'],
  minimumRole: 'admin',
  async run({ caller, services, audit }, args) {
    const updated = await updateKb(
      services.db,
      caller,
      {
        kbId: args.kb_id,
        name: args.name,
        slug: args.slug,
        description: args.description,
        visibility: args.visibility,
        locationPolicy: args.location_policy,
      },
      audit,
    );
    return jsonReply({ ...kbWire(updated), changed: [...updated.changed] });
  },
});

export const deleteKbTool = defineTool({
  name: 'delete_kb',
  dialect: 'atmina',
  title: 'Delete Knowledge Base',
  description:
    'Archives a Knowledge Base (Admin): it disappears from every tool and from search; its files and history are kept and an operator can restore it. Confirm explicitly: confirm must be the KB’s slug, exactly.',
  input: z.object({ kb_id: kbId, confirm: z.string().describe('The KB’s slug, exactly: the explicit confirmation.') }).strict(),
  output: z.object({ kb_id: z.string(), slug: z.string(), archived: z.literal(true), archived_at: z.string() }),
  annotations: DESTRUCTIVE,
  scopes: ['context.write'],
  minimumRole: 'admin',
  async run({ caller, services, audit }, args) {
    const kb = await archiveKb(services.db, caller, { kbId: args.kb_id, confirm: args.confirm }, audit);
    return jsonReply({ kb_id: kb.id, slug: kb.slug, archived: true as const, archived_at: iso(kb.archivedAt ?? kb.updatedAt) });
  },
});
