import type { Caller } from '../../kernel/access/caller.ts';
import type { AuditTrail } from '../../kernel/audit/trail.ts';
import type { Queryable } from '../../store/db.ts';
import { resolveAccess, selectVersion } from './access.ts';
import type { ResourceHead, SavedVersion } from './queries.ts';
import type { VersionedType } from './selectors.ts';
import { parseId, parseReadSelector } from './selectors.ts';
import type { VersionRead } from './views.ts';
import { versionRead } from './views.ts';

/**
 * read_knowledge and read_skill: the saved version a read selector names (latest when omitted),
 * for a caller who may read the resource or receives it by an Always route, touched in the call's
 * audit record. Each caller adds its own fields from the head and the version.
 */
export async function readResource(
  q: Queryable,
  caller: Caller,
  type: VersionedType,
  rawId: string,
  rawSelector: unknown,
  audit: AuditTrail,
): Promise<{ id: string; head: ResourceHead; version: SavedVersion; read: VersionRead }> {
  const id = parseId(type, rawId);
  const selector = parseReadSelector(rawSelector);
  const access = await resolveAccess(q, caller, type, id, { allowRoute: true });
  const version = await selectVersion(q, caller, type, access, selector);
  audit.touch({ type, id, version: version.version, version_id: version.id });
  return { id, head: access.head, version, read: versionRead(access, version, caller) };
}
