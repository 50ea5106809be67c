/**
 * The client's one wait: a pause that ends early, quietly, when its signal aborts.
 * @module
 */

/** Resolves after `ms` milliseconds, or as soon as `signal` aborts. */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
  });
}
