/**
 * The feed's order on a real KV file shared by two store handles (as two
 * processes share it), reading after any position, and waiting for events.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import type { DocumentRef, NewIntent } from "../../src/domain/intent.ts";
import { KvStore } from "../../src/storage/kv_store.ts";
import { createWriter } from "../../src/storage/group_commit.ts";
import { auditIntents } from "../support/audit.ts";

async function tempKvPath(): Promise<{ path: string; remove: () => Promise<void> }> {
  const dir = await Deno.makeTempDir({ prefix: "feed-test-" });
  return { path: join(dir, "intents.kv"), remove: () => Deno.remove(dir, { recursive: true }) };
}

function intent(id: string, ref: DocumentRef, bodyBytes = 100): NewIntent {
  const body = new Uint8Array(bodyBytes).fill(0x20);
  body.set(new TextEncoder().encode(`"${id}"`));
  return {
    id,
    variant: "A",
    refId: ref.id,
    authorship: { kind: "Unsigned", signers: [] },
    body,
    state: "accepted",
  };
}

async function template(store: KvStore): Promise<DocumentRef> {
  await store.putDocument("template", "T", { contentType: "text/plain", bytes: new Uint8Array(1) });
  return (await store.findDocument("template", "T"))!;
}

/** Two stores on two handles of one KV file, as two processes share it. */
async function withTwoHandles(
  fn: (a: KvStore, b: KvStore, kvA: Deno.Kv, kvB: Deno.Kv) => Promise<void>,
): Promise<void> {
  const { path, remove } = await tempKvPath();
  const kvA = await Deno.openKv(path);
  const kvB = await Deno.openKv(path);
  try {
    await fn(new KvStore(kvA), new KvStore(kvB), kvA, kvB);
  } finally {
    kvA.close();
    kvB.close();
    await remove();
  }
}

Deno.test("two store handles on one file, committing interleaved, make one dense order", async () => {
  await withTwoHandles(async (a, b, kvA) => {
    const ref = await template(a);
    const writers = [createWriter(a, { batchMax: 8 }), createWriter(b, { batchMax: 8 })];
    // Each handle commits while the other does; some ids go to both.
    const created = new Set<string>();
    const sends: Promise<void>[] = [];
    for (let i = 0; i < 400; i++) {
      const id = i % 25 === 0 ? `both-${i}` : `id-${i}`;
      const targets = id.startsWith("both") ? writers : [writers[i % 2]];
      for (const writer of targets) {
        sends.push(
          writer.insert({ intent: intent(id, ref), ref }).then((result) => {
            if (result.outcome === "created") {
              assert.ok(!created.has(id), `${id} created twice`);
              created.add(id);
            }
          }),
        );
      }
      if (i % 16 === 15) await Promise.all(sends.splice(0));
    }
    await Promise.all(sends);
    assert.equal(created.size, 400);
    await a.moveAll();
    const audited = await auditIntents(kvA);
    assert.deepEqual(new Set(audited.map((r) => r.id)), created);
    // Both handles read the same order, whole and in pages after any position.
    const all = await a.readEvents({ after: 0, limit: 1000 });
    assert.deepEqual(all.map((e) => e.position), Array.from({ length: 400 }, (_, i) => i + 1));
    assert.deepEqual(await b.readEvents({ after: 0, limit: 1000 }), all);
    for (const after of [0, 1, 7, 199, 398, 399, 400]) {
      const page = await b.readEvents({ after, limit: 25 });
      assert.deepEqual(page, all.slice(after, after + 25), `after ${after}`);
    }
  });
});

Deno.test("staged commits of two handles enter the feed in the order they were made", async () => {
  await withTwoHandles(async (a, b, _kvA, kvB) => {
    const ref = await template(a);
    const order = ["a-0", "b-0", "b-1", "a-1", "b-2", "a-2"];
    for (const id of order) {
      const store = id.startsWith("a") ? a : b;
      const [result] = await store.insertIntents([{ intent: intent(id, ref), ref }]);
      assert.equal(result.outcome, "created");
      // A record does not know its feed position: the move that puts it into the feed does.
      assert.equal(result.outcome === "created" && result.intent.position, undefined);
    }
    await b.moveAll();
    const events = await b.readEvents({ after: 0, limit: 10 });
    assert.deepEqual(events.map((e) => e.intent.id), order);
    assert.deepEqual(events.map((e) => e.position), [1, 2, 3, 4, 5, 6]);
    assert.deepEqual(await a.readEvents({ after: 0, limit: 10 }), events);
    assert.equal((await auditIntents(kvB)).length, 6);
  });
});
