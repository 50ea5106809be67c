/**
 * Data that an earlier version kept as JavaScript values is rewritten as
 * bytes by `deno task store-upgrade` (`upgradeStore`): whole, once, within
 * KV's limits, resumed after an interruption, and while another process
 * upgrades or this version appends.
 */

import assert from "node:assert/strict";
import type { StoredIntent } from "../../src/domain/intent.ts";
import { KvStore } from "../../src/storage/kv_store.ts";
import { type StoredEvent } from "../../src/storage/codec.ts";
import { encodeBlock } from "../../tools/store_upgrade/earlier_layouts.ts";
import { upgradeStore } from "../../tools/store_upgrade/upgrade.ts";
import { auditIntents } from "../support/audit.ts";
import { withKvFile } from "../support/store_kit.ts";

const T0 = Date.UTC(2026, 10, 1, 12, 0, 0);
const utf8 = new TextEncoder();

function record(id: string, position: number, extra: Partial<StoredIntent> = {}): StoredIntent {
  return {
    id,
    variant: "B",
    refId: "p",
    authorship: { kind: "Ed25519", signers: ["a"] },
    body: utf8.encode(`{"intent":{"id":"${id}","policy_id":"p"},"pad":"${"x".repeat(2_000)}"}`),
    receivedAt: new Date(T0).toISOString(),
    position,
    state: "accepted",
    ...extra,
  };
}

const approval = (expiresAt: number) => ({
  threshold: 2,
  signers: { a: 1, b: 1 },
  approvals: [{ key: "a", kind: "Ed25519" as const, at: new Date(T0).toISOString() }],
  expiresAt: new Date(expiresAt).toISOString(),
});

/**
 * Writes a store as the previous version did (every value a JavaScript
 * value): `count` accepted intents in blocks of 20, then an intent left
 * pending and one pending then accepted, a document and the configuration.
 *
 * @returns the ids, in feed order.
 */
async function writeEarlierLayout(kv: Deno.Kv, count: number): Promise<string[]> {
  const events: StoredEvent[] = [];
  for (let i = 0; i < count; i++) {
    events.push({ type: "intent.accepted", intent: record(`a-${i}`, i + 1) });
  }
  const p = count + 1;
  events.push(
    {
      type: "intent.pending",
      intent: record("pend", p, { state: "pending", approval: approval(T0 + 60_000) }),
    },
    {
      type: "intent.pending",
      intent: record("done", p + 1, { state: "pending", approval: approval(T0 + 90_000) }),
    },
    { type: "intent.accepted", intent: record("done", p + 1, { approval: approval(T0 + 90_000) }) },
  );
  for (let start = 0; start < events.length; start += 20) {
    const block = events.slice(start, start + 20);
    const last = start + block.length;
    const op = kv.atomic().set(["events", last], block);
    block.forEach((e, i) => op.set(["intents", e.intent.id], [last, i]));
    await op.commit();
  }
  await kv.set(["feed_head"], events.length);
  await kv.set(["policies", "p"], { contentType: "text/plain", bytes: utf8.encode("rules") });
  await kv.set(["config", "runtime"], {
    evidence_extractor_url: "",
    updated_at: "2026-01-01T00:00:00.000Z",
  });
  return [...events.slice(0, count).map((e) => e.intent.id), "pend", "done"];
}

const withFile = (fn: (path: string) => Promise<void>) => withKvFile("intents-convert-", fn);

Deno.test("a store of the earlier layout is rewritten as bytes, whole", async () => {
  await withFile(async (path) => {
    const kv = await Deno.openKv(path);
    try {
      const ids = await writeEarlierLayout(kv, 300);
      const store = new KvStore(kv, { now: () => new Date(T0) });
      const progress: number[] = [];
      const { rewritten, taken } = await upgradeStore(kv, (n) => progress.push(n));
      // 303 events in 16 blocks, 302 pointers, the head, one document, the configuration.
      assert.equal(rewritten, 16 + 302 + 3);
      assert.equal(taken, 0);
      assert.ok(progress.length >= 3 && progress.at(-1) === rewritten);
      const stored = await auditIntents(kv);
      assert.deepEqual(stored.map((i) => i.id), ids);
      // The pending intent got its expiry's due work; the accepted one none.
      const due = await store.listDueWork({ kind: "expire", limit: 10 });
      assert.deepEqual(due.map((d) => [d.id, d.at]), [["pend", T0 + 60_000]]);
      assert.equal((await store.getIntent("done"))?.state, "accepted");
      assert.deepEqual(await store.getDocument("policy", "p"), {
        contentType: "text/plain",
        bytes: utf8.encode("rules"),
      });
      assert.equal((await store.getConfig()).value?.updated_at, "2026-01-01T00:00:00.000Z");
      // The next run reads one key and rewrites nothing.
      assert.deepEqual(await upgradeStore(kv), { rewritten: 0, taken: 0, from: "current" });
    } finally {
      kv.close();
    }
  });
});

Deno.test("a conversion stopped halfway is finished by the next run", async () => {
  await withFile(async (path) => {
    const kv = await Deno.openKv(path);
    try {
      const ids = await writeEarlierLayout(kv, 100);
      // As a start stopped after its first commits leaves it: some blocks are bytes already.
      for (const last of [20, 40]) {
        const entry = await kv.get<StoredEvent[]>(["events", last]);
        await kv.set(["events", last], encodeBlock(entry.value!));
      }
      const { rewritten } = await upgradeStore(kv);
      assert.equal(rewritten, 4 + 102 + 3);
      assert.deepEqual((await auditIntents(kv)).map((i) => i.id), ids);
    } finally {
      kv.close();
    }
  });
});

Deno.test("two upgrades of one file at once, this version appending meanwhile, leave it whole", async () => {
  await withFile(async (path) => {
    const [kvA, kvB] = [await Deno.openKv(path), await Deno.openKv(path)];
    try {
      const ids = await writeEarlierLayout(kvA, 2_000);
      const b = new KvStore(kvB);
      const appended = (async () => {
        const results = [];
        for (let i = 0; i < 20; i++) {
          const intent = { ...record(`new-${i}`, 0), state: "accepted" as const };
          // The document may be rewritten meanwhile: an insert then finds it again.
          for (;;) {
            const ref = (await b.findDocument("policy", "p"))!;
            const [result] = await b.insertIntents([{ intent, ref }]);
            if (result.outcome === "reference_changed") continue;
            results.push(result);
            break;
          }
        }
        return results;
      })();
      const [ra, rb] = await Promise.all([upgradeStore(kvA), upgradeStore(kvB)]);
      // The head is the fence's to rewrite when the appending store comes first.
      assert.ok(ra.rewritten + rb.rewritten >= 101 + 2_002 + 2);
      assert.ok((await appended).every((r) => r.outcome === "created"));
      const stored = (await auditIntents(kvA)).map((i) => i.id);
      assert.equal(stored.length, ids.length + 20);
      for (const id of ids) assert.ok(stored.includes(id), id);
    } finally {
      kvA.close();
      kvB.close();
    }
  });
});
