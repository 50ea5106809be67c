/**
 * The integrator's entry of an event (its record's value built once, hashed
 * natively) is byte for byte the entry a reader makes from the event the feed
 * serves: `entryBytes(type, record)` of the pull form (docs/interface.md §14).
 */

import assert from "node:assert/strict";
import { canonicalBytesOfParsed, canonicalBytesWithin } from "../../protocol/jcs.ts";
import {
  entryBytes,
  entryOfRecordSha256,
  writeEntryOfRecordSha256,
} from "../../protocol/log/entry.ts";
import type { IntentEvent, StoredIntent } from "../../src/domain/intent.ts";
import { recordSha256Of, renderEvent } from "../../src/domain/record.ts";
import { eventEntry } from "../../src/log/integrate.ts";

const utf8 = new TextEncoder();

/** The entry a reader makes from the event as the feed serves it. */
function servedEntry(event: IntentEvent): Uint8Array {
  const served = JSON.parse(renderEvent(event));
  return entryBytes(served.type, served.record);
}

const base: StoredIntent = {
  id: "0f8fad5b-d9cb-469f-a165-70867728950e",
  variant: "B",
  refId: "policy-1",
  authorship: { kind: "Unsigned", signers: [] },
  body: utf8.encode(
    `{"intent":{"id":"0f8fad5b-d9cb-469f-a165-70867728950e","policy_id":"policy-1"}}`,
  ),
  receivedAt: "2026-11-28T10:00:00.000Z",
  state: "accepted",
};

const records: [string, StoredIntent, IntentEvent["type"]][] = [
  ["a Variant B record without attrs", base, "intent.accepted"],
  ["a Variant A record with attrs, members out of order, numbers and escapes", {
    ...base,
    variant: "A",
    refId: "T-1",
    body: utf8.encode(
      `{"payload":{"z":[1,2.5,1e+21,{"b":null,"a":true}],"attrs":{"€":"x\\n\\"y\\"","10":1,"9":2},` +
        `"template_id":"T-1"},"authorship":"Unsigned"}`,
    ),
  }, "intent.accepted"],
  ["a pending record with approvals and rejections", {
    ...base,
    authorship: { kind: "Ed25519", signers: ["Dkgu5gR8UZSgxoW7GC6Yvtdk65ydcF5G1qD9ZGr6xjP"] },
    state: "rejected",
    approval: {
      threshold: 3,
      signers: { "Dkgu5gR8UZSgxoW7GC6Yvtdk65ydcF5G1qD9ZGr6xjP": 2, "other": 1, "third": 1 },
      approvals: [{
        key: "Dkgu5gR8UZSgxoW7GC6Yvtdk65ydcF5G1qD9ZGr6xjP",
        kind: "Ed25519",
        at: "2026-11-28T10:00:00.000Z",
        sig: "kept, never shown",
      }],
      rejections: [{ key: "other", kind: "Passkey", at: "2026-11-28T10:00:01.000Z" }],
      expiresAt: "2026-11-28T11:00:00.000Z",
    },
  }, "intent.rejected"],
  ["a record written before rejections existed", {
    ...base,
    state: "pending",
    approval: {
      threshold: 2,
      signers: { a: 1, b: 1 },
      approvals: [{ key: "a", kind: "Ed25519", at: "2026-11-28T10:00:00.000Z" }],
      expiresAt: "2026-11-28T11:00:00.000Z",
    },
  }, "intent.pending"],
  ["a record under rules (the kinds and rules that counted)", {
    ...base,
    state: "pending",
    approval: {
      threshold: 2,
      signers: { a: 1, b: 1 },
      approvals: [{ key: "a", kind: "Passkey", at: "2026-11-28T10:00:00.000Z" }],
      expiresAt: "2026-11-28T11:00:00.000Z",
      kinds: ["Passkey"],
      rules: [0, 2],
    },
  }, "intent.pending"],
];

for (const [name, intent, type] of records) {
  Deno.test(`eventEntry: ${name} commits to the record the feed serves`, () => {
    const event: IntentEvent = { position: 7, type, intent };
    assert.deepEqual(eventEntry(event), servedEntry(event));
  });
}

for (const [name, intent, type] of records) {
  Deno.test(`eventEntry: ${name}, its R computed as stored, commits to the record served`, () => {
    // As a verified submission has it: the signed object's JCS written once, reused.
    const value = JSON.parse(new TextDecoder().decode(intent.body));
    const signed = intent.variant === "A" ? value.payload : value.intent;
    const within = canonicalBytesWithin(value, signed);
    assert.deepEqual(within.inner, canonicalBytesOfParsed(signed));
    const canonical = { bytes: within.bytes, attrs: signed.attrs };
    const recordSha256 = recordSha256Of(intent, canonical);
    const event: IntentEvent = { position: 7, type, intent, recordSha256 };
    assert.deepEqual(eventEntry(event), servedEntry(event));
  });
}

Deno.test("eventEntry: a malformed stored R is not trusted; the record's is computed", () => {
  for (const recordSha256 of ["", "not-base64url!", "A".repeat(42) + "B", "A".repeat(44)]) {
    const event: IntentEvent = { position: 7, type: "intent.accepted", intent: base, recordSha256 };
    assert.deepEqual(eventEntry(event), servedEntry(event), recordSha256);
  }
});

Deno.test("canonicalBytesOfParsed leaves out undefined members, as JSON.stringify does", () => {
  const value = { b: undefined, a: [1, { d: undefined, c: 2 }], e: undefined };
  assert.equal(new TextDecoder().decode(canonicalBytesOfParsed(value)), `{"a":[1,{"c":2}]}`);
});

Deno.test("an entry written into a buffer is the entry's bytes, whatever the type's characters", () => {
  const r = "RBNvo1WzZ4oRRq0W9-hknpT7T8If536DEMBg9hyq_4o";
  const buffer = new Uint8Array(300).fill(0xee);
  for (const type of ["intent.accepted", 'a"b', "back\\slash", "é", "😀", "tab\t", "~ !#[]"]) {
    const entry = entryOfRecordSha256(type, r);
    for (const at of [0, 17]) {
      assert.equal(writeEntryOfRecordSha256(buffer, at, 200, type, r), entry.length, type);
      assert.deepEqual(buffer.subarray(at, at + entry.length), entry, type);
    }
    // Too little room, or past the buffer's end: nothing is said to be written.
    assert.equal(writeEntryOfRecordSha256(buffer, 0, entry.length - 1, type, r), 0, type);
    assert.equal(writeEntryOfRecordSha256(buffer, 300 - entry.length + 1, 200, type, r), 0, type);
  }
  assert.throws(() => writeEntryOfRecordSha256(buffer, 0, 200, "", r), TypeError);
  assert.throws(() => writeEntryOfRecordSha256(buffer, 0, 200, "x", "short"), TypeError);
});
