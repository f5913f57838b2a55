import type { Caller } from '../../kernel/access/caller.ts';
import { canPublish } from '../access/context-decisions.ts';
import type { AuditTrail } from '../../kernel/audit/trail.ts';
import type { Db } from '../../store/db.ts';
import { ensure, resolveAccess, selectVersion } from './access.ts';
import type { VersionedType } from './selectors.ts';
import { parsePublishSelector } from './selectors.ts';
import { publishVersion } from './versions.ts';

/**
 * publish_knowledge and publish_skill: points the published version at the selected saved
 * version (latest when omitted). Publisher and context.write; published: false when it already was.
 */
export interface PublishResult {
  readonly id: string;
  readonly name: string;
  readonly versionId: string;
  readonly version: number;
  /** False when the version already was the published one. */
  readonly published: boolean;
}

export async function publishResource(
  db: Db,
  caller: Caller,
  type: VersionedType,
  id: string,
  rawSelector: unknown,
  audit: AuditTrail,
): Promise<PublishResult> {
  const selector = parsePublishSelector(rawSelector);
  return db.tx(async (tx) => {
    const access = await resolveAccess(tx, caller, type, id, { lock: true });
    ensure(canPublish(access.role, caller.scopes));
    const version = await selectVersion(tx, caller, type, access, selector);
    const number = version.version;
    const published = await publishVersion(tx, caller.tenant.id, access.head, number);
    if (published) {
      await audit.recordIn(
        tx,
        `${type}.publish`,
        [{ type, id, before_version: access.head.publishedVersion ?? null, after_version: number, version_id: version.id }],
        { owner_id: ownerOf(caller) },
      );
    }
    return { id, name: access.head.name, versionId: version.id, version: number, published };
  });
}

/**
 * The person a write is tied to in its audit record (the spec's "agent owner"): an agent's owner,
 * or the person calling. The audit row itself names the agent and the token.
 */
export const ownerOf = (caller: Caller): string => caller.principal.ownerId ?? caller.principal.id;
