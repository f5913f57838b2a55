import type { Tier } from '../kernel/directory/tiers.ts';
import { TIERS } from '../kernel/directory/tiers.ts';
import { isUuid, unsafeName } from '../kernel/text.ts';
import type { Transaction } from '../store/db.ts';
import type { PrincipalIndex } from '../kernel/org/principal-index.ts';
import type { OrgProblems } from '../kernel/org/problems.ts';
import { quote } from '../kernel/org/problems.ts';
import type { ValueRule } from '../kernel/org/rules.ts';
import { characters, labelRule, oneOf } from '../kernel/org/rules.ts';
import type { PlannedStep } from '../kernel/org/section.ts';
import type { Located, Slot, YamlReader } from '../kernel/org/yaml-reader.ts';
import type { BrainNode, BrainRelation, Mark, MetadataKey, NodeType, Origin, RelationVerb } from './model.ts';
import { BRAIN_BOUNDS, isBrainNodeId, MARKS, METADATA_KEYS, NODE_TYPES, RELATION_VERBS, relationId } from './model.ts';
import { loadBrainNodes, loadBrainRelations, removeBrainNode, removeBrainRelation, sameNode, writeBrainNode, writeBrainRelation } from './store.ts';

/**
 * Brain content as an organisation writes it: the org file's `brain:` section and the files of
 * `kgw brain import` share this reader and planner. Both are read with line numbers (JSON is
 * YAML, so an import in JSON is read the same way) and planned inside the transaction that
 * writes them, against the rows it replaces.
 */

export interface NodeSpec {
  readonly node: BrainNode;
  readonly id: Located;
}

export interface RelationSpec {
  /** As written: a brain node id, `org`, `person:<email or id>`, `agent:<name or id>`, `department:<name>` or `project:<name>`. */
  readonly from: Located;
  readonly verb: RelationVerb;
  readonly to: Located;
  readonly mark: Mark | null;
}

export interface BrainSpec {
  readonly nodes: readonly NodeSpec[];
  readonly relations: readonly RelationSpec[];
  /** Every node id the content writes, its entry valid or not: a relation to one whose entry has a problem is not reported again. */
  readonly declared: ReadonlySet<string>;
}

/** Text shown to people as a name: not blank, at most `max` characters, no control or bidi characters. */
function nameRule(what: string, max: number): ValueRule {
  return {
    expected: `${what} of 1 to ${max} characters without control or bidirectional formatting characters`,
    valid: (value) => value.trim() !== '' && characters(value) <= max && unsafeName(value) === undefined,
    normalize: (value) => value.trim(),
  };
}

const nodeIdRule: ValueRule = {
  expected: 'a node id (1 to 80 lower-case letters, digits, ".", "_" and "-", starting with a letter or digit; not "org")',
  valid: isBrainNodeId,
};
const typeRule = oneOf('a node type', NODE_TYPES);
const verbRule = oneOf('a relation verb', RELATION_VERBS);
const tierRule = oneOf('an access tier', TIERS);
const markRule = oneOf('a mark', MARKS);
const titleRule = nameRule('a title', BRAIN_BOUNDS.titleChars);
const tagRule = nameRule('a tag', BRAIN_BOUNDS.tagChars);
const summaryRule: ValueRule = {
  expected: `text of at most ${BRAIN_BOUNDS.summaryChars} characters`,
  valid: (value) => characters(value) <= BRAIN_BOUNDS.summaryChars,
};
const metadataValueRule: ValueRule = {
  expected: `text of at most ${BRAIN_BOUNDS.metadataValueChars} characters without control or bidirectional formatting characters`,
  valid: (value) => characters(value) <= BRAIN_BOUNDS.metadataValueChars && unsafeName(value) === undefined,
};

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/** A day (midnight UTC) or an instant with its offset, as an ISO 8601 instant; undefined when it is neither or not a real date. */
export function parseInstant(value: string): string | undefined {
  if (!DAY.test(value) && !INSTANT.test(value)) return undefined;
  const time = Date.parse(DAY.test(value) ? `${value}T00:00:00Z` : value);
  if (!Number.isFinite(time)) return undefined;
  const instant = new Date(time).toISOString();
  // Date.parse rolls 2026-02-30 over to March: a date that does not exist is refused.
  if (instant.slice(0, 10) !== value.slice(0, 10) && !/[+-]\d{2}:\d{2}$/.test(value)) return undefined;
  return instant;
}

const instantRule: ValueRule = {
  expected: 'a date (YYYY-MM-DD) or an ISO 8601 instant with its offset (2026-05-01T09:00:00Z)',
  valid: (value) => parseInstant(value) !== undefined,
  normalize: (value) => parseInstant(value) ?? value,
};

const ENDPOINT_PREFIXES = ['person:', 'agent:', 'department:', 'project:'] as const;
const endpointRule: ValueRule = {
  expected: 'a node id, "org", or person:<email or id>, agent:<name or id>, department:<name> or project:<name> of the directory',
  valid: (value) =>
    value === 'org' || isBrainNodeId(value) || ENDPOINT_PREFIXES.some((p) => value.startsWith(p) && value.length > p.length && characters(value) <= 300),
};

const NODE_KEYS = ['id', 'type', 'title', 'summary', 'access', 'department', 'project', 'metadata', 'tags', 'freshness', 'mark'];

function readNode(item: Slot, reader: YamlReader): NodeSpec | undefined {
  const fields = reader.fields(item, NODE_KEYS, ['id', 'type', 'title', 'access']);
  if (!fields) return undefined;
  let ok = true;
  const text = (key: string, rule: ValueRule): Located | undefined => {
    const slot = fields.get(key);
    if (!slot) return undefined;
    const value = reader.string(slot, rule);
    if (!value) ok = false;
    return value;
  };
  const id = text('id', nodeIdRule);
  const type = text('type', typeRule);
  const title = text('title', titleRule);
  const summary = text('summary', summaryRule);
  const access = text('access', tierRule);
  const department = text('department', labelRule);
  const project = text('project', labelRule);
  const mark = text('mark', markRule);
  const metadata: Partial<Record<MetadataKey, string | number>> = {};
  const metadataSlot = fields.get('metadata');
  if (metadataSlot && !reader.isEmpty(metadataSlot)) {
    const map = reader.fields(metadataSlot, METADATA_KEYS);
    if (!map) ok = false;
    for (const key of METADATA_KEYS) {
      const slot = map?.get(key);
      if (!slot) continue;
      const value = reader.textOrNumber(slot, metadataValueRule);
      if (value === undefined) ok = false;
      else metadata[key] = value.value;
    }
  }
  const tags: string[] = [];
  const tagsSlot = fields.get('tags');
  if (tagsSlot && !reader.isEmpty(tagsSlot)) {
    const items = reader.list(tagsSlot);
    if (!items) ok = false;
    else if (items.length > BRAIN_BOUNDS.tags) {
      reader.fail(tagsSlot, `${tagsSlot.path}: at most ${BRAIN_BOUNDS.tags} tags, not ${items.length}`);
      ok = false;
    }
    for (const slot of items ?? []) {
      const tag = reader.string(slot, tagRule);
      if (!tag) ok = false;
      else if (!tags.includes(tag.value)) tags.push(tag.value);
    }
  }
  let verifiedAt: string | null = null;
  let reviewBy: string | null = null;
  const freshnessSlot = fields.get('freshness');
  if (freshnessSlot && !reader.isEmpty(freshnessSlot)) {
    const freshness = reader.fields(freshnessSlot, ['verified', 'review_by']);
    if (!freshness) ok = false;
    const verifiedSlot = freshness?.get('verified');
    const reviewSlot = freshness?.get('review_by');
    const verified = verifiedSlot && reader.string(verifiedSlot, instantRule);
    const review = reviewSlot && reader.string(reviewSlot, instantRule);
    if ((verifiedSlot && !verified) || (reviewSlot && !review)) ok = false;
    verifiedAt = verified?.value ?? null;
    reviewBy = review?.value ?? null;
  }
  if (!ok || !id || !type || !title || !access) return undefined;
  const tier = access.value as Tier;
  // A department (project) node is seen by that department's (project's) members: it must name one.
  if ((tier === 'department') !== (department !== undefined)) {
    reader.fail(tier === 'department' ? access : (department ?? access), `${item.path}: "department" is given exactly when access is department`);
    return undefined;
  }
  if ((tier === 'project') !== (project !== undefined)) {
    reader.fail(tier === 'project' ? access : (project ?? access), `${item.path}: "project" is given exactly when access is project`);
    return undefined;
  }
  return {
    id,
    node: {
      id: id.value,
      type: type.value as NodeType,
      title: title.value,
      summary: summary?.value ?? '',
      access: tier,
      department: department?.value ?? null,
      project: project?.value ?? null,
      metadata,
      tags,
      verifiedAt,
      reviewBy,
      mark: (mark?.value as Mark | undefined) ?? null,
    },
  };
}

function readRelation(item: Slot, reader: YamlReader): RelationSpec | undefined {
  const fields = reader.fields(item, ['from', 'verb', 'to', 'mark'], ['from', 'verb', 'to']);
  if (!fields) return undefined;
  const read = (key: string, rule: ValueRule) => {
    const slot = fields.get(key);
    return slot && reader.string(slot, rule);
  };
  const from = read('from', endpointRule);
  const verb = read('verb', verbRule);
  const to = read('to', endpointRule);
  const markSlot = fields.get('mark');
  const mark = markSlot && reader.string(markSlot, markRule);
  if (!from || !verb || !to || (markSlot && !mark)) return undefined;
  return { from, verb: verb.value as RelationVerb, to, mark: (mark?.value as Mark | undefined) ?? null };
}

/** Reads `{ nodes: [...], relations: [...] }`; every problem is reported with its line. */
export function readBrainContent(slot: Slot, reader: YamlReader): BrainSpec {
  if (reader.isEmpty(slot)) return { nodes: [], relations: [], declared: new Set() };
  const fields = reader.fields(slot, ['nodes', 'relations']);
  const list = (key: string): Slot[] => {
    const at = fields?.get(key);
    return at === undefined || reader.isEmpty(at) ? [] : (reader.list(at) ?? []);
  };
  const nodes: NodeSpec[] = [];
  const seen = new Map<string, number>();
  const nodeSlots = list('nodes');
  if (nodeSlots.length > BRAIN_BOUNDS.nodes)
    reader.fail(slot, `${slot.path === '' ? 'the file' : slot.path}: at most ${BRAIN_BOUNDS.nodes} nodes, not ${nodeSlots.length}`);
  const declared = new Set<string>();
  for (const item of nodeSlots.slice(0, BRAIN_BOUNDS.nodes)) {
    const id = reader.peekText(item, 'id');
    if (id !== undefined) declared.add(id);
    const spec = readNode(item, reader);
    if (!spec) continue;
    const earlier = seen.get(spec.node.id);
    if (earlier !== undefined) {
      reader.fail(spec.id, `${spec.id.path}: duplicate node "${spec.node.id}" (already listed at line ${earlier})`);
      continue;
    }
    seen.set(spec.node.id, spec.id.line);
    nodes.push(spec);
  }
  const relations: RelationSpec[] = [];
  const relationSlots = list('relations');
  if (relationSlots.length > BRAIN_BOUNDS.relations) {
    reader.fail(slot, `${slot.path === '' ? 'the file' : slot.path}: at most ${BRAIN_BOUNDS.relations} relations, not ${relationSlots.length}`);
  }
  for (const item of relationSlots.slice(0, BRAIN_BOUNDS.relations)) {
    const spec = readRelation(item, reader);
    if (spec) relations.push(spec);
  }
  return { nodes, relations, declared };
}

export interface BrainPlanContext {
  readonly tx: Transaction;
  readonly tenantId: string;
  readonly principals: PrincipalIndex;
  readonly problems: OrgProblems;
  /**
   * org: the content is the org file's, and nodes and relations the file kept before and no
   * longer lists are removed; import (a file given to `kgw brain import`) and inbox (one given
   * with an accepted inbox item): the content is added or updated, nothing is removed.
   */
  readonly origin: Origin;
}

/**
 * The graph id a relation end names: a brain node of `nodes`, the organisation, or a person
 * (by email or directory id), agent (by name or directory id), department or project (by a
 * member's label) of the directory; otherwise what is missing, for the caller's message. The
 * directory id is how the read tools cite a person or agent (`[person:<id>]`), so a reference
 * copied from an answer names the same node as the org file's form.
 */
export function resolveReference(
  value: string,
  nodes: ReadonlySet<string>,
  principals: PrincipalIndex,
): { readonly id: string } | { readonly missing: string; readonly name: string } {
  if (value === 'org') return { id: 'org' };
  if (isBrainNodeId(value)) return nodes.has(value) ? { id: value } : { missing: 'node', name: value };
  const [prefix] = value.split(':', 1);
  const name = value.slice(prefix!.length + 1);
  if (prefix === 'person' || prefix === 'agent') {
    // The name first: an agent may be named like an id, and its name is what the org file means.
    const named = principals.find(prefix === 'person' ? name.toLowerCase() : name);
    const principal = named?.kind === prefix ? named : isUuid(name) ? principals.byId(name.toLowerCase()) : undefined;
    return principal?.kind === prefix ? { id: `${prefix}:${principal.id}` } : { missing: `${prefix} in the directory named`, name };
  }
  // A department or project is in the directory while someone is a member of it.
  const labels = principals.labels();
  if (prefix === 'department') return labels.departments.has(name) ? { id: value } : { missing: 'department with members named', name };
  return labels.projects.has(name) ? { id: value } : { missing: 'project with members named', name };
}

/** resolveReference for the file: what names nothing is reported with its line (once, for a node whose own entry has a problem). */
function resolveEndpoint(at: Located, nodes: ReadonlySet<string>, declared: ReadonlySet<string>, context: BrainPlanContext): string | undefined {
  const found = resolveReference(at.value, nodes, context.principals);
  if ('id' in found) return found.id;
  if (found.missing === 'node' && declared.has(at.value)) return undefined;
  context.problems.add(at.line, `${at.path}: no ${found.missing} ${quote(found.name)}`);
  return undefined;
}

/** How the file would name a relation end: a person by email and an agent by name, like the file. */
function endpointLabel(id: string, principals: PrincipalIndex): string {
  const match = /^(person|agent):(.*)$/.exec(id);
  return match === null ? id : `${match[1]}:${principals.referenceOf(match[2]!)}`;
}

const describeNode = (node: BrainNode): string => `${node.type}; access ${node.access}${node.mark === null ? '' : `; ${node.mark}`}`;

/**
 * The steps that make the stored brain what `spec` says (see BrainPlanContext.origin): nodes
 * created or updated where they differ, then relations; for the org file, relations and then
 * nodes it no longer lists removed (a removed node takes every relation touching it along).
 */
export async function planBrainContent(spec: BrainSpec, context: BrainPlanContext): Promise<PlannedStep[]> {
  const { tx, tenantId, origin } = context;
  const storedNodes = await loadBrainNodes(tx, tenantId);
  const storedRelations = await loadBrainRelations(tx, tenantId);
  const listed = new Set(spec.nodes.map((n) => n.node.id));
  const removedNodes = origin === 'org' ? [...storedNodes.values()].filter((n) => n.origin === 'org' && !listed.has(n.node.id)) : [];
  const removedIds = new Set(removedNodes.map((n) => n.node.id));
  const after = new Set([...[...storedNodes.keys()].filter((id) => !removedIds.has(id)), ...listed]);
  if (after.size > BRAIN_BOUNDS.nodes) context.problems.add(1, `the brain would hold ${after.size} nodes; at most ${BRAIN_BOUNDS.nodes} are kept per tenant`);

  const steps: PlannedStep[] = [];
  for (const { node } of spec.nodes) {
    const was = storedNodes.get(node.id);
    if (was !== undefined && was.origin === origin && sameNode(was.node, node)) continue;
    steps.push({
      change: { action: was === undefined ? 'create' : 'update', kind: 'brain node', name: node.id, detail: describeNode(node) },
      write: (q) => writeBrainNode(q, tenantId, node, origin),
    });
  }

  const desired = new Map<string, { relation: BrainRelation; label: string }>();
  for (const r of spec.relations) {
    const from = resolveEndpoint(r.from, after, spec.declared, context);
    const to = resolveEndpoint(r.to, after, spec.declared, context);
    if (from === undefined || to === undefined) continue;
    const relation: BrainRelation = { from, verb: r.verb, to, mark: r.mark };
    desired.set(relationId(relation), { relation, label: `${r.from.value} ${r.verb} ${r.to.value}` });
  }
  for (const [id, { relation, label }] of desired) {
    const was = storedRelations.get(id);
    if (was !== undefined && was.origin === origin && was.relation.mark === relation.mark) continue;
    steps.push({
      change: {
        action: was === undefined ? 'add' : 'update',
        kind: 'brain relation',
        name: label,
        ...(relation.mark === null ? {} : { detail: relation.mark }),
      },
      write: (q) => writeBrainRelation(q, tenantId, relation, origin),
    });
  }
  if (storedRelations.size + desired.size > BRAIN_BOUNDS.relations) {
    const total = new Set([...storedRelations.keys(), ...desired.keys()]).size;
    if (total > BRAIN_BOUNDS.relations)
      context.problems.add(1, `the brain would hold ${total} relations; at most ${BRAIN_BOUNDS.relations} are kept per tenant`);
  }
  if (origin === 'org') {
    for (const [id, { relation }] of storedRelations) {
      if (desired.has(id) || storedRelations.get(id)?.origin !== 'org') continue;
      if (removedIds.has(relation.from) || removedIds.has(relation.to)) continue; // goes with its node
      const name = `${endpointLabel(relation.from, context.principals)} ${relation.verb} ${endpointLabel(relation.to, context.principals)}`;
      steps.push({ change: { action: 'remove', kind: 'brain relation', name }, write: (q) => removeBrainRelation(q, tenantId, relation) });
    }
    for (const { node } of removedNodes) {
      steps.push({ change: { action: 'remove', kind: 'brain node', name: node.id }, write: (q) => removeBrainNode(q, tenantId, node.id) });
    }
  }
  return steps;
}
