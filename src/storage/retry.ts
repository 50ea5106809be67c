/**
 * Trying a write again with jittered exponential backoff, within a number of
 * attempts and a time budget: a write that finds a shared KV file locked by
 * another process ({@link retryWhileLocked}), and one that keeps losing to
 * other writers of the same keys ({@link contendedAttempts}), past which the
 * caller is told the storage is busy (a 503 it may retry), never left waiting
 * without end.
 * @module
 */

import { StorageUnavailableError } from "../domain/store.ts";
import { delay } from "../timing.ts";

/** The bounds of one write's attempts. */
interface BackoffLimits {
  /** Attempts at most, the first included. */
  attempts: number;
  /** No attempt starts after this long (ms) from the first. */
  budgetMs: number;
  /** The longest wait between two attempts (ms). */
  ceilingMs: number;
}

/**
 * A write that finds the file locked: a writer with a stale snapshot is told
 * at once and retries many times within the budget; a lock that another
 * process holds makes SQLite wait (about 5 s in Deno KV) before saying so, and
 * waiting that long 25 times over would hold a request for minutes.
 */
const LOCKED: BackoffLimits = { attempts: 25, budgetMs: 2_000, ceilingMs: 64 };
/** A write that keeps losing to other writers (docs/interface.md §8). */
const CONTENDED: BackoffLimits = { attempts: 12, budgetMs: 3_000, ceilingMs: 100 };

/** Counts the attempts of one write and waits before each but the first. */
class Backoff {
  readonly #limits: BackoffLimits;
  readonly #started = performance.now();
  #attempt = 0;

  constructor(limits: BackoffLimits) {
    this.#limits = limits;
  }

  /**
   * Called before each attempt: the first goes at once, each later one after
   * a jittered wait that doubles with the attempts up to the ceiling.
   *
   * @returns false, at once, when the attempts or the time budget are used up.
   */
  async next(): Promise<boolean> {
    const { attempts, budgetMs, ceilingMs } = this.#limits;
    this.#attempt++;
    if (this.#attempt === 1) return true;
    if (this.#attempt > attempts || performance.now() - this.#started >= budgetMs) return false;
    // Jittered, so that racing writers do not collide again in step.
    await delay(Math.random() * Math.min(ceilingMs, 2 ** (this.#attempt - 1)));
    return true;
  }
}

/** True for SQLite's "database is locked" (SQLITE_BUSY), as Deno KV reports it. */
export function isLockedError(error: unknown): boolean {
  return error instanceof Error && /database is locked/i.test(error.message);
}

/**
 * Runs a KV write, trying again while SQLite reports the file locked: with
 * several processes on one KV file, a writer whose snapshot is stale gets
 * SQLITE_BUSY at once rather than waiting, and nothing was written, so a
 * retry is safe (its checks run again).
 *
 * @throws the last error once the attempts or the time budget are used up.
 */
export async function retryWhileLocked<T>(write: () => Promise<T>): Promise<T> {
  const backoff = new Backoff(LOCKED);
  let locked: unknown;
  while (await backoff.next()) {
    try {
      return await write();
    } catch (error) {
      if (!isLockedError(error)) throw error;
      locked = error;
    }
  }
  throw locked;
}

/**
 * The attempts of a write that may lose to other writers: call `next()`
 * before each.
 *
 * @param gaveUp told when the attempts give up (for metrics).
 */
export function contendedAttempts(gaveUp?: () => void): { next(): Promise<void> } {
  const backoff = new Backoff(CONTENDED);
  return {
    async next() {
      if (await backoff.next()) return;
      gaveUp?.();
      throw new StorageUnavailableError("contended");
    },
  };
}
