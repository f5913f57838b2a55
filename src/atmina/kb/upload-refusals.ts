import type { KgwError } from '../../kernel/errors.ts';
import { refusal } from '../../kernel/errors.ts';

/**
 * The refusals of uploads (request_uploads, confirm_uploads, upload_file, update_file), with
 * their machine reasons; they join the kernel's ReasonFacts (below) beside the other KB reasons.
 */
export interface KbUploadReasonFacts {
  /** No batch of this token for this KB (never issued, another KB's, or collected after expiry). */
  upload_batch_not_found: Record<string, never>;
  upload_batch_expired: { expiredAt: string };
  /** Another confirmation of the same batch is running. */
  upload_batch_busy: Record<string, never>;
  /** A declared or inline upload above its ceiling. */
  upload_too_large: { bytes: number; maxBytes: number; asset: boolean };
  /** Inline content (upload_file, update_file) above 1 MiB. */
  inline_too_large: { bytes: number; maxBytes: number };
  upload_rate_limited: { retryAfterSeconds: number };
}

export type KbUploadReason = keyof KbUploadReasonFacts;

// The kernel's ReasonFacts gains these reasons, so a KgwError carries them as one `Reason`.
declare module '../../kernel/errors.ts' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface ReasonFacts extends KbUploadReasonFacts {}
}

export const refuseUpload = {
  batchNotFound: (): KgwError =>
    refusal(
      'not_found',
      'upload_batch_not_found',
      {},
      'no upload batch of this batch_token in this Knowledge Base (an unconfirmed batch is forgotten after it expires); call request_uploads again',
    ),
  batchExpired: (expiredAt: string): KgwError =>
    refusal(
      'validation',
      'upload_batch_expired',
      { expiredAt },
      `the upload URLs of this batch expired at ${expiredAt} before it was confirmed; call request_uploads again and PUT the bytes to the new URLs`,
    ),
  batchBusy: (): KgwError =>
    refusal('conflict', 'upload_batch_busy', {}, 'this batch is being confirmed by another call; retry confirm_uploads in a few seconds for its result'),
  tooLarge: (bytes: number, maxBytes: number, asset: boolean): KgwError =>
    refusal(
      'payload_too_large',
      'upload_too_large',
      { bytes, maxBytes, asset },
      `${asset ? 'an image or PDF Asset' : 'a file'} may be at most ${maxBytes} bytes (${maxBytes / 1024 / 1024} MiB); this one has ${bytes}`,
    ),
  inlineTooLarge: (bytes: number, maxBytes: number): KgwError =>
    refusal(
      'payload_too_large',
      'inline_too_large',
      { bytes, maxBytes },
      `inline content may be at most ${maxBytes} bytes once decoded; this has ${bytes}: use request_uploads, PUT the bytes, then confirm_uploads`,
    ),
  rateLimited: (retryAfterSeconds: number): KgwError =>
    refusal('rate_limited', 'upload_rate_limited', { retryAfterSeconds }, `too many writes in a short time; retry in ${retryAfterSeconds} s`, {
      retryAfterSeconds,
    }),
};
