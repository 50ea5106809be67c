/**
 * Waiting in the tests: for a while, until a moment, for a promise within a
 * bound, or until a condition holds within a bound. The bounded waits take
 * their arguments in one order: what is waited for, the bound in
 * milliseconds, and what it is (named in the failure), so a test waiting for
 * the service fails with a reason instead of hanging.
 *
 * ```ts
 * await sleep(50);
 * const frame = await within(frames.next(), 5_000, "the first frame");
 * await until(() => receiver.connections.length === 1, 2_000, "the connection");
 * ```
 * @module
 */

import assert from "node:assert/strict";

/** Resolves after `ms` milliseconds (on the next timer turn when `ms` is not positive). */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

/** Resolves at `time` (milliseconds since the epoch, as `Date.now()`), at once if it has passed. */
export function sleepUntil(time: number): Promise<void> {
  return sleep(time - Date.now());
}

/**
 * Settles as `promise` does, or rejects with "`what`: not within `ms` ms"
 * once `ms` milliseconds have passed.
 */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Resolves once `done()` holds, asking every `everyMs` (default 20);
 * rejects with "`what`: not within `ms` ms" when it still does not hold
 * after `ms` milliseconds.
 */
export async function until(
  done: () => boolean | Promise<boolean>,
  ms: number,
  what: string,
  everyMs = 20,
): Promise<void> {
  const deadline = performance.now() + ms;
  while (!(await done())) {
    assert.ok(performance.now() < deadline, `${what}: not within ${ms} ms`);
    await sleep(everyMs);
  }
}
