/**
 * How accepted intents reach the store: one atomic commit per intent, or
 * concurrent intents grouped into shared commits (see `group_commit.ts`).
 * Both keep the same promises; grouping trades nothing at low load and lifts
 * the per-commit ceiling under concurrency.
 * @module
 */

import type { BatchResult, IntentWriter, Store } from "../domain/store.ts";
import { type CommitObserver, createGroupCommitWriter } from "./group_commit.ts";

/** What the writer needs of the store: inserts, and how its commits are best fed. */
export type WriterStore = Pick<Store, "insertIntents"> & {
  /**
   * How its commits are best fed: how many inserts one commit carries at
   * most, and how many commits may go at once (see `KvStore.commitShape`).
   */
  commitShape?: (batchMax: number) => { inFlight: number; batchMax: number };
};

/** The writer that stores each intent in a commit of its own, told to `observer` when given. */
export function singleCommitWriter(
  store: Pick<Store, "insertIntents">,
  observer?: CommitObserver,
): IntentWriter {
  return {
    async insert(pending) {
      const wait = observer?.waiting(pending);
      const ended = observer?.committing([wait]);
      let result: BatchResult;
      try {
        [result] = await store.insertIntents([pending]);
      } catch (error) {
        ended?.({ error });
        observer?.answered(wait, { error });
        throw error;
      }
      ended?.([result]);
      if (result.outcome === "failed") {
        observer?.answered(wait, { error: result.error });
        throw result.error;
      }
      observer?.answered(wait, result);
      return result;
    },
  };
}

/**
 * Builds the writer for the settings.
 *
 * @param options.batchMax the most inserts in commits at once
 *   (`COMMIT_BATCH_MAX`), carried by several commits side by side (each
 *   checks its ids, nine at most); 1 means one commit per insert.
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
  if (options.batchMax === 1) return singleCommitWriter(store, options.observer);
  const commitShape = store.commitShape;
  return createGroupCommitWriter({
    batchMax: options.batchMax,
    observer: options.observer,
    shape: commitShape && (() => commitShape.call(store, options.batchMax)),
    commit: (batch) => store.insertIntents(batch),
  });
}
