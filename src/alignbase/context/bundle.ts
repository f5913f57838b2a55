/**
 * What the session context bundle holds, as domain objects, and the size rule that decides what
 * goes in: get_current_context's bundle is at most CONTEXT_BUNDLE_MAX_BYTES of UTF-8. The core
 * gathers (current-context.ts) and decides; a dialect renders (for Alignbase:
 * src/alignbase/dialect/bundle.ts) and tells the rule what its text costs.
 */
import { Buffer } from 'node:buffer';
import { refusal } from '../../kernel/errors.ts';

/** The MCP resource size limit the spec names for the bundle, in UTF-8 bytes of the rendered markdown. */
export const CONTEXT_BUNDLE_MAX_BYTES = 8 * 1024 * 1024;

/**
 * The route state printed in a Memory's boundary. The spec's get_current_context sample prints
 * "enabled" for a routed Memory (the route is on); list_memories and read_memory use
 * always/available for the same fact, so all three are accepted here.
 */
export type MemoryAssignmentState = 'enabled' | 'always' | 'available';
export type KnowledgeAuthority = 'informational' | 'must_follow';

export interface BundleSkill {
  name: string;
  description: string;
}

export interface BundleMemory {
  id: string;
  name: string;
  version: number;
  versionId: string;
  /** Rendered verbatim as assignment_state; the session bundle passes 'enabled', as the spec's sample shows. */
  assignmentState: MemoryAssignmentState;
  canWrite: boolean;
  content: string;
}

export interface BundleKnowledge {
  id: string;
  title: string;
  version: number;
  authority: KnowledgeAuthority;
  /** Rendered as updated_at in UTC at minute precision (seconds are truncated): YYYY-MM-DDTHH:MMZ. */
  updatedAt: Date;
  content: string;
}

/** One pinned Artifact version of a message, as the sender shared it. */
export interface BundleMessageArtifact {
  id: string;
  name: string;
  version: number;
  access: 'viewer' | 'editor';
}

/**
 * A new inbox message that get_current_context issues ("a bounded set of new messages"): rendered in
 * its own protected boundary, its pinned Artifacts after the note.
 */
export interface BundleMessage {
  id: string;
  /** The sending agent. */
  from: { id: string; name: string };
  /** The Group recipient the message reached this agent through; null when the agent was addressed itself. */
  viaGroup: { id: string; name: string } | null;
  /** Rendered as sent_at in full ISO 8601 UTC, as read_inbox gives it. */
  sentAt: Date;
  /** The optional note of send_context. */
  message: string | null;
  /** Exact Artifact versions pinned at send time. */
  artifacts: readonly BundleMessageArtifact[];
}

export interface BundleInput {
  skills: readonly BundleSkill[];
  memories: readonly BundleMemory[];
  knowledge: readonly BundleKnowledge[];
  /** New messages, oldest first; the section is left out when there are none. */
  messages?: readonly BundleMessage[];
  /** Unread messages beyond `messages` that read_inbox returns; the section says so when there are any. */
  moreMessages?: number;
}

export interface RenderedBundle {
  readonly text: string;
  /** Routed Knowledge left out because the whole would exceed CONTEXT_BUNDLE_MAX_BYTES; the text names each. */
  readonly skipped: readonly BundleKnowledge[];
}

/** How a dialect lays the bundle out: what the size rule needs to know of its text. */
export interface BundleLayout {
  /** The whole text with `knowledge` inlined and `skipped` named in a notice. */
  render(input: BundleInput, knowledge: readonly BundleKnowledge[], skipped: readonly BundleKnowledge[]): string;
  /** The UTF-8 bytes one inlined Knowledge adds (with what comes only with the first one inlined). */
  knowledgeBytes(knowledge: BundleKnowledge, first: boolean): number;
}

const utf8Bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

/**
 * Fits the bundle into its limit and renders it with `layout`. Items keep the caller's order within each section.
 *
 * When everything together exceeds CONTEXT_BUNDLE_MAX_BYTES, the bundle degrades instead of failing
 * every session of the agent: Knowledge documents are taken in order while they fit and the rest are
 * named in a notice (each Knowledge is at most 1 MiB, so all but a few always fit). Skills, Memories
 * and messages are small and bounded, and are never dropped; only when they alone exceed the limit
 * does this throw KgwError('payload_too_large').
 */
export function fitContextBundle(input: BundleInput, layout: BundleLayout): RenderedBundle {
  const text = layout.render(input, input.knowledge, []);
  if (utf8Bytes(text) <= CONTEXT_BUNDLE_MAX_BYTES) return { text, skipped: [] };
  // The notice naming every routed Knowledge is the longest one possible: what fits beside it fits
  // beside any shorter notice too, so one pass in order decides.
  let budget = CONTEXT_BUNDLE_MAX_BYTES - utf8Bytes(layout.render(input, [], input.knowledge));
  if (budget < 0) {
    const bytes = utf8Bytes(layout.render(input, [], []));
    throw refusal(
      'payload_too_large',
      'context_too_large',
      { bytes, limit: CONTEXT_BUNDLE_MAX_BYTES },
      `current context exceeds the 8 MiB limit (${bytes} bytes); route fewer Skills or Memories to this agent, or shorten them`,
      { bytes, limit: CONTEXT_BUNDLE_MAX_BYTES },
    );
  }
  const kept: BundleKnowledge[] = [];
  const skipped: BundleKnowledge[] = [];
  // Each block adds itself and one paragraph break; the scope note is counted with the first kept block.
  let first = true;
  for (const knowledge of input.knowledge) {
    const cost = layout.knowledgeBytes(knowledge, first);
    if (cost <= budget) {
      kept.push(knowledge);
      budget -= cost;
      first = false;
    } else skipped.push(knowledge);
  }
  return { text: layout.render(input, kept, skipped), skipped };
}
