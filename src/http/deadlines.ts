/**
 * Shared deadlines for request body reads: one interval timer checks every
 * pending read, instead of a timer armed and cleared per request (a timer
 * costs the server a few microseconds each way, on every request). A read
 * expires between its deadline and one sweep interval later.
 * @module
 */

/** A registered deadline; pass it back to {@link DeadlineSweeper.remove}. */
export interface Deadline {
  readonly at: number;
  readonly expire: () => void;
}

/**
 * Calls `expire` of each registered deadline once it has passed.
 *
 * @example
 * ```ts
 * const deadlines = new DeadlineSweeper(100);
 * const app = createApp({ kv, settings, deadlines });
 * // at shutdown:
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

  /** Calls `expire` once, `ms` milliseconds from now or up to one interval later, unless removed first. */
  add(ms: number, expire: () => void): Deadline {
    const deadline = { at: performance.now() + ms, expire };
    this.#pending.add(deadline);
    return deadline;
  }

  /** Forgets a deadline (a no-op once it expired). */
  remove(deadline: Deadline): void {
    this.#pending.delete(deadline);
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
      deadline.expire();
    }
  }
}
