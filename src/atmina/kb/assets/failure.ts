/**
 * Why an Asset's content could not be read, although the Asset itself is kept (its original
 * bytes stay downloadable; its Companion has no extracted text, its image no rendition):
 * - `encrypted`: a PDF that needs a password to open;
 * - `corrupt`: bytes of the right format that the library cannot parse or decode (truncated,
 *   damaged, or crafted);
 * - `deadline`: the parse or decode did not finish in time, and was ended;
 * - `memory`: the parse needed more memory than it is allowed, and was ended.
 */
export type FailureReason = 'encrypted' | 'corrupt' | 'deadline' | 'memory';

/** A read of an Asset's content that did not succeed, and why. */
export interface Failed {
  state: 'failed';
  reason: FailureReason;
}
