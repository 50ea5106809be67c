/**
 * The one small bounded map behind every cache of the service (decoded public
 * keys; template and policy references, their bytes and the ids found missing;
 * the events a process staged, until moved).
 * @module
 */

interface Slot<V> {
  value: V;
  /** Read since it was last passed over by eviction. */
  used: boolean;
}

/**
 * A `Map` that keeps at most `capacity` entries, evicting by "second chance"
 * (CLOCK, an approximation of least recently used): a read only marks its
 * entry, so a hit costs a lookup and no reordering; eviction passes over the
 * oldest entries, moving those read since to the young end, and drops the
 * first that was not.
 *
 * @example
 * ```ts
 * const cache = new ClockCache<number>(2);
 * cache.set("a", 1);
 * cache.set("b", 2);
 * cache.get("a"); // 1, and "a" gets a second chance
 * cache.set("c", 3); // evicts "b"
 * ```
 */
export class ClockCache<V> {
  readonly #entries = new Map<string, Slot<V>>();

  /** @param capacity maximum number of entries kept (at least 1). */
  constructor(readonly capacity: number) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) {
      throw new RangeError(`Cannot create ClockCache: capacity must be a positive integer`);
    }
  }

  /** Number of entries currently held. */
  get size(): number {
    return this.#entries.size;
  }

  /** The value for `key`, marking it used; `undefined` when absent. */
  get(key: string): V | undefined {
    const slot = this.#entries.get(key);
    if (slot === undefined) return undefined;
    slot.used = true;
    return slot.value;
  }

  /** Stores `value` under `key`, evicting an entry not used lately when full. */
  set(key: string, value: V): void {
    const slot = this.#entries.get(key);
    if (slot !== undefined) {
      slot.value = value;
      slot.used = true;
      return;
    }
    this.#entries.set(key, { value, used: false });
    if (this.#entries.size > this.capacity) this.#evict();
  }

  /** The keys held, oldest first (reading them marks none). */
  keys(): IterableIterator<string> {
    return this.#entries.keys();
  }

  /** Removes `key` if present. */
  delete(key: string): void {
    this.#entries.delete(key);
  }

  /** Drops the oldest entry not used since eviction last passed it. */
  #evict(): void {
    // Entries moved to the young end are visited again, unmarked: this ends.
    for (const [key, slot] of this.#entries) {
      this.#entries.delete(key);
      if (!slot.used) return;
      slot.used = false;
      this.#entries.set(key, slot);
    }
  }
}
