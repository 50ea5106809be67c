/**
 * Group commit against a real Deno KV (`:memory:` and a temp file). Commits
 * are counted by wrapping the writer's commit function, not by mocking KV.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { createGroupCommitWriter, createWriter } from "../../src/storage/group_commit.ts";
import { KvStore } from "../../src/storage/kv_store.ts";
import type { DocumentRef, NewIntent } from "../../src/domain/intent.ts";
import type { InsertResult, PendingIntent } from "../../src/domain/store.ts";
import { MAX_BODY_BYTES_LIMIT } from "../../src/settings.ts";
import { auditIntents } from "../support/audit.ts";
import { sleep } from "../support/time.ts";

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

async function addTemplate(store: KvStore, name: string): Promise<DocumentRef> {
  await store.putDocument("template", name, {
    contentType: "application/json",
    bytes: new TextEncoder().encode(`{"name":"${name}"}`),
  });
  const found = await store.findDocument("template", name);
  assert.ok(found);
  return found;
}

function pendingInsert(
  id: string,
  ref: DocumentRef,
  options: { bodyBytes?: number; tag?: string } = {},
): PendingIntent {
  const body = new Uint8Array(options.bodyBytes ?? 200);
  body.set(new TextEncoder().encode(`${id}:${options.tag ?? ""}`).subarray(0, body.length));
  const intent: NewIntent = {
    id,
    variant: "A",
    refId: ref.id,
    authorship: { kind: "Ed25519", signers: ["8Fk1nYtQx2yqSgdzv1Q5Xc3iYsT3B1v9oTQ7cq8mJ1Lb"] },
    body,
    state: "accepted",
  };
  return { intent, ref };
}

/** A commit function that records every batch it is given. */
function countingCommit(store: KvStore) {
  const batches: number[] = [];
  return {
    batches,
    commit: (batch: readonly PendingIntent[]) => {
      batches.push(batch.length);
      return store.insertIntents(batch);
    },
  };
}

/** The feed and the records are whole once what is staged is moved; returns the number of intents. */
async function assertConsistent(store: KvStore, kv: Deno.Kv): Promise<number> {
  await store.moveAll();
  return (await auditIntents(kv)).length;
}

const outcomes = (results: InsertResult[]) => results.map((r) => r.outcome);

for (const kind of KINDS) {
  Deno.test(`groups concurrent inserts into fewer commits (${kind} KV)`, async () => {
    const { kv, close } = await openKv(kind);
    try {
      const store = new KvStore(kv);
      const ref = await addTemplate(store, "tpl");
      const counter = countingCommit(store);
      const writer = createGroupCommitWriter({ batchMax: 16, commit: counter.commit });
      // Staggered arrivals, as from concurrent requests: some land while a commit is in flight.
      const results: Promise<InsertResult>[] = [];
      for (let i = 0; i < 200; i++) {
        results.push(writer.insert(pendingInsert(`id-${i}`, ref)));
        if (i % 10 === 9) await sleep(0);
      }
      assert.deepEqual(new Set(outcomes(await Promise.all(results))), new Set(["created"]));
      assert.equal(counter.batches.reduce((a, b) => a + b, 0), 200);
      assert.ok(counter.batches.every((n) => n >= 1 && n <= 16), String(counter.batches));
      assert.ok(counter.batches.length <= 200 / 4, `${counter.batches.length} commits`);
      assert.equal(await assertConsistent(store, kv), 200);
    } finally {
      await close();
    }
  });

  Deno.test(`commits a lone insert at once, alone (${kind} KV)`, async () => {
    const { kv, close } = await openKv(kind);
    try {
      const store = new KvStore(kv);
      const ref = await addTemplate(store, "tpl");
      const counter = countingCommit(store);
      const writer = createGroupCommitWriter({ batchMax: 32, commit: counter.commit });
      assert.equal((await writer.insert(pendingInsert("alone", ref))).outcome, "created");
      assert.equal((await writer.insert(pendingInsert("alone-too", ref))).outcome, "created");
      assert.deepEqual(counter.batches, [1, 1]);
      assert.ok(await store.getIntent("alone"));
    } finally {
      await close();
    }
  });

  Deno.test(`answers a duplicate id within a batch "exists": the first wins (${kind} KV)`, async () => {
    const { kv, close } = await openKv(kind);
    try {
      const store = new KvStore(kv);
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
      const results = await Promise.all(inserts.map((p) => writer.insert(p)));
      assert.deepEqual(outcomes(results), ["created", "created", "exists", "created", "exists"]);
      assert.deepEqual(counter.batches, [3]);
      const stored = await store.getIntent("dup");
      assert.deepEqual(stored?.body, inserts[1].intent.body);
      assert.equal(await assertConsistent(store, kv), 3);
    } finally {
      await close();
    }
  });

  Deno.test(`does not fail the others of a batch for one existing id (${kind} KV)`, async () => {
    const { kv, close } = await openKv(kind);
    try {
      const store = new KvStore(kv);
      const ref = await addTemplate(store, "tpl");
      const [old] = await store.insertIntents([pendingInsert("taken", ref, { tag: "old" })]);
      assert.equal(old.outcome, "created");
      const before = await store.getIntent("taken");
      const counter = countingCommit(store);
      const writer = createGroupCommitWriter({ batchMax: 32, commit: counter.commit });
      const inserts = Array.from({ length: 20 }, (_, i) => pendingInsert(`fresh-${i}`, ref));
      inserts.splice(7, 0, pendingInsert("taken", ref, { tag: "new" }));
      const results = outcomes(await Promise.all(inserts.map((p) => writer.insert(p))));
      assert.equal(results[7], "exists");
      assert.equal(results.filter((o) => o === "created").length, 20);
      assert.deepEqual(counter.batches, [21]);
      assert.deepEqual(await store.getIntent("taken"), before);
      assert.equal(await assertConsistent(store, kv), 21);
    } finally {
      await close();
    }
  });

  Deno.test(`fails only the insert whose template read is stale (${kind} KV)`, async () => {
    const { kv, close } = await openKv(kind);
    try {
      const store = new KvStore(kv);
      const ref = await addTemplate(store, "tpl");
      const stale: DocumentRef = { ...ref, version: "00000000000000000001" };
      const writer = createGroupCommitWriter({
        batchMax: 32,
        commit: countingCommit(store).commit,
      });
      const inserts = [
        pendingInsert("ok-1", ref),
        pendingInsert("stale", stale),
        pendingInsert("ok-2", ref),
      ];
      const results = await Promise.all(inserts.map((p) => writer.insert(p)));
      assert.deepEqual(outcomes(results), ["created", "reference_changed", "created"]);
      assert.equal(await store.getIntent("stale"), null);
      assert.equal(await assertConsistent(store, kv), 2);
    } finally {
      await close();
    }
  });

  Deno.test(`splits a batch of maximum-size bodies into commits KV takes (${kind} KV)`, async () => {
    const { kv, close } = await openKv(kind);
    try {
      const store = new KvStore(kv);
      const ref = await addTemplate(store, "tpl");
      const counter = countingCommit(store);
      const writer = createGroupCommitWriter({ batchMax: 64, commit: counter.commit });
      // Ids of 128 four-byte characters make keys as large as they get.
      const longId = (i: number) => `${i}`.padStart(4, "0") + "\u{1F511}".repeat(124);
      const inserts = Array.from(
        { length: 40 },
        (_, i) => pendingInsert(longId(i), ref, { bodyBytes: MAX_BODY_BYTES_LIMIT }),
      );
      const results = await Promise.all(inserts.map((p) => writer.insert(p)));
      assert.deepEqual(new Set(outcomes(results)), new Set(["created"]));
      // One batch of 40 (about 2.5 MB), stored in several commits.
      assert.deepEqual(counter.batches, [40]);
      assert.equal(await assertConsistent(store, kv), 40);
    } finally {
      await close();
    }
  });
}

Deno.test("bounds a batch by count; the store splits it by checks", async () => {
  const { kv, close } = await openKv("memory");
  try {
    const store = new KvStore(kv);
    // A template per insert: two checks each, so one commit carries at most 49.
    const refs: DocumentRef[] = [];
    for (let i = 0; i < 120; i++) refs.push(await addTemplate(store, `tpl-${i}`));
    const counter = countingCommit(store);
    const writer = createGroupCommitWriter({ batchMax: 64, commit: counter.commit });
    const distinct = await Promise.all(
      refs.map((ref, i) => writer.insert(pendingInsert(`distinct-${i}`, ref))),
    );
    assert.deepEqual(new Set(outcomes(distinct)), new Set(["created"]));
    assert.deepEqual(counter.batches, [64, 56]);
    // One shared template: the count bounds the batch.
    counter.batches.length = 0;
    const shared = await Promise.all(
      Array.from({ length: 150 }, (_, i) => writer.insert(pendingInsert(`shared-${i}`, refs[0]))),
    );
    assert.deepEqual(new Set(outcomes(shared)), new Set(["created"]));
    assert.deepEqual(counter.batches, [64, 64, 22]);
    assert.equal(await assertConsistent(store, kv), 270);
  } finally {
    await close();
  }
});

Deno.test("rejects every waiter of a failing commit and writes none of it", async () => {
  const { kv, close } = await openKv("memory");
  try {
    const store = new KvStore(kv);
    const ref = await addTemplate(store, "tpl");
    const writer = createGroupCommitWriter({
      batchMax: 32,
      commit: countingCommit(store).commit,
    });
    // A value past Deno KV's 64 KiB limit makes the real commit throw.
    const inserts = [
      pendingInsert("a", ref),
      pendingInsert("too-big", ref, { bodyBytes: 70_000 }),
      pendingInsert("b", ref),
    ];
    const settled = await Promise.allSettled(inserts.map((p) => writer.insert(p)));
    // The big one goes in a commit of its own, beside the others'.
    const failing = ["too-big"];
    assert.deepEqual(
      settled.map((s) => s.status),
      inserts.map((p) => failing.includes(p.intent.id) ? "rejected" : "fulfilled"),
    );
    assert.equal(await assertConsistent(store, kv), 3 - failing.length);
    assert.equal(await store.getIntent("too-big"), null);
    // The writer keeps working afterwards.
    assert.equal((await writer.insert(pendingInsert("c", ref))).outcome, "created");
  } finally {
    await close();
  }
});

Deno.test("retries a duplicate on its own when the first insert of its id failed", async () => {
  const { kv, close } = await openKv("memory");
  try {
    const store = new KvStore(kv);
    const ref = await addTemplate(store, "tpl");
    const stale: DocumentRef = { ...ref, version: "00000000000000000001" };
    const counter = countingCommit(store);
    const writer = createGroupCommitWriter({ batchMax: 32, commit: counter.commit });
    const results = await Promise.all([
      writer.insert(pendingInsert("x", stale)),
      writer.insert(pendingInsert("x", ref)),
    ]);
    assert.deepEqual(outcomes(results), ["reference_changed", "created"]);
    assert.deepEqual(counter.batches, [1, 1]);
  } finally {
    await close();
  }
});

Deno.test("insertIntents refuses a batch that repeats an id", async () => {
  const { kv, close } = await openKv("memory");
  try {
    const store = new KvStore(kv);
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
    const store = new KvStore(kv);
    const ref = await addTemplate(store, "tpl");
    for (const batchMax of [1, 8]) {
      const writer = createWriter(store, { batchMax });
      const results = await Promise.all(
        Array.from(
          { length: 30 },
          (_, i) => writer.insert(pendingInsert(`w${batchMax}-${i}`, ref)),
        ),
      );
      assert.deepEqual(new Set(outcomes(results)), new Set(["created"]));
    }
    assert.throws(() =>
      createGroupCommitWriter({ batchMax: 0, commit: () => Promise.resolve([]) })
    );
    assert.equal(await assertConsistent(store, kv), 60);
  } finally {
    await close();
  }
});

Deno.test("two stores on one KV file, each with its own clock, list in commit order", async () => {
  const { kv, close } = await openKv("file");
  try {
    // Two stores on one KV, as two processes sharing a file, each with its own clock.
    let aTime = Date.UTC(2026, 0, 1, 0, 0, 3);
    const a = new KvStore(kv, { now: () => new Date(aTime) });
    const b = new KvStore(kv, { now: () => new Date(Date.UTC(2026, 0, 1, 0, 0, 2)) });
    const ref = await addTemplate(a, "tpl");
    const writerA = createGroupCommitWriter({ batchMax: 8, commit: (x) => a.insertIntents(x) });
    const writerB = createGroupCommitWriter({ batchMax: 8, commit: (x) => b.insertIntents(x) });
    // A's clock is ahead of B's, but B commits first: the feed follows the commits.
    const bInsert = pendingInsert("b0", ref);
    assert.equal((await writerB.insert(bInsert)).outcome, "created");
    const aInserts = ["a0", "a1", "a2", "a3"].map((id) => pendingInsert(id, ref));
    const aResults = await Promise.all(aInserts.map((p) => writerA.insert(p)));
    assert.deepEqual(outcomes(aResults), ["created", "created", "created", "created"]);
    aTime += 1000;
    assert.equal((await writerA.insert(pendingInsert("a4", ref))).outcome, "created");
    for (const p of aInserts) {
      assert.equal((await a.getIntent(p.intent.id))?.receivedAt, "2026-01-01T00:00:03.000Z");
    }
    const page = await a.listIntents({ limit: 10 });
    assert.deepEqual(page.items.map((r) => r.id), ["a4", "a3", "a2", "a1", "a0", "b0"]);
    const events = await b.readEvents({ after: 0, limit: 10 });
    assert.deepEqual(events.map((e) => e.intent.id), ["b0", "a0", "a1", "a2", "a3", "a4"]);
    assert.equal(await assertConsistent(a, kv), 6);
  } finally {
    await close();
  }
});

Deno.test("starts the next commit before the last commit's inserts are answered", async () => {
  const { kv, close } = await openKv("memory");
  try {
    const store = new KvStore(kv);
    const ref = await addTemplate(store, "tpl");
    const order: string[] = [];
    let commits = 0;
    const writer = createGroupCommitWriter({
      batchMax: 2,
      commit: (batch) => {
        order.push(`commit ${++commits} (${batch.length})`);
        return store.insertIntents(batch);
      },
    });
    const answered = Array.from(
      { length: 5 },
      (_, i) =>
        writer.insert(pendingInsert(`ordered-${i}`, ref)).then((result) => {
          order.push(`answered ${i}`);
          return result;
        }),
    );
    assert.deepEqual(new Set(outcomes(await Promise.all(answered))), new Set(["created"]));
    assert.deepEqual(order, [
      "commit 1 (2)",
      "commit 2 (2)",
      "answered 0",
      "answered 1",
      "commit 3 (1)",
      "answered 2",
      "answered 3",
      "answered 4",
    ]);
    // Nothing is left running: a later insert starts a commit of its own.
    assert.equal((await writer.insert(pendingInsert("later", ref))).outcome, "created");
    assert.equal(commits, 4);
    assert.equal(await assertConsistent(store, kv), 6);
  } finally {
    await close();
  }
});
