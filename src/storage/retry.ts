/**
 * Writes that find a shared KV file locked by another process are tried again.
 * @module
 */

/** Attempts of a write that finds a shared KV file locked by another process. */
const LOCKED_ATTEMPTS = 25;
/**
 * No attempt starts after this long. A writer with a stale snapshot is told
 * at once and retries many times within it; a lock that another process
 * holds makes SQLite wait (about 5 s in Deno KV) before saying so, and
 * waiting that long 25 times over would hold a request for minutes.
 */
const LOCKED_BUDGET_MS = 2_000;

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
  const started = performance.now();
  for (let attempt = 1;; attempt++) {
    try {
      return await write();
    } catch (error) {
      const spent = performance.now() - started;
      if (!isLockedError(error) || attempt >= LOCKED_ATTEMPTS || spent >= LOCKED_BUDGET_MS) {
        throw error;
      }
      // Jittered backoff so racing processes do not collide again in step.
      await new Promise((resolve) =>
        setTimeout(resolve, Math.random() * Math.min(64, 2 ** attempt))
      );
    }
  }
}
