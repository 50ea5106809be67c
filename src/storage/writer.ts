/**
 * How accepted intents reach the store: one atomic commit per intent, or
 * concurrent intents grouped into shared commits (see `group_commit.ts`).
 * Both keep the same promises; grouping trades nothing at low load and lifts
 * the per-commit ceiling under concurrency.
 * @module
 */

import type { IntentWriter, Store } from "../domain/store.ts";
import { createGroupCommitWriter } from "./group_commit.ts";

/**
 * Builds the writer for the settings.
 *
 * @param options.batchMax the most inserts one batch may carry
 *   (`COMMIT_BATCH_MAX`); 1 means one commit per insert.
 * @throws {RangeError} when `batchMax` is not a whole number of at least 1.
 * @example
 * ```ts
 * const store = new KvStore(await Deno.openKv(":memory:"));
 * const writer = createWriter(store, { batchMax: 32 });
 * ```
 */
export function createWriter(store: Store, options: { batchMax: number }): IntentWriter {
  if (options.batchMax === 1) {
    return { insert: async (pending) => (await store.insertIntents([pending]))[0] };
  }
  return createGroupCommitWriter({
    batchMax: options.batchMax,
    commit: (batch) => store.insertIntents(batch),
  });
}
