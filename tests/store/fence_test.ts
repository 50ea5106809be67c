/**
 * The fence (`src/storage/fence.ts`), on real KV files: an empty store gets
 * this version's head before its first write; a store of an earlier version
 * (the head layout) is taken over, keeping its feed, its positions, its
 * records and its pending counts.
 */

import assert from "node:assert/strict";
import { KvStore } from "../../src/storage/kv_store.ts";
import { keys } from "../../src/storage/keys.ts";
import { decodeFeedHead } from "../../src/storage/index_codec.ts";
import { auditIntents } from "../support/audit.ts";
import { pendingCountOf, rewriteAsHeadLayout } from "../support/layouts.ts";
import { bigIntent, SIGNER_KEYS } from "../support/big_intents.ts";
import { plainTemplate, smallIntent, withKvFile } from "../support/store_kit.ts";

const withFile = (fn: (path: string) => Promise<void>) => withKvFile("fence-test-", fn);

Deno.test("an empty store gets this version's head before its first write, once", async () => {
  await withFile(async (path) => {
    const kv = await Deno.openKv(path);
    try {
      assert.equal((await kv.get(keys.feedHead)).versionstamp, null);
      const store = new KvStore(kv);
      // As a start makes it, before anything is stored.
      assert.equal(await store.prepare(), "empty");
      const ref = await plainTemplate(store);
      await store.insertIntents([{ intent: smallIntent("a", ref), ref }]);
      // Bytes no earlier version reads (a KvU64, a number or the earlier staged head).
      const head = (await kv.get(keys.feedHead)).value;
      assert.ok(head instanceof Uint8Array);
      assert.equal(decodeFeedHead(head).indexed, true);
      // A new store holds only values of this version; one with values but no head may not.
      assert.equal(await store.earlierValues(), false);
      const other = await Deno.openKv(`${path}-other`);
      try {
        await other.set(["policies", "p"], { contentType: "text/plain", bytes: new Uint8Array(1) });
        const earlier = new KvStore(other);
        assert.equal(await earlier.prepare(), "empty");
        assert.equal(await earlier.earlierValues(), true);
      } finally {
        other.close();
      }
      assert.equal(await new KvStore(kv).prepare(), "current");
    } finally {
      kv.close();
    }
  });
});

Deno.test("a store of the head layout is taken over: its feed, positions, records and counts kept", async () => {
  await withFile(async (path) => {
    const kv = await Deno.openKv(path);
    try {
      const ref = await plainTemplate(new KvStore(kv));
      {
        const store = new KvStore(kv);
        for (const id of ["h1", "h2", "h3"]) {
          await store.insertIntents([{ intent: smallIntent(id, ref), ref }]);
        }
        const pending = bigIntent("pend", { bodyBytes: 100, pending: true, submittedBy: 2 });
        pending.refId = ref.id;
        await store.insertIntents([{ intent: pending, ref, maxPending: 10 }]);
        await store.drain(performance.now() + 2_000);
      }
      await rewriteAsHeadLayout(kv);
      assert.ok((await kv.get(keys.feedHead)).value instanceof Deno.KvU64);
      const store = new KvStore(kv);
      const before = await store.readEvents({ after: 0, limit: 10 });
      assert.equal(await store.prepare(), "earlier");
      const [after] = await store.insertIntents([{ intent: smallIntent("s1", ref), ref }]);
      assert.equal(after.outcome, "created");
      await store.moveAll();
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
      await store.moveAll();
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
