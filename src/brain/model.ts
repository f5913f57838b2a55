import type { Tier } from '../kernel/directory/tiers.ts';

/**
 * The Company Brain's stable vocabulary (../docs/company-brain.md): what the machine contract of
 * the dialect fixes in English whatever the organisation's language. The CHECK constraints of
 * src/store/migrations/0023_brain.sql list the same words.
 */

export const NODE_TYPES = ['organization', 'person', 'department', 'project', 'agent', 'SOP / process', 'tool', 'strategy', 'data source', 'policy'] as const;
export type NodeType = (typeof NODE_TYPES)[number];

export const RELATION_VERBS = [
  'is part of',
  'belongs to',
  'manages',
  'works on',
  'owns',
  'uses',
  'depends on',
  'governs',
  'can access',
  'supports',
  'champions',
  'targets',
  'needs clarification with',
] as const;
export type RelationVerb = (typeof RELATION_VERBS)[number];

export const METADATA_KEYS = ['Title', 'Coverage', 'Owner', 'Relation', 'Model', 'Approval threshold', 'Score', 'Quadrant', 'Estimated savings/year'] as const;
export type MetadataKey = (typeof METADATA_KEYS)[number];

/** A knowledge status mark as stored; unmarked items are verified. */
export const MARKS = ['inferred', 'unresolved'] as const;
export type Mark = (typeof MARKS)[number];

/** The phrase each mark is rendered as, after WARNING_SIGN: the contract's exact words. */
export const MARK_PHRASES: Readonly<Record<Mark, string>> = {
  inferred: 'inferred hypothesis; needs confirmation',
  unresolved: 'unresolved mapping; not a fact',
};
export const WARNING_SIGN = '⚠';

/** Who keeps a node or relation: the org file's `brain:` section, `kgw brain import`, or an approved proposal. */
export type Origin = 'org' | 'import' | 'inbox';

/** A node as the truth holds it. Display text (title, summary, metadata values, tags) is the organisation's. */
export interface BrainNode {
  readonly id: string;
  readonly type: NodeType;
  readonly title: string;
  readonly summary: string;
  readonly access: Tier;
  /** Set exactly when access is department (project). */
  readonly department: string | null;
  readonly project: string | null;
  /** Keys from METADATA_KEYS, in that order. */
  readonly metadata: Readonly<Partial<Record<MetadataKey, string | number>>>;
  readonly tags: readonly string[];
  /** ISO 8601 instants. */
  readonly verifiedAt: string | null;
  readonly reviewBy: string | null;
  readonly mark: Mark | null;
}

/** A relation as the truth holds it; `from` and `to` are graph node ids (a brain node's, or the directory's). */
export interface BrainRelation {
  readonly from: string;
  readonly verb: RelationVerb;
  readonly to: string;
  readonly mark: Mark | null;
}

/** The graph id of a relation: the directory's relations are named the same way. */
export const relationId = (r: { readonly from: string; readonly verb: string; readonly to: string }): string => `${r.from}|${r.verb}|${r.to}`;

/**
 * Bounds (docs/company-brain.md, "Bounds"): what one tenant's brain and one node may hold, so
 * every whole-graph answer (the skill pack, gaps, a diff after a write) stays a bounded amount of work.
 */
export const BRAIN_BOUNDS = {
  nodes: 20_000,
  relations: 100_000,
  titleChars: 200,
  summaryChars: 4000,
  tags: 20,
  tagChars: 60,
  metadataValueChars: 500,
  /** An import file's size, in bytes. */
  importBytes: 16 * 1024 * 1024,
} as const;

/** A node id as an organisation writes it; `org` and anything with ':' are the directory's. */
export const NODE_ID = /^[a-z0-9][a-z0-9._-]{0,79}$/;
export const isBrainNodeId = (id: string): boolean => NODE_ID.test(id) && id !== 'org';
