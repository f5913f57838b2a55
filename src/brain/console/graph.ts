import { readFileSync } from 'node:fs';
import { readable } from '../../console/views.ts';
import { createRequire } from 'node:module';
import type { GraphNode, GraphRelation, VisibleGraph } from '../../../connectors/graph/contract.ts';
import type { ConsolePerson, ConsoleSection, SectionAnswer, SectionRequest } from '../../console/contract.ts';
import { CONSOLE_PATH } from '../../console/page.ts';
import type { Lang } from '../../console/text.ts';
import { count, fill } from '../../console/text.ts';
import type { SafeHtml } from '../../http/pages/html.ts';
import { html } from '../../http/pages/html.ts';
import { hasScopes } from '../../kernel/access/caller.ts';
import { principalAccess } from '../../kernel/directory/principals.ts';
import type { Tier } from '../../kernel/directory/tiers.ts';
import { clears, TIERS } from '../../kernel/directory/tiers.ts';
import { refusal } from '../../kernel/errors.ts';
import { visibleText } from '../../kernel/text.ts';
import { METADATA_KEYS } from '../model.ts';
import type { BrainViewer, Gap, GapKind } from '../read.ts';
import { brainViewer, GAP_KINDS, gapsOf, readConcept } from '../read.ts';
import { G } from './graph-texts.ts';

/**
 * The console's Organisation graph (docs/console.md, "Organisation graph"): the Company Brain as
 * the signed-in person may read it, drawn, listed and filtered, each node one click from its page
 * of fields and relations. Everything comes through the brain's own reads with the person as the
 * caller (brainViewer, the store's visibleGraph with their tier, readConcept, gapsOf), as
 * get_skill_pack, read_concept and list_gaps read it; a node above their tier is only counted,
 * as those tools count it, and its page is the same Not found as an unknown id's.
 */

/** Nodes one drawing holds at most: past this the first ones by id are drawn and the page says so (README, Hardening). */
export const GRAPH_DRAW_MAX_NODES = 2000;
/** Relations one drawing holds at most, among the drawn nodes (README, Hardening). */
export const GRAPH_DRAW_MAX_RELATIONS = 8000;
/** Rows on one page of the node list (README, Hardening). */
export const GRAPH_LIST_PAGE_SIZE = 100;
/** Gaps the graph page lists at most; the rest are counted (README, Hardening). */
export const GRAPH_GAPS_SHOWN_MAX = 50;
/** Relations a node's page lists at most; the rest are counted (README, Hardening). */
export const GRAPH_NODE_RELATIONS_MAX = 500;

const ID = 'graph';
const sectionUrl = (who: ConsolePerson, path = ''): string => `${who.services.config.publicUrl}${CONSOLE_PATH}/${ID}${path}`;
const nodeUrl = (who: ConsolePerson, id: string): string => sectionUrl(who, `/node/${encodeURIComponent(id)}`);
const titleOf = (node: GraphNode): string => {
  const title = node.properties.title;
  return readable(typeof title === 'string' && title !== '' ? title : node.id);
};
const relationKey = (from: string, verb: string, to: string): string => `${from}\u0000${verb}\u0000${to}`;

/** The list's filters as the query string gives them; a value that is not one of the person's choices is no filter. */
interface GraphQuery {
  readonly type: string | undefined;
  readonly tier: Tier | undefined;
  readonly page: number;
}

function readQuery(query: URLSearchParams, types: ReadonlySet<string>, tiers: readonly Tier[]): GraphQuery {
  const type = query.get('type') ?? '';
  const tier = query.get('tier') ?? '';
  const page = Number(query.get('page') ?? '1');
  return {
    type: types.has(type) ? type : undefined,
    tier: (tiers as readonly string[]).includes(tier) ? (tier as Tier) : undefined,
    page: Number.isSafeInteger(page) && page >= 1 ? page : 1,
  };
}

const queryString = (query: GraphQuery, page?: number): string => {
  const params = new URLSearchParams();
  if (query.type !== undefined) params.set('type', query.type);
  if (query.tier !== undefined) params.set('tier', query.tier);
  if (page !== undefined) params.set('page', String(page));
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
};

/** The graph as this person sees it, with what the brain's reads say of it. */
interface GraphView {
  readonly viewer: BrainViewer;
  readonly graph: VisibleGraph;
  /** Nodes of the organisation the person does not see: get_skill_pack's count. */
  readonly hidden: number;
  readonly gaps: readonly Gap[];
  /** Gap kinds by node id, and by relation (relationKey). */
  readonly nodeGaps: ReadonlyMap<string, ReadonlySet<GapKind>>;
  readonly relationGaps: ReadonlyMap<string, ReadonlySet<GapKind>>;
  readonly degree: ReadonlyMap<string, number>;
  /** The types of the nodes the person sees, and the tiers they clear: the filters' choices. */
  readonly types: readonly string[];
  readonly tiers: readonly Tier[];
}

async function viewOf(who: ConsolePerson): Promise<GraphView> {
  const { services } = who;
  const viewer = await brainViewer(services, who.caller);
  const graph = await services.graph.visibleGraph({ tenantId: viewer.tenantId, visible: viewer.visible });
  // As get_skill_pack counts: every node of the tenant but those the person sees.
  const hidden = Math.max(0, (await services.graph.counts(viewer.tenantId)).nodes - graph.nodes.length);
  const gaps = gapsOf(graph, new Date());
  const nodeGaps = new Map<string, Set<GapKind>>();
  const relationGaps = new Map<string, Set<GapKind>>();
  const mark = (map: Map<string, Set<GapKind>>, key: string, kind: GapKind) => map.set(key, (map.get(key) ?? new Set()).add(kind));
  for (const gap of gaps) {
    if (gap.kind === 'thin_link') {
      mark(nodeGaps, gap.from.id, gap.kind);
      mark(nodeGaps, gap.to.id, gap.kind);
      mark(relationGaps, relationKey(gap.from.id, gap.verb, gap.to.id), gap.kind);
    } else {
      mark(nodeGaps, gap.node.id, gap.kind);
      if (gap.kind === 'clarification' && gap.relation !== undefined) {
        mark(nodeGaps, gap.relation.other.id, gap.kind);
        mark(relationGaps, relationKey(gap.node.id, gap.relation.verb, gap.relation.other.id), gap.kind);
      }
    }
  }
  const degree = new Map<string, number>();
  for (const r of graph.relations) {
    degree.set(r.from, (degree.get(r.from) ?? 0) + 1);
    if (r.to !== r.from) degree.set(r.to, (degree.get(r.to) ?? 0) + 1);
  }
  const types = [...new Set(graph.nodes.map((n) => n.type))].sort((a, b) => a.localeCompare(b, 'en'));
  const tiers = TIERS.filter((level) => clears(viewer.access.tier, level));
  return { viewer, graph, hidden, gaps, nodeGaps, relationGaps, degree, types, tiers };
}

const matching = (view: GraphView, query: GraphQuery): readonly GraphNode[] =>
  view.graph.nodes.filter((n) => (query.type === undefined || n.type === query.type) && (query.tier === undefined || n.access === query.tier));

/** What the drawing gets: the first GRAPH_DRAW_MAX_NODES matching nodes and the relations among them, and only counts of the rest. */
export interface GraphJson {
  readonly nodes: readonly {
    readonly id: string;
    readonly title: string;
    readonly type: string;
    readonly access: string;
    readonly mark: 'inferred' | 'unresolved' | null;
    readonly gaps: readonly GapKind[];
    readonly url: string;
  }[];
  readonly relations: readonly {
    readonly from: string;
    readonly verb: string;
    readonly to: string;
    readonly mark: 'inferred' | 'unresolved' | null;
    readonly gap: boolean;
  }[];
  /** Visible nodes matching the filters, drawn or not. */
  readonly matching: number;
  /** Nodes of the organisation above the person's tier. */
  readonly hidden: number;
  readonly maxNodes: number;
  /** Relations among the drawn nodes left out past GRAPH_DRAW_MAX_RELATIONS. */
  readonly relationsLeftOut: number;
}

const markOf = (status: string): 'inferred' | 'unresolved' | null => (status === 'inferred' || status === 'unresolved' ? status : null);

export function graphJson(who: ConsolePerson, view: GraphView, query: GraphQuery): GraphJson {
  const all = matching(view, query);
  const drawn = all.slice(0, GRAPH_DRAW_MAX_NODES);
  const ids = new Set(drawn.map((n) => n.id));
  const among = view.graph.relations.filter((r: GraphRelation) => ids.has(r.from) && ids.has(r.to));
  return {
    nodes: drawn.map((n) => ({
      id: n.id,
      title: titleOf(n),
      type: n.type,
      access: n.access,
      mark: markOf(n.status),
      gaps: GAP_KINDS.filter((kind) => view.nodeGaps.get(n.id)?.has(kind) === true),
      url: nodeUrl(who, n.id),
    })),
    relations: among.slice(0, GRAPH_DRAW_MAX_RELATIONS).map((r) => ({
      from: r.from,
      verb: r.verb,
      to: r.to,
      mark: markOf(r.status),
      gap: view.relationGaps.has(relationKey(r.from, r.verb, r.to)),
    })),
    matching: all.length,
    hidden: view.hidden,
    maxNodes: GRAPH_DRAW_MAX_NODES,
    relationsLeftOut: Math.max(0, among.length - GRAPH_DRAW_MAX_RELATIONS),
  };
}

const markBadge = (lang: Lang, status: string): SafeHtml | string => {
  const mark = markOf(status);
  if (mark === null) return '';
  return html`<span class="badge warn" title="${G[`${mark}Long`][lang]}">⚠ ${G[mark][lang]}</span>`;
};

const gapBadges = (kinds: ReadonlySet<GapKind> | undefined): SafeHtml[] =>
  GAP_KINDS.filter((kind) => kinds?.has(kind) === true).map((kind) => html`<span class="badge warn">gap:${kind}</span> `);

function hiddenLine(lang: Lang, hidden: number): SafeHtml | string {
  if (hidden === 0) return '';
  return html`<p class="note" data-hidden="${String(hidden)}">${hidden === 1 ? G.hiddenOne[lang] : fill(G.hidden[lang], { count: count(lang, hidden) })}</p>`;
}

function gapLine(who: ConsolePerson, gap: Gap): SafeHtml {
  const { lang } = who;
  const link = (node: GraphNode) => html`<a href="${nodeUrl(who, node.id)}">${titleOf(node)}</a>`;
  switch (gap.kind) {
    case 'clarification':
      return gap.relation === undefined
        ? html`<li><span class="badge warn">gap:clarification</span> ${link(gap.node)} ${G.gapClarificationNode[lang]}</li>`
        : html`<li><span class="badge warn">gap:clarification</span> ${link(gap.node)} ${G.gapClarificationRelation[lang]} ${gap.relation.verb} ${link(gap.relation.other)}</li>`;
    case 'thin_link':
      return html`<li><span class="badge warn">gap:thin_link</span> ${link(gap.from)} ${gap.verb} ${link(gap.to)}: ${G.gapThinLink[lang]}</li>`;
    case 'sparse_theme':
      return html`<li><span class="badge warn">gap:sparse_theme</span> ${link(gap.node)} (${gap.node.type}) ${fill(G.gapSparse[lang], { count: count(lang, gap.relations) })}</li>`;
    case 'stale_evidence':
      return html`<li><span class="badge warn">gap:stale_evidence</span> ${link(gap.node)} ${fill(G.gapStale[lang], { date: gap.reviewBy })}</li>`;
  }
}

function graphPage(who: ConsolePerson, view: GraphView, query: GraphQuery): SectionAnswer {
  const { lang } = who;
  const all = matching(view, query);
  const pages = Math.max(1, Math.ceil(all.length / GRAPH_LIST_PAGE_SIZE));
  const page = Math.min(query.page, pages);
  const rows = all.slice((page - 1) * GRAPH_LIST_PAGE_SIZE, page * GRAPH_LIST_PAGE_SIZE);
  const link = (p: number) => `${sectionUrl(who)}${queryString(query, p)}`;
  const gapsShown = view.gaps.slice(0, GRAPH_GAPS_SHOWN_MAX);
  const body = html`<h1>${G.section[lang]}</h1>
<p class="lead">${fill(G.lead[lang], { tenant: who.tenant.name })}</p>
<form class="filters" method="get" action="${sectionUrl(who)}" data-autosubmit aria-label="${G.filters[lang]}">
<label>${G.type[lang]} <select name="type">
<option value="">${G.anyType[lang]}</option>
${view.types.map((type) => html`<option value="${type}"${type === query.type ? html` selected` : ''}>${type}</option>`)}
</select></label>
<label>${G.tier[lang]} <select name="tier">
<option value="">${G.anyTier[lang]}</option>
${view.tiers.map((tier) => html`<option value="${tier}"${tier === query.tier ? html` selected` : ''}>${tier}</option>`)}
</select></label>
<button type="submit" class="secondary">${G.filter[lang]}</button>
</form>
<p class="count" role="status">${fill(G.shown[lang], { shown: count(lang, all.length), total: count(lang, view.graph.nodes.length) })}</p>
${hiddenLine(lang, view.hidden)}
${all.length > GRAPH_DRAW_MAX_NODES ? html`<p class="warning">${fill(G.capped[lang], { max: count(lang, GRAPH_DRAW_MAX_NODES), count: count(lang, all.length) })}</p>` : ''}
<h2 id="graph-drawing-heading">${G.drawing[lang]}</h2>
<div id="graph-drawing" class="graph-drawing" role="img" aria-label="${G.drawingLabel[lang]}" data-source="${sectionUrl(who, `/data${queryString(query)}`)}" data-stylesheet="${who.services.config.publicUrl}${CONSOLE_PATH}/static/${ID}/graph.css">
<p class="note">${G.noScript[lang]}</p>
</div>
<details class="legend"><summary>${G.legend[lang]}</summary><ul>
<li>${G.legendInferred[lang]}</li>
<li>${G.legendUnresolved[lang]}</li>
<li>${G.legendGap[lang]}</li>
</ul></details>
<h2>${G.gaps[lang]}</h2>
${
  view.gaps.length === 0
    ? html`<p class="empty">${G.noGaps[lang]}</p>`
    : html`<ul class="gaps">${gapsShown.map((gap) => gapLine(who, gap))}</ul>${
        view.gaps.length > gapsShown.length ? html`<p class="note">${fill(G.more[lang], { count: count(lang, view.gaps.length - gapsShown.length) })}</p>` : ''
      }`
}
<h2 id="graph-nodes">${G.nodes[lang]}</h2>
${
  all.length === 0
    ? html`<p class="empty">${G.noNodes[lang]}</p>`
    : html`<div class="scroll"><table class="list" aria-labelledby="graph-nodes">
<thead><tr><th scope="col">${G.title[lang]}</th><th scope="col">${G.type[lang]}</th><th scope="col">${G.tier[lang]}</th><th scope="col">${G.relations[lang]}</th><th scope="col">${G.mark[lang]} / ${G.gap[lang]}</th></tr></thead>
<tbody>${rows.map(
        (n) => html`<tr>
<td><a href="${nodeUrl(who, n.id)}">${titleOf(n)}</a><br><code>${readable(n.id)}</code></td>
<td>${n.type}</td>
<td>${n.access}</td>
<td>${count(lang, view.degree.get(n.id) ?? 0)}</td>
<td>${markBadge(lang, n.status)}${gapBadges(view.nodeGaps.get(n.id))}</td>
</tr>`,
      )}</tbody>
</table></div>
${
  pages > 1
    ? html`<nav class="pager" aria-label="${G.pages[lang]}">
${page > 1 ? html`<a rel="prev" href="${link(page - 1)}">${G.previous[lang]}</a>` : ''}
<span>${count(lang, page)} / ${count(lang, pages)}</span>
${page < pages ? html`<a rel="next" href="${link(page + 1)}">${G.next[lang]}</a>` : ''}
</nav>`
    : ''
}`
}`;
  return { page: { title: G.section[lang], body, scripts: ['cytoscape.min.js', 'graph.js'] } };
}

/** Evidence status as read_concept gives it: stale (review date passed), current (verified), unverified. */
function evidence(lang: Lang, node: GraphNode, now: Date): string {
  const reviewBy = node.properties.reviewBy;
  if (typeof reviewBy === 'string' && Date.parse(reviewBy) < now.getTime()) return G.stale[lang];
  return typeof node.properties.verifiedAt === 'string' ? G.current[lang] : G.unverified[lang];
}

async function nodePage(who: ConsolePerson, id: string): Promise<SectionAnswer> {
  const { lang } = who;
  const viewer = await brainViewer(who.services, who.caller);
  const concept = await readConcept(who.services, viewer, id);
  // Above the person's tier is worded as unknown: the page tells nothing of what exists.
  if (concept.found !== 'visible') throw refusal('not_found', 'node_unknown', {}, 'no node has this id');
  const { node } = concept;
  const view = await viewOf(who);
  const p = node.properties as { summary?: unknown; metadata?: Record<string, unknown>; tags?: unknown; verifiedAt?: unknown; reviewBy?: unknown };
  const metadata = METADATA_KEYS.filter((key) => p.metadata?.[key] !== undefined);
  const relations = concept.relations.slice(0, GRAPH_NODE_RELATIONS_MAX);
  const fact = (label: string, value: SafeHtml | string) => html`<dt>${label}</dt><dd>${value}</dd>`;
  const isBrainNode = node.id !== 'org' && !node.id.includes(':');
  const ownGaps = view.gaps.filter((gap) =>
    gap.kind === 'thin_link'
      ? gap.from.id === node.id || gap.to.id === node.id
      : gap.node.id === node.id || (gap.kind === 'clarification' && gap.relation?.other.id === node.id),
  );
  const body = html`<p><a href="${sectionUrl(who)}">← ${G.back[lang]}</a></p>
<h1>${titleOf(node)}</h1>
<h2>${G.fields[lang]}</h2>
<dl class="facts">
${fact(G.id[lang], html`<code>${readable(node.id)}</code>`)}
${fact(G.type[lang], node.type)}
${fact(G.tier[lang], node.access)}
${node.department === undefined ? '' : fact(G.department[lang], readable(node.department))}
${node.project === undefined ? '' : fact(G.project[lang], readable(node.project))}
${node.status === 'verified' ? '' : fact(G.mark[lang], markBadge(lang, node.status))}
${typeof p.summary === 'string' && p.summary !== '' ? fact(G.summary[lang], visibleText(p.summary)) : ''}
${metadata.length === 0 ? '' : fact(G.metadata[lang], html`<ul>${metadata.map((key) => html`<li>${key}: ${readable(String(p.metadata?.[key]))}</li>`)}</ul>`)}
${Array.isArray(p.tags) && p.tags.length > 0 ? fact(G.tags[lang], readable(p.tags.map(String).join(', '))) : ''}
${isBrainNode ? fact(G.evidence[lang], evidence(lang, node, new Date())) : ''}
${typeof p.verifiedAt === 'string' ? fact(G.verified[lang], p.verifiedAt) : ''}
${typeof p.reviewBy === 'string' ? fact(G.reviewBy[lang], p.reviewBy) : ''}
${ownGaps.length === 0 ? '' : fact(G.gap[lang], html`<ul class="gaps">${ownGaps.map((gap) => gapLine(who, gap))}</ul>`)}
</dl>
<h2 id="node-relations">${G.relations[lang]}</h2>
${
  relations.length === 0
    ? html`<p class="empty">${G.noRelations[lang]}</p>`
    : html`<div class="scroll"><table class="list" aria-labelledby="node-relations">
<thead><tr><th scope="col">${G.verb[lang]}</th><th scope="col">${G.other[lang]}</th><th scope="col">${G.type[lang]}</th><th scope="col">${G.mark[lang]} / ${G.gap[lang]}</th></tr></thead>
<tbody>${relations.map((r) => {
        const key = r.direction === 'out' ? relationKey(node.id, r.verb, r.other.id) : relationKey(r.other.id, r.verb, node.id);
        return html`<tr>
<td>${fill(r.direction === 'out' ? G.outgoing[lang] : G.incoming[lang], { verb: r.verb })}</td>
<td><a href="${nodeUrl(who, r.other.id)}">${titleOf(r.other)}</a></td>
<td>${r.other.type}</td>
<td>${r.mark === null ? '' : markBadge(lang, r.mark)}${gapBadges(view.relationGaps.get(key))}</td>
</tr>`;
      })}</tbody>
</table></div>`
}
${concept.relations.length > relations.length ? html`<p class="note">${fill(G.more[lang], { count: count(lang, concept.relations.length - relations.length) })}</p>` : ''}
${
  concept.hiddenRelations === 0
    ? ''
    : html`<p class="note" data-hidden-relations="${String(concept.hiddenRelations)}">${
        concept.hiddenRelations === 1 ? G.hiddenRelationsOne[lang] : fill(G.hiddenRelations[lang], { count: count(lang, concept.hiddenRelations) })
      }</p>`
}`;
  return { page: { title: titleOf(node), body } };
}

const STATIC = new URL('./static/', import.meta.url);
const require = createRequire(import.meta.url);

/** The Organisation graph section, offered in the brain's index.ts. */
export const brainGraph: ConsoleSection = {
  id: ID,
  label: G.section,
  // As the read tools decide: the person holds brain:read (every console caller does, so only
  // their roles decide) and is a principal of the tenant whose brain it is.
  async visibleTo(who) {
    return hasScopes(who.caller, ['brain:read']) && (await principalAccess(who.services.db, who.tenant.id, who.caller.principal.id)) !== undefined;
  },
  routes: [
    {
      method: 'GET',
      path: '',
      async handle(who, request: SectionRequest) {
        const view = await viewOf(who);
        return graphPage(who, view, readQuery(request.query, new Set(view.types), view.tiers));
      },
    },
    {
      method: 'GET',
      path: '/data',
      async handle(who, request) {
        const view = await viewOf(who);
        const body = JSON.stringify(graphJson(who, view, readQuery(request.query, new Set(view.types), view.tiers)));
        return { download: { name: 'graph.json', type: 'application/json; charset=utf-8', body } };
      },
    },
    { method: 'GET', path: '/node/:id', handle: (who, request) => nodePage(who, request.params.id ?? '') },
  ],
  assets: [
    // The library's own minified build, served from the gateway: the CSP allows script from this origin only.
    { name: 'cytoscape.min.js', type: 'text/javascript; charset=utf-8', read: () => readFileSync(require.resolve('cytoscape/dist/cytoscape.min.js')) },
    { name: 'graph.js', type: 'text/javascript; charset=utf-8', read: () => readFileSync(new URL('graph.js', STATIC)) },
    { name: 'graph.css', type: 'text/css; charset=utf-8', read: () => readFileSync(new URL('graph.css', STATIC)) },
  ],
};
