/**
 * Waiting: a pause, and a bound on a wait. Every timer here is cleared as
 * soon as it is no longer needed, so that none holds a stopping process.
 * @module
 */

/** Resolves after `ms`. */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

/** Resolves when `promise` settles or `ms` have passed, whichever is first. */
export function within(promise: Promise<unknown>, ms: number): Promise<unknown> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise((resolve) => timer = setTimeout(resolve, Math.max(0, ms)));
  return Promise.race([promise, bound]).finally(() => clearTimeout(timer));
}
