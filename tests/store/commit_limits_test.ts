/**
 * Every commit path of the store against denokv's per-commit limits (docs/interface.md
 * §8: 10 checks, 1,000 mutations, 800 KiB, values of 64 KiB, keys of 2 KiB),
 * which a KV Connect server enforces in its backend and Deno's client in
 * part on any store: group commits of maximum-size intents with ids of 128
 * characters, of thousands of small ones, and of intents under more
 * documents than one commit may check; approvals up to acceptance and an
 * expiry of maximum-size governed intents; pending intents of fifteen signers
 * with their pending counts, and the commits that end them; documents, the
 * configuration and due work. Each succeeds on a KV file and over KV Connect, and leaves a
 * store that passes `auditIntents`. The limit is real: a commit of 11 checks
 * is refused over KV Connect. The upgrade paths are in
 * `commit_limits_upgrade_test.ts`.
 */

import assert from "node:assert/strict";
import { expireIntent } from "../../src/domain/approve.ts";
import { MAX_STORED_BODY_BYTES, type StoredIntent } from "../../src/domain/intent.ts";
import type { IntentChange, PendingIntent } from "../../src/domain/store.ts";
import { planStagedCommit } from "../../src/storage/staged_plan.ts";
import type { KvStore } from "../../src/storage/kv_store.ts";
import { keys } from "../../src/storage/keys.ts";
import { auditIntents } from "../support/audit.ts";
import {
  addDocument,
  bigIntent,
  blockCommits,
  FOUR_BYTE_CHAR,
  longId,
  SIGNER_KEYS,
  withKvStore,
} from "../support/big_intents.ts";
import { storeTest } from "../support/stores.ts";

const T0 = Date.UTC(2026, 10, 1, 12, 0, 0);
/** The largest body of a governed intent: `src/domain/submit.ts` keeps 8 KiB for its approvals. */
const MAX_GOVERNED_BODY_BYTES = MAX_STORED_BODY_BYTES - 8192;

function created(results: readonly { outcome: string }[]): void {
  const outcomes = results.map((r) => r.outcome);
  assert.deepEqual(outcomes, Array(results.length).fill("created"));
}

/** Every intent stored, after what is staged was moved into the feed (each move a commit too). */
async function audit(kvStore: KvStore, kv: Deno.Kv) {
  await kvStore.moveAll();
  return await auditIntents(kv);
}

/** How many commits stored these intents: the distinct versionstamps of their `["intents", id]`. */
async function intentCommits(kv: Deno.Kv, ids: readonly string[]): Promise<number> {
  const stamps = new Set<string>();
  for (const id of ids) stamps.add((await kv.get(keys.intent(id))).versionstamp!);
  return stamps.size;
}

storeTest(
  "a commit of 11 checks: refused over KV Connect (denokv's limit), taken by a KV file",
  async (store) => {
    const kv = await store.open();
    try {
      const commit = (checks: number) => {
        const op = kv.atomic();
        for (let i = 0; i < checks; i++) op.check({ key: ["probe", i], versionstamp: null });
        return op.set(["probe"], new Uint8Array(1)).commit();
      };
      assert.ok((await commit(10)).ok);
      if (store.kind === "kv_connect") {
        await assert.rejects(commit(11), /Too many checks included in atomic write/);
      } else {
        // Deno allows 100 checks on a local file: only the KV Connect backend shows the limit.
        assert.ok((await commit(11)).ok);
      }
    } finally {
      kv.close();
    }
  },
);

storeTest(
  "a group commit of maximum-size intents with ids of 128 four-byte characters",
  async (store) => {
    await withKvStore(store, { ms: T0 }, async (kvStore, kv) => {
      const ref = await addDocument(kvStore, "template", "t");
      // Accepted ones with the largest body; every third pending, with the largest governed body.
      const batch: PendingIntent[] = Array.from({ length: 40 }, (_, i) => ({
        intent: bigIntent(
          longId(i),
          i % 3 === 2
            ? { bodyBytes: MAX_GOVERNED_BODY_BYTES, pending: true }
            : { bodyBytes: MAX_STORED_BODY_BYTES },
        ),
        ref,
      }));
      created(await kvStore.insertIntents(batch));
      const stored = await audit(kvStore, kv);
      // About 2.4 MB: each commit stages one block of at most 64 KiB, so many commits.
      const commits = await intentCommits(kv, batch.map((p) => p.intent.id));
      assert.ok(commits >= 2_400_000 / 65_536, `${commits} commits`);
      assert.deepEqual(
        new Set(stored.map((i) => i.id)),
        new Set(batch.map((p) => p.intent.id)),
      );
      const bodies = new Map(batch.map((p) => [p.intent.id, p.intent.body]));
      stored.forEach((intent) => assert.deepEqual(intent.body, bodies.get(intent.id)));
      const due = await kvStore.listDueWork({ kind: "expire", limit: 100 });
      assert.equal(due.length, batch.filter((p) => p.intent.state === "pending").length);
    });
  },
);

/**
 * The largest body size at which `make` gives one intent more a commit than
 * at the largest body: the commit it plans is full to within a few bytes of
 * a limit, so any size the plan leaves out shows.
 */
function tightBodyBytes(
  make: (bodyBytes: number) => PendingIntent[],
  plan: (batch: PendingIntent[]) => number,
): number {
  const count = (bytes: number) => plan(make(bytes));
  const wanted = count(MAX_STORED_BODY_BYTES) + 1;
  let [low, high] = [1_000, MAX_STORED_BODY_BYTES];
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2);
    if (count(mid) >= wanted) low = mid;
    else high = mid;
  }
  assert.equal(count(low), wanted);
  assert.equal(count(low + 1), wanted - 1);
  return low;
}

// A plan full to the byte, with ids whose every character is one, three or four UTF-8 bytes:
// a request's commit is bounded by its staged block (one KV value of events).
for (const [name, char] of [["one", "x"], ["three", "\u754C"], ["four", FOUR_BYTE_CHAR]]) {
  storeTest(
    `a group commit planned full to the byte, ids of 128 ${name}-byte characters`,
    async (store) => {
      await withKvStore(store, { ms: T0 }, async (kvStore, kv) => {
        const ref = await addDocument(kvStore, "template", "t");
        const make = (bodyBytes: number) =>
          Array.from(
            { length: 30 },
            (_, i) => ({ intent: bigIntent(longId(i, char), { bodyBytes }), ref }),
          );
        const batch = make(tightBodyBytes(make, (b: PendingIntent[]) => planStagedCommit(b)));
        created(await kvStore.insertIntents(batch));
        assert.ok(await intentCommits(kv, batch.map((p) => p.intent.id)) >= 2);
        assert.equal((await audit(kvStore, kv)).length, batch.length);
      });
    },
  );
}

storeTest(
  "group commits of thousands of small intents: by mutations and by key bytes",
  async (store) => {
    await withKvStore(store, { ms: T0 }, async (kvStore, kv) => {
      const ref = await addDocument(kvStore, "template", "t");
      // 2,500 small accepted intents: about one mutation each, so at least three commits.
      const small = Array.from({ length: 2_500 }, () => ({
        intent: bigIntent(crypto.randomUUID(), { bodyBytes: 0 }),
        ref,
      }));
      created(await kvStore.insertIntents(small));
      await kvStore.moveAll();
      const afterSmall = await blockCommits(kv);
      // Nine ids a commit, and the moves of 64 staged commits at a time.
      assert.ok(afterSmall >= 3, `${afterSmall} commits`);
      assert.ok(await intentCommits(kv, small.map((p) => p.intent.id)) >= 2_500 / 9);
      // 700 small pending intents with the longest ids: a pointer and a due expiry of
      // about 500 bytes of key each, so 80 KiB of keys fill a commit long before 800 KiB.
      const longKeys = Array.from({ length: 700 }, (_, i) => ({
        intent: bigIntent(longId(i), { bodyBytes: 0, pending: true }),
        ref,
      }));
      created(await kvStore.insertIntents(longKeys));
      const stored = await audit(kvStore, kv);
      // Eight ids a commit beside the document's check and its counts'.
      const commits = await intentCommits(kv, longKeys.map((p) => p.intent.id));
      assert.ok(commits >= 700 / 8, `${commits} commits`);
      assert.equal(stored.length, small.length + longKeys.length);
    });
  },
);

storeTest(
  "a group commit of intents under 30 documents, some of their ids taken",
  async (store) => {
    await withKvStore(store, { ms: T0 }, async (kvStore, kv) => {
      // Each distinct document costs a check, and the head one: nine documents a commit.
      const refs = [];
      for (let d = 0; d < 30; d++) {
        refs.push(await addDocument(kvStore, d % 2 === 0 ? "template" : "policy", `doc-${d}`));
      }
      const batch: PendingIntent[] = refs.map((ref, d) => ({
        intent: bigIntent(`intent-${d}-${crypto.randomUUID()}`, {
          bodyBytes: 2_000,
          refId: ref.id,
          variant: ref.kind === "template" ? "A" : "B",
          pending: d % 3 === 0,
        }),
        ref,
      }));
      // Twelve of the ids stored before: settled on reading, more than one read of ten keys.
      created(await kvStore.insertIntents(batch.filter((_, d) => d % 5 < 2)));
      await kvStore.moveAll();
      const results = await kvStore.insertIntents(batch);
      assert.deepEqual(
        results.map((r) => r.outcome),
        batch.map((_, d) => d % 5 < 2 ? "exists" : "created"),
      );
      const fresh = batch.filter((_, d) => d % 5 >= 2).map((p) => p.intent.id);
      // A document's check and an id's a staged intent: at most five a commit.
      assert.ok(await intentCommits(kv, fresh) >= Math.ceil(18 / 5));
      const stored = await audit(kvStore, kv);
      assert.deepEqual(new Set(stored.map((i) => i.id)), new Set(batch.map((p) => p.intent.id)));
    });
  },
);

/** The change an approval by `key` makes, as `approveIntent` decides it (signatures aside). */
function approvalBy(key: string, at: string) {
  return (intent: StoredIntent): IntentChange => {
    const approval = intent.approval!;
    const approvals = [...approval.approvals, { key, kind: "Ed25519" as const, at }];
    const accepted = approvals.length >= approval.threshold;
    return {
      intent: {
        ...intent,
        state: accepted ? "accepted" : "pending",
        approval: { ...approval, approvals },
      },
      type: accepted ? "intent.accepted" : "intent.approval_added",
    };
  };
}

storeTest(
  "approvals up to acceptance, and an expiry, of maximum-size governed intents",
  async (store) => {
    const clock = { ms: T0 };
    await withKvStore(store, clock, async (kvStore, kv) => {
      const ref = await addDocument(kvStore, "template", "t");
      const ids = [0, 1, 2].map((i) => longId(i));
      const batch = ids.map((id) => ({
        intent: bigIntent(id, { bodyBytes: MAX_GOVERNED_BODY_BYTES, pending: true, windowS: 60 }),
        ref,
      }));
      created(await kvStore.insertIntents(batch));
      // The first: fifteen approvals, each its own commit, the last accepting it.
      for (const key of SIGNER_KEYS.slice(1)) {
        clock.ms += 1_000;
        const at = new Date(clock.ms).toISOString();
        const changed = await kvStore.changeIntent(ids[0], approvalBy(key, at));
        assert.equal(changed?.approval?.approvals.length, SIGNER_KEYS.indexOf(key) + 1);
      }
      assert.equal((await kvStore.getIntent(ids[0]))?.state, "accepted");
      // The second expires past its deadline; the third stays pending.
      clock.ms = T0 + 60_000;
      assert.equal(
        await expireIntent({ store: kvStore, now: () => new Date(clock.ms) }, ids[1]),
        "expired",
      );
      assert.equal((await kvStore.getIntent(ids[1]))?.state, "expired");
      const due = await kvStore.listDueWork({ kind: "expire", limit: 10 });
      assert.deepEqual(due.map((d) => d.id), [ids[2]]);
      await kvStore.moveAll();
      const events = await kvStore.readEvents({ after: 0, limit: 100 });
      assert.deepEqual(
        events.map((e) => e.type),
        [
          ...Array(3).fill("intent.pending"),
          ...Array(14).fill("intent.approval_added"),
          "intent.accepted",
          "intent.expired",
        ],
      );
      assert.deepEqual(
        new Set((await audit(kvStore, kv)).map((i) => i.id)),
        new Set(ids),
      );
    });
  },
);

/** The change a rejection by `key` makes: under a 16-of-16 quorum, the first ends it. */
function rejectionBy(key: string, at: string) {
  return (intent: StoredIntent): IntentChange => {
    const approval = intent.approval!;
    const rejections = [...(approval.rejections ?? []), { key, kind: "Ed25519" as const, at }];
    return {
      intent: { ...intent, state: "rejected", approval: { ...approval, rejections } },
      type: "intent.rejected",
    };
  };
}

storeTest(
  "pending intents signed by fifteen keys each, their counts, and the commits that end them",
  async (store) => {
    const clock = { ms: T0 };
    await withKvStore(store, clock, async (kvStore, kv) => {
      const ref = await addDocument(kvStore, "template", "t");
      const pending = (i: number, maxPending = 1000): PendingIntent => ({
        intent: bigIntent(longId(100 + i), {
          bodyBytes: 2_000,
          pending: true,
          windowS: 60,
          submittedBy: 15,
        }),
        ref,
        maxPending,
      });
      // Fifteen count keys an intent: the planner splits the batch into several commits.
      const batch = Array.from({ length: 60 }, (_, i) => pending(i));
      assert.ok(planStagedCommit(batch) < batch.length);
      created(await kvStore.insertIntents(batch));
      assert.ok(await intentCommits(kv, batch.map((p) => p.intent.id)) >= 2);
      await audit(kvStore, kv);
      // At the limit, one more is refused, and an id already taken still says so first.
      const over = await kvStore.insertIntents([pending(60, 60), { ...pending(0, 60) }]);
      assert.deepEqual(over.map((r) => r.outcome), ["too_many_pending", "exists"]);
      // Each ending counts all fifteen keys down: an acceptance, a rejection, an expiry.
      const at = new Date(clock.ms).toISOString();
      await kvStore.changeIntent(longId(100), approvalBy(SIGNER_KEYS[15], at));
      assert.equal((await kvStore.getIntent(longId(100)))?.state, "accepted");
      await kvStore.changeIntent(longId(101), rejectionBy(SIGNER_KEYS[15], at));
      assert.equal((await kvStore.getIntent(longId(101)))?.state, "rejected");
      clock.ms = T0 + 60_000;
      const expire = { store: kvStore, now: () => new Date(clock.ms) };
      assert.equal(await expireIntent(expire, longId(102)), "expired");
      await audit(kvStore, kv);
      assert.equal(await pendingCount(kv, SIGNER_KEYS[3]), 57);
      // Room again for the one refused.
      clock.ms = T0;
      created(await kvStore.insertIntents([pending(60, 60)]));
      await audit(kvStore, kv);
    });
  },
);

/** A key's pending count under template "t", as the store keeps it. */
async function pendingCount(kv: Deno.Kv, key: string): Promise<number> {
  const counts = await kv.get<Uint8Array>(["pending_counts", "template", "t"]);
  return JSON.parse(new TextDecoder().decode(counts.value!))[key] ?? 0;
}

storeTest("documents, the configuration and due work, as large as they get", async (store) => {
  await withKvStore(store, { ms: T0 }, async (kvStore, kv) => {
    // A document as large as a request body may be, under a content address.
    const bytes = new Uint8Array(MAX_STORED_BODY_BYTES).fill(0x7a);
    const id = "8Fk1nYtQx2yqSgdzv1Q5Xc3iYsT3B1v9oTQ7cq8mJ1Lb";
    const doc = { contentType: "application/octet-stream; profile=limits", bytes };
    assert.equal(await kvStore.putDocument("template", id, doc), "created");
    assert.equal(await kvStore.putDocument("template", id, doc), "exists");
    assert.deepEqual(await kvStore.getDocument("template", id), doc);

    const config = {
      evidence_extractor_url: `https://x.example/${"p".repeat(1_900)}`,
      updated_at: "",
    };
    const first = await kvStore.setConfig({ ...config, updated_at: "2026-01-01T00:00:00.000Z" });
    const second = await kvStore.setConfig({ ...config, updated_at: "2026-01-02T00:00:00.000Z" }, [
      first,
    ]);
    assert.ok(second !== null && second !== first);
    assert.equal(await kvStore.setConfig(config, [first]), null);
    assert.equal((await kvStore.getConfig()).value?.updated_at, "2026-01-02T00:00:00.000Z");

    // Due work under the longest ids, each put and then dropped by one commit.
    const work = Array.from(
      { length: 12 },
      (_, i) => ({ kind: "limits", id: longId(i), at: T0 + i }),
    );
    for (const w of work) await kvStore.putDueWork(w);
    const listed = await kvStore.listDueWork({ kind: "limits", limit: 100 });
    assert.deepEqual(listed.map((e) => e.id), work.map((w) => w.id));
    for (const entry of listed) assert.equal(await kvStore.dropDueWork(entry), true);
    assert.equal(await kvStore.dropDueWork(listed[0]), false);
    assert.deepEqual(await kvStore.listDueWork({ kind: "limits", limit: 100 }), []);
    await audit(kvStore, kv);
  });
});
