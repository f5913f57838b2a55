/**
 * Request bytes in flight, per caller and in total: a request's declared body (its
 * Content-Length, or the body limit when it sends none) is reserved before the body is read and
 * given back when its answer is sent or its connection closes. The reservation stands for the
 * memory the body takes while it is read, parsed and answered, so one token sending hundreds of
 * large bodies at once cannot take the process's memory or its event loop from everyone else.
 */

/** The bounds, and how long a refused client is asked to wait. */
export interface InflightLimits {
  /** Bytes one caller (a token, or an address where there is none) may have in flight. */
  readonly perCaller: number;
  /** Bytes every caller together may have in flight. */
  readonly total: number;
  /** The Retry-After of a refusal, in seconds. */
  readonly retryAfterSeconds: number;
}

/** Two whole MCP bodies per caller, eight in all (MCP_BODY_LIMIT is 16 MiB). */
export const MCP_INFLIGHT_LIMITS: InflightLimits = { perCaller: 32 * 1024 * 1024, total: 128 * 1024 * 1024, retryAfterSeconds: 1 };

export type Reservation = { readonly release: () => void } | { readonly refused: 'caller' | 'total' };

export class InflightBytes {
  readonly limits: InflightLimits;
  readonly #byCaller = new Map<string, number>();
  #total = 0;

  constructor(limits: InflightLimits) {
    this.limits = limits;
  }

  /** Bytes in flight now, in total and for one caller (for tests and metrics). */
  held(caller?: string): number {
    return caller === undefined ? this.#total : (this.#byCaller.get(caller) ?? 0);
  }

  /**
   * Reserves `bytes` for `caller`, or says which bound it would pass. A body larger than a
   * bound on its own is let through when nothing else of the caller is in flight: the body limit
   * refuses it, not this. `release` is idempotent.
   */
  reserve(caller: string, bytes: number): Reservation {
    const mine = this.#byCaller.get(caller) ?? 0;
    if (mine > 0 && mine + bytes > this.limits.perCaller) return { refused: 'caller' };
    if (this.#total > 0 && this.#total + bytes > this.limits.total) return { refused: 'total' };
    this.#byCaller.set(caller, mine + bytes);
    this.#total += bytes;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.#total -= bytes;
        const left = (this.#byCaller.get(caller) ?? 0) - bytes;
        if (left <= 0) this.#byCaller.delete(caller);
        else this.#byCaller.set(caller, left);
      },
    };
  }
}

/** The bytes a request will bring: its Content-Length, or `limit` when it declares none (chunked) or more. */
export function declaredBytes(contentLength: string | undefined, limit: number): number {
  const declared = contentLength === undefined || !/^[0-9]{1,16}$/.test(contentLength) ? Number.NaN : Number(contentLength);
  return Number.isSafeInteger(declared) ? Math.min(declared, limit) : limit;
}
