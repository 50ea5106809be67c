/**
 * Event ids handed out by the earlier head layout (docs/interface.md §9,
 * docs/deployment.md, upgrading): ids have always been the feed's positions in
 * decimal, so an id a store whose `["feed_head"]` is a KvU64 handed out resumes
 * a stream as `Last-Event-ID` and as `?after=`, and a page as `after`, once
 * this version took the store over, and with its own events after them.
 */

import assert from "node:assert/strict";
import { generateEd25519Key } from "../../client/mod.ts";
import { keys } from "../../src/storage/keys.ts";
import { rewriteAsHeadLayout } from "../support/layouts.ts";
import { openSse, type SseItem } from "../../testing/sse.ts";
import { submitIntents } from "../support/fixtures.ts";
import { type AppHarness, withApp } from "../support/in_process.ts";
import { newTestStore } from "../support/stores.ts";
import { within } from "../support/time.ts";

const key = generateEd25519Key();

/** The ids and intents of the next `n` events of a stream opened with `headers` and `query`. */
async function streamed(
  h: AppHarness,
  options: { query?: string; lastEventId?: string; n: number },
): Promise<[string | undefined, string][]> {
  const headers: Record<string, string> = { authorization: h.auth };
  if (options.lastEventId !== undefined) headers["last-event-id"] = options.lastEventId;
  const stream = await openSse(`/events${options.query ?? ""}`, headers, { fetch: h.fetch });
  try {
    assert.equal(stream.response.status, 200);
    const events: [string | undefined, string][] = [];
    while (events.length < options.n) {
      const next = await within(stream.items.next(), 5_000, "the next event");
      assert.ok(!next.done, "the stream ended");
      const item: SseItem = next.value;
      if (item.kind === "event") events.push([item.id, JSON.parse(item.data).id]);
    }
    return events;
  } finally {
    stream.close();
  }
}

/** The ids and intents of the page after `after`. */
async function paged(h: AppHarness, after: string): Promise<[string, string][]> {
  const response = await h.fetch(`/events?after=${after}`, { headers: { authorization: h.auth } });
  const page = await response.json();
  assert.equal(response.status, 200, JSON.stringify(page));
  return page.events.map((e: { id: string; record: { id: string } }) => [e.id, e.record.id]);
}

/** Resumes after `after` every way a consumer can, each expecting `expected`. */
async function expectResumed(h: AppHarness, after: string, expected: [string, string][]) {
  const n = expected.length;
  assert.deepEqual(await streamed(h, { lastEventId: after, n }), expected, "Last-Event-ID");
  assert.deepEqual(await streamed(h, { query: `?after=${after}`, n }), expected, "?after=");
  assert.deepEqual(await paged(h, after), expected, "after, pulled");
}

Deno.test("an event id of a head-layout store resumes a stream (Last-Event-ID, ?after=) and a page, once taken over", async () => {
  const store = await newTestStore("file");
  try {
    let policyId = "";
    let earlier: string[] = [];
    await withApp({ store: store.kvPath }, async (h) => {
      policyId = await h.newPolicy();
      earlier = await submitIntents(h.client, { policyId, n: 3, key });
    });
    // The store as an earlier version of the head layout kept it, then served by this version.
    const kv = await Deno.openKv(store.kvPath);
    await rewriteAsHeadLayout(kv);
    assert.ok((await kv.get(keys.feedHead)).value instanceof Deno.KvU64, "a KvU64 head");
    kv.close();
    await withApp({ store: store.kvPath }, async (h) => {
      assert.ok(!((await h.kv.get(keys.feedHead)).value instanceof Deno.KvU64), "fenced");
      const handedOut = (await paged(h, "1")).map(([id]) => id);
      assert.deepEqual(handedOut, ["2", "3"], "decimal positions");
      await expectResumed(h, "2", [["3", earlier[2]]]);

      const later = await submitIntents(h.client, { policyId, n: 2, key });
      await expectResumed(h, "2", [["3", earlier[2]], ["4", later[0]], ["5", later[1]]]);
      await expectResumed(h, "1", [
        ["2", earlier[1]],
        ["3", earlier[2]],
        ["4", later[0]],
        ["5", later[1]],
      ]);
    });
  } finally {
    await store.close();
  }
});
