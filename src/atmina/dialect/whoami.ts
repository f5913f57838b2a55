import { z } from 'zod';
import { readStanding } from '../../kernel/directory/whoami.ts';
import { currentTeamOf } from '../kb/team-choice.ts';
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
  current_team: z
    .object({ team_id: z.string(), slug: z.string(), name: z.string() })
    .nullable()
    .describe(
      'The team create_kb, get_team_settings and update_team_settings act for when you name none: the first by slug where you are Admin, else the first you belong to; null in no team. Pass team to act for another.',
    ),
});

export const whoami = defineTool({
  name: 'whoami',
  dialect: 'atmina',
  title: 'Who am I',
  description:
    'The authenticated person or agent, its organisation, team memberships (with roles), current team, groups and the scopes of this connection. Call it first, then list_kbs.',
  input,
  output,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  scopes: ['context.read'],
  async run({ caller, services }) {
    const standing = await readStanding(services.db, caller);
    const { profile } = standing;
    const team = currentTeamOf(standing);
    return jsonReply({
      ...profile,
      current_team: team === undefined ? null : { team_id: team.id, slug: team.slug, name: team.name },
    } satisfies z.infer<typeof output>);
  },
});
