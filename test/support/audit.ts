import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Caller } from '../../src/kernel/access/caller.ts';
import { AuditLog } from '../../src/kernel/audit/audit-log.ts';
import { AuditTrail } from '../../src/kernel/audit/trail.ts';
import type { Db } from '../../src/store/db.ts';

/*
 * Every core write takes an audit trail and records its event through it (docs/architecture.md,
 * "Audit"). A suite that calls a core write directly gets its trail here, so that what it writes
 * is audited the way the gateway's own callers audit it.
 */

/** The trail `kgw` gives an operation's write (src/admin/ops.ts): the CLI surface, over the audit log of `db`. */
export function cliTrail(db: Db): AuditTrail {
  return AuditTrail.forSurface(new AuditLog(db), 'cli');
}

/** The trail the sign-in pages give a session's start (src/http/pages/page-routes.ts): the OAuth surface. */
export function oauthTrail(db: Db): AuditTrail {
  return AuditTrail.forSurface(new AuditLog(db), 'oauth');
}

/**
 * A tool call's trail for `caller`, for a core function a suite calls as a dialect's tool would:
 * its events name the caller and its token as a tool call's do, and the tool as `test` (a test
 * calling the core directly, not a tool of any spec). One per call, as the gateway makes one per
 * tool call.
 */
export function callerTrail(db: Db, caller: Caller): AuditTrail {
  return AuditTrail.forTool(new AuditLog(db), caller, { name: 'test', dialect: 'test' }, randomUUID());
}

/** An audit event's resources one by one: a group (AuditResourceGroup) as its items, each with its type and version. */
export function resourcesOneByOne(entries: readonly Record<string, unknown>[]): Record<string, unknown>[] {
  return entries.flatMap((entry) => {
    const ids: unknown = entry.ids;
    if (!Array.isArray(ids)) return [entry];
    const versions = entry.versions as unknown[];
    assert.equal(versions.length, ids.length, `a group names a version for each id: ${JSON.stringify(entry)}`);
    return ids.map((id: unknown, i) => ({ type: entry.type, id, version: versions[i] }));
  });
}
