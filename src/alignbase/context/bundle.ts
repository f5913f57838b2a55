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

/** Everything in the bundle but its Knowledge: never left out, so always read whole. */
export interface BundleSections {
  skills: readonly BundleSkill[];
  memories: readonly BundleMemory[];
  /** New messages, oldest first; the section is left out when there are none. */
  messages?: readonly BundleMessage[];
  /** Unread messages beyond `messages` that read_inbox returns; the section says so when there are any. */
  moreMessages?: number;
}

export interface BundleInput extends BundleSections {
  knowledge: readonly BundleKnowledge[];
}

/** What names a Knowledge in the bundle without its content: all the notice of what was left out needs. */
export type KnowledgeHead = Omit<BundleKnowledge, 'content'>;

/**
 * A routed Knowledge as the size rule meets it: its body's size (bodyBytes), and the content itself
 * only if it was read with the rest (undefined: read when it is found to fit).
 */
export interface RoutedKnowledge extends KnowledgeHead {
  /** UTF-8 bytes of the content without its trailing line breaks (bodyBytes): at most what inlining it costs. */
  readonly bytes: number;
  readonly content: string | undefined;
}

export interface RenderedBundle {
  readonly text: string;
  /** Routed Knowledge left out because the whole would exceed CONTEXT_BUNDLE_MAX_BYTES; the text names each. */
  readonly skipped: readonly KnowledgeHead[];
}

/**
 * How a dialect lays the bundle out: what the size rule needs to know of its text. A layout inlines
 * a document's body (withoutTrailingLineBreaks) and never less, so bodyBytes never exceeds what
 * inlining it costs.
 */
export interface BundleLayout {
  /** The whole text with `knowledge` inlined and `skipped` named in a notice. */
  render(sections: BundleSections, knowledge: readonly BundleKnowledge[], skipped: readonly KnowledgeHead[]): string;
  /** The UTF-8 bytes one inlined Knowledge adds (with what comes only with the first one inlined). */
  knowledgeBytes(knowledge: BundleKnowledge, first: boolean): number;
}

const utf8Bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

/**
 * Content without its trailing \n and \r, which a bundle never carries: a block's closing tag
 * follows exactly one blank line. A loop, not a /(\r?\n)+$/ regex, which backtracks quadratically.
 */
export function withoutTrailingLineBreaks(text: string): string {
  let end = text.length;
  while (end > 0 && (text[end - 1] === '\n' || text[end - 1] === '\r')) end -= 1;
  return end === text.length ? text : text.slice(0, end);
}

/**
 * The UTF-8 bytes of a document's body, what the size rule weighs it by: the store keeps the
 * same figure with each version (context_versions.body_bytes, `octet_length(rtrim(content,
 * E'\r\n'))`), so a document of trailing line breaks is weighed by what it renders, not read whole.
 */
export const bodyBytes = (content: string): number => utf8Bytes(withoutTrailingLineBreaks(content));

/** The refusal of a bundle whose Skills, Memories and messages alone pass the limit (`bytes` of UTF-8). */
export function contextTooLarge(bytes: number): Error {
  return refusal(
    'payload_too_large',
    'context_too_large',
    { bytes, limit: CONTEXT_BUNDLE_MAX_BYTES },
    `current context exceeds the 8 MiB limit (${bytes} bytes); route fewer Skills or Memories to this agent, or shorten them`,
    { bytes, limit: CONTEXT_BUNDLE_MAX_BYTES },
  );
}

const isRead = (knowledge: RoutedKnowledge): knowledge is RoutedKnowledge & BundleKnowledge => knowledge.content !== undefined;

/** One pass of the size rule: the bundle, or the Knowledge whose content it must read before it can decide. */
type Fit = { readonly rendered: RenderedBundle } | { readonly unread: readonly RoutedKnowledge[] };

/**
 * The size rule. Knowledge is taken in order while it fits; an item whose stored size alone passes
 * what is left is left out unread, so a bundle reads at most about its limit of Knowledge content
 * however much is routed. The same rule holds whether or not an item was read beforehand, so what
 * is delivered depends only on what is routed.
 */
function fit(sections: BundleSections, knowledge: readonly RoutedKnowledge[], layout: BundleLayout): Fit {
  // All at once only when all was read and the sizes alone do not pass the limit: the same test
  // the statement that reads them applies, so content read beforehand changes nothing.
  const read = knowledge.filter(isRead);
  if (read.length === knowledge.length && knowledge.reduce((sum, k) => sum + k.bytes, 0) <= CONTEXT_BUNDLE_MAX_BYTES) {
    const text = layout.render(sections, read, []);
    if (utf8Bytes(text) <= CONTEXT_BUNDLE_MAX_BYTES) return { rendered: { text, skipped: [] } };
  }
  // The notice naming every routed Knowledge is the longest one possible: what fits beside it fits
  // beside any shorter notice too, so one pass in order decides.
  let budget = CONTEXT_BUNDLE_MAX_BYTES - utf8Bytes(layout.render(sections, [], knowledge));
  if (budget < 0) throw contextTooLarge(utf8Bytes(layout.render(sections, [], [])));
  const kept: BundleKnowledge[] = [];
  const skipped: KnowledgeHead[] = [];
  // Each block adds itself and one paragraph break; the scope note is counted with the first kept block.
  let first = true;
  for (const [index, item] of knowledge.entries()) {
    if (item.bytes > budget) {
      skipped.push(item);
      continue;
    }
    if (!isRead(item)) return { unread: unreadBatch(knowledge, index, budget) };
    const cost = layout.knowledgeBytes(item, first);
    if (cost <= budget) {
      kept.push(item);
      budget -= cost;
      first = false;
    } else skipped.push(item);
  }
  return { rendered: { text: layout.render(sections, kept, skipped), skipped } };
}

/**
 * The unread Knowledge to read next, from `from` on: the size rule run ahead with sizes for costs,
 * so the items it takes are the ones likely to fit, and together at most `budget` (the first one
 * always): one read is at most the bundle's limit.
 */
function unreadBatch(knowledge: readonly RoutedKnowledge[], from: number, budget: number): RoutedKnowledge[] {
  const batch: RoutedKnowledge[] = [];
  let left = budget;
  for (const item of knowledge.slice(from)) {
    if (isRead(item) || (batch.length > 0 && item.bytes > left)) continue;
    batch.push(item);
    left -= item.bytes;
  }
  return batch;
}

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
  const knowledge = input.knowledge.map((k) => ({ ...k, bytes: bodyBytes(k.content) }));
  const result = fit(input, knowledge, layout);
  if ('rendered' in result) return result.rendered;
  throw new Error('unreachable: every Knowledge was given with its content');
}

/**
 * fitContextBundle over Knowledge read in part: `read` gives the content of the items asked for, by
 * id (an item it does not return is gone, and is neither delivered nor named), without their
 * trailing line breaks or with them. Each round reads at most the bundle's limit of bodies, and
 * there is a second one only when sizes mislead (the markup around a document, escaping).
 */
export async function fitRoutedBundle(
  sections: BundleSections,
  knowledge: readonly RoutedKnowledge[],
  layout: BundleLayout,
  read: (unread: readonly RoutedKnowledge[]) => Promise<ReadonlyMap<string, string>>,
): Promise<RenderedBundle> {
  let current = knowledge;
  for (;;) {
    const result = fit(sections, current, layout);
    if ('rendered' in result) return result.rendered;
    const asked = new Set(result.unread.map((k) => k.id));
    const contents = await read(result.unread);
    // Each round reads or drops at least one item, so the rounds end.
    current = current.flatMap((k) => {
      if (!asked.has(k.id)) return [k];
      const content = contents.get(k.id);
      return content === undefined ? [] : [{ ...k, content }];
    });
  }
}
