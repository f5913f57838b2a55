/**
 * Company Brain's access tiers: which graph nodes a viewer may see. Pure; docs/access.md
 * draws the lattice and the full visibility table.
 *
 *   public < department < project < manager < hr        < restricted
 *                                   manager < executive < restricted
 *
 * hr and executive are side by side, not one above the other: personnel records are
 * need-to-know even for executives, and HR does not read the leadership's material.
 */

export const TIERS = ['public', 'department', 'project', 'manager', 'hr', 'executive', 'restricted'] as const;
export type Tier = (typeof TIERS)[number];

/** What a principal may do in the brain (approve proposals …); it never widens visibility. */
export const BRAIN_ROLES = ['viewer', 'manager', 'admin'] as const;
export type BrainRole = (typeof BRAIN_ROLES)[number];

export function isTier(value: string): value is Tier {
  return (TIERS as readonly string[]).includes(value);
}

export function isBrainRole(value: string): value is BrainRole {
  return (BRAIN_ROLES as readonly string[]).includes(value);
}

/** Each tier with every tier it includes (itself and all below it in the lattice). */
const CLEARS: Readonly<Record<Tier, readonly Tier[]>> = {
  public: ['public'],
  department: ['public', 'department'],
  project: ['public', 'department', 'project'],
  manager: ['public', 'department', 'project', 'manager'],
  hr: ['public', 'department', 'project', 'manager', 'hr'],
  executive: ['public', 'department', 'project', 'manager', 'executive'],
  restricted: [...TIERS],
};

/** True when a viewer at `tier` is cleared for content at `level`. */
export function clears(tier: Tier, level: Tier): boolean {
  return CLEARS[tier].includes(level);
}

export interface TierViewer {
  readonly tier: Tier;
  /** The departments and projects the viewer belongs to; names are compared exactly. */
  readonly departments: readonly string[];
  readonly projects: readonly string[];
  /** Carried along for callers' convenience; visibility deliberately ignores it. */
  readonly brainRole?: BrainRole | undefined;
}

export interface TieredNode {
  readonly access: Tier;
  /** For `department` nodes: the department the node belongs to. */
  readonly department?: string | undefined;
  /** For `project` nodes: the project the node belongs to. */
  readonly project?: string | undefined;
}

/**
 * Whether the viewer may see the node. The tier must clear the node's access level; a
 * department or project node is further limited to members of its department or project,
 * unless the viewer's tier clears `manager` (managers and above see across departments and
 * projects). A scoped node that names no department or project is for manager and above.
 */
export function visibleAtTier(viewer: TierViewer, node: TieredNode): boolean {
  if (!clears(viewer.tier, node.access)) return false;
  if (node.access !== 'department' && node.access !== 'project') return true;
  if (clears(viewer.tier, 'manager')) return true;
  if (node.access === 'department') return node.department !== undefined && viewer.departments.includes(node.department);
  return node.project !== undefined && viewer.projects.includes(node.project);
}

/**
 * Splits matches into those the viewer sees and a count of the rest. "Matches behind a
 * higher tier are hidden and only counted": every match the viewer may not see is counted,
 * whatever the reason (too high a tier, or another department's or project's node), so
 * visible plus hidden is always the number of matches. Order is kept.
 */
export function partitionByTier<N extends TieredNode>(viewer: TierViewer, nodes: Iterable<N>): { visible: N[]; hidden: number } {
  const visible: N[] = [];
  let hidden = 0;
  for (const node of nodes) {
    if (visibleAtTier(viewer, node)) visible.push(node);
    else hidden += 1;
  }
  return { visible, hidden };
}

/** How many of the matches the viewer may not see (see partitionByTier). */
export function countHidden(viewer: TierViewer, nodes: Iterable<TieredNode>): number {
  return partitionByTier(viewer, nodes).hidden;
}
