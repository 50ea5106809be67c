/**
 * Writes of this process that would fail each other's check are kept apart.
 * @module
 */

/**
 * Runs work in turns per key, within one process: two commits of this
 * process that write the same key would fail each other's check.
 */
export class Lanes {
  readonly #tails = new Map<string, Promise<unknown>>();

  /** Runs `work` after the work of the same `key` before it. */
  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const before = this.#tails.get(key) ?? Promise.resolve();
    const turn = before.then(work, work);
    const tail = turn.catch(() => {});
    this.#tails.set(key, tail);
    tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return turn;
  }
}
