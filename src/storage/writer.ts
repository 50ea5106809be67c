/**
 * How accepted intents reach the store: concurrent inserts grouped into
 * shared commits (`group_commit.ts`), or at a batch of 1 one commit per
 * insert, each started at once.
 * @module
 */

import type { IntentWriter, Store } from "../domain/store.ts";
import { type CommitObserver, createGroupCommitWriter } from "./group_commit.ts";

/** What the writer needs of the store: inserts, and how its commits are best fed. */
export type WriterStore = Pick<Store, "insertIntents"> & {
  /**
   * How its commits are best fed: how many inserts one commit carries at
   * most, and how many commits may go at once (see `KvStore.commitShape`).
   */
  commitShape?: (batchMax: number) => { inFlight: number; batchMax: number };
};

/**
 * Builds the writer for the settings.
 *
 * @param options.batchMax the most inserts in commits at once
 *   (`COMMIT_BATCH_MAX`), carried by several commits side by side (each
 *   checks its ids, nine at most); 1 means one commit per insert, as many
 *   at once as inserts come.
 * @param options.observer told of each wait and commit (telemetry); none by default.
 * @throws {RangeError} when `batchMax` is not a whole number of at least 1.
 * @example
 * ```ts
 * import { KvStore } from "./kv_store.ts";
 *
 * const kv = await Deno.openKv(":memory:");
 * const writer = createWriter(new KvStore(kv), { batchMax: 32 });
 * kv.close();
 * ```
 */
export function createWriter(
  store: WriterStore,
  options: { batchMax: number; observer?: CommitObserver },
): IntentWriter {
  const { batchMax, observer } = options;
  const commitShape = store.commitShape;
  const shape = batchMax === 1
    ? () => ({ inFlight: Infinity, batchMax: 1 })
    : commitShape && (() => commitShape.call(store, batchMax));
  return createGroupCommitWriter({
    batchMax,
    observer,
    shape,
    commit: (batch) => store.insertIntents(batch),
  });
}
