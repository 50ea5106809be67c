/**
 * The writer's observer (what traces the commit, docs/interface.md §13),
 * against a real Deno KV (`:memory:`): every insert's wait is handed to the
 * one commit that carries it and answered once with its own result, on both
 * writers (one commit per insert, and grouped), and a failed commit's waits
 * are answered with its error.
 */

import assert from "node:assert/strict";
import {
  type CommitObserver,
  type CommitOutcome,
  createWriter,
} from "../../src/storage/group_commit.ts";
import { KvStore } from "../../src/storage/kv_store.ts";
import type { DocumentRef } from "../../src/domain/intent.ts";
import type { InsertResult, PendingIntent } from "../../src/domain/store.ts";

interface Seen {
  /** Wait number → the commit (its index) that carried it. */
  carriedBy: Map<number, number>;
  /** Wait number → what it was answered (an outcome, or "error"). */
  answers: Map<number, string[]>;
  /** Each commit's waits and how it ended. */
  commits: { waits: number[]; ended?: CommitOutcome }[];
}

function recording(): { observer: CommitObserver<number>; seen: Seen } {
  const seen: Seen = { carriedBy: new Map(), answers: new Map(), commits: [] };
  let next = 0;
  const observer: CommitObserver<number> = {
    waiting: () => next++,
    committing(waits) {
      const commit: Seen["commits"][number] = { waits: [...waits] };
      for (const wait of waits) {
        assert.ok(!seen.carriedBy.has(wait), `wait ${wait} carried by two commits`);
        seen.carriedBy.set(wait, seen.commits.length);
      }
      seen.commits.push(commit);
      return (outcome) => {
        assert.equal(commit.ended, undefined, "a commit ends once");
        commit.ended = outcome;
      };
    },
    answered(wait, outcome) {
      const list = seen.answers.get(wait) ?? [];
      list.push("error" in outcome ? "error" : outcome.outcome);
      seen.answers.set(wait, list);
    },
  };
  return { observer, seen };
}

async function withStore(fn: (store: KvStore, ref: DocumentRef) => Promise<void>): Promise<void> {
  const kv = await Deno.openKv(":memory:");
  try {
    const store = new KvStore(kv);
    await store.putDocument("template", "tpl", {
      contentType: "application/json",
      bytes: new TextEncoder().encode('{"name":"tpl"}'),
    });
    const ref = await store.findDocument("template", "tpl");
    assert.ok(ref);
    await fn(store, ref);
  } finally {
    kv.close();
  }
}

function insertOf(id: string, ref: DocumentRef, bodyBytes = 200): PendingIntent {
  const body = new Uint8Array(bodyBytes);
  body.set(new TextEncoder().encode(id));
  return {
    intent: {
      id,
      variant: "A",
      refId: ref.id,
      authorship: { kind: "Ed25519", signers: ["8Fk1nYtQx2yqSgdzv1Q5Xc3iYsT3B1v9oTQ7cq8mJ1Lb"] },
      body,
      state: "accepted",
    },
    ref,
  };
}

for (const batchMax of [1, 8]) {
  Deno.test(`each wait is carried by one commit and answered once with its result (batchMax ${batchMax})`, async () => {
    await withStore(async (store, ref) => {
      const { observer, seen } = recording();
      const writer = createWriter(store, { batchMax, observer });
      // 30 concurrent inserts, one id twice: the second is "exists".
      const ids = [...Array.from({ length: 29 }, (_, i) => `o-${i}`), "o-3"];
      const results: InsertResult[] = await Promise.all(
        ids.map((id) => writer.insert(insertOf(id, ref))),
      );
      assert.equal(seen.answers.size, 30);
      for (let wait = 0; wait < 30; wait++) {
        assert.deepEqual(seen.answers.get(wait), [results[wait].outcome], `wait ${wait}`);
      }
      assert.deepEqual(results.filter((r) => r.outcome === "exists").length, 1);
      // Every created intent's wait was carried by a commit that ended with its results.
      for (let wait = 0; wait < 30; wait++) {
        if (results[wait].outcome !== "created") continue;
        const commit = seen.commits[seen.carriedBy.get(wait)!];
        assert.ok(Array.isArray(commit.ended), `wait ${wait}'s commit ended`);
        const index = commit.waits.indexOf(wait);
        assert.equal((commit.ended as InsertResult[])[index].outcome, "created");
      }
      assert.ok(seen.commits.every((c) => c.waits.length <= batchMax));
      if (batchMax > 1) assert.ok(seen.commits.some((c) => c.waits.length > 1));
    });
  });
}

Deno.test("a failed commit's waits are answered with its error", async () => {
  await withStore(async (store, ref) => {
    for (const batchMax of [1, 8]) {
      const { observer, seen } = recording();
      const writer = createWriter(store, { batchMax, observer });
      // A value past Deno KV's 64 KiB limit makes the real commit throw.
      const settled = await Promise.allSettled([
        writer.insert(insertOf(`big-${batchMax}`, ref, 70_000)),
      ]);
      assert.equal(settled[0].status, "rejected");
      assert.deepEqual(seen.answers.get(0), ["error"]);
      assert.equal(seen.commits.length, 1);
      // The whole batch's error, or (a store that commits a batch in several commits) its own.
      const ended = seen.commits[0].ended;
      assert.ok(
        ended && ("error" in ended || (Array.isArray(ended) && ended[0].outcome === "failed")),
      );
    }
  });
});
