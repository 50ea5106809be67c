/**
 * Stores as earlier versions left them, for tests of what this version makes
 * of them: the head layout, whose commits checked and moved a KvU64 feed head
 * (`src/storage/fence.ts` takes such a store over), and its pending counts.
 * @module
 */

import {
  encodeBlock,
  encodeHead,
  encodePointer,
} from "../../tools/store_upgrade/earlier_layouts.ts";
import { Feed } from "../../src/storage/feed.ts";
import { keys } from "../../src/storage/keys.ts";
import { retryWhileLocked } from "../../src/storage/retry.ts";

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

/**
 * Rewrites a store's feed as an earlier version of the head layout kept it:
 * every event in one block `["events", head]` with the positions in its
 * records, each id's entry a pointer `[head, index]` to its latest event,
 * the head a KvU64, nothing staged. For a store no process serves.
 */
export async function rewriteAsHeadLayout(kv: Deno.Kv): Promise<void> {
  const events = await new Feed(kv).readEvents({ after: 0, limit: 1_000 });
  const head = events.length;
  const first = new Map<string, number>();
  const latest = new Map<string, number>();
  events.forEach((event, i) => {
    if (!first.has(event.intent.id)) first.set(event.intent.id, event.position);
    latest.set(event.intent.id, i);
  });
  for await (const entry of kv.list({ prefix: keys.stagedPrefix })) await kv.delete(entry.key);
  for await (const entry of kv.list({ prefix: keys.eventsPrefix })) await kv.delete(entry.key);
  await kv.set(
    keys.events(head),
    encodeBlock(events.map(({ type, intent }) => ({
      type,
      intent: { ...intent, position: first.get(intent.id) },
    }))),
  );
  for (const [id, index] of latest) await kv.set(keys.intent(id), encodePointer([head, index]));
  // Its pending counts, one KvU64 per key.
  for await (const entry of kv.list<Uint8Array>({ prefix: ["pending_counts"] })) {
    const [, kind, documentId] = entry.key as [string, "template" | "policy", string];
    const counts: Record<string, number> = JSON.parse(new TextDecoder().decode(entry.value));
    for (const [signer, count] of Object.entries(counts)) {
      await kv.set(keys.pendingBySigner(kind, documentId, signer), new Deno.KvU64(BigInt(count)));
    }
    await kv.delete(entry.key);
  }
  await kv.set(keys.feedHead, encodeHead(head));
}
