/**
 * The two write layouts of a store (`src/storage/write_layout.ts`), for tests
 * of each: an empty store begins the staged layout; a store an earlier
 * version began is in the head layout until switched.
 * @module
 */

import { encodeHead } from "../../src/storage/codec.ts";
import { keys } from "../../src/storage/keys.ts";
import { retryWhileLocked } from "../../src/storage/retry.ts";

/** The write layouts. */
export const LAYOUTS = ["staged", "head"] as const;
/** A write layout. */
export type Layout = typeof LAYOUTS[number];

/**
 * Makes an empty store one of the head layout, as an earlier version's first
 * commit leaves it (a head of 0, written as a KvU64).
 */
export async function useHeadLayout(kv: Deno.Kv): Promise<void> {
  // Several handles opened on a new file at once may find it locked a moment.
  const result = await retryWhileLocked(() =>
    kv.atomic()
      .check({ key: keys.feedHead, versionstamp: null })
      .set(keys.feedHead, encodeHead(0))
      .commit()
  );
  if (!result.ok) throw new Error("the store is not empty");
}

/** Makes an empty store one of `layout` (the staged layout needs nothing: it is the default). */
export async function useLayout(kv: Deno.Kv, layout: Layout): Promise<void> {
  if (layout === "head") await useHeadLayout(kv);
}

/**
 * A key's pending count under a governed document as stored, in either
 * layout (`["pending_counts", …]` or `["pending_by_signer", …]`), or null
 * when it has none.
 */
export async function pendingCountOf(
  kv: Deno.Kv,
  kind: "template" | "policy",
  documentId: string,
  key: string,
): Promise<number | null> {
  const counts = await kv.get<Uint8Array>(keys.pendingCounts(kind, documentId));
  if (counts.value !== null) {
    return JSON.parse(new TextDecoder().decode(counts.value))[key] ?? null;
  }
  const entry = await kv.get<Deno.KvU64>(keys.pendingBySigner(kind, documentId, key));
  return entry.value === null ? null : Number(entry.value.value);
}
