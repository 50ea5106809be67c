/**
 * Readers of `GET /events` for the feed measuring tool: the whole feed by
 * pages (pull form), the whole feed over one Server-Sent Events stream, and a
 * live stream that reports when each event arrives.
 * @module
 */

import { openSse, type SseStream } from "../../testing/sse.ts";

/** What one read of the feed saw. */
export interface FeedRead {
  events: number;
  /** Pages fetched (pull form only). */
  pages?: number;
  seconds: number;
  /** Id of the last event read, to check that readers saw the same feed. */
  lastId: string | null;
}

/**
 * Reads the feed from the beginning in pages of `limit=1000`, one after
 * another, until `total` events have come or a page is empty.
 *
 * @throws {Error} on an answer other than 200, or past `deadline` (`performance.now()`).
 */
export async function pullAll(
  url: string,
  token: string,
  options: { total: number; deadline: number },
): Promise<FeedRead> {
  const started = performance.now();
  let after: string | null = null;
  let events = 0;
  let pages = 0;
  while (events < options.total) {
    if (performance.now() > options.deadline) {
      throw new Error(`the pull read ran out of time after ${events} events`);
    }
    const query = after === null ? "" : `&after=${encodeURIComponent(after)}`;
    const response = await fetch(`${url}/events?limit=1000${query}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    if (response.status !== 200) {
      await response.body?.cancel();
      throw new Error(`GET /events answered ${response.status}`);
    }
    const page = await response.json() as { events: unknown[]; next: string | null };
    pages++;
    if (page.events.length === 0) break;
    events += page.events.length;
    after = page.next;
  }
  return { events, pages, seconds: (performance.now() - started) / 1000, lastId: after };
}

/** Opens the stream form after `after` (absent: the beginning), refusing anything but 200. */
async function openStream(url: string, token: string, after?: string): Promise<SseStream> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (after !== undefined) headers["last-event-id"] = after;
  const stream = await openSse(`${url}/events`, headers);
  if (stream.response.status !== 200) {
    stream.close();
    throw new Error(`GET /events (stream) answered ${stream.response.status}`);
  }
  return stream;
}

/**
 * Reads the feed from the beginning over one stream until `total` events
 * have come; the time counts from the request to the last of them.
 *
 * @throws {Error} when the stream ends first or `deadline` passes.
 */
export async function streamAll(
  url: string,
  token: string,
  options: { total: number; deadline: number },
): Promise<FeedRead> {
  const started = performance.now();
  const stream = await openStream(url, token);
  // Leaving ends the items loop; a stalled stream is cut at the deadline.
  const timer = setTimeout(() => stream.close(), Math.max(0, options.deadline - started));
  let events = 0;
  let lastId: string | null = null;
  try {
    for await (const item of stream.items) {
      if (item.kind !== "event") continue;
      events++;
      lastId = item.id ?? null;
      if (events >= options.total) break;
    }
  } finally {
    clearTimeout(timer);
    stream.close();
  }
  if (events < options.total) {
    throw new Error(`a stream ended after ${events} of ${options.total} events`);
  }
  return { events, seconds: (performance.now() - started) / 1000, lastId };
}

/**
 * A stream open from the beginning that stays live: it counts events and
 * hands each event's intent id, with the `performance.now()` it was parsed
 * at, to `onEvent`.
 */
export class LiveStream {
  /** Events seen so far. */
  events = 0;
  /** Called for each event; set it before the events of interest arrive. */
  onEvent: (intentId: string, at: number) => void = () => {};
  #stream: SseStream;
  #done: Promise<void>;
  #error: unknown = undefined;

  private constructor(stream: SseStream) {
    this.#stream = stream;
    this.#done = this.#consume().catch((error) => {
      this.#error = error;
    });
  }

  /** Opens the stream from the beginning of the feed. */
  static async open(url: string, token: string): Promise<LiveStream> {
    return new LiveStream(await openStream(url, token));
  }

  async #consume(): Promise<void> {
    for await (const item of this.#stream.items) {
      if (item.kind !== "event") continue;
      const at = performance.now();
      this.events++;
      this.onEvent((JSON.parse(item.data) as { id: string }).id, at);
    }
  }

  /**
   * Waits until `done()` holds, checking every 10 ms; false after `timeoutMs`.
   *
   * @throws {Error} when the stream failed.
   */
  async until(done: () => boolean, timeoutMs: number): Promise<boolean> {
    const end = performance.now() + timeoutMs;
    while (!done()) {
      if (this.#error !== undefined) throw this.#error;
      if (performance.now() > end) return false;
      await new Promise((ok) => setTimeout(ok, 10));
    }
    return true;
  }

  /** Leaves the stream. */
  async close(): Promise<void> {
    this.#stream.close();
    await this.#done;
  }
}
