/**
 * Shared deadlines for request body reads: one interval timer checks every
 * pending read, instead of a timer armed and cleared per request (a few
 * microseconds each way). A read expires up to one sweep interval after its
 * deadline, or at once when the server shuts down.
 * @module
 */

/** Why a deadline expired: its time passed, or the server is shutting down. */
export type ExpireCause = "timeout" | "shutdown";

/** A registered deadline; pass it back to {@link DeadlineSweeper.remove}. */
export interface Deadline {
  readonly at: number;
  readonly expire: (cause: ExpireCause) => void;
}

/**
 * Calls `expire` of each registered deadline once it has passed.
 *
 * @example
 * ```ts
 * const deadlines = new DeadlineSweeper(100);
 * // handed to `createApp({ …, deadlines })`, whose body reads use it;
 * // at shutdown: every read still waiting ends now, then the timer stops
 * deadlines.cutAll();
 * deadlines.stop();
 * ```
 */
export class DeadlineSweeper {
  readonly #pending = new Set<Deadline>();
  readonly #timer: ReturnType<typeof setInterval>;

  /** @param intervalMs how often deadlines are checked, in milliseconds (at least 1). */
  constructor(readonly intervalMs: number) {
    if (!Number.isFinite(intervalMs) || intervalMs < 1) {
      throw new RangeError("intervalMs must be at least 1");
    }
    // Not unref'd: a read waiting for its deadline must keep the process alive.
    this.#timer = setInterval(() => this.#sweep(), intervalMs);
  }

  /**
   * Calls `expire` once, `ms` milliseconds from now or up to one interval
   * later (cause "timeout"), or at {@link cutAll} (cause "shutdown"), unless
   * removed first.
   */
  add(ms: number, expire: (cause: ExpireCause) => void): Deadline {
    const deadline = { at: performance.now() + ms, expire };
    this.#pending.add(deadline);
    return deadline;
  }

  /** Forgets a deadline (a no-op once it expired). */
  remove(deadline: Deadline): void {
    this.#pending.delete(deadline);
  }

  /** Expires every pending deadline now, cause "shutdown"; ones added later run their course. */
  cutAll(): void {
    const pending = [...this.#pending];
    this.#pending.clear();
    for (const deadline of pending) deadline.expire("shutdown");
  }

  /** Stops checking; pending deadlines never expire. */
  stop(): void {
    clearInterval(this.#timer);
    this.#pending.clear();
  }

  #sweep(): void {
    const now = performance.now();
    for (const deadline of this.#pending) {
      if (deadline.at > now) continue;
      this.#pending.delete(deadline);
      deadline.expire("timeout");
    }
  }
}
