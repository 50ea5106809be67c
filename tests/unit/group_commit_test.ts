/**
 * Group commit against a real Deno KV (`:memory:` and a temp file). Commits
 * are counted by wrapping the writer's commit function, not by mocking KV.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  createGroupCommitWriter,
  insertCost,
  KV_COMMIT_LIMITS,
} from "../../src/storage/group_commit.ts";
import { createWriter } from "../../src/storage/writer.ts";
import {
  type DocumentRef,
  type InsertOutcome,
  type PendingInsert,
  Store,
  type StoredIntent,
} from "../../src/storage/store.ts";
import { MAX_BODY_BYTES_LIMIT } from "../../src/settings.ts";

const KINDS = ["memory", "file"] as const;
type KvKind = typeof KINDS[number];

async function openKv(kind: KvKind): Promise<{ kv: Deno.Kv; close: () => Promise<void> }> {
  if (kind === "memory") {
    const kv = await Deno.openKv(":memory:");
    return { kv, close: () => Promise.resolve(kv.close()) };
  }
  const dir = await Deno.makeTempDir({ prefix: "group-commit-test-" });
  const kv = await Deno.openKv(join(dir, "intents.kv"));
  return {
    kv,
    close: async () => {
      kv.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

async function addTemplate(store: Store, name: string): Promise<DocumentRef> {
  await store.putDocument("template", name, {
    contentType: "application/json",
    bytes: new TextEncoder().encode(`{"name":"${name}"}`),
  });
  const found = await store.getDocument("template", name);
  assert.ok(found);
  return found.ref;
}

let clock = Date.UTC(2025, 0, 1);

function pendingInsert(
  id: string,
  ref: DocumentRef,
  options: { bodyBytes?: number; tag?: string } = {},
): PendingInsert {
  const now = new Date(clock++);
  const body = new Uint8Array(options.bodyBytes ?? 200);
  body.set(new TextEncoder().encode(`${id}:${options.tag ?? ""}`).subarray(0, body.length));
  const record: StoredIntent = {
    id,
    variant: "A",
    refId: String(ref.key[1]),
    authorship: { kind: "Ed25519", signers: ["8Fk1nYtQx2yqSgdzv1Q5Xc3iYsT3B1v9oTQ7cq8mJ1Lb"] },
    receivedAt: now.toISOString(),
    receivedAtMs: now.getTime(),
    seq: clock,
    body,
  };
  return { record, ref };
}

/** A commit function that records every batch it is given. */
function countingCommit(store: Store) {
  const batches: number[] = [];
  return {
    batches,
    commit: (batch: readonly PendingInsert[]) => {
      batches.push(batch.length);
      return store.insertIntents(batch);
    },
  };
}

/** Every pointer leads to its record and every record has its pointer; returns the count. */
async function assertConsistent(kv: Deno.Kv): Promise<number> {
  return (await new Store(kv).auditIntents()).length;
}

for (const kind of KINDS) {
  Deno.test(`groups concurrent inserts into fewer commits (${kind} KV)`, async () => {
    const { kv, close } = await openKv(kind);
    try {
      const store = new Store(kv);
      const ref = await addTemplate(store, "tpl");
      const counter = countingCommit(store);
      const writer = createGroupCommitWriter({ batchMax: 16, commit: counter.commit });
      // Staggered arrivals, as from concurrent requests: some land while a commit is in flight.
      const results: Promise<InsertOutcome>[] = [];
      for (let i = 0; i < 200; i++) {
        results.push(writer.insert(pendingInsert(`id-${i}`, ref)));
        if (i % 10 === 9) await new Promise((r) => setTimeout(r, 0));
      }
      const outcomes = await Promise.all(results);
      assert.deepEqual(new Set(outcomes), new Set(["created"]));
      assert.equal(counter.batches.reduce((a, b) => a + b, 0), 200);
      assert.ok(counter.batches.every((n) => n >= 1 && n <= 16), String(counter.batches));
      assert.ok(counter.batches.length <= 200 / 4, `${counter.batches.length} commits`);
      assert.equal(await assertConsistent(kv), 200);
    } finally {
      await close();
    }
  });

  Deno.test(`commits a lone insert at once, alone (${kind} KV)`, async () => {
    const { kv, close } = await openKv(kind);
    try {
      const store = new Store(kv);
      const ref = await addTemplate(store, "tpl");
      const counter = countingCommit(store);
      const writer = createGroupCommitWriter({ batchMax: 32, commit: counter.commit });
      assert.equal(await writer.insert(pendingInsert("alone", ref)), "created");
      assert.equal(await writer.insert(pendingInsert("alone-too", ref)), "created");
      assert.deepEqual(counter.batches, [1, 1]);
      assert.ok(await store.getIntent("alone"));
    } finally {
      await close();
    }
  });

  Deno.test(`answers a duplicate id within a batch "exists": the first wins (${kind} KV)`, async () => {
    const { kv, close } = await openKv(kind);
    try {
      const store = new Store(kv);
      const ref = await addTemplate(store, "tpl");
      const counter = countingCommit(store);
      const writer = createGroupCommitWriter({ batchMax: 32, commit: counter.commit });
      const inserts = [
        pendingInsert("other-1", ref),
        pendingInsert("dup", ref, { tag: "first" }),
        pendingInsert("dup", ref, { tag: "second" }),
        pendingInsert("other-2", ref),
        pendingInsert("dup", ref, { tag: "third" }),
      ];
      const outcomes = await Promise.all(inserts.map((p) => writer.insert(p)));
      assert.deepEqual(outcomes, ["created", "created", "exists", "created", "exists"]);
      assert.deepEqual(counter.batches, [3]);
      const stored = await store.getIntent("dup");
      assert.deepEqual(stored?.body, inserts[1].record.body);
      assert.equal(await assertConsistent(kv), 3);
    } finally {
      await close();
    }
  });

  Deno.test(`does not fail the others of a batch for one existing id (${kind} KV)`, async () => {
    const { kv, close } = await openKv(kind);
    try {
      const store = new Store(kv);
      const ref = await addTemplate(store, "tpl");
      assert.equal(
        await store.insertIntent(pendingInsert("taken", ref, { tag: "old" })),
        "created",
      );
      const before = await store.getIntent("taken");
      const counter = countingCommit(store);
      const writer = createGroupCommitWriter({ batchMax: 32, commit: counter.commit });
      const inserts = Array.from({ length: 20 }, (_, i) => pendingInsert(`fresh-${i}`, ref));
      inserts.splice(7, 0, pendingInsert("taken", ref, { tag: "new" }));
      const outcomes = await Promise.all(inserts.map((p) => writer.insert(p)));
      assert.equal(outcomes[7], "exists");
      assert.equal(outcomes.filter((o) => o === "created").length, 20);
      assert.deepEqual(counter.batches, [21]);
      assert.deepEqual(await store.getIntent("taken"), before);
      assert.equal(await assertConsistent(kv), 21);
    } finally {
      await close();
    }
  });

  Deno.test(`fails only the insert whose template read is stale (${kind} KV)`, async () => {
    const { kv, close } = await openKv(kind);
    try {
      const store = new Store(kv);
      const ref = await addTemplate(store, "tpl");
      const stale: DocumentRef = { key: ref.key, versionstamp: "00000000000000000001" };
      const writer = createGroupCommitWriter({
        batchMax: 32,
        commit: countingCommit(store).commit,
      });
      const inserts = [
        pendingInsert("ok-1", ref),
        pendingInsert("stale", stale),
        pendingInsert("ok-2", ref),
      ];
      const outcomes = await Promise.all(inserts.map((p) => writer.insert(p)));
      assert.deepEqual(outcomes, ["created", "reference_changed", "created"]);
      assert.equal(await store.getIntent("stale"), null);
      assert.equal(await assertConsistent(kv), 2);
    } finally {
      await close();
    }
  });

  Deno.test(`bounds a batch by bytes with maximum-size bodies (${kind} KV)`, async () => {
    const { kv, close } = await openKv(kind);
    try {
      const store = new Store(kv);
      const ref = await addTemplate(store, "tpl");
      const counter = countingCommit(store);
      const writer = createGroupCommitWriter({ batchMax: 64, commit: counter.commit });
      // Ids of 128 four-byte characters make keys as large as they get.
      const longId = (i: number) => `${i}`.padStart(4, "0") + "\u{1F511}".repeat(124);
      const inserts = Array.from(
        { length: 40 },
        (_, i) => pendingInsert(longId(i), ref, { bodyBytes: MAX_BODY_BYTES_LIMIT }),
      );
      const perInsert = insertCost(inserts[0]).mutationBytes;
      const fit = Math.floor(KV_COMMIT_LIMITS.mutationBytes / perInsert);
      assert.ok(fit >= 12, `only ${fit} maximum-size inserts fit a commit`);
      // Unbounded, twice that many in one commit is more than KV takes.
      await assert.rejects(
        store.insertIntents(Array.from(
          { length: 2 * fit },
          (_, i) => pendingInsert(longId(1000 + i), ref, { bodyBytes: MAX_BODY_BYTES_LIMIT }),
        )),
        /too large/,
      );
      const outcomes = await Promise.all(inserts.map((p) => writer.insert(p)));
      assert.deepEqual(new Set(outcomes), new Set(["created"]));
      assert.ok(counter.batches.every((n) => n <= fit), String(counter.batches));
      assert.ok(counter.batches.some((n) => n === fit), String(counter.batches));
      assert.equal(await assertConsistent(kv), 40);
    } finally {
      await close();
    }
  });
}

Deno.test("bounds a batch by count and by checks", async () => {
  const { kv, close } = await openKv("memory");
  try {
    const store = new Store(kv);
    // A template per insert: two checks each, so checks bound the batch at 50.
    const refs: DocumentRef[] = [];
    for (let i = 0; i < 120; i++) refs.push(await addTemplate(store, `tpl-${i}`));
    const counter = countingCommit(store);
    const writer = createGroupCommitWriter({ batchMax: 64, commit: counter.commit });
    const distinct = await Promise.all(
      refs.map((ref, i) => writer.insert(pendingInsert(`distinct-${i}`, ref))),
    );
    assert.deepEqual(new Set(distinct), new Set(["created"]));
    assert.deepEqual(counter.batches, [50, 50, 20]);
    // One shared template: the count bounds the batch.
    counter.batches.length = 0;
    const shared = await Promise.all(
      Array.from({ length: 150 }, (_, i) => writer.insert(pendingInsert(`shared-${i}`, refs[0]))),
    );
    assert.deepEqual(new Set(shared), new Set(["created"]));
    assert.deepEqual(counter.batches, [64, 64, 22]);
  } finally {
    await close();
  }
});

Deno.test("rejects every waiter of a failing commit and writes none of it", async () => {
  const { kv, close } = await openKv("memory");
  try {
    const store = new Store(kv);
    const ref = await addTemplate(store, "tpl");
    const writer = createGroupCommitWriter({ batchMax: 32, commit: countingCommit(store).commit });
    // A value past Deno KV's 64 KiB limit makes the real commit throw.
    const inserts = [
      pendingInsert("a", ref),
      pendingInsert("too-big", ref, { bodyBytes: 70_000 }),
      pendingInsert("b", ref),
    ];
    const settled = await Promise.allSettled(inserts.map((p) => writer.insert(p)));
    assert.deepEqual(settled.map((s) => s.status), ["rejected", "rejected", "rejected"]);
    assert.equal(await assertConsistent(kv), 0);
    // The writer keeps working afterwards.
    assert.equal(await writer.insert(pendingInsert("a", ref)), "created");
  } finally {
    await close();
  }
});

Deno.test("retries a duplicate on its own when the first insert of its id failed", async () => {
  const { kv, close } = await openKv("memory");
  try {
    const store = new Store(kv);
    const ref = await addTemplate(store, "tpl");
    const stale: DocumentRef = { key: ref.key, versionstamp: "00000000000000000001" };
    const counter = countingCommit(store);
    const writer = createGroupCommitWriter({ batchMax: 32, commit: counter.commit });
    const outcomes = await Promise.all([
      writer.insert(pendingInsert("x", stale)),
      writer.insert(pendingInsert("x", ref)),
    ]);
    assert.deepEqual(outcomes, ["reference_changed", "created"]);
    assert.deepEqual(counter.batches, [1, 1]);
  } finally {
    await close();
  }
});

Deno.test("insertIntents refuses a batch that repeats an id", async () => {
  const { kv, close } = await openKv("memory");
  try {
    const store = new Store(kv);
    const ref = await addTemplate(store, "tpl");
    await assert.rejects(
      store.insertIntents([pendingInsert("same", ref), pendingInsert("same", ref)]),
      RangeError,
    );
    assert.equal(await store.getIntent("same"), null);
  } finally {
    await close();
  }
});

Deno.test("createWriter commits one insert per commit at batchMax 1 and groups above", async () => {
  const { kv, close } = await openKv("memory");
  try {
    const store = new Store(kv);
    const ref = await addTemplate(store, "tpl");
    for (const batchMax of [1, 8]) {
      const writer = createWriter(kv, { batchMax });
      const outcomes = await Promise.all(
        Array.from(
          { length: 30 },
          (_, i) => writer.insert(pendingInsert(`w${batchMax}-${i}`, ref)),
        ),
      );
      assert.deepEqual(new Set(outcomes), new Set(["created"]));
    }
    assert.throws(() =>
      createGroupCommitWriter({ batchMax: 0, commit: () => Promise.resolve([]) })
    );
    assert.equal(await assertConsistent(kv), 60);
  } finally {
    await close();
  }
});

Deno.test("stores only the body's bytes when the body is a view into a larger buffer", async () => {
  const { kv, close } = await openKv("memory");
  try {
    const store = new Store(kv);
    const ref = await addTemplate(store, "tpl");
    const pending = pendingInsert("view", ref);
    const big = new Uint8Array(70_000);
    big.set(pending.record.body, 1000);
    const view = big.subarray(1000, 1000 + pending.record.body.length);
    const outcome = await store.insertIntent({
      ...pending,
      record: { ...pending.record, body: view },
    });
    assert.equal(outcome, "created");
    const stored = await store.getIntent("view");
    assert.deepEqual(stored?.body, pending.record.body);
    assert.equal(stored?.body.buffer.byteLength, pending.record.body.length);
  } finally {
    await close();
  }
});

Deno.test("getDocumentRef remembers found documents but never an absence", async () => {
  const kv = await Deno.openKv(":memory:");
  let open = true;
  try {
    const store = new Store(kv);
    assert.equal(await store.getDocumentRef("policy", "later"), null);
    const ref = await addTemplate(store, "tpl");
    assert.deepEqual(await store.getDocumentRef("template", "tpl"), ref);
    // Added after a miss: found, because the miss was not remembered.
    await store.putDocument("policy", "later", {
      contentType: "text/plain",
      bytes: new Uint8Array(1),
    });
    const later = await store.getDocumentRef("policy", "later");
    assert.ok(later);
    // Served from memory: the KV is closed, yet the reference is at hand.
    kv.close();
    open = false;
    assert.deepEqual(await store.getDocumentRef("template", "tpl"), ref);
    assert.deepEqual(await store.getDocumentRef("policy", "later"), later);
  } finally {
    if (open) kv.close();
  }
});

Deno.test("stamps a batch with one time as its commit starts; writers sharing a KV list by it", async () => {
  const { kv, close } = await openKv("file");
  try {
    // Two stores on one KV, as two processes sharing a file, each with its own clock.
    const a = new Store(kv);
    const b = new Store(kv);
    const ref = await addTemplate(a, "tpl");
    let aTime = Date.UTC(2026, 0, 1, 0, 0, 3);
    const writerA = createGroupCommitWriter({
      batchMax: 8,
      commit: (batch) => a.insertIntents(batch),
      now: () => new Date(aTime),
    });
    const writerB = createGroupCommitWriter({
      batchMax: 8,
      commit: (batch) => b.insertIntents(batch),
      now: () => new Date(Date.UTC(2026, 0, 1, 0, 0, 2)),
    });
    // A's four intents were received before B's, but A commits them later.
    const aInserts = ["a0", "a1", "a2", "a3"].map((id) => pendingInsert(id, ref));
    const bInsert = pendingInsert("b0", ref);
    assert.ok(aInserts[0].record.receivedAtMs < bInsert.record.receivedAtMs);
    assert.equal(await writerB.insert(bInsert), "created");
    assert.deepEqual(
      await Promise.all(aInserts.map((p) => writerA.insert(p))),
      ["created", "created", "created", "created"],
    );
    aTime += 1000;
    assert.equal(await writerA.insert(pendingInsert("a4", ref)), "created");
    for (const p of aInserts) {
      assert.equal(p.record.receivedAt, "2026-01-01T00:00:03.000Z");
      assert.equal((await a.getIntent(p.record.id))?.receivedAt, "2026-01-01T00:00:03.000Z");
    }
    const page = await a.listIntents({ limit: 10 });
    assert.deepEqual(page.items.map((r) => r.id), ["a4", "a3", "a2", "a1", "a0", "b0"]);
    const times = page.items.map((r) => r.receivedAtMs);
    assert.deepEqual(times, [...times].sort((x, y) => y - x));
  } finally {
    await close();
  }
});
