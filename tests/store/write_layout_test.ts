/**
 * The write layouts and the step between them, on real KV files: an empty
 * store begins staged; a store of the head layout stays so until switched;
 * the switch keeps the feed's position, leaves every record readable, stops
 * head-layout commits in flight and takes the head layout's pending counts in.
 */

import assert from "node:assert/strict";
import { KvStore } from "../../src/storage/kv_store.ts";
import { keys } from "../../src/storage/keys.ts";
import { readWriteLayout, switchToStaged } from "../../src/storage/write_layout.ts";
import { auditIntents } from "../support/audit.ts";
import { pendingCountOf, useHeadLayout } from "../support/layouts.ts";
import { bigIntent, SIGNER_KEYS } from "../support/big_intents.ts";
import { plainTemplate, smallIntent, withKvFile } from "../support/store_kit.ts";
import { sleep } from "../support/time.ts";

const withFile = (fn: (path: string) => Promise<void>) => withKvFile("write-layout-test-", fn);

Deno.test("an empty store begins the staged layout at its first start; a started one keeps its layout", async () => {
  await withFile(async (path) => {
    const kv = await Deno.openKv(path);
    try {
      assert.equal(await readWriteLayout(kv), "empty");
      const { layout } = await new KvStore(kv).upgrade();
      assert.equal(layout, "staged");
      assert.equal(await readWriteLayout(kv), "staged");
      // The head is bytes: a version that knows only the head layout (a KvU64, or a number
      // before that) cannot read it, so it cannot write beside this one.
      const head = (await kv.get(keys.feedHead)).value;
      assert.ok(head instanceof Uint8Array);
      assert.ok(!(head instanceof Deno.KvU64) && typeof head !== "number");
    } finally {
      kv.close();
    }
    const other = await Deno.openKv(`${path}-head`);
    try {
      await useHeadLayout(other);
      assert.equal((await new KvStore(other).upgrade()).layout, "head");
      assert.equal(await readWriteLayout(other), "head");
    } finally {
      other.close();
    }
  });
});

Deno.test("switching keeps the feed and its positions; records of the head layout stay readable and changeable", async () => {
  await withFile(async (path) => {
    const kv = await Deno.openKv(path);
    try {
      await useHeadLayout(kv);
      const store = new KvStore(kv);
      const ref = await plainTemplate(store);
      const earlier = ["h1", "h2", "h3"];
      for (const id of earlier) await store.insertIntents([{ intent: smallIntent(id, ref), ref }]);
      const pending = bigIntent("pend", { bodyBytes: 100, pending: true, submittedBy: 2 });
      pending.refId = ref.id;
      await store.insertIntents([{ intent: pending, ref, maxPending: 10 }]);
      const before = await store.readEvents({ after: 0, limit: 10 });
      assert.deepEqual(await switchToStaged(kv), { before: "head", after: "staged" });
      assert.deepEqual(await switchToStaged(kv), { before: "staged", after: "staged" });
      // A store that knew the head layout finds the switch by its next commit.
      const [after] = await store.insertIntents([{ intent: smallIntent("s1", ref), ref }]);
      assert.equal(after.outcome, "created");
      await store.flushStaged();
      const events = await store.readEvents({ after: 0, limit: 10 });
      assert.deepEqual(events.slice(0, 4), before);
      assert.deepEqual(events.map((e) => [e.position, e.intent.id]), [
        [1, "h1"],
        [2, "h2"],
        [3, "h3"],
        [4, "pend"],
        [5, "s1"],
      ]);
      // Ids stored before stay taken, records readable.
      const [again] = await store.insertIntents([{ intent: smallIntent("h2", ref), ref }]);
      assert.equal(again.outcome, "exists");
      assert.equal((await store.getIntent("h1"))?.id, "h1");
      // The pending one's counts, kept per key before, are taken in when it ends.
      assert.equal(await pendingCountOf(kv, "template", "T", SIGNER_KEYS[0]), 1);
      const ended = await store.changeIntent("pend", (intent) => ({
        intent: { ...intent, state: "accepted" },
        type: "intent.accepted",
      }));
      assert.equal(ended?.state, "accepted");
      assert.equal(await pendingCountOf(kv, "template", "T", SIGNER_KEYS[0]), null);
      assert.deepEqual(await Array.fromAsync(kv.list({ prefix: ["pending_by_signer"] })), []);
      await store.flushStaged();
      assert.deepEqual(
        (await store.readEvents({ after: 5, limit: 10 })).map((e) => [e.type, e.intent.id]),
        [["intent.accepted", "pend"]],
      );
      await auditIntents(kv, { staged: "none" });
    } finally {
      kv.close();
    }
  });
});

Deno.test("a head-layout writer racing the switch never stores an id twice", async () => {
  await withFile(async (path) => {
    const [kvA, kvB, kvOp] = [
      await Deno.openKv(path),
      await Deno.openKv(path),
      await Deno.openKv(path),
    ];
    try {
      await useHeadLayout(kvA);
      const [a, b] = [new KvStore(kvA), new KvStore(kvB)];
      const ref = await plainTemplate(a);
      await plainTemplate(b);
      // Both learn the head layout.
      await a.insertIntents([{ intent: smallIntent("first-a", ref), ref }]);
      await b.insertIntents([{ intent: smallIntent("first-b", ref), ref }]);
      let created = 0;
      const ids = Array.from({ length: 60 }, (_, i) => `race-${i}`);
      const sends = Promise.allSettled(ids.flatMap((id) =>
        [a, b].map(async (store) => {
          const [result] = await store.insertIntents([{ intent: smallIntent(id, ref), ref }]);
          if (result.outcome === "created") created++;
          else assert.equal(result.outcome, "exists");
        })
      ));
      // The operator's step lands in the middle of the race.
      await sleep(2);
      await switchToStaged(kvOp);
      const failed = (await sends).filter((s) => s.status === "rejected");
      assert.deepEqual(failed, []);
      assert.equal(created, ids.length);
      await a.flushStaged();
      const stored = await auditIntents(kvOp, { staged: "none" });
      assert.equal(stored.length, ids.length + 2);
      assert.equal(await readWriteLayout(kvOp), "staged");
    } finally {
      for (const kv of [kvA, kvB, kvOp]) kv.close();
    }
  });
});
