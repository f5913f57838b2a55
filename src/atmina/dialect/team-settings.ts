import { z } from 'zod';
import { isoOrNull } from '../../kernel/instants.ts';
import { KB_VISIBILITIES } from '../kb/queries.ts';
import type { TeamSettingsView } from '../kb/settings.ts';
import { AUDIT_QUERY_TEXT } from '../kb/queries.ts';
import { CONTRIBUTION_NOTE_DAYS, TEAM_SETTINGS_DEFAULTS, getTeamSettings, updateTeamSettings } from '../kb/settings.ts';
import { defineTool, jsonReply } from '../../mcp/tool.ts';
import { IDEMPOTENT_WRITE, READ } from './schemas.ts';

const team = z
  .string()
  .optional()
  .describe('The team, by slug or team_id. Default: your current team (whoami: current_team), the first by slug where you are Admin.');

const auditQueryText = z
  .enum(AUDIT_QUERY_TEXT)
  .describe(`record: audit events keep search query text; omit: they leave it out. Default ${TEAM_SETTINGS_DEFAULTS.auditQueryText}.`);
const contributionNoteDays = z
  .number()
  .describe(
    `Days a write to a Knowledge Base silences the writer’s contribution note there: ${CONTRIBUTION_NOTE_DAYS.min} to ${CONTRIBUTION_NOTE_DAYS.max}, default ${TEAM_SETTINGS_DEFAULTS.contributionNoteDays}.`,
  );
const defaultKbVisibility = z
  .enum(KB_VISIBILITIES)
  .describe(`The visibility create_kb gives a new KB of this team. Default ${TEAM_SETTINGS_DEFAULTS.defaultKbVisibility}.`);

const settingsOutput = z.object({
  team: z.object({ team_id: z.string(), slug: z.string(), name: z.string() }),
  audit_query_text: z.enum(AUDIT_QUERY_TEXT),
  contribution_note_days: z.number().int(),
  default_kb_visibility: z.enum(KB_VISIBILITIES),
  updated_at: z.string().nullable().describe('When a setting last changed; null while the team has its defaults.'),
});

function settingsWire(view: TeamSettingsView): z.infer<typeof settingsOutput> {
  return {
    team: { team_id: view.team.id, slug: view.team.slug, name: view.team.name },
    audit_query_text: view.settings.auditQueryText,
    contribution_note_days: view.settings.contributionNoteDays,
    default_kb_visibility: view.settings.defaultKbVisibility,
    updated_at: isoOrNull(view.updatedAt),
  };
}

export const getTeamSettingsTool = defineTool({
  name: 'get_team_settings',
  dialect: 'atmina',
  title: 'Team settings',
  description: 'The current team’s settings (Admin of the team): audit query-text privacy, the contribution-note window and the default KB visibility.',
  input: z.object({ team }).strict(),
  output: settingsOutput,
  annotations: READ,
  scopes: ['context.read'],
  minimumRole: 'team_admin',
  async run({ caller, services, audit }, args) {
    const view = await getTeamSettings(services.db, caller, { team: args.team });
    audit.touch({ type: 'team', id: view.team.id });
    return jsonReply(settingsWire(view));
  },
});

export const updateTeamSettingsTool = defineTool({
  name: 'update_team_settings',
  dialect: 'atmina',
  title: 'Update team settings',
  description: 'Changes the team settings given (Admin of the team); the others stay. Every change is audited with its values before and after.',
  input: z
    .object({
      team,
      audit_query_text: auditQueryText.optional(),
      contribution_note_days: contributionNoteDays.optional(),
      default_kb_visibility: defaultKbVisibility.optional(),
    })
    .strict(),
  output: settingsOutput.extend({ changed: z.array(z.string()).describe('The settings that changed; empty when they already were as asked.') }),
  annotations: IDEMPOTENT_WRITE,
  scopes: ['context.write'],
  minimumRole: 'team_admin',
  async run({ caller, services, audit }, args) {
    const updated = await updateTeamSettings(
      services.db,
      caller,
      {
        team: args.team,
        auditQueryText: args.audit_query_text,
        contributionNoteDays: args.contribution_note_days,
        defaultKbVisibility: args.default_kb_visibility,
      },
      audit,
    );
    if (updated.changed.length === 0) audit.touch({ type: 'team', id: updated.team.id });
    return jsonReply({ ...settingsWire(updated), changed: [...updated.changed] });
  },
});
