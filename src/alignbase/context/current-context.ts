import type { Caller } from '../../kernel/access/caller.ts';
import { canWriteMemory } from '../access/context-decisions.ts';
import { contextRoleTable } from '../access/grants.ts';
import { ROUTED } from '../access/routes.ts';
import type { AuditTrail } from '../../kernel/audit/trail.ts';
import type { AuditResource } from '../../kernel/audit/audit-log.ts';
import type { Db } from '../../store/db.ts';
import type { BundleKnowledge, BundleLayout, BundleMemory, BundleSkill } from './bundle.ts';
import { fitContextBundle } from './bundle.ts';
import { CONTEXT_MESSAGES, markIssued, newMessages } from '../messages/inbox.ts';
import type { ResourceHead, HeadRow } from '../versions/queries.ts';
import { freshness, versionKey } from '../versions/versions.ts';
import { HEAD_COLUMNS, toHead, toVersionAs, versionColumnsAs } from '../versions/queries.ts';

const DELIVERED_VERSION = versionColumnsAs('v', 'v_');

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
  // One statement for what is delivered (the routed resources with the version each delivers:
  // the published one of Knowledge and Skills, the latest of a Memory), beside the Memory roles
  // and the inbox: at 1,000 routed items three statements in a row cost as much as the rest.
  const [rows, memoryRoles, inbox] = await Promise.all([
    db.query<HeadRow & Record<string, unknown>>(
      `WITH routed AS (${ROUTED})
       SELECT ${HEAD_COLUMNS}, ${DELIVERED_VERSION}
         FROM routed x
         JOIN context_resources r ON r.tenant_id = $1 AND r.id = x.id
         JOIN context_versions v ON v.tenant_id = r.tenant_id AND v.resource_id = r.id
                                AND v.version = CASE WHEN r.type = 'memory' THEN r.latest_version ELSE r.published_version END
        WHERE r.status = 'active' AND r.latest_version > 0`,
      [tenantId, caller.principal.id],
      { prepare: 'kgw_current_context' },
    ),
    contextRoleTable(db, tenantId, caller.principal.id, 'memory'),
    newMessages(db, caller, CONTEXT_MESSAGES),
  ]);
  const heads = rows.map(toHead);
  const versions = new Map(
    rows.flatMap((row) => {
      const version = toVersionAs(row, 'v_');
      return version === undefined ? [] : [[versionKey(version.resourceId, version.version), version] as const];
    }),
  );
  const now = new Date();
  const delivered = (type: 'knowledge' | 'skill') =>
    heads.filter((h): h is ResourceHead & { publishedVersion: number } => h.type === type && h.publishedVersion !== undefined && freshness(h, now) === 'live');
  const knowledgeHeads = delivered('knowledge');
  const skillHeads = delivered('skill');
  const memoryHeads = heads.filter((h) => h.type === 'memory');
  const byName = <T extends { name: string; id: string }>(a: T, b: T) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id < b.id ? -1 : 1);
  const touched: AuditResource[] = [];

  const skills: BundleSkill[] = [];
  for (const head of [...skillHeads].sort(byName)) {
    const v = versions.get(versionKey(head.id, head.publishedVersion));
    if (v === undefined) continue;
    skills.push({ name: v.name ?? head.name, description: v.description ?? '' });
    touched.push({ type: 'skill', id: head.id, version: v.version, version_id: v.id });
  }
  const memories: BundleMemory[] = [];
  for (const head of [...memoryHeads].sort(byName)) {
    const v = versions.get(versionKey(head.id, head.latestVersion));
    if (v === undefined) continue;
    memories.push({
      id: head.id,
      name: head.name,
      version: v.version,
      versionId: v.id,
      assignmentState: 'enabled',
      canWrite: canWriteMemory(memoryRoles.roleOn(head.id)),
      content: v.content,
    });
    touched.push({ type: 'memory', id: head.id, version: v.version, version_id: v.id });
  }
  const knowledge: BundleKnowledge[] = [];
  for (const head of [...knowledgeHeads].sort(byName)) {
    const v = versions.get(versionKey(head.id, head.publishedVersion));
    if (v === undefined) continue;
    knowledge.push({
      id: head.id,
      title: head.name,
      version: v.version,
      authority: v.authority ?? 'informational',
      updatedAt: v.createdAt,
      content: v.content,
    });
    touched.push({ type: 'knowledge', id: head.id, version: v.version, version_id: v.id });
  }
  const { messages } = inbox;
  for (const m of messages) touched.push({ type: 'message', id: m.id });
  const { text, skipped } = fitContextBundle({ skills, memories, knowledge, messages, moreMessages: inbox.unread - messages.length }, layout);
  // Issued: marked read only now that the bundle exists (a failed render leaves them new).
  await markIssued(
    db,
    caller,
    messages.map((m) => m.id),
  );
  audit.readAs('context.request');
  // Knowledge left out to keep the bundle within its limit was not delivered, and is not recorded as such.
  const left = new Set(skipped.map((k) => k.id));
  audit.touch(...touched.filter((r) => r.type !== 'knowledge' || !left.has(r.id)));
  return text;
}
