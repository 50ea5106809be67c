/**
 * How accepted intents reach KV: one atomic commit per intent, or concurrent
 * intents grouped into shared commits (see `group_commit.ts`). Both keep the
 * same promises; grouping trades nothing at low load and lifts the
 * per-commit ceiling under concurrency.
 * @module
 */

import type { IntentWriter } from "../domain/submit.ts";
import { createGroupCommitWriter } from "./group_commit.ts";
import { Store } from "./store.ts";

/**
 * Builds the writer for the settings.
 *
 * @param options.batchMax the most inserts one commit may carry
 *   (`COMMIT_BATCH_MAX`); 1 means one commit per insert.
 * @throws {RangeError} when `batchMax` is not a whole number of at least 1.
 * @example
 * ```ts
 * const writer = createWriter(await Deno.openKv(":memory:"), { batchMax: 32 });
 * ```
 */
export function createWriter(kv: Deno.Kv, options: { batchMax: number }): IntentWriter {
  const store = new Store(kv);
  if (options.batchMax === 1) return { insert: (pending) => store.insertIntent(pending) };
  return createGroupCommitWriter({
    batchMax: options.batchMax,
    commit: (batch) => store.insertIntents(batch),
  });
}
