/** The KV store (`src/storage/kv_store.ts`) on a real in-memory Deno KV. */

import assert from "node:assert/strict";
import type { DocumentRef, NewIntent } from "../../src/domain/intent.ts";
import type { BatchResult } from "../../src/domain/store.ts";
import { KvStore } from "../../src/storage/kv_store.ts";
import { decodeStaged } from "../../src/storage/codec.ts";
import { encodePointer } from "../../tools/store_upgrade/earlier_layouts.ts";
import { encodeStagedPointer } from "../../src/storage/index_codec.ts";
import { encodeDocument } from "../../src/storage/values_codec.ts";
import { auditIntents } from "../support/audit.ts";

async function withStore(
  fn: (store: KvStore, kv: Deno.Kv) => Promise<void>,
): Promise<void> {
  const kv = await Deno.openKv(":memory:");
  try {
    await fn(new KvStore(kv), kv);
  } finally {
    kv.close();
  }
}

function intent(id: string, refId = "T"): NewIntent {
  return {
    id,
    variant: "A",
    refId,
    authorship: { kind: "Ed25519", signers: ["k"] },
    body: new TextEncoder().encode(`{"id":"${id}"}`),
    state: "accepted",
  };
}

async function ref(store: KvStore, id = "T"): Promise<DocumentRef> {
  const found = await store.findDocument("template", id);
  assert.ok(found);
  return found;
}

async function insert(store: KvStore, rec: NewIntent): Promise<BatchResult> {
  const [result] = await store.insertIntents([{ intent: rec, ref: await ref(store, rec.refId) }]);
  return result;
}

const doc = { contentType: "application/json", bytes: new Uint8Array([123, 125]) };

Deno.test("putDocument stores once and reports an existing document", async () => {
  await withStore(async (store) => {
    assert.equal(await store.putDocument("template", "T", doc), "created");
    assert.equal(
      await store.putDocument("template", "T", { ...doc, contentType: "text/plain" }),
      "exists",
    );
    const found = await store.getDocument("template", "T");
    assert.equal(found?.contentType, "application/json");
    assert.deepEqual(found?.bytes, doc.bytes);
    assert.equal(await store.getDocument("policy", "T"), null);
  });
});

Deno.test("insertIntents creates once, then reports exists", async () => {
  await withStore(async (store) => {
    await store.putDocument("template", "T", doc);
    const rec = intent("a");
    const created = await insert(store, rec);
    assert.equal(created.outcome, "created");
    assert.equal((await insert(store, rec)).outcome, "exists");
    const stored = await store.getIntent("a");
    assert.equal(stored?.id, "a");
    assert.deepEqual(stored?.body, rec.body);
    assert.deepEqual(created.outcome === "created" && created.intent, stored);
  });
});

Deno.test("insertIntents stamps the acceptance time from the store's clock; the feed gives the positions", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    let now = Date.UTC(2026, 2, 3, 4, 5, 6, 7);
    const store = new KvStore(kv, { now: () => new Date(now) });
    await store.putDocument("template", "T", doc);
    const t = await ref(store);
    const first = await store.insertIntents([
      { intent: intent("x"), ref: t },
      { intent: intent("y"), ref: t },
    ]);
    now += 1000;
    const [second] = await store.insertIntents([{ intent: intent("z"), ref: t }]);
    const stamps = [...first, second].map((r) =>
      r.outcome === "created" ? [r.intent.receivedAt, r.intent.position] : null
    );
    assert.deepEqual(stamps, [
      ["2026-03-03T04:05:06.007Z", undefined],
      ["2026-03-03T04:05:06.007Z", undefined],
      ["2026-03-03T04:05:07.007Z", undefined],
    ]);
    const events = await store.readEvents({ after: 0, limit: 10 });
    assert.deepEqual(events.map((e) => [e.position, e.intent.id, e.intent.receivedAt]), [
      [1, "x", "2026-03-03T04:05:06.007Z"],
      [2, "y", "2026-03-03T04:05:06.007Z"],
      [3, "z", "2026-03-03T04:05:07.007Z"],
    ]);
  } finally {
    kv.close();
  }
});

Deno.test("insertIntents refuses when the template read has changed", async (t) => {
  await withStore(async (store, kv) => {
    await store.putDocument("template", "T", doc);
    const stale = await ref(store);
    // Rewriting the entry gives it a new version, as a delete and re-add would.
    await kv.set(["templates", "T"], encodeDocument(doc));
    await t.step("the outcome is reference_changed and nothing is stored", async () => {
      const [result] = await store.insertIntents([{ intent: intent("b"), ref: stale }]);
      assert.equal(result.outcome, "reference_changed");
      assert.equal(await store.getIntent("b"), null);
    });
    await t.step(
      "the stale reference is forgotten, so the next read finds the new one",
      async () => {
        assert.notDeepEqual(await ref(store), stale);
        assert.equal((await insert(store, intent("b"))).outcome, "created");
      },
    );
  });
});

Deno.test("insertIntents stores a body view with only its own bytes", async () => {
  await withStore(async (store, kv) => {
    await store.putDocument("template", "T", doc);
    const rec = intent("c");
    // A view into a buffer larger than a KV value may be: only the view's bytes may be stored.
    const big = new Uint8Array(70_000);
    big.set(rec.body, 100);
    rec.body = big.subarray(100, 100 + rec.body.length);
    assert.equal((await insert(store, rec)).outcome, "created");
    const stored = (await store.getIntent("c"))!.body;
    assert.equal(new TextDecoder().decode(stored), '{"id":"c"}');
    for await (const block of kv.list<Uint8Array>({ prefix: ["events"] })) {
      assert.ok(block.value.byteLength < 1_000, `a block of ${block.value.byteLength} bytes`);
    }
  });
});

Deno.test("listIntents pages newest first and ends with a null next position", async () => {
  await withStore(async (store) => {
    await store.putDocument("template", "T", doc);
    const ids = Array.from({ length: 12 }, (_, i) => `id-${String(i).padStart(2, "0")}`);
    for (const id of ids) await insert(store, intent(id));
    const seen: string[] = [];
    let before: number | undefined;
    let pages = 0;
    do {
      const page = await store.listIntents({ limit: 5, before });
      seen.push(...page.items.map((r) => r.id));
      before = page.next ?? undefined;
      pages++;
    } while (before);
    assert.equal(pages, 3);
    assert.deepEqual(seen, [...ids].reverse());
    const exact = await store.listIntents({ limit: 12 });
    assert.equal(exact.items.length, 12);
    assert.equal(exact.next, null);
    assert.deepEqual((await store.listIntents({ limit: 5, before: 1 })).items, []);
  });
});

Deno.test("isPosition accepts exactly the positions the feed handed out", async () => {
  await withStore(async (store) => {
    assert.equal(await store.isPosition(1), false);
    await store.putDocument("template", "T", doc);
    for (const id of ["a", "b", "c"]) await insert(store, intent(id));
    for (const position of [1, 2, 3]) assert.equal(await store.isPosition(position), true);
    for (const position of [0, -1, 4, 1.5, NaN, Number.MAX_SAFE_INTEGER + 2]) {
      assert.equal(await store.isPosition(position), false, String(position));
    }
  });
});

Deno.test("listIntents orders the intents of one commit newest first", async () => {
  await withStore(async (store) => {
    await store.putDocument("template", "T", doc);
    const t = await ref(store);
    // Accepted in this order in one commit; ids sort differently.
    const order = ["m", "z", "a", "q"];
    await store.insertIntents(order.map((id) => ({ intent: intent(id), ref: t })));
    const page = await store.listIntents({ limit: 3 });
    assert.deepEqual(page.items.map((r) => r.id), ["q", "a", "z"]);
    assert.ok(page.next);
    const rest = await store.listIntents({ limit: 3, before: page.next });
    assert.deepEqual(rest.items.map((r) => r.id), ["m"]);
    assert.equal(rest.next, null);
  });
});

Deno.test("one call's intents share blocks within the value limit; pages run across them", async () => {
  await withStore(async (store, kv) => {
    await store.putDocument("template", "T", doc);
    const t = await ref(store);
    // 20,000-byte bodies: three fit a block, so 10 intents make four blocks.
    const records = Array.from({ length: 10 }, (_, i) => {
      const rec = intent(`big-${i}`);
      rec.body = new TextEncoder().encode(`"${"x".repeat(19_998)}"`);
      return rec;
    });
    const results = await store.insertIntents(records.map((r) => ({ intent: r, ref: t })));
    assert.deepEqual(results.map((r) => r.outcome), Array(10).fill("created"));
    await store.moveAll();
    // Events stay in the blocks their commits staged.
    let blocks = 0;
    for await (const entry of kv.list<Uint8Array>({ prefix: ["feed_staged"] })) {
      blocks++;
      assert.ok(entry.value.byteLength <= 65_536, `a block of ${entry.value.byteLength} bytes`);
      const held = decodeStaged(entry.value).length;
      assert.ok(held <= 3, `${held} records in a block`);
    }
    assert.equal(blocks, 4);
    const audited = (await auditIntents(kv)).map((r) => r.id);
    // The commits of one call go side by side.
    assert.deepEqual([...audited].sort(), records.map((r) => r.id).sort());
    for (const r of records) assert.deepEqual((await store.getIntent(r.id))?.body, r.body);
    const seen: string[] = [];
    let before: number | undefined;
    do {
      const page = await store.listIntents({ limit: 4, before });
      seen.push(...page.items.map((r) => r.id));
      before = page.next ?? undefined;
    } while (before);
    assert.deepEqual(seen, audited.reverse());
  });
});

Deno.test("a pointer that leads nowhere reads as no intent", async () => {
  await withStore(async (store, kv) => {
    await kv.set(["intents", "ghost"], encodePointer([7, 0]));
    assert.equal(await store.getIntent("ghost"), null);
    await kv.set(["intents", "odd"], new TextEncoder().encode("not a pointer"));
    assert.equal(await store.getIntent("odd"), null);
    // A pointer into the staged block of its own commit, which holds nothing.
    await kv.set(["intents", "lost"], encodeStagedPointer(0));
    assert.equal(await store.getIntent("lost"), null);
    await assert.rejects(auditIntents(kv), /entry of intent (ghost|lost)/);
  });
});

Deno.test("setConfig honours the expected versions", async () => {
  await withStore(async (store) => {
    const value = { evidence_extractor_url: "", updated_at: new Date(0).toISOString() };
    assert.equal((await store.getConfig()).version, null);
    const first = await store.setConfig(value, [null]);
    assert.ok(first);
    assert.equal(await store.setConfig(value, [null]), null);
    assert.equal(await store.setConfig(value, ["00000000000000000000"]), null);
    const second = await store.setConfig({ ...value, evidence_extractor_url: "https://x" }, [
      first,
    ]);
    assert.ok(second);
    assert.notEqual(second, first);
    const now = await store.getConfig();
    assert.equal(now.version, second);
    assert.equal(now.value?.evidence_extractor_url, "https://x");
    assert.ok(await store.setConfig(value));
  });
});

Deno.test("findDocument remembers found documents but never an absence", async () => {
  const kv = await Deno.openKv(":memory:");
  let open = true;
  try {
    const store = new KvStore(kv);
    assert.equal(await store.findDocument("policy", "later"), null);
    await store.putDocument("template", "tpl", doc);
    const t = await ref(store, "tpl");
    // Added after a miss: found, because the miss was not remembered.
    await store.putDocument("policy", "later", {
      contentType: "text/plain",
      bytes: new Uint8Array(1),
    });
    const later = await store.findDocument("policy", "later");
    assert.ok(later);
    // Served from memory: the KV is closed, yet the reference is at hand.
    kv.close();
    open = false;
    assert.deepEqual(await store.findDocument("template", "tpl"), t);
    assert.deepEqual(await store.findDocument("policy", "later"), later);
  } finally {
    if (open) kv.close();
  }
});

Deno.test("ping answers true on an open KV", async () => {
  await withStore(async (store) => assert.equal(await store.ping(), true));
});
