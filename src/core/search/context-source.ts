import type { OutboxEntry, Rebuilder, ResourceRef } from '../../../connectors/projection.ts';
import type { SearchDocument, SearchSource } from '../../../connectors/search/contract.ts';
import { SEARCH_BODY_MAX_BYTES } from '../../../connectors/search/contract.ts';
import type { Queryable } from '../../store/db.ts';
import type { Caller } from '../access/caller.ts';
import type { ContextType } from '../access/context-roles.ts';
import { analyzerLanguage } from './analyzer.ts';

/*
 * Alignbase Knowledge, Memories and Artifacts as search documents. Whatever changes one of them
 * (a saved version, a publish, archiving or restoring) enqueues a search row `<type>:<id>` in
 * its own transaction; the row names the resource only, and this reads it as it now is.
 *
 * A Knowledge is shown as up to two documents: its published version under the scope
 * `knowledge:<id>` (what an Always route lets an agent read), and, when the latest saved
 * version is another one (or nothing is published), the latest under `knowledge.latest:<id>`
 * (Viewer or higher only). A Memory (`memory:<id>`) and an Artifact (`artifact:<id>`) are
 * shown as their latest version, to Viewers. An archived resource is shown as nothing.
 */

/** The Alignbase types search shows. */
export const SEARCHED_CONTEXT_TYPES = ['knowledge', 'memory', 'artifact'] as const satisfies readonly ContextType[];
export type SearchedContextType = (typeof SEARCHED_CONTEXT_TYPES)[number];

const isSearchedType = (type: string): type is SearchedContextType => (SEARCHED_CONTEXT_TYPES as readonly string[]).includes(type);

/** The outbox key of a resource, and the id (and scope) of its published or only document. */
export const contextResourceKey = (type: SearchedContextType, id: string): string => `${type}:${id}`;
/** The id and scope of a Knowledge's latest version when it is not the published one. */
export const knowledgeLatestKey = (id: string): string => `knowledge.latest:${id}`;

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
  version: number;
  version_id: string;
  content: string;
  created_at: Date;
}

// The latest and published versions of the active resources named, with the tenant's language.
const LOAD = `
  SELECT r.tenant_id, r.id, r.type, r.name, t.language, r.published_version, v.version, v.id AS version_id, v.content, v.created_at
    FROM context_resources r
    JOIN tenants t ON t.id = r.tenant_id
    JOIN context_versions v ON v.tenant_id = r.tenant_id AND v.resource_id = r.id
         AND (v.version = r.latest_version OR (r.type = 'knowledge' AND v.version = r.published_version))
   WHERE r.tenant_id = $1 AND r.id = ANY($2::uuid[]) AND r.status = 'active' AND r.latest_version > 0
   ORDER BY r.id, v.version`;

function documentOf(row: LoadedRow): SearchDocument {
  const published = row.published_version === null ? undefined : Number(row.published_version);
  const version = Number(row.version);
  const latestOnly = row.type === 'knowledge' && version !== published;
  const key = latestOnly ? knowledgeLatestKey(row.id) : contextResourceKey(row.type, row.id);
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
    // A Knowledge whose latest is its published version has one row per pointer only once.
    for (const row of rows) docs.push(documentOf(row));
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

/**
 * Composes sources by resource-key prefix: a row goes to the source of the first prefix its
 * key starts with; a key no source claims is shown as nothing (its documents are removed).
 */
export function composeSearchSources(sources: readonly { readonly prefixes: readonly string[]; readonly source: SearchSource }[]): SearchSource {
  const sourceOf = (key: string) => sources.find((s) => s.prefixes.some((p) => key.startsWith(p)))?.source;
  return {
    async load(tx, refs, signal) {
      const docs: SearchDocument[] = [];
      for (const { source } of sources) {
        const mine = refs.filter((ref) => sourceOf(ref.resourceKey) === source);
        if (mine.length > 0) docs.push(...(await source.load(tx, mine, signal)));
      }
      return docs;
    },
    documentIds(ref) {
      const source = sourceOf(ref.resourceKey);
      return source?.documentIds?.(ref) ?? [ref.resourceKey];
    },
  };
}

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

/**
 * The engine scopes of the Alignbase resources the caller may read, in one query: a Viewer (or
 * higher: every role reads) on a Knowledge finds its latest version (`knowledge.latest:<id>`
 * when it is not the published one, else `knowledge:<id>`); an agent an active Always route
 * delivers a published Knowledge to finds the published version only; a Viewer on a Memory
 * or an Artifact finds it. Grants are the org file's and the Artifact shares of messages,
 * the principal's own or its groups', on the resource or its whole type; every condition
 * names the tenant.
 */
const READABLE = `
  WITH g AS (
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
  )
  SELECT r.id, r.type, r.latest_version, r.published_version,
         EXISTS (SELECT 1 FROM g WHERE g.resource_type = r.type AND (g.resource_id IS NULL OR g.resource_id = r.id)) AS viewer
    FROM context_resources r
   WHERE r.tenant_id = $1 AND r.type = ANY($3::text[]) AND r.status = 'active' AND r.latest_version > 0
     AND (EXISTS (SELECT 1 FROM g WHERE g.resource_type = r.type AND (g.resource_id IS NULL OR g.resource_id = r.id))
          OR (r.type = 'knowledge' AND r.published_version IS NOT NULL AND r.id IN (SELECT resource_id FROM routed)))
   ORDER BY r.id`;

export async function readableContextScopes(q: Queryable, caller: Caller, types: readonly SearchedContextType[]): Promise<string[]> {
  if (types.length === 0) return [];
  const rows = await q.query<{ id: string; type: SearchedContextType; latest_version: number; published_version: number | null; viewer: boolean }>(READABLE, [
    caller.tenant.id,
    caller.principal.id,
    [...types],
  ]);
  return rows.map((row) => {
    if (row.type !== 'knowledge' || !row.viewer) return contextResourceKey(row.type, row.id);
    const latestIsPublished = row.published_version !== null && Number(row.published_version) === Number(row.latest_version);
    return latestIsPublished ? contextResourceKey('knowledge', row.id) : knowledgeLatestKey(row.id);
  });
}

/** Whether the caller may read any Knowledge, Memory or Artifact search shows (what offers it `search`). */
export const READABLE_CONTEXT_EXISTS = `EXISTS (${READABLE.replace('ORDER BY r.id', '').replaceAll('$3::text[]', `ARRAY[${SEARCHED_CONTEXT_TYPES.map((t) => `'${t}'`).join(', ')}]::text[]`)})`;

/** The type and id a document's scope names, for turning a hit into its dialect's identifiers. */
export function scopeResource(scope: string): { type: SearchedContextType; id: string; latest: boolean } | undefined {
  if (scope.startsWith('knowledge.latest:')) {
    const id = scope.slice('knowledge.latest:'.length);
    return UUID.test(id) ? { type: 'knowledge', id, latest: true } : undefined;
  }
  const parsed = parseKey(scope);
  return parsed === undefined ? undefined : { ...parsed, latest: false };
}
