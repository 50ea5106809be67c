/**
 * The deliverers' shared reads of the feed on a real KV: reads of one
 * position share one answer, the window serves reads inside it, and the
 * follower wakes a waiting deliverer only for an event of its types, telling
 * the others how far they may move.
 */

import assert from "node:assert/strict";
import type { NewIntent } from "../../src/domain/intent.ts";
import { RecentEvents } from "../../src/delivery/recent_events.ts";
import { renderEvent } from "../../src/domain/record.ts";
import { KvStore } from "../../src/storage/kv_store.ts";
import { smallIntent } from "../support/store_kit.ts";
import { within } from "../support/time.ts";

async function withStore(
  fn: (store: KvStore, add: (n: number) => Promise<NewIntent[]>) => Promise<void>,
) {
  const kv = await Deno.openKv(":memory:");
  try {
    const store = new KvStore(kv);
    await store.putDocument("template", "T", {
      contentType: "text/plain",
      bytes: new Uint8Array(1),
    });
    const ref = (await store.findDocument("template", "T"))!;
    let made = 0;
    const add = async (n: number) => {
      const batch = Array.from(
        { length: n },
        () => ({ intent: smallIntent(`i-${made++}`, ref), ref }),
      );
      const results = await store.insertIntents(batch);
      return results.map((r) => (r as { intent: NewIntent }).intent);
    };
    await fn(store, add);
  } finally {
    kv.close();
  }
}

const OPTIONS = { limit: 10, maxBytes: 1 << 20, keepEvents: 25, keepBytes: 1 << 20 };
const accepted = (type: string) => type === "intent.accepted";
const expired = (type: string) => type === "intent.expired";

Deno.test("reads of one position share one answer; the window serves reads inside it", async () => {
  await withStore(async (store, add) => {
    await add(30);
    const events = new RecentEvents(store, OPTIONS);
    const [a, b] = await Promise.all([events.read(0), events.read(0)]);
    assert.equal(a, b, "one read for both");
    assert.deepEqual(a.map((e) => e.position), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    // Inside the window: the same event objects, up to the window's end.
    const inside = await events.read(4);
    assert.deepEqual(inside.map((e) => e.position), [5, 6, 7, 8, 9, 10]);
    assert.equal(inside[0], a[4]);
    // Past it: from KV, appended to the window, which keeps its newest 25.
    for (let after = 10; after < 30; after += 10) await events.read(after);
    assert.deepEqual((await events.read(5)).map((e) => e.position), [
      6,
      7,
      8,
      9,
      10,
      11,
      12,
      13,
      14,
      15,
    ]);
    const dropped = await events.read(2);
    assert.deepEqual(dropped.map((e) => e.position), [3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    assert.notEqual(dropped[0], a[2], "read from KV again: before the window");
    assert.deepEqual(await events.read(30), []);
  });
});

Deno.test("a waiting deliverer wakes for an event of its types, not for others", async () => {
  await withStore(async (store, add) => {
    await add(3);
    const events = new RecentEvents(store, OPTIONS);
    // Types the feed does not carry: it waits out its time, told how far it may move.
    const start = performance.now();
    assert.equal(await events.waitForWanted(1, expired, { timeoutMs: 200 }), 3);
    assert.ok(performance.now() - start >= 190, "waited its time");
    // Caught up and wanting accepted intents: woken by the next commit, having moved nowhere.
    const woken = events.waitForWanted(3, accepted, { timeoutMs: 10_000 });
    const idleStop = new AbortController();
    const idle = events.waitForWanted(3, expired, { timeoutMs: 10_000, signal: idleStop.signal });
    const stop = new AbortController();
    const stopped = events.waitForWanted(3, expired, { timeoutMs: 10_000, signal: stop.signal });
    await add(4);
    const began = performance.now();
    assert.equal(await woken, 3);
    assert.ok(performance.now() - began < 2_000, "woken by the commit");
    stop.abort();
    assert.equal(await stopped, 7, "an aborted wait says how far it got");
    // Behind the others: it starts where it stands, and wakes at once for what it wants.
    assert.equal(await events.waitForWanted(0, accepted, { timeoutMs: 10_000 }), 0);
    await add(2);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const left = await Promise.race([
      idle,
      new Promise((resolve) => timer = setTimeout(() => resolve("waiting"), 300)),
    ]);
    clearTimeout(timer);
    assert.equal(left, "waiting", "not woken by events it does not want");
    idleStop.abort();
    assert.equal(await idle, 9, "moved over all of them");
  });
});

Deno.test("while following, this process's own commits join the window as they commit", async () => {
  await withStore(async (store, add) => {
    // The real store, its reads of the feed counted.
    let reads = 0;
    const counted = {
      readEvents(options: Parameters<KvStore["readEvents"]>[0]) {
        reads++;
        return store.readEvents(options);
      },
      waitForEvents: store.waitForEvents.bind(store),
      onOwnEvents: store.onOwnEvents.bind(store),
    };
    const events = new RecentEvents(counted, OPTIONS);
    events.follow(true);
    // Told after the window (listeners are told in the order they came): the move that put
    // them into the feed has told the window too. (The head's watch may see that move first.)
    const told = Promise.withResolvers<void>();
    const unsubscribe = store.onOwnEvents((moved) => {
      if (moved.at(-1)?.position === 4) told.resolve();
    });
    const stored = await add(4);
    await within(told.promise, 2_000, "this process's move of its own events");
    unsubscribe();
    const own = await events.read(0);
    assert.deepEqual(own.map((e) => e.position), [1, 2, 3, 4]);
    assert.equal(reads, 0, "the window had them: no read");
    // The committed records, or the same decoded from their staged value when the move listed
    // them before this process remembered its commit.
    assert.deepEqual(own.map((e) => e.intent.id), stored.map((intent) => intent.id));
    events.follow(false);
    const read = await events.read(0);
    assert.equal(reads, 1, "read from KV once not following");
    // What a deliverer sends is the same either way, byte for byte.
    assert.deepEqual(own.map(renderEvent), read.map(renderEvent));
    // Not following: own commits are not taken.
    await add(2);
    assert.deepEqual((await events.read(4)).map((e) => e.position), [5, 6]);
    assert.equal(reads, 2);
  });
});
