/**
 * A consumer of the feed for tests and tools: long-polls `GET /events` of one
 * server and notes when each intent id first appears in it, and where.
 * @module
 */

/** A running follower. */
export interface FeedFollower {
  /** Each intent id seen, with the `performance.now()` of the page that carried it first. */
  seen: Map<string, number>;
  /** Each intent id seen, with its first event's position in the feed (its id, a number). */
  positions: Map<string, number>;
  /** Stops following; resolves once the last request ended. */
  stop(): Promise<void>;
}

/** Follows the feed of the server at `url`, with a token that may read it. */
export function followFeed(url: string, token: string): FeedFollower {
  const seen = new Map<string, number>();
  const positions = new Map<string, number>();
  const abort = new AbortController();
  const running = (async () => {
    let after = "";
    while (!abort.signal.aborted) {
      try {
        const query = `limit=1000&wait=1${after ? `&after=${after}` : ""}`;
        const response = await fetch(`${url}/events?${query}`, {
          headers: { authorization: `Bearer ${token}` },
          signal: abort.signal,
        });
        const page = await response.json();
        const at = performance.now();
        for (const event of page.events ?? []) {
          if (seen.has(event.record.id)) continue;
          seen.set(event.record.id, at);
          positions.set(event.record.id, Number(event.id));
        }
        if (typeof page.next === "string") after = page.next;
      } catch {
        if (!abort.signal.aborted) await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  })();
  return {
    seen,
    positions,
    stop: async () => {
      abort.abort();
      await running;
    },
  };
}
