/**
 * The feed's events as the deliverers of one process read them: one read
 * for all of them, and one follower of the feed for those caught up
 * (docs/architecture.md, "Webhook delivery"). Reads of a position while one
 * is in flight wait for that one; a window of the latest events (bounded in
 * count and bytes) serves reads inside it, up to its end, and while
 * {@link RecentEvents.follow} is on, the process's own commits join it
 * (`Store.onOwnEvents`).
 * @module
 */

import type { IntentEvent } from "../domain/intent.ts";
import type { Store } from "../domain/store.ts";
import { delay } from "../timing.ts";

/** A deliverer caught up: waits for an event after `checked` that it wants. */
interface Interest {
  /** Every event up to here was looked at: none is wanted. */
  checked: number;
  wants: (type: string) => boolean;
  /** Ends the wait: the position checked so far. */
  end: () => void;
}

/** After a failed read, the follower waits this long before it reads again. */
const FAILURE_PAUSE_MS = 1_000;
/** The follower's longest wait on the feed's head before it looks again. */
const FOLLOW_WAIT_MS = 5_000;
/** After a read found nothing past a head seen to have moved, the follower waits this long. */
const EMPTY_PAUSE_MS = 50;

/** The window's bounds. */
export interface RecentEventsOptions {
  /** Events read per page, at most. */
  limit: number;
  /** A page ends once its bodies pass this many bytes. */
  maxBytes: number;
  /** Events kept in the window, at most. */
  keepEvents: number;
  /** The window's bodies, at most, in bytes. */
  keepBytes: number;
}

/** Shared reads of the feed, for the deliverers of one process. */
export class RecentEvents {
  readonly #store: Pick<Store, "readEvents" | "waitForEvents" | "onOwnEvents">;
  /** Stops taking this process's own events, while they are taken. */
  #unsubscribe: (() => void) | undefined;
  readonly #interests = new Set<Interest>();
  /** Ends the follower's wait on the head: an interest came that it must look at now. */
  #poke = new AbortController();
  #following = false;
  readonly #options: RecentEventsOptions;
  /** Consecutive events, oldest first. */
  #window: IntentEvent[] = [];
  #windowBytes = 0;
  readonly #inFlight = new Map<number, Promise<IntentEvent[]>>();

  /**
   * @param store where the events are read.
   * @param options page and window bounds.
   */
  constructor(
    store: Pick<Store, "readEvents" | "waitForEvents" | "onOwnEvents">,
    options: RecentEventsOptions,
  ) {
    this.#store = store;
    this.#options = options;
  }

  /**
   * Takes this process's own events into the window as they commit (on), or
   * stops and empties the window (off): on while any deliverer runs.
   */
  follow(on: boolean): void {
    if (on && this.#unsubscribe === undefined) {
      this.#unsubscribe = this.#store.onOwnEvents((events) => this.#keep(events));
    } else if (!on && this.#unsubscribe !== undefined) {
      this.#unsubscribe();
      this.#unsubscribe = undefined;
      this.#window = [];
      this.#windowBytes = 0;
    }
  }

  /**
   * The events after position `after`, in order: a page of at most the
   * options' `limit`, possibly fewer than the feed holds (never a gap).
   *
   * @throws what the store throws.
   */
  read(after: number): Promise<IntentEvent[]> {
    const cached = this.#fromWindow(after);
    if (cached.length > 0) return Promise.resolve(cached);
    const running = this.#inFlight.get(after);
    if (running) return running;
    const read = this.#store.readEvents({
      after,
      limit: this.#options.limit,
      maxBytes: this.#options.maxBytes,
    }).then((events) => {
      this.#keep(events);
      return events;
    }).finally(() => this.#inFlight.delete(after));
    this.#inFlight.set(after, read);
    return read;
  }

  /**
   * Waits until the feed has an event after `after` that `wants` takes, or
   * `timeoutMs` passes, or `signal` aborts.
   *
   * @returns the position up to which every event was looked at and none
   *   is wanted (at least `after`): the caller may move there without
   *   reading them.
   */
  waitForWanted(
    after: number,
    wants: (type: string) => boolean,
    options: { timeoutMs: number; signal?: AbortSignal },
  ): Promise<number> {
    const { timeoutMs, signal } = options;
    if (signal?.aborted) return Promise.resolve(after);
    return new Promise<number>((resolve) => {
      const interest: Interest = {
        checked: after,
        wants,
        end: () => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", interest.end);
          this.#interests.delete(interest);
          // The last one gone: the follower stops now, rather than at the end of its wait.
          if (this.#interests.size === 0) this.#poke.abort();
          resolve(interest.checked);
        },
      };
      const timer = setTimeout(interest.end, timeoutMs);
      signal?.addEventListener("abort", interest.end, { once: true });
      this.#interests.add(interest);
      this.#poke.abort();
      if (!this.#following) void this.#follow();
    });
  }

  /** Reads the feed after the interests and ends those it concerns, while any waits. */
  async #follow(): Promise<void> {
    this.#following = true;
    try {
      while (this.#interests.size > 0) {
        // An interest that comes from here on ends the wait below: it may be behind `from`.
        this.#poke = new AbortController();
        let from = Infinity;
        for (const interest of this.#interests) from = Math.min(from, interest.checked);
        if (this.#fromWindow(from).length === 0) {
          // Nothing after `from` in memory: read once the feed's head is past it (at once when
          // it is known to be), rather than read to learn that nothing came.
          const woken = await this.#store.waitForEvents(from, {
            timeoutMs: FOLLOW_WAIT_MS,
            signal: this.#poke.signal,
          });
          if (!woken) continue;
        }
        let events: IntentEvent[];
        try {
          events = await this.read(from);
        } catch {
          // The storage failed: the deliverers read for themselves, and report it.
          for (const interest of [...this.#interests]) interest.end();
          await delay(FAILURE_PAUSE_MS);
          continue;
        }
        // The head was seen past `from` before its events can be read (a lagging replica).
        if (events.length === 0) await delay(EMPTY_PAUSE_MS);
        else this.#look(events);
      }
    } finally {
      this.#following = false;
    }
  }

  /** Moves each interest over `events` (consecutive), ending those that meet one they want. */
  #look(events: IntentEvent[]): void {
    const first = events[0].position;
    const last = events[events.length - 1].position;
    // A page has few types (often one): an interest that wants none of them moves over it whole.
    const types = [...new Set(events.map((event) => event.type))];
    for (const interest of [...this.#interests]) {
      if (interest.checked < first - 1 || interest.checked >= last) continue;
      if (!types.some(interest.wants)) {
        interest.checked = last;
        continue;
      }
      let wanted = false;
      for (let k = interest.checked + 1 - first; k < events.length; k++) {
        if (interest.wants(events[k].type)) {
          wanted = true;
          break;
        }
        interest.checked = events[k].position;
      }
      if (wanted) interest.end();
    }
  }

  /** The window's events after `after`, when it holds the next one (else none). */
  #fromWindow(after: number): IntentEvent[] {
    const window = this.#window;
    if (window.length === 0) return [];
    const from = after + 1 - window[0].position;
    if (from < 0 || from >= window.length) return [];
    return window.slice(from, from + this.#options.limit);
  }

  /** Adds a page read from KV: after the window when it follows it, else in its place. */
  #keep(events: IntentEvent[]): void {
    if (events.length === 0) return;
    const window = this.#window;
    const last = window.at(-1)?.position;
    if (last === undefined || events[0].position !== last + 1) {
      // Not next to the window (a deliverer behind, or ahead after a gap in time): it wins
      // only when newer, so that the deliverers caught up keep reading from memory.
      if (last !== undefined && events.at(-1)!.position <= last) return;
      this.#window = [];
      this.#windowBytes = 0;
    }
    for (const event of events) {
      this.#window.push(event);
      this.#windowBytes += event.intent.body.byteLength;
    }
    const { keepEvents, keepBytes } = this.#options;
    let drop = 0;
    while (
      this.#window.length - drop > 1 &&
      (this.#window.length - drop > keepEvents || this.#windowBytes > keepBytes)
    ) {
      this.#windowBytes -= this.#window[drop].intent.body.byteLength;
      drop++;
    }
    if (drop > 0) this.#window = this.#window.slice(drop);
  }
}
