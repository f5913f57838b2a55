import { z } from 'zod';
import { describeCaller } from '../../core/directory/whoami.ts';
import { defineTool, jsonReply } from '../../mcp/tool.ts';

const input = z.object({}).strict();

const output = z.object({
  tenant: z.object({
    slug: z.string().describe('The organisation (tenant) slug.'),
    name: z.string().describe('The organisation display name.'),
    language: z.string().describe("The organisation's display language."),
  }),
  principal: z.object({
    id: z.string().describe('Stable id of the authenticated person or agent.'),
    kind: z.enum(['person', 'agent']).describe('Whether the caller is a person or an agent.'),
    name: z.string().describe('Display name.'),
    email: z.string().nullable().describe('Email address of a person; null for agents.'),
  }),
  teams: z
    .array(
      z.object({
        team_id: z.string().describe('Team id.'),
        slug: z.string().describe('Team slug.'),
        name: z.string().describe('Team display name.'),
        role: z.enum(['viewer', 'editor', 'admin']).describe("The caller's role in the team."),
      }),
    )
    .describe('Team memberships, ordered by slug.'),
  groups: z.array(z.object({ group_id: z.string().describe('Group id.'), name: z.string().describe('Group name.') })).describe('Group memberships.'),
  scopes: z.array(z.string()).describe('Scopes granted to this connection.'),
});

export const whoami = defineTool({
  name: 'whoami',
  dialect: 'atmina',
  title: 'Who am I',
  description:
    'The authenticated person or agent, its organisation, team memberships (with roles), groups and the scopes of this connection. Call it first, then list_kbs.',
  input,
  output,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  scopes: ['context.read'],
  async run({ caller, services }) {
    return jsonReply({ ...(await describeCaller(services.db, caller)) } satisfies z.infer<typeof output>);
  },
});
