/**
 * Work that falls due later, kept in KV and done by whichever process finds
 * it (docs/interface.md §8, §10): on real stores, with a controlled clock where the
 * timing is not the point and the real one where it is.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import type { DueEntry } from "../../src/domain/store.ts";
import {
  type DueVerdict,
  dueWorkHandlers,
  DueWorkScheduler,
} from "../../src/scheduler/due_work.ts";
import { KvStore } from "../../src/storage/kv_store.ts";
import { pendingIntent } from "../support/store_kit.ts";
import { auditIntents } from "../support/audit.ts";
import { sleep } from "../support/time.ts";

const T0 = Date.UTC(2026, 5, 1, 12, 0, 0);
const quiet = () => {};

async function storePending(store: KvStore, ids: string[], windowS = 60): Promise<void> {
  await store.putDocument("policy", "p", { contentType: "text/plain", bytes: new Uint8Array(1) });
  const ref = (await store.findDocument("policy", "p"))!;
  const results = await store.insertIntents(
    ids.map((id) => ({ intent: pendingIntent(id, windowS), ref })),
  );
  assert.ok(results.every((r) => r.outcome === "created"));
}

async function withKv(fn: (kv: Deno.Kv) => Promise<void>): Promise<void> {
  const kv = await Deno.openKv(":memory:");
  try {
    await fn(kv);
  } finally {
    kv.close();
  }
}

Deno.test("a pending intent's expiry is due work at its deadline, removed by the commit that expires it", async () => {
  await withKv(async (kv) => {
    const clock = { ms: T0 };
    const now = () => new Date(clock.ms);
    const store = new KvStore(kv, { now });
    await storePending(store, ["x"]);
    const [entry] = await store.listDueWork({ kind: "expire", limit: 10 });
    assert.deepEqual({ ...entry, version: undefined }, {
      kind: "expire",
      id: "x",
      at: T0 + 60_000,
      version: undefined,
    });
    let expired = 0;
    const scheduler = new DueWorkScheduler({
      store,
      now,
      handlers: dueWorkHandlers({ store, now, expired: () => expired++ }),
      report: quiet,
    });
    clock.ms = T0 + 59_999;
    assert.equal(await scheduler.runDue(), 0);
    assert.equal((await store.getIntent("x"))?.state, "pending");
    clock.ms = T0 + 60_000;
    assert.equal(await scheduler.runDue(), 1);
    assert.equal(expired, 1);
    assert.deepEqual(await store.listDueWork({ kind: "expire", limit: 10 }), []);
    assert.equal(await scheduler.runDue(), 0);
    const events = await store.readEvents({ after: 0, limit: 10 });
    assert.deepEqual(events.map((e) => e.type), ["intent.pending", "intent.expired"]);
    await auditIntents(kv);
  });
});

Deno.test("the commit that accepts a pending intent removes its due expiry", async () => {
  await withKv(async (kv) => {
    const store = new KvStore(kv, { now: () => new Date(T0) });
    await storePending(store, ["y"]);
    await store.changeIntent("y", (intent) => ({
      intent: { ...intent, state: "accepted" },
      type: "intent.accepted",
    }));
    assert.deepEqual(await store.listDueWork({ kind: "expire", limit: 10 }), []);
    await auditIntents(kv);
  });
});

Deno.test("stale due work is dropped; work of a kind nobody here handles holds up nothing", async () => {
  await withKv(async (kv) => {
    const store = new KvStore(kv, { now: () => new Date(T0) });
    // 70 entries nobody here handles, due first, and an expiry for an intent that does not exist.
    for (let i = 0; i < 70; i++) {
      await store.putDueWork({ kind: "unknown", id: `u${i}`, at: T0 - 2 });
    }
    await store.putDueWork({ kind: "expire", id: "ghost", at: T0 - 1 });
    const scheduler = new DueWorkScheduler({
      store,
      now: () => new Date(T0),
      handlers: dueWorkHandlers({ store, now: () => new Date(T0) }),
      report: quiet,
    });
    assert.equal(await scheduler.runDue(), 1);
    assert.deepEqual(await store.listDueWork({ kind: "expire", limit: 10 }), []);
    assert.equal((await store.listDueWork({ kind: "unknown", limit: 100 })).length, 70);
  });
});

Deno.test("a handler that fails leaves its work for the next look, and the others are done", async () => {
  await withKv(async (kv) => {
    const store = new KvStore(kv, { now: () => new Date(T0) });
    for (const id of ["a", "b", "c"]) await store.putDueWork({ kind: "job", id, at: T0 });
    const seen: string[] = [];
    const reports: string[] = [];
    let fail = true;
    const job = (work: DueEntry): Promise<DueVerdict> => {
      seen.push(work.id);
      if (work.id === "b" && fail) return Promise.reject(new Error("not now"));
      return Promise.resolve("drop");
    };
    const scheduler = new DueWorkScheduler({
      store,
      now: () => new Date(T0),
      handlers: { job },
      report: (line) => reports.push(line),
    });
    assert.equal(await scheduler.runDue(), 2);
    assert.deepEqual(seen, ["a", "b", "c"]);
    assert.match(reports[0], /due work job b failed: not now/);
    assert.deepEqual((await store.listDueWork({ kind: "job", limit: 10 })).map((e) => e.id), ["b"]);
    fail = false;
    assert.equal(await scheduler.runDue(), 1);
    assert.deepEqual(await store.listDueWork({ kind: "job", limit: 10 }), []);
  });
});

Deno.test("runDue does every page of due work before it returns", async () => {
  await withKv(async (kv) => {
    const store = new KvStore(kv, { now: () => new Date(T0) });
    for (let i = 0; i < 150; i++) await store.putDueWork({ kind: "job", id: `j${i}`, at: T0 - i });
    await store.putDueWork({ kind: "job", id: "later", at: T0 + 1 });
    const scheduler = new DueWorkScheduler({
      store,
      now: () => new Date(T0),
      handlers: { job: () => Promise.resolve("drop" as const) },
      report: quiet,
    });
    assert.equal(await scheduler.runDue(), 150);
    assert.deepEqual((await store.listDueWork({ kind: "job", limit: 10 })).map((e) => e.id), [
      "later",
    ]);
  });
});

Deno.test("processes on one KV file that look at once expire each intent once", async () => {
  const dir = await Deno.makeTempDir({ prefix: "intents-due-" });
  const path = join(dir, "intents.kv");
  const [kvA, kvB] = [await Deno.openKv(path), await Deno.openKv(path)];
  try {
    const clock = { ms: T0 };
    const now = () => new Date(clock.ms);
    const [a, b] = [new KvStore(kvA, { now }), new KvStore(kvB, { now })];
    const ids = Array.from({ length: 40 }, (_, i) => `p${i}`);
    await storePending(a, ids);
    clock.ms = T0 + 60_000;
    let expired = 0;
    const schedulers = [a, b].map((store) =>
      new DueWorkScheduler({
        store,
        now,
        handlers: dueWorkHandlers({ store, now, expired: () => expired++ }),
        report: quiet,
      })
    );
    await Promise.all(schedulers.map((s) => s.runDue()));
    assert.equal(expired, ids.length);
    // What the other process staged is in the feed within its bound; here, at once.
    await a.moveAll();
    const events = await a.readEvents({ after: 0, limit: 1000 });
    const ended = events.filter((e) => e.type === "intent.expired").map((e) => e.intent.id);
    assert.deepEqual(ended.sort(), [...ids].sort());
    await auditIntents(kvA);
  } finally {
    kvA.close();
    kvB.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a started scheduler does work at its due time, found at start or by a later look", async () => {
  await withKv(async (kv) => {
    const store = new KvStore(kv);
    await store.putDueWork({ kind: "job", id: "now", at: Date.now() - 1 });
    const done = new Map<string, number>();
    const scheduler = new DueWorkScheduler({
      store,
      now: () => new Date(),
      pollMs: 200,
      handlers: {
        job: (work) => {
          done.set(work.id, Date.now());
          return Promise.resolve("drop");
        },
      },
      report: quiet,
    });
    scheduler.start();
    try {
      // Made due by "another process" after the first look: the poll finds it.
      const at = Date.now() + 300;
      await store.putDueWork({ kind: "job", id: "soon", at });
      const deadline = Date.now() + 3_000;
      while (done.size < 2 && Date.now() < deadline) {
        await sleep(20);
      }
      assert.ok(done.has("now"));
      assert.ok(done.has("soon"), "work made due later was not found");
      assert.ok(done.get("soon")! >= at, "work was done before its time");
    } finally {
      await scheduler.stop();
    }
  });
});
