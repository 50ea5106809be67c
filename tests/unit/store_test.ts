/** Unit tests of the KV store on a real in-memory Deno KV. */

import assert from "node:assert/strict";
import {
  InvalidCursorError,
  type PendingInsert,
  Store,
  type StoredIntent,
} from "../../src/storage/store.ts";

async function withStore(fn: (store: Store, kv: Deno.Kv) => Promise<void>): Promise<void> {
  const kv = await Deno.openKv(":memory:");
  try {
    await fn(new Store(kv), kv);
  } finally {
    kv.close();
  }
}

function record(id: string, ms: number, refId = "T"): StoredIntent {
  return {
    id,
    variant: "A",
    refId,
    authorship: { kind: "Ed25519", signers: ["k"] },
    receivedAt: new Date(ms).toISOString(),
    receivedAtMs: ms,
    seq: ms,
    body: new TextEncoder().encode(`{"id":"${id}"}`),
  };
}

async function pending(store: Store, rec: StoredIntent): Promise<PendingInsert> {
  const found = await store.getDocument("template", rec.refId);
  assert.ok(found);
  return { record: rec, ref: found.ref };
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
    assert.equal(found?.doc.contentType, "application/json");
    assert.deepEqual(found?.doc.bytes, doc.bytes);
    assert.equal(await store.getDocument("policy", "T"), null);
  });
});

Deno.test("insertIntent creates once, then reports exists", async () => {
  await withStore(async (store) => {
    await store.putDocument("template", "T", doc);
    const p = await pending(store, record("a", 1000));
    assert.equal(await store.insertIntent(p), "created");
    assert.equal(await store.insertIntent(p), "exists");
    const stored = await store.getIntent("a");
    assert.equal(stored?.id, "a");
    assert.deepEqual(stored?.body, p.record.body);
  });
});

Deno.test("insertIntent refuses when the template read has changed", async (t) => {
  await withStore(async (store, kv) => {
    await store.putDocument("template", "T", doc);
    const p = await pending(store, record("b", 1000));
    // Rewriting the entry gives it a new versionstamp, as a delete and re-add would.
    await kv.set(["templates", "T"], doc);
    await t.step("the outcome is reference_changed and nothing is stored", async () => {
      assert.equal(await store.insertIntent(p), "reference_changed");
      assert.equal(await store.getIntent("b"), null);
    });
  });
});

Deno.test("insertIntent stores a body view with only its own bytes", async () => {
  await withStore(async (store) => {
    await store.putDocument("template", "T", doc);
    const rec = record("c", 1000);
    // A view into a buffer larger than a KV value may be: only the view's bytes may be stored.
    const big = new Uint8Array(70_000);
    big.set(rec.body, 100);
    rec.body = big.subarray(100, 100 + rec.body.length);
    assert.equal(await store.insertIntent(await pending(store, rec)), "created");
    assert.equal(new TextDecoder().decode((await store.getIntent("c"))!.body), '{"id":"c"}');
  });
});

Deno.test("listIntents pages newest first and ends with a null cursor", async () => {
  await withStore(async (store) => {
    await store.putDocument("template", "T", doc);
    const ids = Array.from({ length: 12 }, (_, i) => `id-${String(i).padStart(2, "0")}`);
    for (const [i, id] of ids.entries()) {
      await store.insertIntent(await pending(store, record(id, 1000 + i)));
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await store.listIntents({ limit: 5, cursor });
      seen.push(...page.items.map((r) => r.id));
      cursor = page.cursor ?? undefined;
      pages++;
    } while (cursor);
    assert.equal(pages, 3);
    assert.deepEqual(seen, [...ids].reverse());
    const exact = await store.listIntents({ limit: 12 });
    assert.equal(exact.items.length, 12);
    assert.equal(exact.cursor, null);
  });
});

Deno.test("listIntents refuses a cursor it did not hand out", async () => {
  await withStore(async (store) => {
    // Base64 that KV's own cursors would have taken, and well-encoded positions of the wrong shape.
    const encode = (v: unknown) => btoa(JSON.stringify(v)).replace(/=+$/, "");
    for (
      const cursor of [
        "not a cursor",
        "zzzz",
        "AAAA",
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        encode([1, 2]),
        encode([-1, 0, "x"]),
        encode([1.5, 0, "x"]),
        encode([1, 0, 7]),
        encode([1, 0, "x", 0]),
        encode([1, 0, "0123abcd", -1]),
        encode([1, 0, "0123abcd", 0, 5]),
        encode({ a: 1 }),
      ]
    ) {
      await assert.rejects(store.listIntents({ limit: 5, cursor }), InvalidCursorError, cursor);
    }
  });
});

Deno.test("listIntents orders intents of one millisecond newest first", async () => {
  await withStore(async (store) => {
    await store.putDocument("template", "T", doc);
    // Accepted in this order within the same millisecond; ids sort differently.
    const order = ["m", "z", "a", "q"];
    for (const [i, id] of order.entries()) {
      await store.insertIntent(await pending(store, { ...record(id, 5000), seq: i + 1 }));
    }
    const page = await store.listIntents({ limit: 3 });
    assert.deepEqual(page.items.map((r) => r.id), ["q", "a", "z"]);
    assert.ok(page.cursor);
    const rest = await store.listIntents({ limit: 3, cursor: page.cursor });
    assert.deepEqual(rest.items.map((r) => r.id), ["m"]);
    assert.equal(rest.cursor, null);
  });
});

Deno.test("one commit's intents share blocks within the value limit; pages run across them", async () => {
  await withStore(async (store) => {
    await store.putDocument("template", "T", doc);
    const ref = (await store.getDocument("template", "T"))!.ref;
    // 20,000-byte bodies: three fit a block, so 10 intents make four blocks.
    const records = Array.from({ length: 10 }, (_, i) => {
      const rec = { ...record(`big-${i}`, 7000), seq: 7000 + i };
      rec.body = new TextEncoder().encode(`"${"x".repeat(19_998)}"`);
      return rec;
    });
    const outcomes = await store.insertIntents(records.map((r) => ({ record: r, ref })));
    assert.deepEqual(outcomes, Array(10).fill("created"));
    let blocks = 0;
    for await (const entry of store.kv.list<StoredIntent[]>({ prefix: ["intent_batches"] })) {
      blocks++;
      assert.ok(entry.value.length <= 3, `${entry.value.length} records in a block`);
    }
    assert.equal(blocks, 4);
    assert.equal((await store.auditIntents()).length, 10);
    for (const r of records) assert.deepEqual((await store.getIntent(r.id))?.body, r.body);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await store.listIntents({ limit: 4, cursor });
      seen.push(...page.items.map((r) => r.id));
      cursor = page.cursor ?? undefined;
    } while (cursor);
    assert.deepEqual(seen, records.map((r) => r.id).reverse());
  });
});

Deno.test("a pointer that leads nowhere reads as no intent", async () => {
  await withStore(async (store, kv) => {
    await kv.set(["intents", "ghost"], [1, 2, "0123abcd", 0]);
    assert.equal(await store.getIntent("ghost"), null);
    await assert.rejects(store.auditIntents(), /pointer of intent ghost/);
  });
});

Deno.test("intents of the earlier layout are read, then moved into blocks whole", async () => {
  await withStore(async (store, kv) => {
    await store.putDocument("template", "T", doc);
    // The earlier layout: the record under its id and an index entry by time.
    const legacy = Array.from({ length: 95 }, (_, i) => record(`old-${i}`, 1000 + i));
    legacy[3].body = new TextEncoder().encode(`"${"y".repeat(60_000)}"`);
    for (const rec of legacy) {
      await kv.atomic()
        .set(["intents", rec.id], rec)
        .set(["intents_by_time", rec.receivedAtMs, rec.seq, rec.id], rec.id)
        .commit();
    }
    assert.equal((await store.getIntent("old-7"))?.id, "old-7");
    assert.equal(await store.migrateLegacyIntents(), 95);
    assert.equal(await store.migrateLegacyIntents(), 0);
    const audited = await store.auditIntents();
    assert.equal(audited.length, 95);
    for (const rec of legacy) assert.deepEqual(await store.getIntent(rec.id), rec);
    // Intents accepted after the move list before the moved ones.
    await store.insertIntent(await pending(store, record("new", 5000)));
    const page = await store.listIntents({ limit: 100 });
    assert.deepEqual(
      page.items.map((r) => r.id),
      ["new", ...legacy.map((r) => r.id).reverse()],
    );
  });
});

Deno.test("moving the earlier layout keeps records that share a time and counter", async () => {
  await withStore(async (store, kv) => {
    // Two processes of the earlier version had their own counters: equal (ms, seq) happen.
    const big = (id: string) => {
      const rec = { ...record(id, 1000), seq: 5 };
      rec.body = new TextEncoder().encode(`"${"z".repeat(32_766)}"`);
      return rec;
    };
    const legacy = [big("a"), big("b"), { ...record("c", 1000), seq: 5 }];
    for (const rec of legacy) {
      await kv.atomic()
        .set(["intents", rec.id], rec)
        .set(["intents_by_time", rec.receivedAtMs, rec.seq, rec.id], rec.id)
        .commit();
    }
    assert.equal(await store.migrateLegacyIntents(), 3);
    assert.equal((await store.auditIntents()).length, 3);
    for (const rec of legacy) assert.deepEqual(await store.getIntent(rec.id), rec);
    const page = await store.listIntents({ limit: 10 });
    assert.deepEqual(page.items.map((r) => r.id).sort(), ["a", "b", "c"]);
  });
});

Deno.test("setConfig honours the expected versionstamps", async () => {
  await withStore(async (store) => {
    const value = { evidence_extractor_url: "", updated_at: new Date(0).toISOString() };
    assert.equal((await store.getConfig()).versionstamp, null);
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
    assert.equal(now.versionstamp, second);
    assert.equal(now.value?.evidence_extractor_url, "https://x");
    assert.ok(await store.setConfig(value));
  });
});

Deno.test("ping answers true on an open KV", async () => {
  await withStore(async (store) => assert.equal(await store.ping(), true));
});
