import type { ContextRole, ContextType } from './context-roles.ts';
import { atLeast } from './context-roles.ts';
import type { Scope } from '../../kernel/access/scopes.ts';

/**
 * What an effective context role allows, one function per decision. Pure: callers pass the
 * role from grants.ts, the connection's scopes and, for reads, whether a route delivers the
 * resource. The role decides what the agent may do; the scopes decide what this connection
 * may do; both must agree (docs/access.md).
 */

type Scopes = ReadonlySet<Scope>;

// "True only when the connection can write": drafting, saving and publishing Knowledge and
// Skills need context.write as well as the role.
const canWriteContext = (scopes: Scopes): boolean => scopes.has('context.write');

/** Listing and reading every version: Viewer or higher. */
export function canRead(role: ContextRole | undefined): boolean {
  return atLeast(role, 'viewer');
}

/** Proposing a draft (create_knowledge_draft, create_skill_draft): Proposer and context.write. */
export function canDraft(role: ContextRole | undefined, scopes: Scopes): boolean {
  return canWriteContext(scopes) && atLeast(role, 'proposer');
}

/** Saving a version of an existing Knowledge or Skill: Editor and context.write. */
export function canEdit(role: ContextRole | undefined, scopes: Scopes): boolean {
  return canWriteContext(scopes) && atLeast(role, 'editor');
}

/**
 * Publishing a saved version: Publisher and context.write. For a Knowledge created and
 * published in one call, pass the role on the whole type (All Knowledge).
 */
export function canPublish(role: ContextRole | undefined, scopes: Scopes): boolean {
  return canWriteContext(scopes) && atLeast(role, 'publisher');
}

/** Reading an open draft: its author, or a reviewer who may publish the resource. */
export function canReadDraft(role: ContextRole | undefined, isAuthor: boolean): boolean {
  return isAuthor || atLeast(role, 'publisher');
}

/**
 * Creating a resource: Editor on the whole type (`typeRole` is the role on All Knowledge,
 * All Skills, All Memories or All Artifacts). Memory tools run on context.read alone, as the
 * spec says of write_memory; every other create is a write and needs context.write too.
 */
export function canCreate(type: ContextType, typeRole: ContextRole | undefined, scopes: Scopes): boolean {
  const scopeOk = type === 'memory' ? scopes.has('context.read') : canWriteContext(scopes);
  return scopeOk && atLeast(typeRole, 'editor');
}

/**
 * Replacing a Memory (write_memory) and its `can_write`: Editor or higher. The spec says it
 * uses context.read, which every call has, so no scope is checked here. A route is not needed.
 */
export function canWriteMemory(role: ContextRole | undefined): boolean {
  return atLeast(role, 'editor');
}

/**
 * Replacing an existing Artifact (write_artifact): Editor. Artifacts are not Memory tools,
 * so this is a write and needs context.write like Knowledge and Skills.
 */
export function canWriteArtifact(role: ContextRole | undefined, scopes: Scopes): boolean {
  return canWriteContext(scopes) && atLeast(role, 'editor');
}

/** What this connection may do with one Knowledge or Skill (the Alignbase dialect shows them as `can_*`). */
export interface Capabilities {
  readonly read: boolean;
  readonly draft: boolean;
  readonly edit: boolean;
  readonly publish: boolean;
}

export function capabilities(role: ContextRole | undefined, scopes: Scopes): Capabilities {
  return { read: canRead(role), draft: canDraft(role, scopes), edit: canEdit(role, scopes), publish: canPublish(role, scopes) };
}

/** A read tool's version selector: `latest`, `published` or an exact saved version number. */
export type VersionSelector = 'latest' | 'published' | { readonly exact: number };

/**
 * Whether a Knowledge or Skill version may be read. Viewer or higher reads any version. An
 * active Always route alone (`routed`) delivers the published package only: the `published`
 * selector, or the exact number of the current published version (read_context_attachment
 * names versions by number). Memory is not read this way: get_current_context delivers a
 * routed Memory, and read_memory needs Viewer.
 */
export function canReadVersion(input: {
  role: ContextRole | undefined;
  routed: boolean;
  selector: VersionSelector;
  publishedVersion?: number | undefined;
}): boolean {
  const { role, routed, selector, publishedVersion } = input;
  if (canRead(role)) return true;
  if (!routed) return false;
  if (selector === 'published') return true;
  return typeof selector === 'object' && publishedVersion !== undefined && selector.exact === publishedVersion;
}

/** A Memory's `assignment_state`: `always` when routed to the agent or its group, else `available`. */
export type AssignmentState = 'always' | 'available';

export function assignmentState(routed: boolean): AssignmentState {
  return routed ? 'always' : 'available';
}
