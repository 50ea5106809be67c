/**
 * The entries of the events this process moved into the feed, kept for a
 * while by position, so that the integrator in the same process (one
 * instance, or the one that holds both leases) extends the tree without
 * reading those events back from the store. Filled from `Store.onOwnEvents`
 * as the moves happen; a run of consecutive positions only, begun again at
 * any gap (another process moved the events in between), held in one buffer
 * allocated once (slots of {@link SLOT_BYTES}), so that keeping them costs
 * the garbage collector nothing. What the tap lacks, the integrator reads
 * from the feed as before; what it holds are the same bytes, made by the
 * same function ({@link eventEntry}) from the same events.
 * @module
 */

import type { IntentEvent } from "../domain/intent.ts";
import { eventEntry } from "./integrate.ts";

/** The longest entry a slot holds (entries are about a hundred bytes). */
export const SLOT_BYTES = 128;

/** Recent entries by position (see the module's documentation). */
export class EntryTap {
  readonly #capacity: number;
  readonly #bytes: Uint8Array;
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
      const entry = eventEntry(event);
      if (entry.length > SLOT_BYTES - 1) {
        // Not held: the run begins again after it.
        this.#first = this.#next = event.position + 1;
        continue;
      }
      const slot = event.position % this.#capacity;
      this.#bytes.set(entry, slot * SLOT_BYTES);
      this.#lengths[slot] = entry.length;
      this.#next++;
      if (this.#next - this.#first > this.#capacity) this.#first = this.#next - this.#capacity;
    }
  }

  /**
   * The entries of the events at positions `after + 1` onward, at most
   * `limit`, as many as the run holds from there; none when it does not hold
   * `after + 1`. Copies: the buffer is reused.
   */
  entriesAfter(after: number, limit: number): Uint8Array[] {
    const from = after + 1;
    if (from < this.#first || from >= this.#next) return [];
    const entries: Uint8Array[] = [];
    for (let position = from; position < this.#next && entries.length < limit; position++) {
      const at = (position % this.#capacity) * SLOT_BYTES;
      entries.push(this.#bytes.slice(at, at + this.#lengths[position % this.#capacity]));
    }
    return entries;
  }

  /** Forgets what it holds. */
  clear(): void {
    this.#first = this.#next = 0;
  }
}
