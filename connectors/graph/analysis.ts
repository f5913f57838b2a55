import type { GraphRelation, VisibleGraph } from './contract.ts';

/**
 * Components and bridges of a visible graph loaded into memory (both backends use these, so
 * the answers are the same by construction). Relations are undirected here; iterative, so a
 * long chain cannot overflow the stack. The callers cap the size (ANALYSIS_NODE_CAP).
 */

interface Adjacency {
  readonly index: Map<string, number>;
  readonly ids: string[];
  /** Per node: [neighbour index, relation index]. */
  readonly edges: [number, number][][];
}

function adjacency(nodeIds: readonly string[], relations: readonly GraphRelation[]): Adjacency {
  const ids = [...nodeIds].sort();
  const index = new Map(ids.map((id, i) => [id, i]));
  const edges: [number, number][][] = ids.map(() => []);
  relations.forEach((relation, r) => {
    const a = index.get(relation.from);
    const b = index.get(relation.to);
    if (a === undefined || b === undefined || a === b) return;
    edges[a]?.push([b, r]);
    edges[b]?.push([a, r]);
  });
  return { index, ids, edges };
}

export function connectedComponents(nodeIds: readonly string[], relations: readonly GraphRelation[]): string[][] {
  const { ids, edges } = adjacency(nodeIds, relations);
  const seen = new Uint8Array(ids.length);
  const components: string[][] = [];
  for (let start = 0; start < ids.length; start += 1) {
    if (seen[start]) continue;
    seen[start] = 1;
    const stack = [start];
    const members: string[] = [];
    while (stack.length > 0) {
      const v = stack.pop() as number;
      members.push(ids[v] as string);
      for (const [w] of edges[v] ?? []) {
        if (!seen[w]) {
          seen[w] = 1;
          stack.push(w);
        }
      }
    }
    components.push(members.sort());
  }
  return components.sort((a, b) => b.length - a.length || ((a[0] ?? '') < (b[0] ?? '') ? -1 : 1));
}

/** A bridge and the sizes of the two parts of its component that it alone holds together. */
/** The connected components of a visible graph: what each store's `components` answers. */
export const componentsOf = (graph: VisibleGraph): string[][] =>
  connectedComponents(
    graph.nodes.map((n) => n.id),
    graph.relations,
  );

/** The bridges of a visible graph: what each store's `bridges` answers. */
export const bridgesOf = (graph: VisibleGraph): GraphRelation[] =>
  findBridges(
    graph.nodes.map((n) => n.id),
    graph.relations,
  );

export interface BridgeSplit {
  readonly relation: GraphRelation;
  /** Nodes on the side of the bridge's end the walk reached second, and on the other side. */
  readonly sides: readonly [number, number];
}

/** Tarjan's bridge-finding with edge identities, so two parallel relations are never bridges. */
export function findBridges(nodeIds: readonly string[], relations: readonly GraphRelation[]): GraphRelation[] {
  return bridgeSplits(nodeIds, relations)
    .map((split) => split.relation)
    .sort(byId);
}

/** Every bridge with the sizes of the parts it joins (subtree sizes of the same walk), by relation id. */
export function bridgeSplits(nodeIds: readonly string[], relations: readonly GraphRelation[]): BridgeSplit[] {
  const { ids, edges } = adjacency(nodeIds, relations);
  const n = ids.length;
  const disc = new Int32Array(n).fill(-1);
  const low = new Int32Array(n);
  const size = new Int32Array(n);
  const splits: BridgeSplit[] = [];
  let time = 0;
  for (let root = 0; root < n; root += 1) {
    if (disc[root] !== -1) continue;
    // Bridges of this component, with the size of the part below them; the other part is the rest.
    const found: { relation: GraphRelation; below: number }[] = [];
    // Frames: node, the relation it was entered by, the next adjacency position.
    const stack: [number, number, number][] = [[root, -1, 0]];
    disc[root] = low[root] = time++;
    size[root] = 1;
    while (stack.length > 0) {
      const frame = stack[stack.length - 1] as [number, number, number];
      const [v, via, next] = frame;
      const list = edges[v] ?? [];
      if (next < list.length) {
        frame[2] = next + 1;
        const [w, r] = list[next] as [number, number];
        if (r === via) continue;
        if (disc[w] === -1) {
          disc[w] = low[w] = time++;
          size[w] = 1;
          stack.push([w, r, 0]);
        } else {
          low[v] = Math.min(low[v] as number, disc[w] as number);
        }
      } else {
        stack.pop();
        const parent = stack[stack.length - 1];
        if (parent !== undefined) {
          const u = parent[0];
          low[u] = Math.min(low[u] as number, low[v] as number);
          size[u] = (size[u] as number) + (size[v] as number);
          if ((low[v] as number) > (disc[u] as number)) found.push({ relation: relations[via] as GraphRelation, below: size[v] as number });
        }
      }
    }
    const component = size[root] as number;
    for (const { relation, below } of found) splits.push({ relation, sides: [below, component - below] });
  }
  return splits.sort((a, b) => byId(a.relation, b.relation));
}

export function byId<T extends { readonly id: string }>(a: T, b: T): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
