/**
 * Reads of intent ids made ahead of the commit that stores them.
 *
 * A commit does not check each id it stores (denokv allows ten checks a
 * commit): it checks the feed head, which every write of a pointer moves,
 * so a read of an id is still true at a commit whose head check passes when
 * the read's snapshot holds that head, or an earlier one from which only
 * this process's own commits led there (`Feed.storedSince`), whose ids are
 * known. Reading an id as its request arrives, while the commit before it is
 * in flight, takes the read off the commit's path: on a local file a read
 * waits behind the handle's commits, and on a networked KV it is a round
 * trip.
 *
 * Each read asks for the head with the ids, so its snapshot says which head
 * it saw.
 * @module
 */

import { keys } from "./keys.ts";
import { KV_READ_KEYS } from "./layout.ts";

/** One `getMany` of ids read ahead: what it found, once it answered. */
export interface AheadRead {
  /** Settles once the read answered (or failed: then `head` stays undefined). */
  readonly done: Promise<void>;
  /** The head's version in the read's snapshot (null: the feed was empty); undefined until read. */
  head: string | null | undefined;
  /** The ids of the read found taken. */
  readonly taken: Set<string>;
}

/** Ids asked and not taken yet, at most: a bound should asks ever go unclaimed. */
const MAX_WAITING = 10_000;

/** A read being gathered or made. */
interface Read extends AheadRead {
  ids: string[];
  settle: () => void;
}

/** Ids read ahead, nine and the head to a `getMany`. */
export class ReadAhead {
  readonly #kv: Deno.Kv;
  readonly #reads = new Map<string, Read>();
  /** The read gathering ids asked in this turn of the event loop, not sent yet. */
  #open: Read | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;

  /** @param kv the handle to read with (on a local file, a second handle reads beside the writer). */
  constructor(kv: Deno.Kv) {
    this.#kv = kv;
  }

  /** Starts reading `id`, with others asked in the same turn of the event loop. */
  ask(id: string): void {
    if (this.#reads.has(id)) return;
    if (this.#reads.size >= MAX_WAITING) this.#reads.clear();
    if (!this.#open) {
      const { promise, resolve } = Promise.withResolvers<void>();
      this.#open = { done: promise, settle: resolve, head: undefined, taken: new Set(), ids: [] };
      this.#timer = setTimeout(() => this.#flush(), 0);
    }
    const read = this.#open;
    read.ids.push(id);
    this.#reads.set(id, read);
    // One key of each read is the head.
    if (read.ids.length === KV_READ_KEYS - 1) this.#flush();
  }

  /**
   * The read of `id`, when one was asked; it is forgotten (a read serves one
   * commit). One still gathering ids is sent now.
   */
  take(id: string): AheadRead | undefined {
    const read = this.#reads.get(id);
    this.#reads.delete(id);
    if (read && read === this.#open) this.#flush();
    return read;
  }

  #flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const read = this.#open;
    this.#open = undefined;
    if (!read) return;
    const { ids } = read;
    this.#kv.getMany([keys.feedHead, ...ids.map((id) => keys.intent(id))]).then(
      (entries) => {
        read.head = entries[0].versionstamp;
        for (let i = 0; i < ids.length; i++) {
          if (entries[i + 1].versionstamp !== null) read.taken.add(ids[i]);
        }
      },
      // A failed read is read again on the commit's path.
      () => {},
    ).finally(read.settle);
  }
}
