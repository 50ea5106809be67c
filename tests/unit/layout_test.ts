/**
 * An event's size as a commit plans it, against what a block holds.
 */

import assert from "node:assert/strict";
import type { NewIntent } from "../../src/domain/intent.ts";
import { type StoredEvent } from "../../src/storage/codec.ts";
import { encodeRecord } from "../../tools/store_upgrade/earlier_layouts.ts";
import { eventBytes } from "../../src/storage/layout.ts";

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

// Ids of 128 four-byte characters make keys as large as they get.
const longId = (i: number) => `${i}`.padStart(4, "0") + "\u{1F511}".repeat(124);

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
    first: true,
    recordSha256: "A".repeat(43),
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
  const stored = encodeRecord(event).byteLength;
  assert.ok(eventBytes(newIntent) >= stored, `${eventBytes(newIntent)} < ${stored}`);
});
