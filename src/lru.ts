/**
 * The one small least-recently-used map behind every cache of the service
 * (decoded public keys, template and policy references). Bounded, so that a
 * stream of fresh keys or ids cannot grow memory without limit.
 * @module
 */

/** A `Map` that keeps at most `capacity` entries, evicting the least recently used. */
export class LruCache<V> {
  readonly #entries = new Map<string, V>();

  /** @param capacity maximum number of entries kept (at least 1). */
  constructor(readonly capacity: number) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) {
      throw new RangeError(`Cannot create LruCache: capacity must be a positive integer`);
    }
  }

  /** Number of entries currently held. */
  get size(): number {
    return this.#entries.size;
  }

  /** The value for `key`, marking it most recently used; `undefined` when absent. */
  get(key: string): V | undefined {
    const value = this.#entries.get(key);
    if (value === undefined) return undefined;
    // Map iteration order is insertion order: re-inserting moves the key to the young end.
    this.#entries.delete(key);
    this.#entries.set(key, value);
    return value;
  }

  /** Stores `value` under `key` as most recently used, evicting the oldest entry when full. */
  set(key: string, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    if (this.#entries.size > this.capacity) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
    }
  }

  /** Removes `key` if present. */
  delete(key: string): void {
    this.#entries.delete(key);
  }
}
