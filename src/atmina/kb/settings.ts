import type { Caller } from '../../kernel/access/caller.ts';
import type { AuditTrail } from '../../kernel/audit/trail.ts';
import type { Db, Queryable } from '../../store/db.ts';
import type { StoredTeamSettings, TeamSettings, TeamSettingsRow } from './queries.ts';
import { AUDIT_QUERY_TEXT, KB_VISIBILITIES, TEAM_SETTINGS_COLUMNS, toTeamSettings } from './queries.ts';
import { refuseKb } from './refusals.ts';
import type { TeamRef } from './team-choice.ts';
import { adminTeam } from './team-choice.ts';

/**
 * Team settings (`team_settings`, migration 0014): what a team decides for its Knowledge Bases
 * and its audit trail. A team that never changed a setting has no row and the defaults below.
 * Reading and changing them needs the Admin role as a member of the team, capped by an agent's
 * policy, as creating a KB does; a share of a team's KBs does not make its holder a manager of
 * the team. docs/atmina.md, "Team settings".
 */

/** The bounds of the contribution-note window: a day at least, a year at most. */
export const CONTRIBUTION_NOTE_DAYS = { min: 1, max: 365 } as const;

/** The settings of a team without a row; the migration's column defaults say the same. */
export const TEAM_SETTINGS_DEFAULTS: TeamSettings = { auditQueryText: 'record', contributionNoteDays: 14, defaultKbVisibility: 'team' };

/** A team's row of settings (locked for a change with `lock: 'update'`); undefined while it has none. */
async function storedSettings(q: Queryable, tenantId: string, teamId: string, options: { lock?: 'update' } = {}): Promise<StoredTeamSettings | undefined> {
  const [row] = await q.query<TeamSettingsRow>(
    `SELECT ${TEAM_SETTINGS_COLUMNS} FROM team_settings WHERE tenant_id = $1 AND team_id = $2${options.lock === 'update' ? ' FOR UPDATE' : ''}`,
    [tenantId, teamId],
  );
  return row === undefined ? undefined : toTeamSettings(row);
}

/** A team's settings (the defaults when it changed none), for the code that applies them. */
export async function teamSettings(q: Queryable, tenantId: string, teamId: string): Promise<TeamSettings> {
  return (await storedSettings(q, tenantId, teamId))?.settings ?? TEAM_SETTINGS_DEFAULTS;
}

/** Settings of several teams at once (audit reads); teams without a row are left out (they have the defaults). */
export async function teamSettingsOf(q: Queryable, tenantId: string, teamIds: readonly string[]): Promise<ReadonlyMap<string, TeamSettings>> {
  if (teamIds.length === 0) return new Map();
  const rows = await q.query<TeamSettingsRow & { team_id: string }>(
    `SELECT team_id, ${TEAM_SETTINGS_COLUMNS} FROM team_settings WHERE tenant_id = $1 AND team_id = ANY($2::uuid[])`,
    [tenantId, [...teamIds]],
  );
  return new Map(rows.map((row) => [row.team_id, toTeamSettings(row).settings]));
}

/** The refusals of the choice of the team whose settings the caller means. */
const SETTINGS_TEAM = { notAdmin: refuseKb.settingsTeamRole };

export interface TeamSettingsView {
  readonly team: TeamRef;
  readonly settings: TeamSettings;
  /** When a setting last changed; undefined while the team has the defaults it never changed. */
  readonly updatedAt: Date | undefined;
}

async function settingsView(q: Queryable, tenantId: string, team: TeamRef): Promise<TeamSettingsView> {
  const stored = await storedSettings(q, tenantId, team.id);
  return { team, settings: stored?.settings ?? TEAM_SETTINGS_DEFAULTS, updatedAt: stored?.updatedAt };
}

/** get_team_settings (Admin of the team). */
export async function getTeamSettings(q: Queryable, caller: Caller, input: { team?: string | undefined }): Promise<TeamSettingsView> {
  const team = await adminTeam(q, caller, input.team, SETTINGS_TEAM);
  return settingsView(q, caller.tenant.id, team);
}

export interface UpdateTeamSettingsInput {
  readonly team?: string | undefined;
  readonly auditQueryText?: string | undefined;
  readonly contributionNoteDays?: number | undefined;
  readonly defaultKbVisibility?: string | undefined;
}

const WIRE: Readonly<Record<keyof TeamSettings, string>> = {
  auditQueryText: 'audit_query_text',
  contributionNoteDays: 'contribution_note_days',
  defaultKbVisibility: 'default_kb_visibility',
};

function checkChoice<T extends string>(field: string, value: string, allowed: readonly T[]): T {
  const found = allowed.find((choice) => choice === value);
  if (found === undefined) throw refuseKb.invalidField(field, `must be one of ${allowed.join(', ')}`);
  return found;
}

function checkDays(days: number): number {
  if (!Number.isInteger(days) || days < CONTRIBUTION_NOTE_DAYS.min || days > CONTRIBUTION_NOTE_DAYS.max)
    throw refuseKb.invalidField('contribution_note_days', `must be a whole number of days from ${CONTRIBUTION_NOTE_DAYS.min} to ${CONTRIBUTION_NOTE_DAYS.max}`);
  return days;
}

/** What update_team_settings answers: the settings now, and the fields that changed (wire names). */
export interface UpdatedTeamSettings extends TeamSettingsView {
  readonly changed: readonly string[];
}

/**
 * update_team_settings (Admin of the team): changes the settings given, the others stay. Every
 * change is audited (`team.settings.update`) with the fields' values before and after; a call
 * that changes nothing records no change.
 */
export async function updateTeamSettings(db: Db, caller: Caller, input: UpdateTeamSettingsInput, audit: AuditTrail): Promise<UpdatedTeamSettings> {
  const wanted: Partial<TeamSettings> = {
    ...(input.auditQueryText === undefined ? {} : { auditQueryText: checkChoice('audit_query_text', input.auditQueryText, AUDIT_QUERY_TEXT) }),
    ...(input.contributionNoteDays === undefined ? {} : { contributionNoteDays: checkDays(input.contributionNoteDays) }),
    ...(input.defaultKbVisibility === undefined
      ? {}
      : { defaultKbVisibility: checkChoice('default_kb_visibility', input.defaultKbVisibility, KB_VISIBILITIES) }),
  };
  if (Object.keys(wanted).length === 0)
    throw refuseKb.invalidField('update_team_settings', 'give at least one of audit_query_text, contribution_note_days, default_kb_visibility');
  const tenantId = caller.tenant.id;
  return db.tx(async (tx) => {
    const team = await adminTeam(tx, caller, input.team, SETTINGS_TEAM);
    // A row to lock, holding the defaults when the team had none, so concurrent changes of one
    // team take turns and each one's "before" is what the one before it left.
    await tx.query('INSERT INTO team_settings (tenant_id, team_id) VALUES ($1, $2) ON CONFLICT DO NOTHING', [tenantId, team.id]);
    const stored = await storedSettings(tx, tenantId, team.id, { lock: 'update' });
    if (stored === undefined) throw new Error(`team settings of ${team.id} vanished inside their own transaction`);
    const current = stored.settings;
    const keys = (Object.keys(WIRE) as (keyof TeamSettings)[]).filter((key) => wanted[key] !== undefined && wanted[key] !== current[key]);
    const changed = keys.map((key) => WIRE[key]);
    if (keys.length === 0) return { ...(await settingsView(tx, tenantId, team)), changed };
    const next: TeamSettings = { ...current, ...wanted };
    await tx.query(
      `UPDATE team_settings SET audit_query_text = $3, contribution_note_days = $4, default_kb_visibility = $5, updated_at = clock_timestamp(), updated_by = $6
        WHERE tenant_id = $1 AND team_id = $2`,
      [tenantId, team.id, next.auditQueryText, next.contributionNoteDays, next.defaultKbVisibility, caller.principal.id],
    );
    const pick = (settings: TeamSettings) => Object.fromEntries(keys.map((key) => [WIRE[key], settings[key]]));
    await audit.recordIn(tx, 'team.settings.update', [{ type: 'team', id: team.id, changed: true }], {
      fields: changed,
      before: pick(current),
      after: pick(next),
    });
    return { ...(await settingsView(tx, tenantId, team)), changed };
  });
}
