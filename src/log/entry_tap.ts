/**
 * The entries of the events this process moved into the feed, kept for a
 * while by position, so that the integrator in the same process (one
 * instance, or the one that holds both leases) extends the tree without
 * reading those events back from the store. Filled from `Store.onOwnEvents`
 * as the moves happen; a run of consecutive positions only, begun again at
 * any gap (another process moved the events in between), held in one buffer
 * allocated once (slots of 128 bytes), so that keeping them costs
 * the garbage collector nothing. What the tap lacks, the integrator reads
 * from the feed as before; what it holds are the same bytes, made by the
 * same function ({@link eventEntry}) from the same events.
 * @module
 */

import type { IntentEvent } from "../domain/intent.ts";
import { writeEntryOfRecordSha256 } from "@intents/protocol/log/entry";
import { eventEntry } from "./integrate.ts";

/** The longest entry a slot holds (entries are about a hundred bytes). */
const SLOT_BYTES = 128;

/** Recent entries by position (see the module's documentation). */
export class EntryTap {
  readonly #capacity: number;
  readonly #bytes: Uint8Array;
  /** Each slot's entry length (at most {@link SLOT_BYTES}). */
  readonly #lengths: Uint8Array;
  /** The run held: positions `#first` to `#next − 1`. */
  #first = 0;
  #next = 0;

  /** @param capacity entries held at most (the latest). */
  constructor(capacity = 16_384) {
    this.#capacity = capacity;
    this.#bytes = new Uint8Array(capacity * SLOT_BYTES);
    this.#lengths = new Uint8Array(capacity);
  }

  /** Takes the events of a move, in position order. */
  take(events: readonly IntentEvent[]): void {
    for (const event of events) {
      if (event.position !== this.#next) this.#first = this.#next = event.position;
      const slot = event.position % this.#capacity;
      let length = 0;
      try {
        length = this.#write(event, slot * SLOT_BYTES);
      } catch {
        // An entry that cannot be made here is not held (the step reading the feed says why).
      }
      if (length === 0) {
        // Not held: the run begins again after it.
        this.#first = this.#next = event.position + 1;
        continue;
      }
      this.#lengths[slot] = length;
      this.#next++;
      if (this.#next - this.#first > this.#capacity) this.#first = this.#next - this.#capacity;
    }
  }

  /**
   * Writes the event's entry at `at`, and returns its length (0 when it does
   * not fit): from its stored `R` into the buffer (which checks its form),
   * else made by {@link eventEntry} and copied.
   */
  #write(event: IntentEvent, at: number): number {
    if (event.recordSha256 !== undefined) {
      try {
        return writeEntryOfRecordSha256(
          this.#bytes,
          at,
          SLOT_BYTES,
          event.type,
          event.recordSha256,
        );
      } catch {
        // A malformed `R`: the entry is made from the record, as for an event without one.
      }
    }
    const entry = eventEntry(event);
    if (entry.length > SLOT_BYTES) return 0;
    this.#bytes.set(entry, at);
    return entry.length;
  }

  /**
   * The entries of the events at positions `after + 1` onward, at most
   * `limit`, as many as the run holds from there; none when it does not hold
   * `after + 1`. Copies: the buffer is reused.
   */
  entriesAfter(after: number, limit: number): Uint8Array[] {
    const from = after + 1;
    if (from < this.#first || from >= this.#next) return [];
    const to = Math.min(this.#next, from + limit);
    let bytes = 0;
    for (let position = from; position < to; position++) {
      bytes += this.#lengths[position % this.#capacity];
    }
    // One copy for all of them (a typed array of its own each would cost more than the copy).
    const copy = new Uint8Array(bytes);
    const entries: Uint8Array[] = [];
    let at = 0;
    for (let position = from; position < to; position++) {
      const slot = position % this.#capacity;
      const start = slot * SLOT_BYTES;
      const length = this.#lengths[slot];
      copy.set(this.#bytes.subarray(start, start + length), at);
      entries.push(copy.subarray(at, at += length));
    }
    return entries;
  }

  /** Forgets what it holds. */
  clear(): void {
    this.#first = this.#next = 0;
  }
}
