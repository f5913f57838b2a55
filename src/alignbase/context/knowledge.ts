import type { Provenance } from '../../kernel/imports/provenance.ts';
import type { Caller } from '../../kernel/access/caller.ts';
import { canCreate, canEdit, canPublish } from '../access/context-decisions.ts';
import { effectiveContextRole } from '../access/grants.ts';
import type { AuditTrail } from '../../kernel/audit/trail.ts';
import { refuse } from '../versions/refusals.ts';
import type { Db, Transaction } from '../../store/db.ts';
import type { ListedVersions, VersionRead } from '../versions/views.ts';
import type { PublishResult } from '../versions/publish.ts';
import { listedVersions } from '../versions/views.ts';
import { readResource } from '../versions/read.ts';
import { listReadable, ensure, resolveAccess } from '../versions/access.ts';
import { ownerOf, publishResource } from '../versions/publish.ts';
import { parseDates, parseId } from '../versions/selectors.ts';
import { createWithFirstVersion, latestVersionOf, publishVersion, saveVersion } from '../versions/versions.ts';
import type { NewVersion } from '../versions/versions.ts';
import type { AttachmentEntry } from '../versions/queries.ts';

/**
 * Alignbase Knowledge: full-snapshot markdown documents with an authority, staleness dates,
 * a latest and a published version. The rules are the spec's (list_knowledge, read_knowledge,
 * write_knowledge, publish_knowledge); docs/alignbase.md says where we decided.
 */

export type Authority = 'informational' | 'must_follow';

export const TITLE_MAX = 200;

/**
 * The largest Knowledge content: 1 MiB of UTF-8, for versions, drafts and proposals alike. Knowledge
 * is delivered whole in every routed agent's session bundle (8 MiB at most), so one document must
 * leave room for the rest; longer material belongs in attachments, which are fetched in chunks.
 */
export const KNOWLEDGE_MAX_BYTES = 1024 * 1024;
/** Said when a content is larger (by the org file too). */
export const KNOWLEDGE_TOO_LARGE = 'Knowledge content must be 1 MB or smaller';

/** The size rule of every Knowledge content a caller sends. */
export function checkKnowledgeContent(content: string): void {
  // A string of more UTF-16 units than the limit has more bytes than it too; skip the count.
  if (content.length > KNOWLEDGE_MAX_BYTES || Buffer.byteLength(content, 'utf8') > KNOWLEDGE_MAX_BYTES)
    throw refuse.contentTooLarge('knowledge', KNOWLEDGE_MAX_BYTES, KNOWLEDGE_TOO_LARGE);
}

export interface KnowledgeItem extends ListedVersions {
  readonly id: string;
  readonly title: string;
}

export async function listKnowledge(db: Db, caller: Caller): Promise<KnowledgeItem[]> {
  const rows = await listReadable(db, caller, 'knowledge');
  return rows.map(({ head, role, latest, published }) => ({ id: head.id, title: head.name, ...listedVersions(head, latest, published, role, caller) }));
}

export interface KnowledgeVersion extends VersionRead {
  readonly id: string;
  readonly title: string;
  readonly content: string;
  readonly authority: Authority;
  /** Knowledge from an accepted proposal may carry files. */
  readonly attachments: readonly AttachmentEntry[];
}

/** `version`: the read selector as the caller gave it (latest, published or a number). */
export async function readKnowledge(db: Db, caller: Caller, input: { knowledgeId: string; version?: unknown }, audit: AuditTrail): Promise<KnowledgeVersion> {
  const { id, head, version, read } = await readResource(db, caller, 'knowledge', input.knowledgeId, input.version, audit);
  return {
    id,
    title: head.name,
    ...read,
    content: version.content,
    authority: version.authority ?? 'informational',
    attachments: version.attachments,
  };
}

export interface WriteKnowledgeInput {
  /** Omitted to create (expectedVersion 0). */
  readonly knowledgeId?: string | undefined;
  /** 0 to create, or the latest version to replace. */
  readonly expectedVersion: number;
  readonly title?: string | undefined;
  readonly content: string;
  readonly authority?: Authority | undefined;
  readonly publish?: boolean | undefined;
  /** YYYY-MM-DD, only used when creating. */
  readonly reviewBy?: string | undefined;
  readonly expiresAt?: string | undefined;
  /** Set by an import only (kgw import mcp): where this version came from. */
  readonly provenance?: Provenance | undefined;
}

export interface WriteKnowledgeResult {
  readonly id: string;
  readonly title: string;
  readonly versionId: string;
  readonly version: number;
  readonly updated: boolean;
  readonly published: boolean;
  readonly created: boolean;
}

/** The create rules of write_knowledge, shared with accepted proposals and the org file. */
export function checkNewKnowledge(input: { title?: string | undefined; content: string }): string {
  const title = (input.title ?? '').trim();
  if (title === '') throw refuse.titleRequired();
  if ([...title].length > TITLE_MAX) throw refuse.titleTooLong(TITLE_MAX);
  if (input.content === '') throw refuse.contentRequired('knowledge');
  checkKnowledgeContent(input.content);
  return title;
}

/**
 * write_knowledge: creates (expectedVersion 0) or saves a new full version (the latest
 * version number). A write equal to the latest version in content and authority saves
 * nothing and answers updated: false. Concurrent writers of one Knowledge are serialised on
 * its row, so exactly one of several writers with the same expectedVersion wins.
 */
export async function writeKnowledge(db: Db, caller: Caller, input: WriteKnowledgeInput, audit: AuditTrail): Promise<WriteKnowledgeResult> {
  const expected = input.expectedVersion;
  if (!Number.isSafeInteger(expected) || expected < 0) throw refuse.invalidExpectedVersion(true);
  if (expected === 0) {
    if (input.knowledgeId !== undefined) throw refuse.idOmitted('knowledge');
    const title = checkNewKnowledge(input);
    const dates = parseDates(input);
    return db.tx(async (tx) => {
      const typeRole = await effectiveContextRole(tx, caller.tenant.id, caller.principal.id, 'knowledge', undefined);
      ensure(canCreate('knowledge', typeRole, caller.scopes));
      if (input.publish === true) ensure(canPublish(typeRole, caller.scopes));
      const result = await createKnowledge(tx, caller.tenant.id, {
        title,
        content: input.content,
        authority: input.authority ?? 'informational',
        createdBy: caller.principal.id,
        ...dates,
        publish: input.publish === true,
        provenance: input.provenance,
      });
      await audit.recordIn(
        tx,
        'knowledge.create',
        [{ type: 'knowledge', id: result.id, before_version: null, after_version: result.version, version_id: result.versionId, changed: true }],
        {
          owner_id: ownerOf(caller),
          published: result.published,
          review_by: dates.reviewBy ?? null,
          expires_at: dates.expiresAt ?? null,
        },
      );
      return result;
    });
  }
  if (input.knowledgeId === undefined) throw refuse.idRequired('knowledge');
  const id = parseId('knowledge', input.knowledgeId);
  checkKnowledgeContent(input.content);
  // Only used when creating; checked all the same, so a bad date is never silently dropped.
  parseDates(input);
  return db.tx(async (tx) => {
    const access = await resolveAccess(tx, caller, 'knowledge', id, { lock: true });
    ensure(canEdit(access.role, caller.scopes));
    if (input.publish === true) ensure(canPublish(access.role, caller.scopes));
    const { head } = access;
    if (expected !== head.latestVersion) throw refuse.versionConflict('knowledge', head.latestVersion);
    const latest = await latestVersionOf(tx, caller.tenant.id, head);
    const authority = input.authority ?? latest.authority ?? 'informational';
    const changed = latest.content !== input.content || (latest.authority ?? 'informational') !== authority;
    // write_knowledge replaces the content; the Knowledge's files (from an accepted proposal) stay with it.
    const saved = changed
      ? await saveVersion(tx, caller.tenant.id, head, {
          content: input.content,
          authority,
          attachments: latest.attachments,
          createdBy: caller.principal.id,
          provenance: input.provenance,
        })
      : latest;
    const published = input.publish === true ? await publishVersion(tx, caller.tenant.id, head, saved.version) : false;
    if (changed || published) {
      await audit.recordIn(
        tx,
        'knowledge.write',
        [{ type: 'knowledge', id, before_version: head.latestVersion, after_version: saved.version, version_id: saved.id, changed }],
        { owner_id: ownerOf(caller), published },
      );
    }
    return { id, title: head.name, versionId: saved.id, version: saved.version, updated: changed, published, created: false };
  });
}

/** Creates a Knowledge with its first version (and publishes it when asked); no checks of the caller. */
export async function createKnowledge(
  tx: Transaction,
  tenantId: string,
  input: {
    title: string;
    content: string;
    authority: Authority;
    createdBy: string | undefined;
    reviewBy?: string | undefined;
    expiresAt?: string | undefined;
    publish: boolean;
    attachments?: NewVersion['attachments'];
    provenance?: Provenance | undefined;
  },
): Promise<WriteKnowledgeResult> {
  const { head, saved } = await createWithFirstVersion(
    tx,
    { tenantId, type: 'knowledge', name: input.title, createdBy: input.createdBy, reviewBy: input.reviewBy, expiresAt: input.expiresAt },
    { content: input.content, authority: input.authority, createdBy: input.createdBy, attachments: input.attachments, provenance: input.provenance },
  );
  const published = input.publish ? await publishVersion(tx, tenantId, head, saved.version) : false;
  return { id: head.id, title: head.name, versionId: saved.id, version: saved.version, updated: true, published, created: true };
}

/** publish_knowledge: `version` is the publish selector as the caller gave it (latest or a number). */
export async function publishKnowledge(db: Db, caller: Caller, input: { knowledgeId: string; version?: unknown }, audit: AuditTrail): Promise<PublishResult> {
  return publishResource(db, caller, 'knowledge', parseId('knowledge', input.knowledgeId), input.version, audit);
}
