/**
 * Writes that lose to other writers of the same keys: kept apart within a
 * process, and tried again with jittered backoff up to a bound across
 * processes, past which the caller is told the storage is busy (a 503 that
 * it may retry), never left waiting without end.
 * @module
 */

import { StorageUnavailableError } from "../domain/store.ts";
import { delay } from "../timing.ts";

/** Attempts of one write that keeps losing to other writers. */
export const CONTENDED_ATTEMPTS = 12;
/** No attempt starts after this long. */
const CONTENDED_BUDGET_MS = 3_000;
/** The largest backoff between attempts. */
const MAX_BACKOFF_MS = 100;

/** Counts the attempts of one write; waits before each retry; gives up past the bound. */
export class Attempts {
  readonly #started = performance.now();
  #attempt = 0;
  readonly #gaveUp: (() => void) | undefined;

  /** @param gaveUp told when the attempts give up (for metrics). */
  constructor(gaveUp?: () => void) {
    this.#gaveUp = gaveUp;
  }

  /**
   * Called before each attempt: the first goes at once, each later one after
   * a jittered wait that grows with the attempts.
   *
   * @throws {StorageUnavailableError} ("contended") past the attempts or the time allowed.
   */
  async next(): Promise<void> {
    this.#attempt++;
    if (this.#attempt === 1) return;
    if (
      this.#attempt > CONTENDED_ATTEMPTS ||
      performance.now() - this.#started > CONTENDED_BUDGET_MS
    ) {
      this.#gaveUp?.();
      throw new StorageUnavailableError("contended");
    }
    const ceiling = Math.min(MAX_BACKOFF_MS, 2 ** this.#attempt);
    await delay(Math.random() * ceiling);
  }
}

/**
 * Runs work in turns per key, within one process: two commits of this
 * process that write the same key would fail each other's check.
 */
export class Lanes {
  readonly #tails = new Map<string, Promise<unknown>>();

  /** Runs `work` after the work of the same `key` before it. */
  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const before = this.#tails.get(key) ?? Promise.resolve();
    const turn = before.then(work, work);
    const tail = turn.catch(() => {});
    this.#tails.set(key, tail);
    tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return turn;
  }
}
