import type { Transaction } from '../../../store/db.ts';
import type { PrincipalIndex } from '../principal-index.ts';
import type { OrgProblems } from '../problems.ts';
import type { OrgChange, PlannedStep } from '../section.ts';
import type { Located } from '../yaml-reader.ts';

/** Resolves member references to ids, keeping the file's order; dangling ones are reported. */
export function resolveMembers<Role>(
  members: readonly { reference: Located; role: Role }[],
  principals: PrincipalIndex,
  problems: OrgProblems,
): Map<string, Role> {
  const resolved = new Map<string, Role>();
  for (const member of members) {
    const id = principals.resolve(member.reference, problems);
    if (id !== undefined) resolved.set(id, member.role);
  }
  return resolved;
}

export interface MembershipWrites<Role> {
  add(tx: Transaction, principalId: string, role: Role): Promise<void>;
  changeRole(tx: Transaction, principalId: string, role: Role): Promise<void>;
  remove(tx: Transaction, principalId: string): Promise<void>;
}

/**
 * The steps that make a group's or team's members exactly `desired`: adds and role changes in
 * the file's order, then removals of everyone the file no longer lists.
 */
export function planMembership<Role extends string | null>(options: {
  kind: 'group member' | 'team member';
  /** Where the members belong, for the change's detail: `group eng`, `team docs`. */
  container: string;
  current: ReadonlyMap<string, Role>;
  desired: ReadonlyMap<string, Role>;
  principals: PrincipalIndex;
  writes: MembershipWrites<Role>;
}): PlannedStep[] {
  const { kind, container, current, desired, principals, writes } = options;
  const change = (action: OrgChange['action'], id: string, detail: string): OrgChange => ({ action, kind, name: principals.referenceOf(id), detail });
  const steps: PlannedStep[] = [];
  for (const [id, role] of desired) {
    const was = current.get(id);
    if (!current.has(id)) {
      steps.push({ change: change('add', id, role === null ? container : `${container} as ${role}`), write: (tx) => writes.add(tx, id, role) });
    } else if (was !== role) {
      steps.push({ change: change('update', id, `${container}: role ${String(was)} → ${String(role)}`), write: (tx) => writes.changeRole(tx, id, role) });
    }
  }
  const leaving = [...current.keys()].filter((id) => !desired.has(id));
  leaving.sort((a, b) => principals.referenceOf(a).localeCompare(principals.referenceOf(b)));
  for (const id of leaving) steps.push({ change: change('remove', id, container), write: (tx) => writes.remove(tx, id) });
  return steps;
}
