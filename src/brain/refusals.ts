/**
 * The refusals of Company Brain reads, with their machine reasons; they join the kernel's
 * ReasonFacts (below) beside the KB reasons, and only the brain dialect words them (docs/company-brain.md).
 */
export interface BrainReasonFacts {
  /** read_concept: the id names no node of the tenant. */
  node_unknown: Record<string, never>;
  /** read_concept: the node exists above the viewer's tier (or outside its department or project). */
  node_above_tier: Record<string, never>;
}

export type BrainReason = keyof BrainReasonFacts;

// The kernel's ReasonFacts gains these reasons, so a KgwError carries them as one `Reason`.
declare module '../kernel/errors.ts' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface ReasonFacts extends BrainReasonFacts {}
}
