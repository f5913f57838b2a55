import { requireTenant } from '../kernel/directory/directory.ts';
import { validation } from '../kernel/errors.ts';
import { isUuid } from '../kernel/text.ts';
import type { Queryable } from '../store/db.ts';
import type { BrainNode, Mark, RelationVerb } from './model.ts';
import { BRAIN_BOUNDS, isBrainNodeId } from './model.ts';
import { loadBrainNodePage } from './store.ts';

/**
 * The Company Brain for the operator (`kgw export folder`, which writes it as a file that
 * `kgw brain import` takes back): every node of every access tier and every relation, whoever
 * keeps it (the org file, an import or an approved proposal). No caller of the tenant, so no
 * tier applies; the operator names the tenant. A relation names the directory's people by email
 * and agents by name, as a brain file does, so that it names the same people in another
 * gateway, where their ids differ. Nodes and relations are paged apart, each by its key.
 */

/**
 * Nodes of one page of operatorBrainNodes, and the bound on it: a node holds at most 200
 * characters of title, 4,000 of summary, nine metadata values of 500 and 20 tags of 60.
 */
export const OPERATOR_BRAIN_NODES_PAGE_DEFAULT = 200;
export const OPERATOR_BRAIN_NODES_PAGE_MAX = 500;
/** Relations of one page of operatorBrainRelations, and the bound on it: a relation is at most two ends of 300 characters and a verb. */
export const OPERATOR_BRAIN_RELATIONS_PAGE_DEFAULT = 1000;
export const OPERATOR_BRAIN_RELATIONS_PAGE_MAX = 5000;
/** The most `kgw brain import` reads of one file, in bytes: a larger export is written and reported. */
export const BRAIN_FILE_MAX_BYTES = BRAIN_BOUNDS.importBytes;

/** A relation as a brain file writes it; `unresolved` says why an end names nothing now (the file cannot carry it). */
export interface OperatorBrainRelation {
  readonly from: string;
  readonly verb: RelationVerb;
  readonly to: string;
  readonly mark: Mark | null;
  readonly unresolved: string | null;
}

function checkLimit(limit: number, max: number): void {
  if (!Number.isInteger(limit) || limit < 1 || limit > max) throw validation(`limit must be a whole number from 1 to ${max}`);
}

/**
 * The nodes of the tenant's brain after id `after` (in byte order), at most `limit` (1 to
 * OPERATOR_BRAIN_NODES_PAGE_MAX); `next` is the id to continue after, or undefined on the last page.
 */
export async function operatorBrainNodes(
  q: Queryable,
  input: { tenant: string; after?: string | undefined; limit: number },
): Promise<{ tenant: string; nodes: BrainNode[]; next: string | undefined }> {
  checkLimit(input.limit, OPERATOR_BRAIN_NODES_PAGE_MAX);
  const tenant = await requireTenant(q, input.tenant);
  // One more than the page: whether another follows.
  const found = await loadBrainNodePage(q, tenant.id, input.after, input.limit + 1);
  const nodes = found.slice(0, input.limit);
  return { tenant: tenant.slug, nodes, next: found.length > input.limit ? nodes.at(-1)?.id : undefined };
}

/** A relation's key as a page's cursor: the JSON of its stored ends and verb. */
function cursorOf(row: { from_id: string; verb: string; to_id: string }): string {
  return JSON.stringify([row.from_id, row.verb, row.to_id]);
}

function parseCursor(after: string): [string, string, string] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(after);
  } catch {
    parsed = undefined;
  }
  if (!Array.isArray(parsed) || parsed.length !== 3 || !parsed.every((part) => typeof part === 'string'))
    throw validation('after must be the next of the page before');
  return parsed as [string, string, string];
}

/**
 * The relations of the tenant's brain after the cursor `after` (in byte order of their stored
 * ends and verb), at most `limit` (1 to OPERATOR_BRAIN_RELATIONS_PAGE_MAX); `next` is the cursor
 * to continue after, or undefined on the last page. Each end is written as a brain file names it:
 * a node id, `org`, `person:EMAIL`, `agent:NAME`, `department:NAME` or `project:NAME`. An end
 * that names nothing now (a person or agent gone from the directory, a department or project
 * nobody is a member of any more, a node gone) is kept in the store but left out of the graph;
 * it is said in `unresolved`, since `kgw brain import` refuses a file with such a relation.
 */
export async function operatorBrainRelations(
  q: Queryable,
  input: { tenant: string; after?: string | undefined; limit: number },
): Promise<{ tenant: string; relations: OperatorBrainRelation[]; next: string | undefined }> {
  checkLimit(input.limit, OPERATOR_BRAIN_RELATIONS_PAGE_MAX);
  const cursor = input.after === undefined ? null : parseCursor(input.after);
  const tenant = await requireTenant(q, input.tenant);
  const rows = await q.query<{ from_id: string; verb: RelationVerb; to_id: string; mark: Mark | null }>(
    `SELECT from_id, verb, to_id, mark FROM brain_relations
      WHERE tenant_id = $1 AND ($2::text IS NULL
         OR from_id COLLATE "C" > $2
         OR (from_id = $2 AND verb COLLATE "C" > $3)
         OR (from_id = $2 AND verb = $3 AND to_id COLLATE "C" > $4))
      ORDER BY from_id COLLATE "C", verb COLLATE "C", to_id COLLATE "C" LIMIT $5`,
    [tenant.id, cursor?.[0] ?? null, cursor?.[1] ?? null, cursor?.[2] ?? null, input.limit + 1],
  );
  const page = rows.slice(0, input.limit);
  const ends = page.flatMap((row) => [row.from_id, row.to_id]);
  const name = await endNames(q, tenant.id, ends);
  const relations = page.map((row): OperatorBrainRelation => {
    const from = name(row.from_id);
    const to = name(row.to_id);
    const unresolved = [from, to].flatMap((end) => ('missing' in end ? [end.missing] : []));
    return {
      from: 'label' in from ? from.label : row.from_id,
      verb: row.verb,
      to: 'label' in to ? to.label : row.to_id,
      mark: row.mark,
      unresolved: unresolved.length === 0 ? null : unresolved.join('; '),
    };
  });
  const last = page.at(-1);
  return { tenant: tenant.slug, relations, next: rows.length > input.limit && last !== undefined ? cursorOf(last) : undefined };
}

/**
 * How a brain file names each of the stored relation `ends` (every one of a page's, looked up
 * in four queries): its label, or what it is missing.
 */
async function endNames(q: Queryable, tenantId: string, ends: readonly string[]): Promise<(end: string) => { label: string } | { missing: string }> {
  const split = (end: string): [string, string] => {
    const colon = end.indexOf(':');
    return colon < 0 ? ['', end] : [end.slice(0, colon), end.slice(colon + 1)];
  };
  const principalIds = [...new Set(ends.map(split).flatMap(([prefix, rest]) => ((prefix === 'person' || prefix === 'agent') && isUuid(rest) ? [rest] : [])))];
  const principals = new Map(
    (
      await q.query<{ id: string; kind: 'person' | 'agent'; reference: string }>(
        'SELECT id, kind, COALESCE(email, name) AS reference FROM principals WHERE tenant_id = $1 AND id = ANY($2::uuid[])',
        [tenantId, principalIds],
      )
    ).map((row) => [row.id, row]),
  );
  const nodeIds = [...new Set(ends.filter(isBrainNodeId))];
  const nodes = new Set(
    (await q.query<{ id: string }>('SELECT id FROM brain_nodes WHERE tenant_id = $1 AND id = ANY($2::text[])', [tenantId, nodeIds])).map((row) => row.id),
  );
  // A department or project is in the directory while someone is a member of it.
  const labelsOf = (prefix: string): string[] => [...new Set(ends.map(split).flatMap(([p, rest]) => (p === prefix ? [rest] : [])))];
  const named = new Set<string>();
  for (const [prefix, column] of [
    ['department', 'departments'],
    ['project', 'projects'],
  ] as const) {
    const rows = await q.query<{ label: string }>(
      `SELECT DISTINCT label FROM principals, unnest(${column}) AS label WHERE tenant_id = $1 AND label = ANY($2::text[])`,
      [tenantId, labelsOf(prefix)],
    );
    for (const row of rows) named.add(`${prefix}:${row.label}`);
  }
  return (end) => {
    if (end === 'org') return { label: end };
    if (isBrainNodeId(end)) return nodes.has(end) ? { label: end } : { missing: `no node "${end}"` };
    const [prefix, rest] = split(end);
    if (prefix === 'person' || prefix === 'agent') {
      const principal = isUuid(rest) ? principals.get(rest.toLowerCase()) : undefined;
      return principal?.kind === prefix ? { label: `${prefix}:${principal.reference}` } : { missing: `no ${prefix} of id "${rest}" in the directory` };
    }
    if (prefix === 'department' || prefix === 'project') return named.has(end) ? { label: end } : { missing: `no ${prefix} "${rest}" with members` };
    return { missing: `"${end}" is not a node of the graph` };
  };
}
