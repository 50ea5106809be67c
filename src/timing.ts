/**
 * Waiting: a pause, a bound on a wait, and turns. Every timer here is cleared
 * as soon as it is no longer needed, so that none holds a stopping process.
 * @module
 */

/** Resolves after `ms`, or at once when `signal` aborts (its timer then cleared). */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, ms));
    signal?.addEventListener("abort", done, { once: true });
  });
}

/**
 * A jittered exponential backoff: a random wait up to `unitMs` · 2^(attempt − 1),
 * at most `ceilingMs`, before the `attempt`-th retry (from 1).
 */
export function backoffMs(attempt: number, unitMs: number, ceilingMs: number): number {
  return Math.random() * Math.min(ceilingMs, unitMs * 2 ** (attempt - 1));
}

/** Resolves when `promise` settles or `ms` have passed, whichever is first. */
export function within(promise: Promise<unknown>, ms: number): Promise<unknown> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise((resolve) => timer = setTimeout(resolve, Math.max(0, ms)));
  return Promise.race([promise, bound]).finally(() => clearTimeout(timer));
}

/**
 * Runs work in turns per key, within one process: the one queue of the
 * service for work that must not overlap other work of the same key (two
 * commits that write the same key would fail each other's check).
 */
export class Lanes {
  readonly #tails = new Map<string, Promise<unknown>>();

  /** Runs `work` once the work of the same `key` before it has ended, however it ended. */
  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const before = this.#tails.get(key) ?? Promise.resolve();
    const turn = before.then(work);
    const tail = turn.catch(() => {});
    this.#tails.set(key, tail);
    tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return turn;
  }
}
