/**
 * The block layout and commit planning against a real Deno KV: a planned
 * commit is one KV takes, and KV's limits are real.
 */

import assert from "node:assert/strict";
import type { DocumentRef, NewIntent } from "../../src/domain/intent.ts";
import { addEvents } from "../../src/storage/append.ts";
import { BLOCK_HEADER_BYTES, encodeBlock, type StoredEvent } from "../../src/storage/codec.ts";
import {
  eventBytes,
  KV_COMMIT_LIMITS,
  type Placement,
  planCommit,
} from "../../src/storage/layout.ts";
import { MAX_STORED_BODY_BYTES } from "../../src/domain/intent.ts";

const ref = (id: string): DocumentRef => ({
  kind: "template",
  id,
  version: "00000000000000010000",
  quorum: null,
});

function intent(id: string, bodyBytes: number): NewIntent {
  return {
    id,
    variant: "A",
    refId: "T",
    authorship: { kind: "Ed25519", signers: ["8Fk1nYtQx2yqSgdzv1Q5Xc3iYsT3B1v9oTQ7cq8mJ1Lb"] },
    body: new Uint8Array(bodyBytes).fill(0x31),
    state: "accepted",
  };
}

/** Commits the first `count` placements as `plan` lays them out, in one atomic commit. */
async function commitPlanned(kv: Deno.Kv, placements: Placement[], count: number) {
  const { blockOf } = planCommit(placements.slice(0, count), {
    ...KV_COMMIT_LIMITS,
    // Plan the blocks of exactly these, whatever the limits say.
    checks: Infinity,
    mutations: Infinity,
    mutationBytes: Infinity,
    keyBytes: Infinity,
  });
  const events: StoredEvent[] = placements.slice(0, count).map((p, i) => ({
    type: "intent.accepted",
    intent: { ...p.intent, receivedAt: new Date(0).toISOString(), position: i + 1 },
  }));
  const op = kv.atomic();
  addEvents(op, { position: 0, versionstamp: null }, events, blockOf);
  return await op.commit();
}

// Ids of 128 four-byte characters make keys as large as they get.
const longId = (i: number) => `${i}`.padStart(4, "0") + "\u{1F511}".repeat(124);

Deno.test("a commit planned for maximum-size intents is one KV takes; twice as many are not", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const placements = Array.from({ length: 40 }, (_, i) => ({
      intent: intent(longId(i), MAX_STORED_BODY_BYTES),
      ref: ref("T"),
    }));
    const { count, blockOf } = planCommit(placements);
    assert.ok(count >= 12, `only ${count} maximum-size intents fit a commit`);
    // One intent a block: two would pass the value limit.
    assert.deepEqual(blockOf, Array.from({ length: count }, (_, i) => i));
    assert.ok((await commitPlanned(kv, placements, count)).ok);
    const other = await Deno.openKv(":memory:");
    try {
      await assert.rejects(commitPlanned(other, placements, 2 * count), /too large/);
    } finally {
      other.close();
    }
  } finally {
    kv.close();
  }
});

Deno.test("planCommit counts one check per distinct document and the head's check", () => {
  const distinct = Array.from({ length: 64 }, (_, i) => ({
    intent: intent(`d-${i}`, 100),
    ref: ref(`T-${i}`),
  }));
  // The head's check plus one per document: 1 + 9 = denokv's 10; ids need none.
  assert.equal(planCommit(distinct).count, 9);
  const shared = distinct.map((p) => ({ ...p, ref: ref("T") }));
  assert.equal(planCommit(shared).count, 64);
  assert.equal(planCommit(shared, { ...KV_COMMIT_LIMITS, mutations: 11 }).count, 9);
});

Deno.test("planCommit fills blocks of about 64 KB in order", () => {
  const placements = Array.from({ length: 10 }, (_, i) => ({
    intent: intent(`b-${i}`, 20_000),
    ref: ref("T"),
  }));
  assert.deepEqual(planCommit(placements).blockOf, [0, 0, 0, 1, 1, 1, 2, 2, 2, 3]);
  // A lone intent always fits: alone, anything the service accepts does.
  assert.equal(planCommit(placements.slice(0, 1), { ...KV_COMMIT_LIMITS, checks: 0 }).count, 1);
});

Deno.test("an event's size is estimated from above once every signer has decided", () => {
  // Sixteen keys as long as base58 keys get, half approving and half rejecting, with digests.
  const keys = Array.from({ length: 16 }, (_, i) => `${"ABCDEFGHJKLMNPQR"[i]}${"z".repeat(88)}`);
  const at = new Date(Date.UTC(9999, 11, 31, 23, 59, 59, 999)).toISOString();
  const entry = (key: string) => ({ key, kind: "Passkey" as const, at, sig: "x".repeat(43) });
  const newIntent: NewIntent = {
    ...intent(longId(1), 1000),
    authorship: { kind: "Multisig", signers: keys.slice(0, 8) },
    state: "pending",
    quorum: {
      signers: new Map(keys.map((key) => [key, { keyText: key, weight: 2 ** 53 - 1 }])),
      threshold: 2 ** 53 - 1,
      unsigned: false,
      approvalWindowS: 3600,
    },
    approvals: keys.slice(0, 8).map((key) => ({ key, kind: "Passkey" as const })),
  };
  const { quorum: _quorum, approvals: _approvals, ...rest } = newIntent;
  const event: StoredEvent = {
    type: "intent.rejection_added",
    intent: {
      ...rest,
      receivedAt: at,
      position: Number.MAX_SAFE_INTEGER,
      state: "pending",
      counted: true,
      approval: {
        threshold: 2 ** 53 - 1,
        signers: Object.fromEntries(keys.map((key) => [key, 2 ** 53 - 1])),
        approvals: keys.slice(0, 8).map(entry),
        rejections: keys.slice(8).map(entry),
        expiresAt: at,
      },
    },
  };
  const stored = encodeBlock([event]).byteLength - BLOCK_HEADER_BYTES;
  assert.ok(eventBytes(newIntent) >= stored, `${eventBytes(newIntent)} < ${stored}`);
});
