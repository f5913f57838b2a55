import type { Provenance } from '../../kernel/imports/provenance.ts';
import type { ImportedFromWire } from '../../kernel/imports/provenance.ts';
import type { Caller } from '../../kernel/access/caller.ts';
import type { AssignmentState } from '../access/context-decisions.ts';
import { assignmentState, canWriteMemory } from '../access/context-decisions.ts';
import { isResourceName } from '../access/resources.ts';
import { isRoutedTo, routedTo } from '../access/routes.ts';
import type { AuditTrail } from '../../kernel/audit/trail.ts';
import { refuse } from '../versions/refusals.ts';
import type { Db } from '../../store/db.ts';
import { ensureCanCreate, listReadable, resolveAccess } from '../versions/access.ts';
import { parseId } from '../versions/selectors.ts';
import { createWithFirstVersion, latestVersionOf, saveVersion } from '../versions/versions.ts';

/**
 * Alignbase Memory: working recall with live versions and no draft, review or publish step.
 * Reading needs Viewer, writing Editor plus the Memory ID and its exact latest version; the
 * Memory tools run on context.read alone. Routing reports assignment_state and never filters.
 */

/** "Memory content must be 25 KB or smaller": 25 KiB of UTF-8. */
export const MEMORY_MAX_BYTES = 25 * 1024;

/** Said when a content is larger (by the org file too). */
export const MEMORY_TOO_LARGE = 'Memory content must be 25 KB or smaller';

function checkContent(content: string): void {
  if (Buffer.byteLength(content, 'utf8') > MEMORY_MAX_BYTES) throw refuse.contentTooLarge('memory', MEMORY_MAX_BYTES, MEMORY_TOO_LARGE);
}

export interface MemoryItem {
  readonly id: string;
  readonly name: string;
  readonly versionId: string;
  readonly version: number;
  readonly assignmentState: AssignmentState;
  /** Editor or higher. */
  readonly canWrite: boolean;
}

/** A Memory's latest version with its content. */
export interface MemoryVersion extends MemoryItem {
  readonly content: string;
  readonly importedFrom: ImportedFromWire | undefined;
}

/** What create_memory and write_memory saved (or kept, when the content was the same). */
export interface MemoryWrite {
  readonly id: string;
  readonly name: string;
  readonly versionId: string;
  readonly version: number;
}

/** list_memories: every active Memory the agent may read (Viewer), routed or not. */
export async function listMemories(db: Db, caller: Caller): Promise<MemoryItem[]> {
  const [readable, routed] = await Promise.all([listReadable(db, caller, 'memory'), routedTo(db, caller.tenant.id, caller.principal.id)]);
  const routedIds = new Set(routed.filter((r) => r.type === 'memory').map((r) => r.id));
  return readable.map(({ head, role, latest }) => ({
    id: head.id,
    name: head.name,
    versionId: latest.id,
    version: latest.version,
    assignmentState: assignmentState(routedIds.has(head.id)),
    canWrite: canWriteMemory(role),
  }));
}

/** read_memory: the latest version, needed for a safe write. */
export async function readMemory(db: Db, caller: Caller, input: { memoryId: string }, audit: AuditTrail): Promise<MemoryVersion> {
  const id = parseId('memory', input.memoryId);
  const { head, role } = await resolveAccess(db, caller, 'memory', id);
  const version = await latestVersionOf(db, caller.tenant.id, head);
  audit.touch({ type: 'memory', id, version: version.version, version_id: version.id });
  return {
    id,
    name: head.name,
    content: version.content,
    versionId: version.id,
    version: version.version,
    importedFrom: version.importedFrom,
    canWrite: canWriteMemory(role),
    assignmentState: assignmentState(await isRoutedTo(db, caller.tenant.id, caller.principal.id, id)),
  };
}

/**
 * create_memory: Create permission on the Memory type (Editor on All Memories), which already
 * lets the creator read and write it. The creator is recorded (created_by) and gains no grant
 * of its own, as with every resource an agent creates (docs/alignbase.md). Not routed.
 */
export async function createMemory(
  db: Db,
  caller: Caller,
  input: { name: string; content: string; provenance?: Provenance | undefined },
  audit: AuditTrail,
): Promise<MemoryWrite & { created: true }> {
  const name = input.name.trim();
  if (name === '') throw refuse.nameRequired();
  if (!isResourceName(name)) throw refuse.nameTooLong();
  checkContent(input.content);
  return db.tx(async (tx) => {
    await ensureCanCreate(tx, caller, 'memory');
    const { head, saved } = await createWithFirstVersion(
      tx,
      { tenantId: caller.tenant.id, type: 'memory', name, createdBy: caller.principal.id },
      { content: input.content, createdBy: caller.principal.id, provenance: input.provenance },
    );
    await audit.recordIn(tx, 'memory.create', [{ type: 'memory', id: head.id, before_version: null, after_version: 1, version_id: saved.id, changed: true }]);
    return { id: head.id, name, versionId: saved.id, version: saved.version, created: true };
  });
}

/**
 * write_memory: verifies the Memory ID, live Editor permission and the exact latest version
 * under the Memory's row lock, then saves a new live version; identical content saves nothing.
 */
export async function writeMemory(
  db: Db,
  caller: Caller,
  input: { memoryId: string; expectedVersion: number; content: string; provenance?: Provenance | undefined },
  audit: AuditTrail,
): Promise<MemoryWrite & { updated: boolean }> {
  const id = parseId('memory', input.memoryId);
  if (!Number.isSafeInteger(input.expectedVersion) || input.expectedVersion <= 0) throw refuse.invalidExpectedVersion(false);
  checkContent(input.content);
  return db.tx(async (tx) => {
    const { head, role } = await resolveAccess(tx, caller, 'memory', id, { lock: true });
    if (!canWriteMemory(role)) throw refuse.forbidden('memory');
    if (input.expectedVersion !== head.latestVersion) throw refuse.versionConflict('memory', head.latestVersion);
    const latest = await latestVersionOf(tx, caller.tenant.id, head);
    const changed = latest.content !== input.content;
    const saved = changed
      ? await saveVersion(tx, caller.tenant.id, head, { content: input.content, createdBy: caller.principal.id, provenance: input.provenance })
      : latest;
    await audit.recordIn(tx, 'memory.write', [
      { type: 'memory', id, before_version: head.latestVersion, after_version: saved.version, version_id: saved.id, changed },
    ]);
    return { id, name: head.name, versionId: saved.id, version: saved.version, updated: changed };
  });
}
