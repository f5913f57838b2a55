import type { OutboxEntry, Rebuilder, ResourceRef } from '../../connectors/projection.ts';
import type { SearchDocument, SearchHit, SearchSource } from '../../connectors/search/contract.ts';
import { SEARCH_BODY_MAX_BYTES } from '../../connectors/search/contract.ts';
import type { Queryable } from '../store/db.ts';
import type { Caller } from '../kernel/access/caller.ts';
import type { ContextType } from './access/context-roles.ts';
import { validation } from '../kernel/errors.ts';
import { analyzerLanguage } from '../search-text/analyzer.ts';

/*
 * Alignbase Knowledge, Memories and Artifacts as search documents. Whatever changes one of them
 * (a saved version, a publish, archiving or restoring) enqueues a search row `<type>:<id>` in
 * its own transaction; the row names the resource only, and this reads it as it now is.
 *
 * A Knowledge is shown as up to two documents: its latest version, always, under the scope
 * `knowledge.latest:<id>` (what a Viewer or higher finds), and its published version, when one
 * is, under `knowledge:<id>` (what an Always route lets an agent read), the same text twice when
 * the latest is the published one. So every Viewer finds a Knowledge in one form, and a grant
 * on all Knowledge is one scope prefix (`knowledge.latest:`), not a scope per Knowledge. A
 * Memory (`memory:<id>`) and an Artifact (`artifact:<id>`) are shown as their latest version,
 * to Viewers. An archived resource is shown as nothing.
 */

/** The Alignbase types search shows. */
export const SEARCHED_CONTEXT_TYPES = ['knowledge', 'memory', 'artifact'] as const satisfies readonly ContextType[];
export type SearchedContextType = (typeof SEARCHED_CONTEXT_TYPES)[number];

const isSearchedType = (type: string): type is SearchedContextType => (SEARCHED_CONTEXT_TYPES as readonly string[]).includes(type);

/** The outbox key of a resource, and the id (and scope) of its published or only document. */
export const contextResourceKey = (type: SearchedContextType, id: string): string => `${type}:${id}`;
const KNOWLEDGE_LATEST = 'knowledge.latest:';
/** The id and scope of a Knowledge's latest version. */
export const knowledgeLatestKey = (id: string): string => `${KNOWLEDGE_LATEST}${id}`;

/**
 * The scope prefix a grant on a whole type reads: every Memory, every Artifact, the latest
 * version of every Knowledge (its published version is the route-only readers').
 */
export const WHOLE_TYPE_PREFIX: Readonly<Record<SearchedContextType, string>> = {
  knowledge: KNOWLEDGE_LATEST,
  memory: 'memory:',
  artifact: 'artifact:',
};

/**
 * The most Alignbase resources one search names one by one (granted or shared singly, or
 * routed); a grant on a whole type is one prefix however many it reaches. Past it a search is
 * refused rather than sent to the engine with an unbounded list of scopes.
 */
export const CONTEXT_SCOPES_MAX = 10_000;

/** The resource-key prefixes this source reads. */
export const CONTEXT_KEY_PREFIXES = SEARCHED_CONTEXT_TYPES.map((type) => `${type}:`);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The type and id an outbox key names, or undefined for a key of something else. */
function parseKey(key: string): { type: SearchedContextType; id: string } | undefined {
  const colon = key.indexOf(':');
  const type = key.slice(0, colon);
  const id = key.slice(colon + 1);
  return colon > 0 && isSearchedType(type) && UUID.test(id) ? { type, id } : undefined;
}

/**
 * The search row for a change of one resource, to enqueue in the write's own transaction; none
 * for a type search does not show (Skills).
 */
export function contextSearchEntries(tenantId: string, type: ContextType, id: string): OutboxEntry[] {
  if (!isSearchedType(type)) return [];
  return [{ tenantId, projection: 'search', resourceKey: contextResourceKey(type, id), operation: 'upsert', payload: { type, id } }];
}

/** A body is cut to SEARCH_BODY_MAX_BYTES of UTF-8, at a character boundary. */
function cutBody(text: string): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= SEARCH_BODY_MAX_BYTES) return text;
  let end = SEARCH_BODY_MAX_BYTES;
  // Back off continuation bytes (10xxxxxx) so no character is split.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end -= 1;
  return bytes.subarray(0, end).toString('utf8');
}

interface LoadedRow {
  tenant_id: string;
  id: string;
  type: SearchedContextType;
  name: string;
  language: string;
  published_version: number | null;
  latest_version: number;
  version: number;
  version_id: string;
  content: string;
  created_at: Date;
}

// The latest and published versions of the active resources named, with the tenant's language.
const LOAD = `
  SELECT r.tenant_id, r.id, r.type, r.name, t.language, r.published_version, r.latest_version, v.version, v.id AS version_id, v.content, v.created_at
    FROM context_resources r
    JOIN tenants t ON t.id = r.tenant_id
    JOIN context_versions v ON v.tenant_id = r.tenant_id AND v.resource_id = r.id
         AND (v.version = r.latest_version OR (r.type = 'knowledge' AND v.version = r.published_version))
   WHERE r.tenant_id = $1 AND r.id = ANY($2::uuid[]) AND r.status = 'active' AND r.latest_version > 0
   ORDER BY r.id, v.version`;

/**
 * The documents of one loaded version: a Memory's or an Artifact's latest; a Knowledge's latest
 * as `knowledge.latest:<id>` and its published as `knowledge:<id>`, both when they are one version.
 */
function documentsOf(row: LoadedRow): SearchDocument[] {
  const version = Number(row.version);
  if (row.type !== 'knowledge') return [documentOf(row, contextResourceKey(row.type, row.id), {})];
  const published = row.published_version === null ? undefined : Number(row.published_version);
  // The latest document says which version is published, so a Viewer's hit tells whether it reads the published text.
  const extra: Record<string, number> = published === undefined ? {} : { published_version: published };
  return [
    ...(version === Number(row.latest_version) ? [documentOf(row, knowledgeLatestKey(row.id), extra)] : []),
    ...(version === published ? [documentOf(row, contextResourceKey('knowledge', row.id), extra)] : []),
  ];
}

function documentOf(row: LoadedRow, key: string, extra: Readonly<Record<string, number>>): SearchDocument {
  const version = Number(row.version);
  const idField = `${row.type}_id`;
  return {
    tenantId: row.tenant_id,
    id: key,
    kind: row.type,
    scope: key,
    language: analyzerLanguage(row.language),
    path: '',
    title: row.name,
    body: cutBody(row.content),
    tags: [],
    mediaType: 'text/markdown',
    contentKind: 'text',
    updatedAt: row.created_at.toISOString(),
    ref: {
      [idField]: row.id,
      version,
      version_id: row.version_id,
      ...extra,
    },
  };
}

/** The documents of the resources named, by tenant then id; resources archived or gone yield none. */
async function loadDocuments(tx: Queryable, refs: readonly ResourceRef[]): Promise<SearchDocument[]> {
  const byTenant = new Map<string, Set<string>>();
  for (const ref of refs) {
    const parsed = parseKey(ref.resourceKey);
    if (parsed !== undefined) byTenant.set(ref.tenantId, (byTenant.get(ref.tenantId) ?? new Set()).add(parsed.id));
  }
  const docs: SearchDocument[] = [];
  for (const [tenantId, ids] of [...byTenant].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const rows = await tx.query<LoadedRow>(LOAD, [tenantId, [...ids]]);
    // A Knowledge whose latest is its published version has one row, shown as both documents.
    for (const row of rows) docs.push(...documentsOf(row));
  }
  return docs;
}

export const contextSearchSource: SearchSource = {
  load: (tx, refs) => loadDocuments(tx, refs),
  documentIds(ref) {
    const parsed = parseKey(ref.resourceKey);
    if (parsed === undefined) return [ref.resourceKey];
    return parsed.type === 'knowledge' ? [ref.resourceKey, knowledgeLatestKey(parsed.id)] : [ref.resourceKey];
  },
};

// ---------------------------------------------------------------------------------------------
// Rebuilding (kgw reindex --search)

const KEY_PAGE = 500;

/** Rebuilds the search documents of every active Knowledge, Memory and Artifact, by tenant then id. */
export const contextSearchRebuilder: Rebuilder = {
  projection: 'search',
  async *keys(db: Queryable): AsyncIterable<ResourceRef> {
    for (const tenant of await db.query<{ id: string }>('SELECT id FROM tenants ORDER BY id')) {
      let after: string | null = null;
      for (;;) {
        const page: { id: string; type: SearchedContextType }[] = await db.query<{ id: string; type: SearchedContextType }>(
          `SELECT id, type FROM context_resources
            WHERE tenant_id = $1 AND type = ANY($2::text[]) AND status = 'active' AND latest_version > 0 AND ($3::uuid IS NULL OR id > $3::uuid)
            ORDER BY id LIMIT $4`,
          [tenant.id, SEARCHED_CONTEXT_TYPES, after, KEY_PAGE],
        );
        for (const row of page) yield { tenantId: tenant.id, resourceKey: contextResourceKey(row.type, row.id) };
        const last = page.at(-1);
        if (last === undefined || page.length < KEY_PAGE) break;
        after = last.id;
      }
    }
  },
  load(_tx: Queryable, refs: readonly ResourceRef[]): Promise<OutboxEntry[]> {
    // The rows name the resources; the source reads them when the worker applies the rows.
    return Promise.resolve(
      refs.flatMap((ref) => {
        const parsed = parseKey(ref.resourceKey);
        return parsed === undefined ? [] : contextSearchEntries(ref.tenantId, parsed.type, parsed.id);
      }),
    );
  },
};

// ---------------------------------------------------------------------------------------------
// What a caller may find

// The grants and message shares of the principal and its groups ($1 tenant, $2 principal, $3
// the types), and the Knowledge its active routes deliver; every condition names the tenant.
const GRANTS = `
  g AS (
    SELECT x.resource_type, x.resource_id
      FROM (SELECT tenant_id, principal_id, group_id, resource_type, resource_id FROM context_grants
            UNION ALL
            SELECT tenant_id, principal_id, group_id, resource_type, resource_id FROM context_shares) x
     WHERE x.tenant_id = $1 AND x.resource_type = ANY($3::text[])
       AND (x.principal_id = $2
            OR x.group_id IN (SELECT m.group_id FROM group_members m WHERE m.tenant_id = $1 AND m.principal_id = $2))
  ), routed AS (
    SELECT t.resource_id
      FROM context_routes t
      JOIN principals p ON p.tenant_id = t.tenant_id AND p.id = $2 AND p.kind = 'agent'
     WHERE t.tenant_id = $1 AND t.resource_type = 'knowledge'
       AND (t.agent_id = $2
            OR t.group_id IN (SELECT m.group_id FROM group_members m WHERE m.tenant_id = $1 AND m.principal_id = $2))
  )`;

/** The active resources (of the types $3) a grant or share reaches, or a route delivers published. */
const REACHED = `
  FROM context_resources r
 WHERE r.tenant_id = $1 AND r.type = ANY($3::text[]) AND r.status = 'active' AND r.latest_version > 0
   AND (EXISTS (SELECT 1 FROM g WHERE g.resource_type = r.type AND (g.resource_id IS NULL OR g.resource_id = r.id))
        OR (r.type = 'knowledge' AND r.published_version IS NOT NULL AND r.id IN (SELECT resource_id FROM routed)))`;

/**
 * What the caller may find, in one query: first the types a grant covers whole (`id` null),
 * then, of the other types, each resource named singly (at most $4 of them), with whether a
 * grant or share makes the caller a Viewer (or higher: every role reads) of it; a Knowledge an
 * active Always route delivers, without one, is read published only.
 */
const READABLE = `
  WITH ${GRANTS}, whole AS (SELECT DISTINCT resource_type AS type FROM g WHERE resource_id IS NULL)
  (SELECT w.type, NULL::uuid AS id, true AS viewer FROM whole w ORDER BY w.type)
  UNION ALL
  (SELECT r.type, r.id, EXISTS (SELECT 1 FROM g WHERE g.resource_type = r.type AND g.resource_id = r.id) AS viewer
     ${REACHED}
      AND r.type NOT IN (SELECT type FROM whole)
    ORDER BY r.id
    LIMIT $4)`;

/** The engine scopes and scope prefixes of what a caller may read of Knowledge, Memories and Artifacts. */
export interface ContextReach {
  /** One scope per resource read singly: `knowledge.latest:<id>` for a Viewer, `knowledge:<id>` for a route, `memory:<id>`, `artifact:<id>`. */
  readonly scopes: readonly string[];
  /** One prefix per type a grant covers whole (WHOLE_TYPE_PREFIX). */
  readonly prefixes: readonly string[];
}

/**
 * The engine scopes of the Alignbase resources the caller may read: a grant on a whole type is
 * that type's prefix (a Viewer of all Knowledge reads `knowledge.latest:`); a Viewer (or higher)
 * of one Knowledge finds its latest version (`knowledge.latest:<id>`), an agent an active Always
 * route delivers a published Knowledge to finds the published version only (`knowledge:<id>`),
 * a Viewer of a Memory or an Artifact finds it. So a caller never holds both versions of one
 * Knowledge. More than CONTEXT_SCOPES_MAX resources read singly is a `validation` refusal.
 */
export async function readableContextScopes(q: Queryable, caller: Caller, types: readonly SearchedContextType[]): Promise<ContextReach> {
  if (types.length === 0) return { scopes: [], prefixes: [] };
  const rows = await q.query<{ id: string | null; type: SearchedContextType; viewer: boolean }>(READABLE, [
    caller.tenant.id,
    caller.principal.id,
    [...types],
    CONTEXT_SCOPES_MAX + 1,
  ]);
  const prefixes: string[] = [];
  const scopes: string[] = [];
  for (const row of rows) {
    if (row.id === null) prefixes.push(WHOLE_TYPE_PREFIX[row.type]);
    else if (row.type === 'knowledge') scopes.push(row.viewer ? knowledgeLatestKey(row.id) : contextResourceKey('knowledge', row.id));
    else scopes.push(contextResourceKey(row.type, row.id));
  }
  if (scopes.length > CONTEXT_SCOPES_MAX)
    throw validation(
      `search covers at most ${CONTEXT_SCOPES_MAX.toLocaleString('en')} Knowledge, Memories and Artifacts granted one by one, and you may read more: ` +
        'narrow filters.kinds, or ask for a grant on the whole type, which search covers at once',
      { max: CONTEXT_SCOPES_MAX },
    );
  return { scopes, prefixes };
}

/** Whether the caller may read any Knowledge, Memory or Artifact search shows (what offers it `search`). */
export const READABLE_CONTEXT_EXISTS = `EXISTS (WITH ${GRANTS} SELECT 1 ${REACHED})`.replaceAll(
  '$3::text[]',
  `ARRAY[${SEARCHED_CONTEXT_TYPES.map((t) => `'${t}'`).join(', ')}]::text[]`,
);

/** The type and id a document's scope names, for turning a hit into its dialect's identifiers. */
export function scopeResource(scope: string): { type: SearchedContextType; id: string; latest: boolean } | undefined {
  if (scope.startsWith(KNOWLEDGE_LATEST)) {
    const id = scope.slice(KNOWLEDGE_LATEST.length);
    return UUID.test(id) ? { type: 'knowledge', id, latest: true } : undefined;
  }
  const parsed = parseKey(scope);
  return parsed === undefined ? undefined : { ...parsed, latest: false };
}

/**
 * What a hit on a Knowledge, Memory or Artifact is, by the identifiers the Alignbase tools take:
 * `latest` for a Knowledge found as its latest version (by a Viewer), `published` when the
 * version found is the published one (a Knowledge's latest document names the published version,
 * if any: the two may be one). Undefined for a hit of another scope.
 */
export function hitResource(hit: Pick<SearchHit, 'scope' | 'ref'>): { type: SearchedContextType; id: string; latest: boolean; published: boolean } | undefined {
  const resource = scopeResource(hit.scope);
  if (resource === undefined) return undefined;
  const published =
    resource.type === 'knowledge' &&
    (!resource.latest || (hit.ref.published_version !== undefined && Number(hit.ref.published_version) === Number(hit.ref.version)));
  return { ...resource, published };
}
