import { clears, TIERS } from '../../src/kernel/directory/tiers.ts';
import type { Tier } from '../../src/kernel/directory/tiers.ts';
import type { Queryable } from '../../src/store/db.ts';

/**
 * The graph store: the projection of Company Brain nodes and relations that Postgres (the
 * truth) keeps. Every call names the tenant; nothing of another tenant is ever read or
 * written. docs/connectors.md ("Graph store") describes both implementations.
 */

/** "inferred" is an inferred hypothesis needing confirmation; "unresolved" an unresolved mapping, not a fact. */
export const GRAPH_STATUSES = ['verified', 'inferred', 'unresolved'] as const;
export type GraphStatus = (typeof GRAPH_STATUSES)[number];

export interface GraphNode {
  readonly id: string;
  readonly type: string;
  readonly properties: Readonly<Record<string, unknown>>;
  readonly access: Tier;
  readonly department: string | undefined;
  readonly project: string | undefined;
  readonly status: GraphStatus;
}

export interface GraphRelation {
  readonly id: string;
  readonly from: string;
  readonly to: string;
  readonly verb: string;
  readonly status: GraphStatus;
  readonly properties: Readonly<Record<string, unknown>>;
}

export interface UpsertNodeInput {
  readonly tenantId: string;
  readonly id: string;
  readonly type: string;
  readonly properties: Readonly<Record<string, unknown>>;
  readonly access: Tier;
  readonly department?: string | undefined;
  readonly project?: string | undefined;
  /** Defaults to verified. */
  readonly status?: GraphStatus | undefined;
}

export interface UpsertRelationInput {
  readonly tenantId: string;
  readonly id: string;
  readonly from: string;
  readonly to: string;
  readonly verb: string;
  readonly status?: GraphStatus | undefined;
  readonly properties: Readonly<Record<string, unknown>>;
}

/**
 * Who is looking, as data: the viewer's tier and memberships, the same inputs as
 * `visibleAtTier` (src/kernel/directory/tiers.ts). Both backends apply `visibilityFilter` of it.
 */
export interface GraphVisibility {
  readonly tier: Tier;
  readonly departments: readonly string[];
  readonly projects: readonly string[];
}

/**
 * `visibleAtTier` compiled to plain lists, so SQL and Cypher apply it with parameters:
 * a node is visible when
 *   access ∈ levels AND (access ∉ {department, project} OR allScoped
 *     OR (access = department AND department ∈ departments)
 *     OR (access = project AND project ∈ projects)).
 * A scoped node without a department or project is visible only when allScoped.
 */
export interface VisibilityFilter {
  /** Every access level the tier clears. */
  readonly levels: string[];
  /** The tier clears manager: every department and project node within `levels` is visible. */
  readonly allScoped: boolean;
  readonly departments: string[];
  readonly projects: string[];
}

export function visibilityFilter(visible: GraphVisibility): VisibilityFilter {
  return {
    levels: TIERS.filter((level) => clears(visible.tier, level)),
    allScoped: clears(visible.tier, 'manager'),
    departments: [...visible.departments],
    projects: [...visible.projects],
  };
}

export interface NeighboursInput {
  readonly tenantId: string;
  readonly id: string;
  readonly depth: 1 | 2;
  /** out: follow relations from the node; in: towards it; both: either way. */
  readonly direction: 'out' | 'in' | 'both';
  /** Only relations with one of these verbs; all when absent. */
  readonly verbs?: readonly string[] | undefined;
  readonly visible: GraphVisibility;
}

export interface Neighbourhood {
  /** The nodes reached, each with its shortest distance (1 or 2), by distance then id; never the start node. */
  readonly nodes: { readonly node: GraphNode; readonly depth: number }[];
  /** The relations walked: those matching verbs and direction whose near end is at distance < depth; by id. */
  readonly relations: GraphRelation[];
}

export interface WeakNode {
  readonly node: GraphNode;
  /** Visible relations touching the node (a relation to a hidden node does not count). */
  readonly degree: number;
}

export interface VisibleGraph {
  readonly nodes: readonly GraphNode[];
  readonly relations: readonly GraphRelation[];
}

export interface GraphCounts {
  readonly nodes: number;
  readonly relations: number;
}

export interface GraphHealth {
  readonly backend: 'postgres' | 'neo4j';
  readonly ok: true;
}

// ---------------------------------------------------------------------------------------------
// Knowledge-Base files and their references (what Atmina's `related` walks)

export const KB_LINK_TYPES = ['markdown', 'wiki', 'front_matter'] as const;
export type KbLinkType = (typeof KB_LINK_TYPES)[number];

/** A live KB file as the graph knows it: where it is, and what it is. */
export interface KbFileNode {
  readonly tenantId: string;
  readonly kbId: string;
  readonly fileId: string;
  readonly path: string;
  readonly kind: 'text' | 'asset';
  readonly mediaType: string;
}

/**
 * One reference a file makes. It names paths, not files: it is resolved against the KB's live
 * files when it is read, so a file that appears at a path later resolves it.
 */
export interface KbLinkInput {
  readonly type: KbLinkType;
  /** The front-matter key, for front_matter. */
  readonly key?: string | undefined;
  /** The path it points at, or the target as written when it can name no file. */
  readonly target: string;
  /** Candidate paths (at most two), the first live one wins; empty when it can name no file. */
  readonly paths: readonly string[];
  /** A bare wiki name's file name: a unique file with it resolves the reference when no path does. */
  readonly name?: string | undefined;
}

/** The last segment of a KB path: the name a bare wiki name is matched against. */
export const fileNameOf = (path: string): string => path.slice(path.lastIndexOf('/') + 1);

/** A stored reference, with the file that makes it. */
export interface KbLinkRecord extends KbLinkInput {
  readonly fromFileId: string;
}

export interface KbFileRecord {
  readonly fileId: string;
  readonly path: string;
  readonly kind: 'text' | 'asset';
  readonly mediaType: string;
}

/**
 * What `related` reads of a store, implemented by each backend; the product resolves and walks
 * on top of it (Atmina's kb/graph-links.ts), so both backends answer alike. Every read is within one tenant and one KB and
 * returns at most `limit` rows.
 */
export interface KbLinkReads {
  files(input: {
    readonly tenantId: string;
    readonly kbId: string;
    readonly ids?: readonly string[];
    readonly paths?: readonly string[];
    readonly names?: readonly string[];
    readonly limit: number;
  }): Promise<KbFileRecord[]>;
  /** The references the files make, of the types when given. */
  linksFrom(input: {
    readonly tenantId: string;
    readonly kbId: string;
    readonly fileIds: readonly string[];
    readonly types: readonly KbLinkType[];
    readonly limit: number;
  }): Promise<KbLinkRecord[]>;
  /** References naming one of the paths as a candidate, or one of the file names. */
  linksTo(input: {
    readonly tenantId: string;
    readonly kbId: string;
    readonly paths: readonly string[];
    readonly names: readonly string[];
    readonly types: readonly KbLinkType[];
    readonly limit: number;
  }): Promise<KbLinkRecord[]>;
}

/** One change of a `write` batch. */
export type GraphChange =
  | { readonly op: 'upsertNode'; readonly node: UpsertNodeInput }
  /** Records the file where it now is and replaces its references with `links`. */
  | { readonly op: 'putKbFile'; readonly file: KbFileNode; readonly links: readonly KbLinkInput[] }
  /** Forgets the file and its references (references to its path stay, and are unresolved). */
  | { readonly op: 'removeKbFile'; readonly tenantId: string; readonly fileId: string }
  | { readonly op: 'deleteNode'; readonly tenantId: string; readonly id: string }
  | { readonly op: 'upsertRelation'; readonly relation: UpsertRelationInput }
  | { readonly op: 'deleteRelation'; readonly tenantId: string; readonly id: string };

/**
 * Where a batch is written. The outbox worker passes its claim transaction: the Postgres store
 * writes through it, so the change and the claim commit together; Neo4j ignores it.
 */
export interface GraphWriteContext {
  readonly tx?: Queryable;
}

export interface GraphStore {
  readonly backend: 'postgres' | 'neo4j';
  /**
   * Applies the changes in order, all or nothing (one transaction). Upserts are last-write-wins
   * and deletes of absent items are no-ops, so a batch may be applied again.
   */
  write(changes: readonly GraphChange[], context?: GraphWriteContext): Promise<void>;
  /** Creates or replaces the node (last write wins). */
  upsertNode(input: UpsertNodeInput): Promise<void>;
  /** Removes the node and every relation touching it; false when there was none. */
  deleteNode(input: { readonly tenantId: string; readonly id: string }): Promise<boolean>;
  /** Creates or replaces the relation; both end nodes must exist (GraphEndpointMissing). */
  upsertRelation(input: UpsertRelationInput): Promise<void>;
  deleteRelation(input: { readonly tenantId: string; readonly id: string }): Promise<boolean>;
  /**
   * The visible nodes within `depth` of a visible node; paths run through visible nodes only.
   * An unknown or hidden start node gives an empty neighbourhood.
   */
  neighbours(input: NeighboursInput): Promise<Neighbourhood>;
  /** Visible nodes with at most `maxDegree` visible relations, by degree then id. */
  weaklyLinked(input: { readonly tenantId: string; readonly maxDegree: number; readonly visible: GraphVisibility }): Promise<WeakNode[]>;
  /**
   * The visible graph whole: every visible node and every relation between two visible nodes,
   * each list by id; throws GraphTooLarge past ANALYSIS_NODE_CAP nodes or ANALYSIS_RELATION_CAP
   * relations.
   */
  visibleGraph(input: { readonly tenantId: string; readonly visible: GraphVisibility }): Promise<VisibleGraph>;
  /**
   * One node whatever its access, with the number of relations touching it (to any node): what
   * tells an unknown id from one above a viewer's tier, and how many of its relations a viewer
   * does not see. Callers decide visibility (visibleAtTier) before showing anything of it.
   */
  node(input: { readonly tenantId: string; readonly id: string }): Promise<{ readonly node: GraphNode; readonly degree: number } | undefined>;
  /** Connected components of the visible graph (relations undirected): ids sorted, largest first, then by first id. */
  components(input: { readonly tenantId: string; readonly visible: GraphVisibility }): Promise<string[][]>;
  /** Visible relations whose removal splits their component (a pair held by a single relation); by id. */
  bridges(input: { readonly tenantId: string; readonly visible: GraphVisibility }): Promise<GraphRelation[]>;
  /** The reads of KB files and their references, within one tenant and KB, that `related` walks. */
  kbLinks(): KbLinkReads;
  /** Everything of the tenant, regardless of visibility (Company Brain nodes and relations). */
  counts(tenantId: string): Promise<GraphCounts>;
  /** Removes everything of the tenant, KB files and their references included. */
  clear(tenantId: string): Promise<void>;
  /** Removes everything of every tenant (before a rebuild of the projection). */
  clearAll(): Promise<void>;
  /** Resolves when the store answers; throws otherwise. */
  health(): Promise<GraphHealth>;
  close(): Promise<void>;
}

/** An upsertRelation whose from or to node does not exist in the tenant. */
export class GraphEndpointMissing extends Error {
  constructor(relationId: string) {
    super(`relation ${relationId}: its from or to node does not exist`);
    this.name = 'GraphEndpointMissing';
  }
}

/** components and bridges load the visible graph into memory; a larger one is refused. */
export const ANALYSIS_NODE_CAP = 50_000;
export const ANALYSIS_RELATION_CAP = 200_000;

export class GraphTooLarge extends Error {
  constructor(what: string, cap: number) {
    super(`the visible graph has more than ${cap} ${what}; components and bridges are capped at that`);
    this.name = 'GraphTooLarge';
  }
}
