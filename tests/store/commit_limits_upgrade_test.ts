/**
 * The upgrade paths of the store against denokv's per-commit limits (docs/interface.md
 * §8), on a KV file and over KV Connect: the conversion of a store written in
 * the earlier layout (every value a JavaScript value) with enough data for
 * several commits (`deno task store-upgrade`), and the taking in of the layout
 * before the feed (`intent_batches`), with the longest ids and the largest
 * bodies. Each succeeds and leaves a store that passes `auditIntents`; the
 * other commit paths are in `commit_limits_test.ts`.
 */

import assert from "node:assert/strict";
import { MAX_STORED_BODY_BYTES, type StoredIntent } from "../../src/domain/intent.ts";
import type { StoredEvent } from "../../src/storage/codec.ts";
import { auditIntents } from "../support/audit.ts";
import { upgradeStore } from "../../tools/store_upgrade/upgrade.ts";
import { bodyOf, longId, withKvStore } from "../support/big_intents.ts";
import { storeTest } from "../support/stores.ts";

const T0 = Date.UTC(2026, 10, 1, 12, 0, 0);
const HOUR = 3_600_000;
const utf8 = new TextEncoder();

/** A record of the earlier layout, pending ones with their approval. */
function earlierRecord(id: string, position: number, pending: boolean): StoredIntent {
  const record: StoredIntent = {
    id,
    variant: "B",
    refId: "p",
    authorship: { kind: "Ed25519", signers: ["a"] },
    body: bodyOf(id, 2_000),
    receivedAt: new Date(T0).toISOString(),
    position,
    state: pending ? "pending" : "accepted",
  };
  if (pending) {
    record.approval = {
      threshold: 2,
      signers: { a: 1, b: 1 },
      approvals: [{ key: "a", kind: "Ed25519", at: new Date(T0).toISOString() }],
      expiresAt: new Date(T0 + HOUR + position).toISOString(),
    };
  }
  return record;
}

/**
 * Writes a store as the previous version did (every value a JavaScript
 * value): one intent per id, pending where `pending(i)` says so, in blocks of
 * 20, their pointers, the head, a policy and the configuration.
 */
async function writeEarlierLayout(
  kv: Deno.Kv,
  ids: readonly string[],
  pending: (i: number) => boolean,
): Promise<void> {
  const events: StoredEvent[] = ids.map((id, i) => ({
    type: pending(i) ? "intent.pending" : "intent.accepted",
    intent: earlierRecord(id, i + 1, pending(i)),
  }));
  for (let start = 0; start < events.length; start += 20) {
    const block = events.slice(start, start + 20);
    const last = start + block.length;
    const op = kv.atomic().set(["events", last], block);
    block.forEach((e, i) => op.set(["intents", e.intent.id], [last, i]));
    assert.ok((await op.commit()).ok);
  }
  await kv.set(["feed_head"], events.length);
  await kv.set(["policies", "p"], { contentType: "text/plain", bytes: utf8.encode("rules") });
  await kv.set(["config", "runtime"], {
    evidence_extractor_url: "",
    updated_at: "2026-01-01T00:00:00.000Z",
  });
}

/** Converts a store of `ids` in the earlier layout and checks the result. */
async function convertEarlier(
  kv: Deno.Kv,
  upgrade: (progress: (n: number) => void) => Promise<{ rewritten: number; taken: number }>,
  ids: readonly string[],
): Promise<void> {
  const pending = (i: number) => i % 10 === 3;
  await writeEarlierLayout(kv, ids, pending);
  const progress: number[] = [];
  const { rewritten, taken } = await upgrade((n) => progress.push(n));
  // The blocks, the pointers, the head, the policy and the configuration.
  assert.equal(rewritten, Math.ceil(ids.length / 20) + ids.length + 3);
  assert.equal(taken, 0);
  // 3,000 records of about 2 KB are about 6 MB: several commits.
  assert.ok(progress.length >= 8, `${progress.length} commits`);
  assert.equal(progress.at(-1), rewritten);
  assert.deepEqual((await auditIntents(kv)).map((i) => i.id), ids);
  // Each pending intent got its expiry's due work (the audit checks there is no other).
  const due = [];
  for await (const entry of kv.list({ prefix: ["due", "expire"] })) due.push(entry.key[3]);
  assert.equal(due.length, ids.filter((_, i) => pending(i)).length);
}

storeTest(
  "a store of the earlier layout, 3,000 intents of 2 KB, is converted in commits KV takes",
  async (store) => {
    await withKvStore(store, { ms: T0 }, async (_, kv) => {
      const ids = Array.from({ length: 3_000 }, () => `intent-${crypto.randomUUID()}`);
      await convertEarlier(kv, (progress) => upgradeStore(kv, progress), ids);
      assert.deepEqual(await upgradeStore(kv), { rewritten: 0, taken: 0, from: "current" });
    });
  },
);

// Ids of 128 four-byte characters make keys as large as they get: the pointers and due expiries
// a commit rewrites are counted by their keys too.
for (const state of ["accepted", "pending"] as const) {
  storeTest(
    `a store of the earlier layout with ids of 128 four-byte characters (${state}) is converted`,
    async (store) => {
      await withKvStore(store, { ms: T0 }, async (_, kv) => {
        const ids = Array.from({ length: 3_000 }, (_, i) => longId(i));
        const pending = (i: number) => state === "pending" || i % 10 === 3;
        await writeEarlierLayout(kv, ids, pending);
        await upgradeStore(kv);
        assert.deepEqual((await auditIntents(kv)).map((i) => i.id), ids);
      });
    },
  );
}

/** An intent as the layout before the feed kept it. */
function preFeedIntent(id: string, ms: number, bodyBytes: number) {
  return {
    id,
    variant: "B",
    refId: "p",
    authorship: { kind: "Unsigned", signers: [] },
    receivedAt: new Date(ms).toISOString(),
    body: bodyOf(id, bodyBytes),
  };
}

/**
 * Writes `blocks` blocks of `perBlock` intents in the layout before the feed,
 * keyed by time, counter and writer, with their pointers.
 *
 * @returns the ids, in the order the move appends them.
 */
async function writePreFeed(
  kv: Deno.Kv,
  options: { blocks: number; perBlock: number; bodyBytes: number; id: (n: number) => string },
): Promise<string[]> {
  const ids: string[] = [];
  for (let b = 0; b < options.blocks; b++) {
    const ms = T0 + b * 1_000;
    const writer = b % 2 === 0 ? "00000000000000aa" : "00000000000000bb";
    const key = ["intent_batches", ms, b + 1, writer];
    const block = Array.from(
      { length: options.perBlock },
      (_, i) => preFeedIntent(options.id(b * options.perBlock + i), ms, options.bodyBytes),
    );
    const op = kv.atomic().set(key, block);
    block.forEach((intent, i) => op.set(["intents", intent.id], [ms, b + 1, writer, i]));
    assert.ok((await op.commit()).ok);
    ids.push(...block.map((intent) => intent.id));
  }
  return ids;
}

const PRE_FEED_CASES = [
  // Many blocks of 2 KB intents with the longest ids: at most 8 blocks a commit.
  {
    name: "40 blocks of 20 intents of 2 KB, ids of 128 four-byte characters",
    layout: { blocks: 40, perBlock: 20, bodyBytes: 2_000, id: (n: number) => longId(n) },
  },
  // As many intents a block as the earlier writer grouped (COMMIT_BATCH_MAX up to 99), with
  // UUIDs (99 of the longest ids would not fit a block's value): the mutations add up.
  {
    name: "12 blocks of 99 small intents",
    layout: { blocks: 12, perBlock: 99, bodyBytes: 0, id: () => crypto.randomUUID() },
  },
  // One intent a block, as large as a block's 64 KiB value let it be.
  {
    name: "20 blocks of one intent of 60 KB, ids of 128 four-byte characters",
    layout: { blocks: 20, perBlock: 1, bodyBytes: 60_000, id: (n: number) => longId(n) },
  },
];

for (const { name, layout } of PRE_FEED_CASES) {
  storeTest(
    `the layout before the feed, ${name}, is taken in in commits KV takes`,
    async (store) => {
      await withKvStore(store, { ms: T0 }, async (_, kv) => {
        const ids = await writePreFeed(kv, layout);
        const { rewritten, taken } = await upgradeStore(kv);
        assert.equal(rewritten, 0);
        assert.equal(taken, ids.length);
        // At most nine intents a commit, each checking its id: staged as requests stage.
        const staged = await Array.fromAsync(kv.list({ prefix: ["feed_staged"] }));
        assert.ok(staged.length >= Math.ceil(ids.length / 9));
        const stored = await auditIntents(kv);
        assert.deepEqual(stored.map((i) => i.id), ids);
        stored.forEach((intent) => assert.ok(intent.body.byteLength <= MAX_STORED_BODY_BYTES));
        // Nothing of the earlier layout is left, and the next run takes nothing in.
        assert.deepEqual(await upgradeStore(kv), { rewritten: 0, taken: 0, from: "current" });
      });
    },
  );
}
