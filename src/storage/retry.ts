/**
 * Writes that find a shared KV file locked by another process are tried again.
 * @module
 */

/** Attempts of a write that finds a shared KV file locked by another process. */
const LOCKED_ATTEMPTS = 25;

/**
 * Runs a KV write, trying again while SQLite reports the file locked: with
 * several processes on one KV file, a writer whose snapshot is stale gets
 * SQLITE_BUSY at once rather than waiting, and nothing was written, so a
 * retry is safe (its checks run again).
 */
export async function retryWhileLocked<T>(write: () => Promise<T>): Promise<T> {
  for (let attempt = 1;; attempt++) {
    try {
      return await write();
    } catch (error) {
      const locked = error instanceof Error && /database is locked/i.test(error.message);
      if (!locked || attempt >= LOCKED_ATTEMPTS) throw error;
      // Jittered backoff so racing processes do not collide again in step.
      await new Promise((resolve) =>
        setTimeout(resolve, Math.random() * Math.min(64, 2 ** attempt))
      );
    }
  }
}
