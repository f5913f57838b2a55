import type { Caller } from '../../kernel/access/caller.ts';
import { canWriteMemory } from '../access/context-decisions.ts';
import { contextRoleTable } from '../access/grants.ts';
import { ROUTED_TO_AGENT } from '../access/routes.ts';
import type { AuditTrail } from '../../kernel/audit/trail.ts';
import { auditGroup } from '../../kernel/audit/audit-log.ts';
import type { Db } from '../../store/db.ts';
import { Buffer } from 'node:buffer';
import type { BundleLayout, BundleMemory, BundleSkill, RoutedKnowledge } from './bundle.ts';
import { CONTEXT_BUNDLE_MAX_BYTES, contextTooLarge, fitRoutedBundle } from './bundle.ts';
import { CONTEXT_MESSAGES, markIssued, newMessages } from '../messages/inbox.ts';
import type { ContextType } from '../access/context-roles.ts';
import { instantOf } from '../../kernel/instants.ts';
import { DeliveredCache } from './delivered-cache.ts';

/** A routed resource and the version it delivers: the published one of live Knowledge and Skills, the latest of a Memory. */
export interface DeliveredRow {
  readonly id: string;
  readonly type: ContextType;
  readonly name: string;
  /** The version delivered: a Memory's latest, a Knowledge's or Skill's published one. */
  readonly version: number;
  readonly v_id: string;
  /**
   * The body (without trailing line breaks, which the bundle never carries). Null for a Skill (the
   * bundle lists it by name), and for every item of a type whose bodies pass CONTEXT_BUNDLE_MAX_BYTES together.
   */
  readonly v_content: string | null;
  /** UTF-8 bytes of the body (context_versions.body_bytes, bodyBytes). */
  readonly v_bytes: number;
  readonly v_authority: 'informational' | 'must_follow' | null;
  readonly v_name: string | null;
  readonly v_description: string | null;
  readonly v_created_at: Date | string;
}

/**
 * What is delivered, read in one statement, and only the columns the bundle and the audit use:
 * every value a row returns costs its encoding and decoding, about half a millisecond a column
 * per 1,000 rows on PGlite. So the statement leaves out expired Knowledge and Skills itself (a
 * resource expires on its expires_at date, UTC, as `freshness` says) instead of returning their
 * dates.
 *
 * Content is read only when the bundle can hold it all: a Memory's or Knowledge's when the sizes
 * of the bodies of its type together stay within the bundle's limit, a Skill's never (the bundle
 * lists it by name and description). Otherwise the items come with their sizes, which the store
 * keeps with each version (body_bytes: migration 0036), and the bundle reads what it finds room for
 * (fitRoutedBundle). Without that, every routed item's content would be read, however little of
 * it the bundle can hold: a thousand Knowledge documents at 1 MiB each are a gigabyte, and as one
 * packed value PostgreSQL's cap. Bodies are read without their trailing line breaks, which the
 * bundle drops: a document nearly all of them is a few bytes in the gateway, whatever it weighs
 * in the store. A running sum in the bundle's order would read the first 8 MiB at once, but its
 * sort cost 2–3 ms at 1,000 items on PGlite, paid by every call, where the type's total costs
 * under one (on PostgreSQL any sum costs about 2.5: docs/decisions.md, "What a context bundle reads").
 */
const DELIVERED = `WITH delivered AS (
    SELECT r.id, r.type, r.name, v.version, v.id AS v_id, v.content AS v_content, v.body_bytes AS v_bytes, v.authority AS v_authority,
           v.name AS v_name, v.description AS v_description, v.created_at AS v_created_at
      FROM context_resources r
      JOIN context_versions v ON v.tenant_id = r.tenant_id AND v.resource_id = r.id
                             AND v.version = CASE WHEN r.type = 'memory' THEN r.latest_version ELSE r.published_version END
     WHERE ${ROUTED_TO_AGENT} AND r.latest_version > 0
       AND (r.type = 'memory' OR r.expires_at IS NULL OR r.expires_at > (now() AT TIME ZONE 'UTC')::date))
  SELECT id, type, name, version, v_id,
         CASE WHEN type <> 'skill' AND sum(v_bytes) OVER (PARTITION BY type) <= ${CONTEXT_BUNDLE_MAX_BYTES}
              THEN rtrim(v_content, E'\\r\\n') END AS v_content,
         v_bytes, v_authority, v_name, v_description, v_created_at
    FROM delivered`;

/** What is routed to an agent and delivered, as DELIVERED reads it. */
export async function readDelivered(db: Db, tenantId: string, agentId: string): Promise<DeliveredRow[]> {
  return db.query<DeliveredRow>(DELIVERED, [tenantId, agentId], { prepare: 'kgw_current_context', packed: true });
}

/** The embedded store's DeliveredCache, one per store. */
const caches = new WeakMap<Db, DeliveredCache<DeliveredRow>>();

/** The store's DeliveredCache once a call has used it; never on PostgreSQL (tests). */
export const deliveredCacheOf = (db: Db): DeliveredCache<DeliveredRow> | undefined => caches.get(db);

/** readDelivered, kept on the embedded store until what it depends on changes (delivered-cache.ts). */
function delivered(db: Db, tenantId: string, agentId: string): Promise<readonly DeliveredRow[]> {
  if (db.kind !== 'pglite') return readDelivered(db, tenantId, agentId);
  let cache = caches.get(db);
  if (cache === undefined) caches.set(db, (cache = new DeliveredCache(db)));
  return cache.rows(tenantId, agentId, () => readDelivered(db, tenantId, agentId));
}

/** The bodies of versions by id, by their resource, for the Knowledge DELIVERED left unread that the bundle finds room for. */
const VERSION_CONTENT = "SELECT resource_id, rtrim(content, E'\\r\\n') AS content FROM context_versions WHERE tenant_id = $1 AND id = ANY($2::uuid[])";

interface Delivered {
  readonly id: string;
  readonly name: string;
  /** The version delivered, by number and id. */
  readonly version: number;
  readonly versionId: string;
  readonly row: DeliveredRow;
}

/**
 * get_current_context: what Always routes deliver to the calling agent. Knowledge and Skills:
 * the published version of each active, non-expired routed resource, whatever the agent's
 * repository permission. Memory: the latest version of each active routed Memory, with
 * whether the agent may write it. Skills are listed by name and description, Knowledge
 * inlined whole as far as the bundle's limit allows (bundle.ts); the dialect's `layout` renders
 * the text. Up to 10 new inbox messages, oldest first, are
 * rendered too and marked read once the bundle is rendered (the only write of the call, a small
 * transaction of its own). The call is audited as a context request with every delivered
 * version and message.
 */
export async function currentContext(db: Db, caller: Caller, layout: BundleLayout, audit: AuditTrail): Promise<string> {
  const tenantId = caller.tenant.id;
  // One statement for what is delivered beside the Memory roles and the inbox: at 1,000 routed
  // items three statements in a row cost as much as the rest.
  const [rows, memoryRoles, inbox] = await Promise.all([
    delivered(db, tenantId, caller.principal.id),
    contextRoleTable(db, tenantId, caller.principal.id, 'memory'),
    newMessages(db, caller, CONTEXT_MESSAGES),
  ]);
  const byName = (a: Delivered, b: Delivered) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id < b.id ? -1 : 1);
  /** The delivered resources of a type, by name. */
  const deliveredOf = (type: ContextType): Delivered[] =>
    rows.flatMap((row) => (row.type === type ? [{ id: row.id, name: row.name, version: row.version, versionId: row.v_id, row }] : [])).sort(byName);
  const deliveredSkills = deliveredOf('skill');
  const deliveredMemories = deliveredOf('memory');
  const deliveredKnowledge = deliveredOf('knowledge');

  const skills: BundleSkill[] = deliveredSkills.map((d) => ({ name: d.row.v_name ?? d.name, description: d.row.v_description ?? '' }));
  const memories: BundleMemory[] = deliveredMemories.map((d) => ({
    id: d.id,
    name: d.name,
    version: d.version,
    versionId: d.versionId,
    assignmentState: 'enabled',
    canWrite: canWriteMemory(memoryRoles.roleOn(d.id)),
    content: d.row.v_content ?? '',
  }));
  const { messages } = inbox;
  const sections = { skills, memories, messages, moreMessages: inbox.unread - messages.length };
  // Memories are never left out, so ones left unread mean they alone pass the limit: the call
  // fails with their stored sizes counted, without reading them.
  const unreadMemories = deliveredMemories.filter((d) => d.row.v_content === null);
  if (unreadMemories.length > 0) {
    throw contextTooLarge(Buffer.byteLength(layout.render(sections, [], []), 'utf8') + unreadMemories.reduce((sum, d) => sum + d.row.v_bytes, 0));
  }
  const knowledge: RoutedKnowledge[] = deliveredKnowledge.map((d) => ({
    id: d.id,
    title: d.name,
    version: d.version,
    authority: d.row.v_authority ?? 'informational',
    updatedAt: instantOf(d.row.v_created_at),
    bytes: d.row.v_bytes,
    content: d.row.v_content ?? undefined,
  }));
  const versionIds = new Map(deliveredKnowledge.map((d) => [d.id, d.versionId]));
  const { text, skipped } = await fitRoutedBundle(sections, knowledge, layout, async (unread) => {
    const read = await db.query<{ resource_id: string; content: string }>(VERSION_CONTENT, [tenantId, unread.map((k) => versionIds.get(k.id))]);
    return new Map(read.map((row) => [row.resource_id, row.content]));
  });
  // Issued: marked read only now that the bundle exists (a failed render leaves them new).
  await markIssued(
    db,
    caller,
    messages.map((m) => m.id),
  );
  audit.readAs('context.request');
  // Knowledge left out to keep the bundle within its limit was not delivered, and is not recorded as such.
  const left = new Set(skipped.map((k) => k.id));
  // What was delivered, by type in groups (AuditResourceGroup); the messages one by one.
  audit.touch(
    ...auditGroup('skill', deliveredSkills),
    ...auditGroup('memory', deliveredMemories),
    ...auditGroup(
      'knowledge',
      deliveredKnowledge.filter((d) => !left.has(d.id)),
    ),
    ...messages.map((m) => ({ type: 'message', id: m.id })),
  );
  return text;
}
