/**
 * A pending intent's expiry as the KV queue delivers it (docs/interface.md §10), on a
 * real KV with a controlled clock: delivered early it is queued again for the
 * rest; at the deadline it records `intent.expired` once; delivered again, or
 * for an intent accepted meanwhile, it changes nothing.
 */

import assert from "node:assert/strict";
import { expireIntent } from "../../src/domain/approve.ts";
import { KvStore } from "../../src/storage/kv_store.ts";
import { pendingIntent } from "../support/store_kit.ts";

const T0 = Date.UTC(2026, 5, 1, 12, 0, 0);

async function withStore(fn: (store: KvStore, clock: { ms: number }) => Promise<void>) {
  const kv = await Deno.openKv(":memory:");
  const clock = { ms: T0 };
  try {
    const store = new KvStore(kv, { now: () => new Date(clock.ms) });
    await store.putDocument("policy", "p", { contentType: "text/plain", bytes: new Uint8Array(1) });
    await fn(store, clock);
  } finally {
    kv.close();
  }
}

Deno.test("an expiry delivered early waits, at the deadline expires once, and then changes nothing", async () => {
  await withStore(async (store, clock) => {
    const ref = (await store.findDocument("policy", "p"))!;
    await store.insertIntents([{ intent: pendingIntent("x"), ref }]);
    const deps = { store, now: () => new Date(clock.ms) };
    clock.ms = T0 + 59_000;
    assert.equal(await expireIntent(deps, "x"), "later");
    assert.equal((await store.getIntent("x"))?.state, "pending");
    clock.ms = T0 + 60_000;
    assert.equal(await expireIntent(deps, "x"), "expired");
    assert.equal(await expireIntent(deps, "x"), "unchanged");
    assert.equal(await expireIntent(deps, "no-such-intent"), "unchanged");
    const events = await store.readEvents({ after: 0, limit: 10 });
    assert.deepEqual(events.map((e) => [e.type, e.intent.state]), [
      ["intent.pending", "pending"],
      ["intent.expired", "expired"],
    ]);
  });
});

Deno.test("an expiry delivered after the intent was accepted changes nothing", async () => {
  await withStore(async (store, clock) => {
    const ref = (await store.findDocument("policy", "p"))!;
    await store.insertIntents([{ intent: pendingIntent("y"), ref }]);
    await store.changeIntent("y", (intent) => ({
      intent: { ...intent, state: "accepted" },
      type: "intent.accepted",
    }));
    clock.ms = T0 + 120_000;
    assert.equal(await expireIntent({ store, now: () => new Date(clock.ms) }, "y"), "unchanged");
    const events = await store.readEvents({ after: 0, limit: 10 });
    assert.deepEqual(events.map((e) => e.type), ["intent.pending", "intent.accepted"]);
  });
});
