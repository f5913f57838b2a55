import { z } from 'zod';
import { TIERS } from '../kernel/directory/tiers.ts';
import type { Queryable } from '../store/db.ts';
import { MARKS, METADATA_KEYS, NODE_ID, NODE_TYPES, RELATION_VERBS } from './model.ts';

/**
 * Company Brain onboarding (docs/company-brain.md, "Onboarding"): seven steps an organisation
 * goes through to give its brain enough to work with, how ready its evidence is, and the
 * actions an agent may propose to move it on. Status is counts and step states only: never a
 * name, a title or a text.
 */

export const ONBOARDING_STEPS = ['organization', 'departments', 'processes', 'systems', 'agents', 'policies', 'strategy'] as const;
export type OnboardingStep = (typeof ONBOARDING_STEPS)[number];
export type StepState = 'done' | 'in_progress' | 'not_started';

export interface OnboardingStatus {
  readonly steps: readonly { readonly step: OnboardingStep; readonly state: StepState; readonly count: number }[];
  /** The first step not done; undefined when all are. */
  readonly next: OnboardingStep | undefined;
  readonly evidence: { readonly nodes: number; readonly current: number; readonly stale: number; readonly unverified: number; readonly marked: number };
}

interface Counts {
  people: number;
  peopleWithoutDepartment: number;
  departments: number;
  processes: number;
  ownedProcesses: number;
  systems: number;
  usedSystems: number;
  agents: number;
  ownedAgents: number;
  policies: number;
  governingPolicies: number;
  strategies: number;
  nodes: number;
  current: number;
  stale: number;
  unverified: number;
  marked: number;
}

// One statement over the tenant's directory and brain truth; counts only.
const COUNTS = `
  WITH p AS (SELECT kind, owner_id, departments FROM principals WHERE tenant_id = $1),
       n AS (SELECT id, type, verified_at, review_by, mark FROM brain_nodes WHERE tenant_id = $1),
       r AS (SELECT from_id, verb, to_id FROM brain_relations WHERE tenant_id = $1)
  SELECT
    (SELECT count(*) FROM p WHERE kind = 'person')::int AS people,
    (SELECT count(*) FROM p WHERE kind = 'person' AND cardinality(departments) = 0)::int AS "peopleWithoutDepartment",
    (SELECT count(DISTINCT d) FROM p, unnest(p.departments) AS d)::int + (SELECT count(*) FROM n WHERE type = 'department')::int AS departments,
    (SELECT count(*) FROM n WHERE type = 'SOP / process')::int AS processes,
    (SELECT count(*) FROM n WHERE type = 'SOP / process' AND EXISTS (SELECT 1 FROM r WHERE r.to_id = n.id AND r.verb IN ('owns', 'manages')))::int AS "ownedProcesses",
    (SELECT count(*) FROM n WHERE type IN ('tool', 'data source'))::int AS systems,
    (SELECT count(*) FROM n WHERE type IN ('tool', 'data source') AND EXISTS (SELECT 1 FROM r WHERE r.to_id = n.id AND r.verb IN ('uses', 'depends on')))::int AS "usedSystems",
    (SELECT count(*) FROM p WHERE kind = 'agent')::int + (SELECT count(*) FROM n WHERE type = 'agent')::int AS agents,
    (SELECT count(*) FROM p WHERE kind = 'agent' AND owner_id IS NOT NULL)::int AS "ownedAgents",
    (SELECT count(*) FROM n WHERE type = 'policy')::int AS policies,
    (SELECT count(*) FROM n WHERE type = 'policy' AND EXISTS (SELECT 1 FROM r WHERE r.from_id = n.id AND r.verb = 'governs'))::int AS "governingPolicies",
    (SELECT count(*) FROM n WHERE type = 'strategy')::int AS strategies,
    (SELECT count(*) FROM n)::int AS nodes,
    (SELECT count(*) FROM n WHERE verified_at IS NOT NULL AND (review_by IS NULL OR review_by >= $2))::int AS current,
    (SELECT count(*) FROM n WHERE review_by < $2)::int AS stale,
    (SELECT count(*) FROM n WHERE verified_at IS NULL AND (review_by IS NULL OR review_by >= $2))::int AS unverified,
    (SELECT count(*) FROM n WHERE mark IS NOT NULL)::int AS marked`;

/**
 * Each step is done when its criterion holds, in progress when something of it exists, not
 * started otherwise:
 *   organization: at least one person;
 *   departments:  at least one department, and every person in one;
 *   processes:    a process (SOP / process) with an owner (owns or manages);
 *   systems:      a tool or data source a node uses or depends on;
 *   agents:       an agent of the directory with an owner;
 *   policies:     a policy that governs something;
 *   strategy:     a strategy.
 */
export async function onboardingStatus(q: Queryable, tenantId: string, now: Date): Promise<OnboardingStatus> {
  const [c] = await q.query<Counts>(COUNTS, [tenantId, now]);
  if (c === undefined) throw new Error('onboarding counts returned no row');
  const state = (done: boolean, some: number): StepState => (done ? 'done' : some > 0 ? 'in_progress' : 'not_started');
  const steps = [
    { step: 'organization' as const, state: state(c.people > 0, c.people), count: c.people },
    { step: 'departments' as const, state: state(c.departments > 0 && c.peopleWithoutDepartment === 0, c.departments), count: c.departments },
    { step: 'processes' as const, state: state(c.ownedProcesses > 0, c.processes), count: c.processes },
    { step: 'systems' as const, state: state(c.usedSystems > 0, c.systems), count: c.systems },
    { step: 'agents' as const, state: state(c.ownedAgents > 0, c.agents), count: c.agents },
    { step: 'policies' as const, state: state(c.governingPolicies > 0, c.policies), count: c.policies },
    { step: 'strategy' as const, state: state(c.strategies > 0, c.strategies), count: c.strategies },
  ];
  return {
    steps,
    next: steps.find((s) => s.state !== 'done')?.step,
    evidence: { nodes: c.nodes, current: c.current, stale: c.stale, unverified: c.unverified, marked: c.marked },
  };
}

// ---------------------------------------------------------------------------------------------
// The action catalog: what propose_onboarding_action may queue. Each is a real change of the
// brain's truth when a manager approves it (docs/company-brain.md, "Onboarding actions").

const nodeId = z.string().regex(NODE_ID).describe('A node id of the brain: 1 to 80 lower-case letters, digits, ".", "_" and "-".');
const endpoint = z
  .string()
  .min(1)
  .max(300)
  .describe('A node id, "org", or person:<email or id>, agent:<name or id>, department:<name> or project:<name> of the directory.');
const title = z.string().min(1).max(200);
const summary = z.string().max(4000);
const instant = z.iso.datetime({ offset: true }).describe('An ISO 8601 instant with its offset.');

const nodeFields = {
  type: z.enum(NODE_TYPES),
  title,
  summary: summary.optional(),
  access: z.enum(TIERS),
  department: z.string().min(1).max(200).optional().describe('Required exactly when access is department.'),
  project: z.string().min(1).max(200).optional().describe('Required exactly when access is project.'),
  tags: z.array(z.string().min(1).max(60)).max(20).optional(),
  metadata: z.partialRecord(z.enum(METADATA_KEYS), z.union([z.string().max(500), z.number()])).optional(),
  mark: z.enum(MARKS).optional(),
};

/** A node's tier names its department (project) exactly when it is department (project), as the truth's CHECK says. */
const nodeDetails = z
  .object({ id: nodeId, ...nodeFields })
  .strict()
  .refine((v) => (v.access === 'department') === (v.department !== undefined), {
    message: '"department" is given exactly when access is department',
    path: ['department'],
  })
  .refine((v) => (v.access === 'project') === (v.project !== undefined), { message: '"project" is given exactly when access is project', path: ['project'] });

export const ONBOARDING_ACTIONS = {
  add_node: {
    risk: 'medium',
    description: 'Adds a node to the brain.',
    details: nodeDetails,
  },
  update_node: {
    risk: 'medium',
    description: "Replaces a brain node's fields (every field given; the node must exist).",
    details: nodeDetails,
  },
  remove_node: {
    risk: 'high',
    description: 'Removes a brain node and every relation touching it.',
    details: z.object({ id: nodeId }).strict(),
  },
  add_relation: {
    risk: 'low',
    description: 'Adds a relation between two nodes.',
    details: z.object({ from: endpoint, verb: z.enum(RELATION_VERBS), to: endpoint, mark: z.enum(MARKS).optional() }).strict(),
  },
  remove_relation: {
    risk: 'medium',
    description: 'Removes a relation.',
    details: z.object({ from: endpoint, verb: z.enum(RELATION_VERBS), to: endpoint }).strict(),
  },
  confirm_node: {
    risk: 'low',
    description: 'Records that a node was verified, with its next review date, and clears an inferred or unresolved mark.',
    details: z.object({ id: nodeId, verified: instant, review_by: instant }).strict(),
  },
} as const;

export type OnboardingAction = keyof typeof ONBOARDING_ACTIONS;
export const ONBOARDING_ACTION_NAMES = Object.keys(ONBOARDING_ACTIONS) as OnboardingAction[];

export interface CatalogEntry {
  readonly action: OnboardingAction;
  readonly risk: 'low' | 'medium' | 'high';
  readonly description: string;
  /** The exact JSON Schema (draft 2020-12) `details` must match. */
  readonly schema: Record<string, unknown>;
}

/** Each action with its JSON Schema and risk level, in the catalog's order; built once. */
export const ACTION_CATALOG: readonly CatalogEntry[] = ONBOARDING_ACTION_NAMES.map((action) => {
  const def = ONBOARDING_ACTIONS[action];
  const { $schema: _ignored, ...schema } = z.toJSONSchema(def.details, { target: 'draft-2020-12' }) as Record<string, unknown>;
  return { action, risk: def.risk, description: def.description, schema };
});
