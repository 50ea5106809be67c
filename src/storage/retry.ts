/**
 * Jittered exponential backoff within a number of attempts and a time
 * budget, for a write that finds the KV file locked
 * ({@link retryWhileLocked}) and one that keeps losing to other writers
 * ({@link contendedAttempts}).
 * @module
 */

import { StorageUnavailableError } from "../domain/store.ts";
import { backoffMs, delay } from "../timing.ts";

/** Attempts at most (the first included), no attempt after `budgetMs`, waits up to `ceilingMs`. */
interface BackoffLimits {
  attempts: number;
  budgetMs: number;
  ceilingMs: number;
}

/** Locked: SQLite may wait ~5 s for another process's lock, so 2 s in all, not 25 such waits. */
const LOCKED: BackoffLimits = { attempts: 100, budgetMs: 2_000, ceilingMs: 64 };
/** Losing to other writers (docs/interface.md §8). */
const CONTENDED: BackoffLimits = { attempts: 12, budgetMs: 3_000, ceilingMs: 100 };

/**
 * Called before each attempt: the first goes at once, each later one after
 * a jittered wait that doubles up to the ceiling; false, at once, when the
 * attempts or the budget are used up.
 */
function backoff({ attempts, budgetMs, ceilingMs }: BackoffLimits): () => Promise<boolean> {
  const started = performance.now();
  let attempt = 0;
  return async () => {
    if (++attempt === 1) return true;
    if (attempt > attempts || performance.now() - started >= budgetMs) return false;
    await delay(backoffMs(attempt, 1, ceilingMs));
    return true;
  };
}

/** True for SQLite's "database is locked" (SQLITE_BUSY), as Deno KV reports it. */
export function isLockedError(error: unknown): boolean {
  return error instanceof Error && /database is locked/i.test(error.message);
}

/**
 * Runs a KV write, trying again while SQLite reports the file locked:
 * nothing was written, so a retry is safe (its checks run again).
 *
 * @throws the last error once the attempts or the time budget are used up.
 */
export async function retryWhileLocked<T>(write: () => Promise<T>): Promise<T> {
  const next = backoff(LOCKED);
  let locked: unknown;
  while (await next()) {
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
  const more = backoff(CONTENDED);
  return {
    async next() {
      if (await more()) return;
      gaveUp?.();
      throw new StorageUnavailableError("contended");
    },
  };
}
