/**
 * The time limit of one delivery attempt (`WEBHOOK_TIMEOUT_MS`) and its early
 * end from outside, for `deliver.ts`.
 * @module
 */

/** One signal that aborts at the time limit or the early end, and waits cut short by it. */
export class Deadline {
  readonly #controller = new AbortController();
  readonly #timer: ReturnType<typeof setTimeout>;
  readonly #outside?: AbortSignal;
  readonly #onOutside = () => this.#controller.abort(this.#outside!.reason);
  #timedOut = false;

  constructor(ms: number, outside?: AbortSignal) {
    this.#outside = outside;
    this.#timer = setTimeout(() => {
      this.#timedOut = true;
      this.#controller.abort(new DOMException("the delivery attempt timed out", "TimeoutError"));
    }, ms);
    if (outside?.aborted) this.#onOutside();
    else outside?.addEventListener("abort", this.#onOutside, { once: true });
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  get timedOut(): boolean {
    return this.#timedOut;
  }

  get abortedFromOutside(): boolean {
    return this.#controller.signal.aborted && !this.#timedOut;
  }

  /** `promise`, or a rejection as soon as the deadline passes, whichever comes first. */
  race<T>(promise: Promise<T>): Promise<T> {
    const signal = this.#controller.signal;
    return new Promise<T>((resolve, reject) => {
      const stop = () => reject(signal.reason);
      if (signal.aborted) stop();
      else signal.addEventListener("abort", stop, { once: true });
      promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", stop));
    });
  }

  /**
   * Like {@link race}, for an operation that yields a connection: one that
   * arrives after the deadline is closed rather than leaked.
   */
  async settle<T extends Deno.Conn>(promise: Promise<T>): Promise<T> {
    try {
      return await this.race(promise);
    } catch (error) {
      promise.then(closeQuietly, () => {});
      throw error;
    }
  }

  dispose() {
    clearTimeout(this.#timer);
    this.#outside?.removeEventListener("abort", this.#onOutside);
  }
}

/** Closes a connection that may already be closed (by a deadline, or by the peer's TLS alert). */
export function closeQuietly(conn: Deno.Conn | null): void {
  try {
    conn?.close();
  } catch {
    // Already closed.
  }
}
