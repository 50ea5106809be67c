/**
 * How accepted intents reach KV. One atomic commit per intent by default;
 * grouping concurrent inserts into shared commits is a drop-in writer with the
 * same interface.
 * @module
 */

import type { IntentWriter } from "../domain/submit.ts";
import { Store } from "./store.ts";

/**
 * Builds the writer for the settings.
 *
 * @param options.batchMax the most inserts one commit may carry; 1 means one commit each.
 */
export function createWriter(kv: Deno.Kv, options: { batchMax: number }): IntentWriter {
  const store = new Store(kv);
  void options;
  return { insert: (pending) => store.insertIntent(pending) };
}
