/**
 * The feed: its head, reading events in order, and waiting for new ones
 * (docs/architecture.md, "Waiting for new events"): while anyone waits or
 * listens to this process's events, a `kv.watch` of the head and a read of
 * it every {@link HEAD_POLL_MS}; nobody waiting, nothing runs. Every reader
 * of `["events", last]` reads it through {@link feedEntryEvents}, which
 * reads the staged blocks an index names, or an earlier version's block.
 * @module
 */

import type { IntentEvent } from "../domain/intent.ts";
import { blockLength, decodeBlock, decodeStaged, type StoredEvent } from "./codec.ts";
import { decodeFeedHead, decodeIndex, type HeadForm } from "./index_codec.ts";
import { keys } from "./keys.ts";
import { readMany } from "./layout.ts";

/** The newest feed position, and the version of the head key that says so. */
export interface Head {
  position: number;
  /** null while the head key was never written (an empty feed). */
  versionstamp: string | null;
  /** The head's form, how far staged blocks were indexed, and whether it is this version's. */
  form?: HeadForm;
  through?: string;
  indexed?: boolean;
}

interface Waiter {
  after: number;
  wake: (woken: boolean) => void;
}

/** How often the head is read while anyone waits: well within the 2 s delivery bound. */
export const HEAD_POLL_MS = 500;

/** Blocks read per round trip forward, at most: as many as a page needs at 32 events a block. */
const BLOCKS_PER_READ = 8;
const EVENTS_PER_BLOCK = 32;

/** The feed of one store. */
export class Feed {
  readonly #kv: Deno.Kv;
  #known: Head | undefined;
  readonly #waiters = new Set<Waiter>();
  #watch: ReadableStreamDefaultReader<Deno.KvEntryMaybe<unknown>[]> | undefined;
  #poll: ReturnType<typeof setInterval> | undefined;
  readonly #ownEventListeners = new Set<(events: IntentEvent[]) => void>();

  /** @param kv an open KV handle; the caller closes it. */
  constructor(kv: Deno.Kv) {
    this.#kv = kv;
  }

  /** The head as this process last saw it, if it has (no read, no wait). */
  get known(): Head | undefined {
    return this.#known;
  }

  /** The head as KV has it now. */
  async freshHead(): Promise<Head> {
    return this.#learnEntry(await this.#kv.get<unknown>(keys.feedHead));
  }

  #learnEntry(entry: Deno.KvEntryMaybe<unknown>): Head {
    const head = { ...decodeFeedHead(entry.value), versionstamp: entry.versionstamp };
    this.#learn(head);
    return head;
  }

  /**
   * Records the head after a move of this process, which added `events` (the
   * last ones up to the head), tells them to {@link onOwnEvents}' listeners,
   * and wakes whoever waits.
   */
  advanced(head: Head, events: readonly StoredEvent[]): void {
    if (events.length > 0 && this.#ownEventListeners.size > 0) {
      const first = head.position - events.length + 1;
      const told = events.map((event, i) => intentEvent(first + i, event));
      for (const listener of this.#ownEventListeners) listener(told);
    }
    this.#learn(head);
  }

  /** True while anyone listens to this process's events ({@link onOwnEvents}). */
  get hasOwnEventListeners(): boolean {
    return this.#ownEventListeners.size > 0;
  }

  /** Calls `listener` with the events of each commit of this process (see `Store.onOwnEvents`). */
  onOwnEvents(listener: (events: IntentEvent[]) => void): () => void {
    this.#ownEventListeners.add(listener);
    this.#startWatch();
    return () => {
      this.#ownEventListeners.delete(listener);
      if (this.#waiters.size === 0 && this.#ownEventListeners.size === 0) this.#stopWatch();
    };
  }

  /** Forgets the head (a commit failed): the next {@link head} reads it from KV. */
  forget(): void {
    this.#known = undefined;
  }

  /** True when `position` is one the feed has handed out (1 to the head). */
  async isPosition(position: number): Promise<boolean> {
    if (!Number.isSafeInteger(position) || position < 1) return false;
    if (this.#known && position <= this.#known.position) return true;
    return position <= (await this.freshHead()).position;
  }

  /**
   * The events after position `after`, in order: at most `limit` of them, and
   * no more once their bodies pass `maxBytes` (at least one, when there is one).
   */
  async readEvents(
    options: { after: number; limit: number; maxBytes?: number },
  ): Promise<IntentEvent[]> {
    const { after, limit, maxBytes = Infinity } = options;
    const events: IntentEvent[] = [];
    let bytes = 0;
    // Blocks are keyed by their last position: the first block keyed at or
    // after `after + 1` holds it, and every later block follows in order.
    const blocks = this.#kv.list<unknown>(
      { prefix: keys.eventsPrefix, start: keys.events(after + 1) },
      { limit, batchSize: Math.min(BLOCKS_PER_READ, Math.ceil(limit / EVENTS_PER_BLOCK)) },
    );
    // The staged blocks that a list's batch of entries names are read at once, not one entry
    // after another: a page of many small moves (a low rate, several instances) would otherwise
    // cost a round trip each.
    const batch: Deno.KvEntry<unknown>[] = [];
    const take = async (): Promise<boolean> => {
      const read = await Promise.all(
        batch.map((block) => feedEntryEvents(this.#kv, block, after, limit - events.length)),
      );
      batch.length = 0;
      for (const stored of read) {
        for (const { position, event } of stored) {
          events.push(intentEvent(position, event));
          bytes += event.intent.body.byteLength;
          if (events.length === limit || bytes >= maxBytes) return true;
        }
      }
      return false;
    };
    for await (const block of blocks) {
      batch.push(block);
      if (batch.length === BLOCKS_PER_READ && await take()) return events;
    }
    await take();
    return events;
  }

  /**
   * Resolves true once the head passes `after`, or false when `timeoutMs`
   * passes or `signal` aborts first.
   */
  waitForEvents(
    after: number,
    options: { timeoutMs: number; signal?: AbortSignal },
  ): Promise<boolean> {
    const { timeoutMs, signal } = options;
    if (this.#known && this.#known.position > after) return Promise.resolve(true);
    if (signal?.aborted) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const waiter: Waiter = {
        after,
        wake: (woken) => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
          this.#waiters.delete(waiter);
          if (this.#waiters.size === 0 && this.#ownEventListeners.size === 0) this.#stopWatch();
          resolve(woken);
        },
      };
      const onAbort = () => waiter.wake(false);
      const timer = setTimeout(() => waiter.wake(false), timeoutMs);
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#waiters.add(waiter);
      this.#startWatch();
    });
  }

  /** Takes a head seen in KV or after a commit, if newer, and wakes the waiters it passes. */
  #learn(head: Head): void {
    const known = this.#known;
    // At one position, the later version wins: a switch of layout rewrites the head in place.
    if (
      known && (known.position > head.position ||
        (known.position === head.position &&
          (known.versionstamp ?? "") >= (head.versionstamp ?? "")))
    ) return;
    this.#known = head;
    for (const waiter of this.#waiters) {
      if (head.position > waiter.after) waiter.wake(true);
    }
  }

  #startWatch(): void {
    this.#poll ??= setInterval(() => {
      this.freshHead().catch(() => {
        // The KV was closed or failed: the waiters still time out.
      });
    }, HEAD_POLL_MS);
    if (this.#watch) return;
    const reader = this.#kv.watch([keys.feedHead]).getReader();
    this.#watch = reader;
    (async () => {
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          if (value[0].versionstamp !== null) this.#learnEntry(value[0]);
        }
      } catch {
        // The KV was closed, or the watch failed: the waiters still time out.
      } finally {
        if (this.#watch === reader) this.#watch = undefined;
      }
    })();
  }

  #stopWatch(): void {
    clearInterval(this.#poll);
    this.#poll = undefined;
    const reader = this.#watch;
    this.#watch = undefined;
    reader?.cancel().catch(() => {});
  }
}

/**
 * The events of a feed entry (`["events", last]`) after position `after`, at
 * most `limit`, with their positions: an index's read from the staged blocks
 * it names (only those needed), an earlier version's block from itself.
 *
 * @throws {LayoutError} for a value of no known layout, or an index naming a
 *   staged block that is not there.
 */
export async function feedEntryEvents(
  kv: Deno.Kv,
  entry: Deno.KvEntry<unknown>,
  after = 0,
  limit = Infinity,
): Promise<{ position: number; event: StoredEvent }[]> {
  const refs = decodeIndex(entry.value);
  const length = refs ? refs.reduce((sum, ref) => sum + ref.count, 0) : blockLength(entry.value);
  const first = (entry.key[1] as number) - length + 1;
  const from = Math.max(0, after + 1 - first);
  let events: StoredEvent[];
  if (!refs) events = decodeBlock(entry.value, from);
  else {
    const needed: { key: Deno.KvKey; skip: number }[] = [];
    let start = 0;
    for (const ref of refs) {
      if (start + ref.count > from && start < from + limit) {
        needed.push({ key: keys.staged(ref.versionstamp), skip: Math.max(0, from - start) });
      }
      start += ref.count;
    }
    const read = await readMany(kv, needed.map(({ key }) => key));
    events = needed.flatMap(({ skip }, i) => decodeStaged(read[i].value).slice(skip));
  }
  return events.slice(0, limit).map((event, i) => ({ position: first + from + i, event }));
}

/** The event at `position` as the domain reads it. */
function intentEvent(position: number, { type, intent, recordSha256 }: StoredEvent): IntentEvent {
  return recordSha256 ? { position, type, intent, recordSha256 } : { position, type, intent };
}
