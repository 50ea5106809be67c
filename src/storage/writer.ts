/**
 * How accepted intents reach the store: one atomic commit per intent, or
 * concurrent intents grouped into shared commits (see `group_commit.ts`).
 * Both keep the same promises; grouping trades nothing at low load and lifts
 * the per-commit ceiling under concurrency.
 * @module
 */

import type { IntentWriter, Store } from "../domain/store.ts";
import { createGroupCommitWriter } from "./group_commit.ts";
import { KV_COMMIT_LIMITS } from "./layout.ts";

/**
 * Ids a commit checks itself when its intents share one template or policy:
 * its checks less the head's and the document's.
 */
const CHECKED_IN_COMMIT = KV_COMMIT_LIMITS.checks - 2;

/** What the writer needs of the store: inserts, and reads of ids ahead of them when it has them. */
export type WriterStore = Pick<Store, "insertIntents"> & {
  readAhead?: (id: string) => void;
  /**
   * How its commits are best fed: how many inserts one commit carries at
   * most, and how many commits may go at once (see `KvStore.commitShape`).
   */
  commitShape?: (batchMax: number) => { inFlight: number; batchMax: number };
};

/** The writer that stores each intent in a commit of its own. */
export function singleCommitWriter(store: Pick<Store, "insertIntents">): IntentWriter {
  return {
    insert: async (pending) => {
      const [result] = await store.insertIntents([pending]);
      if (result.outcome === "failed") throw result.error;
      return result;
    },
  };
}

/**
 * Builds the writer for the settings.
 *
 * @param options.batchMax the most inserts in commits at once
 *   (`COMMIT_BATCH_MAX`): in the head layout, one commit carries them; in the
 *   staged layout, several commits side by side do; 1 means one commit per
 *   insert.
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
export function createWriter(store: WriterStore, options: { batchMax: number }): IntentWriter {
  if (options.batchMax === 1) return singleCommitWriter(store);
  const commitShape = store.commitShape;
  return createGroupCommitWriter({
    batchMax: options.batchMax,
    shape: commitShape && (() => commitShape.call(store, options.batchMax)),
    commit: (batch) => store.insertIntents(batch),
    // Its id is read while the commit before it is in flight, unless it is
    // among the first of its batch, whose ids the commit checks itself.
    arrived: store.readAhead &&
      ((pending, waiting) => {
        if (waiting >= CHECKED_IN_COMMIT) store.readAhead!(pending.intent.id);
      }),
  });
}
