/**
 * The fence: the feed head written in this version's form before this
 * process writes anything, so that no earlier version writes beside it
 * (docs/architecture.md, "Stores of earlier versions").
 * @module
 */

import { decodeFeedHead, encodeIndexedHead } from "./index_codec.ts";
import { keys } from "./keys.ts";
import { retryWhileLocked } from "./retry.ts";

/**
 * The layout of values this version writes, as `["store_layout"]` records
 * it: bytes and KvU64 only (`codec.ts`). A store without it may hold values
 * of earlier versions (`deno task store-upgrade` rewrites them).
 */
export const STORE_LAYOUT = 2n;

/** What the head was before the fence: none yet, an earlier version's, or this version's. */
export type FencedFrom = "empty" | "earlier" | "current";

/**
 * Writes the head in this version's form where it is not yet, in one commit
 * checked against the head as read; a no-op on a head of this version.
 *
 * @returns what the head was.
 */
export async function fenceHead(kv: Deno.Kv): Promise<FencedFrom> {
  for (;;) {
    const entry = await kv.get<unknown>(keys.feedHead);
    const head = decodeFeedHead(entry.value);
    if (head.indexed) return "current";
    const op = kv.atomic()
      .check(entry)
      .set(keys.feedHead, encodeIndexedHead({ position: head.position, through: "" }));
    // A store with nothing in it will hold only values of this version (one without a head
    // may hold a version's from before the feed).
    if (head.form === "empty" && await isEmpty(kv)) {
      op.set(keys.storeLayout, new Deno.KvU64(STORE_LAYOUT));
    }
    const result = await retryWhileLocked(() => op.commit());
    if (result.ok) return head.form === "empty" ? "empty" : "earlier";
  }
}

async function isEmpty(kv: Deno.Kv): Promise<boolean> {
  for await (const _ of kv.list({ prefix: [] }, { limit: 1 })) return false;
  return true;
}
