import type { TierViewer } from '../kernel/directory/tiers.ts';
import { visibleAtTier } from '../kernel/directory/tiers.ts';
import { PrincipalIndex } from '../kernel/org/principal-index.ts';
import type { Queryable } from '../store/db.ts';
import { resolveReference } from './content.ts';
import type { BrainNode, BrainRelation, Mark, MetadataKey, NodeType, Origin, RelationVerb } from './model.ts';
import { loadNamedBrainNodes } from './store.ts';
import { isBrainNodeId } from './model.ts';
import type { OnboardingAction } from './onboarding.ts';

/**
 * What an onboarding action names, looked up in the brain's truth as it is now: each brain
 * node it names (the one it adds, changes or removes, or a relation's ends), the directory
 * references that name nobody, the node as an add or update would leave it, and the relation
 * it adds or removes. The proposal (src/brain/inbox.ts) and the decision
 * (src/brain/review.ts) read the same reach, each with its own words, and each against
 * what its person sees (docs/company-brain.md, "Actions").
 */

/** The fields of an action's details that name a node. */
export type NamingField = 'id' | 'from' | 'to';

export interface NamedNode {
  readonly field: NamingField;
  /** As the details write it. */
  readonly written: string;
  /** The brain node it names now; undefined when there is none. */
  readonly node: BrainNode | undefined;
  /** Who keeps that node. */
  readonly origin: Origin | undefined;
}

export interface DanglingReference {
  readonly field: NamingField;
  /** What is missing, as resolveReference says it ("person in the directory named"). */
  readonly missing: string;
  readonly name: string;
}

export interface ActionReach {
  /** Each brain node the details name, in field order. */
  readonly nodes: readonly NamedNode[];
  /** Directory references (person, agent, department, project) that name nobody. */
  readonly dangling: readonly DanglingReference[];
  /** The node as add_node or update_node would write it (its freshness as it was). */
  readonly after: BrainNode | undefined;
  /** The relation add_relation or remove_relation names, when both ends resolve, whether it exists now, and as the details write it. */
  readonly relation: { readonly value: BrainRelation; readonly exists: boolean; readonly written: string } | undefined;
}

/** The details of add_node and update_node, as their schema left them. */
export interface NodeDetails {
  id: string;
  type: NodeType;
  title: string;
  summary?: string;
  access: BrainNode['access'];
  department?: string;
  project?: string;
  tags?: string[];
  metadata?: Partial<Record<MetadataKey, string | number>>;
  mark?: Mark;
}

/** The node add_node or update_node writes: every field from the details, freshness kept from the node it replaces. */
export const nodeFromDetails = (d: NodeDetails, was?: BrainNode): BrainNode => ({
  id: d.id,
  type: d.type,
  title: d.title,
  summary: d.summary ?? '',
  access: d.access,
  department: d.department ?? null,
  project: d.project ?? null,
  metadata: d.metadata ?? {},
  tags: d.tags ?? [],
  verifiedAt: was?.verifiedAt ?? null,
  reviewBy: was?.reviewBy ?? null,
  mark: d.mark ?? null,
});

/** Whether a person at `viewer` sees the node (its tier, and its department or project). */
export const sees = (viewer: TierViewer, node: BrainNode): boolean =>
  visibleAtTier(viewer, { access: node.access, department: node.department ?? undefined, project: node.project ?? undefined });

/** A node's access as a person reads it: the tier literal, with its department or project. */
export const accessText = (node: Pick<BrainNode, 'access' | 'department' | 'project'>): string =>
  node.access === 'department' && node.department !== null
    ? `department ${JSON.stringify(node.department)}`
    : node.access === 'project' && node.project !== null
      ? `project ${JSON.stringify(node.project)}`
      : node.access;

/** A relation as the details write it, for messages. */
export const relationText = (d: { readonly from: string; readonly verb: string; readonly to: string }): string => `${d.from} ${d.verb} ${d.to}`;

/**
 * The graph ids node references name: the org file's `person:<email>` and `agent:<name>`
 * become the directory's `person:<id>` and `agent:<id>`, the form the read tools cite, so
 * either names the same node; anything else is a graph id already. A reference that names
 * nobody comes back as written, and so is found nowhere.
 */
export async function graphNodeIds(q: Queryable, tenant: { readonly id: string; readonly slug: string }, written: readonly string[]): Promise<string[]> {
  const directory = (value: string) => /^(person|agent):./.test(value);
  if (!written.some(directory)) return [...written];
  const principals = await PrincipalIndex.load(q, tenant, new Set());
  return written.map((value) => {
    if (!directory(value)) return value;
    const found = resolveReference(value, new Set(), principals);
    return 'id' in found ? found.id : value;
  });
}

/** The reach of an action whose details match its schema. */
export async function actionReach(
  q: Queryable,
  tenant: { readonly id: string; readonly slug: string },
  action: OnboardingAction,
  details: Record<string, unknown>,
): Promise<ActionReach> {
  if (action === 'add_relation' || action === 'remove_relation') {
    const d = details as { from: string; verb: RelationVerb; to: string; mark?: Mark };
    const found = await loadNamedBrainNodes(
      q,
      tenant.id,
      [d.from, d.to].filter((end) => isBrainNodeId(end)),
    );
    const principals = await PrincipalIndex.load(q, tenant, new Set());
    const nodes: NamedNode[] = [];
    const dangling: DanglingReference[] = [];
    const ends: (string | undefined)[] = [];
    for (const field of ['from', 'to'] as const) {
      const written = d[field];
      if (isBrainNodeId(written)) nodes.push({ field, written, node: found.get(written)?.node, origin: found.get(written)?.origin });
      const resolved = resolveReference(written, new Set(found.keys()), principals);
      if ('id' in resolved) ends.push(resolved.id);
      else {
        ends.push(undefined);
        if (resolved.missing !== 'node') dangling.push({ field, missing: resolved.missing, name: resolved.name });
      }
    }
    const [from, to] = ends;
    let relation: ActionReach['relation'];
    if (from !== undefined && to !== undefined) {
      const value: BrainRelation = { from, verb: d.verb, to, mark: d.mark ?? null };
      const rows = await q.query('SELECT 1 FROM brain_relations WHERE tenant_id = $1 AND from_id = $2 AND verb = $3 AND to_id = $4', [
        tenant.id,
        from,
        d.verb,
        to,
      ]);
      relation = { value, exists: rows.length > 0, written: relationText(d) };
    }
    return { nodes, dangling, after: undefined, relation };
  }
  const id = (details as { id: string }).id;
  const found = (await loadNamedBrainNodes(q, tenant.id, [id])).get(id);
  const after =
    action === 'add_node' || action === 'update_node'
      ? nodeFromDetails(details as unknown as NodeDetails, action === 'update_node' ? found?.node : undefined)
      : undefined;
  return { nodes: [{ field: 'id', written: id, node: found?.node, origin: found?.origin }], dangling: [], after, relation: undefined };
}
