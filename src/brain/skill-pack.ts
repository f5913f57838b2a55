import { createHash } from 'node:crypto';
import type { GraphNode, VisibleGraph } from '../../connectors/graph/contract.ts';
import type { Db } from '../store/db.ts';
import type { Services } from '../kernel/services.ts';
import type { Gap } from './read.ts';
import { gapsOf } from './read.ts';
import type { BrainViewer } from './read.ts';

/**
 * get_skill_pack's content: the visible graph compiled into an operating map (docs/company-brain.md,
 * "get_skill_pack"). The dialect renders it in the organisation's language; the registry gives
 * each distinct rendering one revision.
 */

/** Entries a section lists at most; the rest are counted ("and 12 more"), so a pack stays bounded however large the graph. */
export const SKILL_PACK_SECTION_MAX = 40;
/** People listed under one department at most. */
export const SKILL_PACK_PEOPLE_MAX = 12;

export interface Listed<T> {
  readonly items: readonly T[];
  /** How many more there are than `items` shows. */
  readonly more: number;
}

export interface SkillPack {
  readonly organization: GraphNode | undefined;
  /** Visible nodes per type, in the contract's type order (types with none left out). */
  readonly counts: readonly { readonly type: string; readonly count: number }[];
  /** Nodes of the tenant the viewer does not see. */
  readonly hidden: number;
  readonly departments: Listed<{ readonly node: GraphNode; readonly people: Listed<GraphNode> }>;
  readonly processes: Listed<{ readonly node: GraphNode; readonly owners: readonly GraphNode[] }>;
  readonly systems: Listed<GraphNode>;
  readonly agents: Listed<{ readonly node: GraphNode; readonly owners: readonly GraphNode[] }>;
  readonly dataSources: Listed<GraphNode>;
  readonly gaps: Listed<Gap>;
}

const TYPE_ORDER = ['organization', 'person', 'department', 'project', 'agent', 'SOP / process', 'tool', 'strategy', 'data source', 'policy'];

function listed<T>(all: readonly T[], max = SKILL_PACK_SECTION_MAX): Listed<T> {
  return { items: all.slice(0, max), more: Math.max(0, all.length - max) };
}

/** Compiles the pack of a visible graph (pure: the same graph, hidden count and instant give the same pack). */
export function compileSkillPack(graph: VisibleGraph, hidden: number, now: Date): SkillPack {
  const nodes = new Map(graph.nodes.map((n) => [n.id, n]));
  const ofType = (type: string) => graph.nodes.filter((n) => n.type === type);
  const incoming = (id: string, verb: string) =>
    graph.relations
      .filter((r) => r.to === id && r.verb === verb)
      .map((r) => nodes.get(r.from))
      .filter((n): n is GraphNode => n !== undefined);
  const counts = TYPE_ORDER.map((type) => ({ type, count: ofType(type).length })).filter((c) => c.count > 0);
  return {
    organization: nodes.get('org'),
    counts,
    hidden,
    departments: listed(
      ofType('department').map((node) => ({
        node,
        people: listed(
          incoming(node.id, 'belongs to').filter((n) => n.type === 'person'),
          SKILL_PACK_PEOPLE_MAX,
        ),
      })),
    ),
    processes: listed(ofType('SOP / process').map((node) => ({ node, owners: [...incoming(node.id, 'owns'), ...incoming(node.id, 'manages')] }))),
    systems: listed(ofType('tool')),
    agents: listed(ofType('agent').map((node) => ({ node, owners: incoming(node.id, 'owns') }))),
    dataSources: listed(ofType('data source')),
    gaps: listed(gapsOf(graph, now)),
  };
}

/** The pack of what the viewer sees now. */
export async function skillPackFor(services: Services, viewer: BrainViewer, now: Date): Promise<SkillPack> {
  const input = { tenantId: viewer.tenantId, visible: viewer.visible };
  const graph = await services.graph.visibleGraph(input);
  const total = (await services.graph.counts(viewer.tenantId)).nodes;
  return compileSkillPack(graph, Math.max(0, total - graph.nodes.length), now);
}

// Any constant of our own, beside the org apply lock's.
const SKILL_PACK_LOCK_CLASS = 727_003;

export interface PackRevision {
  readonly revision: number;
  readonly contentHash: string;
  /** ISO 8601: when this revision was first given. */
  readonly generatedAt: string;
}

export const contentHash = (text: string): string => `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;

/**
 * The registry's revision of a pack: the one it already has for this content, or the next one,
 * appended. Calls for one tenant are serialised, so concurrent calls with a new pack append it
 * once and all get that revision.
 */
export async function packRevision(db: Db, tenantId: string, text: string): Promise<PackRevision> {
  const hash = contentHash(text);
  return db.tx(async (tx) => {
    const find = async () =>
      (
        await tx.query<{ revision: number; generated_at: Date }>(
          'SELECT revision, generated_at FROM brain_skill_pack_revisions WHERE tenant_id = $1 AND content_hash = $2',
          [tenantId, hash],
        )
      )[0];
    let row = await find();
    if (row === undefined) {
      await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [SKILL_PACK_LOCK_CLASS, tenantId]);
      row = await find();
      if (row === undefined) {
        [row] = await tx.query<{ revision: number; generated_at: Date }>(
          `INSERT INTO brain_skill_pack_revisions (tenant_id, revision, content_hash)
           SELECT $1, coalesce(max(revision), 0) + 1, $2 FROM brain_skill_pack_revisions WHERE tenant_id = $1
           RETURNING revision, generated_at`,
          [tenantId, hash],
        );
      }
    }
    if (row === undefined) throw new Error('the skill pack registry returned no revision');
    return { revision: Number(row.revision), contentHash: hash, generatedAt: row.generated_at.toISOString() };
  });
}
