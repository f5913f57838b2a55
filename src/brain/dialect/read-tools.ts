import { z } from 'zod';
import type { GraphNode } from '../../../connectors/graph/contract.ts';
import { SNIPPET_MARK } from '../../../connectors/search/contract.ts';
import { METADATA_KEYS, NODE_TYPES } from '../model.ts';
import type { Gap } from '../read.ts';
import { brainViewer, hasBrainContent, listGaps, QUERY_INDEX_LIMIT, queryIndex, readConcept } from '../read.ts';
import type { SkillPack } from '../skill-pack.ts';
import { packRevision, skillPackFor } from '../skill-pack.ts';
import { refusal } from '../../kernel/errors.ts';
import { QUERY_TEXT_MAX_CHARS } from '../../search-text/query.ts';
import { defineTool } from '../../mcp/tool.ts';
import type { DisplayLanguage } from './texts.ts';
import { cite, DISPLAY, displayLanguage, EMPTY_BRAIN, hiddenLine, markSuffix, NO_GAPS, NO_MATCHES } from './texts.ts';

/*
 * Company Brain's reading tools: get_skill_pack, query_index, read_concept and list_gaps
 * (../shared/spec/company-brain-mcp.md). Each answers in text; what the contract fixes (ids in
 * brackets, types, verbs, access literals, marks, metadata keys, instants, gap markers, hidden
 * counts, the registry line) is English and parseable, the rest display text in the
 * organisation's language (texts.ts).
 */

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

/** Evidence status, a contract token: current (review date ahead or none), stale (passed), unverified (never verified). */
function evidenceStatus(node: GraphNode, now: Date): 'current' | 'stale' | 'unverified' {
  const reviewBy = node.properties.reviewBy;
  if (typeof reviewBy === 'string' && Date.parse(reviewBy) < now.getTime()) return 'stale';
  return typeof node.properties.verifiedAt === 'string' ? 'current' : 'unverified';
}

/** What the node's type and title say in one citation: `[id] Title (type)`. */
const citeTyped = (node: GraphNode): string => `${cite(node)} (${node.type})`;

/** Marks in a snippet become markdown emphasis: the text stays readable as text. */
const plainSnippet = (snippet: string): string => snippet.replaceAll(SNIPPET_MARK.open, '**').replaceAll(SNIPPET_MARK.close, '**').replace(/\s+/g, ' ').trim();

export const readConceptTool = defineTool({
  name: 'read_concept',
  dialect: 'brain',
  title: 'Read concept',
  description:
    "Full information about one node: metadata, summary and all relations to other visible nodes. Input: id (string, a node id from query_index). Gives one refusal for an unknown id and a different one for a node above the token's tier. Read-only.",
  input: z.object({ id: z.string().min(1).max(300).describe('A node id, as shown in [brackets] by query_index or get_skill_pack.') }).strict(),
  annotations: READ_ONLY,
  scopes: ['brain:read'],
  async run({ caller, services }, args) {
    const viewer = await brainViewer(services, caller);
    const concept = await readConcept(services, viewer, args.id);
    if (concept.found === 'unknown') throw refusal('not_found', 'node_unknown', {}, 'no node has this id');
    if (concept.found === 'above_tier') throw refusal('permission_denied', 'node_above_tier', {}, 'the node is above the viewer tier');
    const d = DISPLAY[displayLanguage(viewer.language)];
    const now = new Date();
    const { node } = concept;
    const p = node.properties as { summary?: unknown; metadata?: Record<string, unknown>; tags?: unknown; verifiedAt?: unknown; reviewBy?: unknown };
    const lines = [cite(node), `Type: ${node.type}`, `Access: ${node.access}`];
    if (node.status !== 'verified') lines.push(markSuffix(node.status).trim());
    if (typeof p.summary === 'string' && p.summary !== '') lines.push('', `## ${d.summary}`, p.summary);
    const metadata = METADATA_KEYS.filter((key) => p.metadata?.[key] !== undefined);
    if (metadata.length > 0) lines.push('', `## ${d.metadata}`, ...metadata.map((key) => `- ${key}: ${String(p.metadata?.[key])}`));
    if (Array.isArray(p.tags) && p.tags.length > 0) lines.push('', `## ${d.tags}`, p.tags.join(', '));
    if (node.id !== 'org' && !node.id.includes(':')) {
      lines.push('', `## ${d.freshness}`, `- Evidence status: ${evidenceStatus(node, now)}`);
      if (typeof p.verifiedAt === 'string') lines.push(`- Verified: ${p.verifiedAt}`);
      if (typeof p.reviewBy === 'string') lines.push(`- Review by: ${p.reviewBy}`);
    }
    lines.push('', `## ${d.relations}`);
    if (concept.relations.length === 0) lines.push(d.noRelations);
    for (const r of concept.relations) {
      const line = r.direction === 'out' ? `- [${node.id}] ${r.verb} ${citeTyped(r.other)}` : `- ${citeTyped(r.other)} ${r.verb} [${node.id}]`;
      lines.push(`${line}${r.mark === null ? '' : markSuffix(r.mark)}`);
    }
    if (concept.hiddenRelations > 0) lines.push(hiddenLine(concept.hiddenRelations, d.hiddenRelations(concept.hiddenRelations)));
    return { text: lines.join('\n') };
  },
});

export const queryIndexTool = defineTool({
  name: 'query_index',
  heavy: true,
  dialect: 'brain',
  title: 'Query index',
  description:
    'Ranked search across the visible graph. Input: query (string, at least 2 characters), types (optional array of node types), limit (optional integer, 1 to 20, default 10). Returns hits with node ids for follow up. Matches behind a higher tier are hidden and only counted. Read-only.',
  input: z
    .object({
      query: z.string().min(2).max(QUERY_TEXT_MAX_CHARS).describe(`What to look for, 2 to ${QUERY_TEXT_MAX_CHARS} characters.`),
      types: z.array(z.enum(NODE_TYPES)).max(NODE_TYPES.length).optional().describe('Only nodes of these types (the English type labels).'),
      limit: z.number().int().min(QUERY_INDEX_LIMIT.min).max(QUERY_INDEX_LIMIT.max).optional().describe('Hits to return, 1 to 20 (default 10).'),
    })
    .strict(),
  annotations: READ_ONLY,
  scopes: ['brain:read'],
  async run({ caller, services }, args) {
    const viewer = await brainViewer(services, caller);
    const d = DISPLAY[displayLanguage(viewer.language)];
    const { hits, hidden } = await queryIndex(services, viewer, { query: args.query, types: args.types, limit: args.limit ?? QUERY_INDEX_LIMIT.default });
    const lines = hits.length === 0 ? [NO_MATCHES] : [`## ${d.matches(args.query.replace(/\s+/g, ' ').trim())}`];
    hits.forEach((hit, i) => {
      lines.push(`${i + 1}. [${hit.id}] ${hit.title} · ${hit.type} · access ${hit.access}`);
      if (hit.snippet !== undefined && hit.snippet !== '') lines.push(`   ${plainSnippet(hit.snippet)}`);
    });
    if (hidden > 0) lines.push(hiddenLine(hidden, d.hiddenMatches(hidden)));
    return { text: lines.join('\n') };
  },
});

/** One gap line: its marker (contract), then display text citing node ids. */
function gapLine(gap: Gap, d: (typeof DISPLAY)[DisplayLanguage]): string {
  switch (gap.kind) {
    case 'clarification':
      return gap.relation === undefined
        ? `[gap:clarification] ${cite(gap.node)} ${d.gap.clarificationNode}`
        : `[gap:clarification] ${cite(gap.node)} ${d.gap.clarificationRelation} ${gap.relation.verb} ${cite(gap.relation.other)}`;
    case 'thin_link':
      return `[gap:thin_link] ${cite(gap.from)} ${gap.verb} ${cite(gap.to)}: ${d.gap.thinLink}`;
    case 'sparse_theme':
      return `[gap:sparse_theme] ${cite(gap.node)} (${gap.node.type}) ${d.gap.sparse(gap.relations)}`;
    case 'stale_evidence':
      return `[gap:stale_evidence] ${cite(gap.node)} ${d.gap.stale} ${gap.reviewBy}`;
  }
}

export const listGapsTool = defineTool({
  name: 'list_gaps',
  dialect: 'brain',
  title: 'List gaps',
  description:
    'The weakest spots of the visible graph: unresolved clarifications, theme pairs held together by a single relation, sparsely covered areas, and evidence whose review is due. No input. Every line starts with a stable marker. Read-only.',
  input: z.object({}).strict(),
  annotations: READ_ONLY,
  scopes: ['brain:read'],
  async run({ caller, services }) {
    const viewer = await brainViewer(services, caller);
    if (!(await hasBrainContent(services, viewer.tenantId))) return { text: EMPTY_BRAIN };
    const d = DISPLAY[displayLanguage(viewer.language)];
    const gaps = await listGaps(services, viewer, new Date());
    return { text: gaps.length === 0 ? NO_GAPS : gaps.map((gap) => gapLine(gap, d)).join('\n') };
  },
});

/** The pack's body in the organisation's language; its hash is the registry's content hash. */
function renderPack(pack: SkillPack, d: (typeof DISPLAY)[DisplayLanguage]): string {
  const lines = [`# ${d.pack.title}`, d.pack.note, '', `## ${d.pack.overview}`];
  if (pack.organization !== undefined) lines.push(cite(pack.organization));
  lines.push(...pack.counts.map((c) => `- ${c.type}: ${c.count}`));
  if (pack.hidden > 0) lines.push(hiddenLine(pack.hidden, d.hiddenNodes(pack.hidden)));
  const section = <T>(title: string, list: { items: readonly T[]; more: number }, line: (item: T) => string[]) => {
    lines.push('', `## ${title}`);
    if (list.items.length === 0) lines.push(d.pack.none);
    for (const item of list.items) lines.push(...line(item));
    if (list.more > 0) lines.push(d.more(list.more));
  };
  const owners = (list: readonly GraphNode[]) => (list.length === 0 ? d.pack.noOwner : `${d.pack.ownedBy} ${list.map(cite).join(', ')}`);
  const evidence = (node: GraphNode) => {
    const p = node.properties;
    return [typeof p.verifiedAt === 'string' ? `Verified: ${p.verifiedAt}` : '', typeof p.reviewBy === 'string' ? `Review by: ${p.reviewBy}` : '']
      .filter((s) => s !== '')
      .join('; ');
  };
  section(d.pack.departments, pack.departments, (dep) => [
    `- ${cite(dep.node)}${markSuffix(dep.node.status)}`,
    ...dep.people.items.map((person) => `  - ${cite(person)}`),
    ...(dep.people.more > 0 ? [`  - ${d.more(dep.people.more)}`] : []),
  ]);
  section(d.pack.processes, pack.processes, (proc) => {
    const provenance = evidence(proc.node);
    return [
      `- ${cite(proc.node)} (access ${proc.node.access}): ${owners(proc.owners)}${provenance === '' ? '' : `; ${provenance}`}${markSuffix(proc.node.status)}`,
    ];
  });
  section(d.pack.systems, pack.systems, (node) => [`- ${cite(node)}${markSuffix(node.status)}`]);
  section(d.pack.agents, pack.agents, (agent) => [`- ${cite(agent.node)}: ${owners(agent.owners)}${markSuffix(agent.node.status)}`]);
  section(d.pack.dataSources, pack.dataSources, (node) => [`- ${cite(node)}${markSuffix(node.status)}`]);
  section(d.pack.gaps, pack.gaps, (gap) => [`- ${gapLine(gap, d)}`]);
  return lines.join('\n');
}

export const getSkillPackTool = defineTool({
  name: 'get_skill_pack',
  dialect: 'brain',
  title: 'Get skill pack',
  description:
    "A compiled, versioned operating map of the organization for this token's tier: org overview, departments and people, processes with owners and provenance, systems, agents, data sources and open gaps. No input. It is a map, not the source. Not annotated read-only, because a changed graph may append a new derived revision to the internal registry. It never changes knowledge.",
  input: z.object({}).strict(),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  scopes: ['brain:read'],
  async run({ caller, services }) {
    const viewer = await brainViewer(services, caller);
    if (!(await hasBrainContent(services, viewer.tenantId))) return { text: EMPTY_BRAIN };
    const body = renderPack(await skillPackFor(services, viewer, new Date()), DISPLAY[displayLanguage(viewer.language)]);
    const registry = await packRevision(services.db, viewer.tenantId, body);
    return { text: `registry: revision=${registry.revision} content_hash=${registry.contentHash} generated_at=${registry.generatedAt}\n\n${body}` };
  },
});

export const brainReadTools = [getSkillPackTool, queryIndexTool, readConceptTool, listGapsTool];
