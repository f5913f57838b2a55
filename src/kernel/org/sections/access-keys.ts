import type { PrincipalAccess } from '../../access/principal-access.ts';
import { DEFAULT_ACCESS } from '../../access/principal-access.ts';
import type { TeamRole } from '../../directory/team-roles.ts';
import type { BrainRole, Tier } from '../../directory/tiers.ts';
import type { Transaction } from '../../../store/db.ts';
import { brainRoleRule, labelRule, teamRoleRule, tierRule } from '../rules.ts';
import { DuplicateCheck } from '../section.ts';
import type { Fields, YamlReader } from '../yaml-reader.ts';

/**
 * The access keys people and agents share (tier, departments, projects, brain_role) and the
 * agents' policy. The file is the whole truth for them, as for the tenant's language: a key
 * left out means its default (public, none, none, viewer, no policy), not "keep".
 */
export const ACCESS_KEYS = ['tier', 'departments', 'projects', 'brain_role'] as const;

/** Reads the access keys of one entry; undefined when one of them is wrong (reported). */
export function readAccess(fields: Fields, reader: YamlReader, options: { policy: boolean }): PrincipalAccess | undefined {
  let ok = true;
  const text = <T extends string>(key: string, rule: typeof tierRule, fallback: T): T => {
    const slot = fields.get(key);
    if (!slot) return fallback;
    const value = reader.string(slot, rule);
    if (!value) ok = false;
    return (value?.value ?? fallback) as T;
  };
  const tier = text<Tier>('tier', tierRule, DEFAULT_ACCESS.tier);
  const brainRole = text<BrainRole>('brain_role', brainRoleRule, DEFAULT_ACCESS.brainRole);
  const departments = readLabels(fields, 'departments', 'department', reader);
  const projects = readLabels(fields, 'projects', 'project', reader);
  let policyMaxTeamRole: TeamRole | undefined;
  const policySlot = options.policy ? fields.get('policy') : undefined;
  if (policySlot) {
    const policy = reader.fields(policySlot, ['max_team_role'], ['max_team_role']);
    const maxSlot = policy?.get('max_team_role');
    const max = maxSlot && reader.string(maxSlot, teamRoleRule);
    if (max) policyMaxTeamRole = max.value as TeamRole;
    else ok = false;
  }
  if (!ok || !departments || !projects) return undefined;
  return { tier, brainRole, departments, projects, policyMaxTeamRole };
}

/** A list of department or project names, each once; stored sorted so order is no change. */
function readLabels(fields: Fields, key: string, what: string, reader: YamlReader): string[] | undefined {
  const slot = fields.get(key);
  if (!slot) return [];
  if (reader.isEmpty(slot)) return [];
  const items = reader.list(slot);
  if (!items) return undefined;
  const repeated = new DuplicateCheck(what);
  const labels: string[] = [];
  let ok = true;
  for (const item of items) {
    const label = reader.string(item, labelRule);
    if (label && repeated.first(label, reader)) labels.push(label.value);
    else ok = false;
  }
  return ok ? labels.sort() : undefined;
}

const list = (labels: readonly string[]): string => `[${labels.join(', ')}]`;
const sameList = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((label, i) => label === b[i]);

/** `from → to` for each attribute that differs; with `from` the defaults, what a create sets. */
export function accessChanges(from: PrincipalAccess, to: PrincipalAccess): string[] {
  const changes: string[] = [];
  if (from.tier !== to.tier) changes.push(`tier ${from.tier} → ${to.tier}`);
  if (!sameList(from.departments, to.departments)) changes.push(`departments ${list(from.departments)} → ${list(to.departments)}`);
  if (!sameList(from.projects, to.projects)) changes.push(`projects ${list(from.projects)} → ${list(to.projects)}`);
  if (from.brainRole !== to.brainRole) changes.push(`brain_role ${from.brainRole} → ${to.brainRole}`);
  if (from.policyMaxTeamRole !== to.policyMaxTeamRole)
    changes.push(`policy max_team_role ${from.policyMaxTeamRole ?? 'none'} → ${to.policyMaxTeamRole ?? 'none'}`);
  return changes;
}

/** What a new principal gets beyond the defaults, for the create's detail: `tier hr; projects [x]`. */
export function accessSettings(access: PrincipalAccess): string[] {
  const settings: string[] = [];
  if (access.tier !== DEFAULT_ACCESS.tier) settings.push(`tier ${access.tier}`);
  if (access.departments.length > 0) settings.push(`departments ${list(access.departments)}`);
  if (access.projects.length > 0) settings.push(`projects ${list(access.projects)}`);
  if (access.brainRole !== DEFAULT_ACCESS.brainRole) settings.push(`brain_role ${access.brainRole}`);
  if (access.policyMaxTeamRole !== undefined) settings.push(`policy max_team_role ${access.policyMaxTeamRole}`);
  return settings;
}

/** The principals columns of the access attributes, in the order of accessValues. */
export const ACCESS_COLUMNS = 'tier, brain_role, departments, projects, policy_max_team_role';

export function accessValues(access: PrincipalAccess): unknown[] {
  return [access.tier, access.brainRole, access.departments, access.projects, access.policyMaxTeamRole ?? null];
}

/** Writes the access attributes of an existing principal. */
export async function writeAccess(tx: Transaction, tenantId: string, principalId: string, access: PrincipalAccess): Promise<void> {
  await tx.query(`UPDATE principals SET (${ACCESS_COLUMNS}) = ($3, $4, $5, $6, $7), updated_at = now() WHERE tenant_id = $1 AND id = $2`, [
    tenantId,
    principalId,
    ...accessValues(access),
  ]);
}
