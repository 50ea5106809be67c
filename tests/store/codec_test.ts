/**
 * The layouts of stored values: each round-trips through a real Deno KV as
 * bytes or a KvU64, the values earlier versions wrote still read, and a value
 * of no known layout is refused by name.
 */

import assert from "node:assert/strict";
import type { StoredIntent } from "../../src/domain/intent.ts";
import {
  blockLength,
  decodeBlock,
  decodeEventAt,
  decodePointer,
  LayoutError,
  type StoredEvent,
} from "../../src/storage/codec.ts";
import {
  encodeBlock,
  encodeHead,
  encodePointer,
  isCurrentLayout,
} from "../../tools/store_upgrade/earlier_layouts.ts";
import {
  decodeConfig,
  decodeDocument,
  decodeLease,
  encodeConfig,
  encodeDocument,
  encodeLease,
} from "../../src/storage/values_codec.ts";
import { decodeFeedHead } from "../../src/storage/index_codec.ts";
import { throughKv } from "../support/store_kit.ts";

const headPosition = (value: unknown) => decodeFeedHead(value).position;

const utf8 = new TextEncoder();

function record(id: string, body: string, extra: Partial<StoredIntent> = {}): StoredIntent {
  return {
    id,
    variant: "A",
    refId: "T",
    authorship: { kind: "Ed25519", signers: ["8Fk1nYtQx2yqSgdzv1Q5Xc3iYsT3B1v9oTQ7cq8mJ1Lb"] },
    body: utf8.encode(body),
    receivedAt: "2026-11-25T12:00:00.000Z",
    position: 1,
    state: "accepted",
    ...extra,
  };
}

Deno.test("a block of events reads back whole, from any index, with exact bodies", async () => {
  const events: StoredEvent[] = [
    { type: "intent.accepted", intent: record("a", '{"x":"\\u0000é"}') },
    {
      type: "intent.pending",
      intent: record('\u{1F511} "quoted" \\ id', "{}", {
        position: 2,
        state: "pending",
        approval: {
          threshold: 2,
          signers: { k1: 1, k2: 1 },
          approvals: [{ key: "k1", kind: "Passkey", at: "2026-11-25T12:00:00.000Z" }],
          expiresAt: "2026-12-02T12:00:00.000Z",
        },
      }),
    },
    { type: "intent.accepted", intent: record("c", "") },
  ];
  const stored = await throughKv(encodeBlock(events));
  assert.ok(stored instanceof Uint8Array);
  assert.ok(isCurrentLayout(stored));
  assert.equal(blockLength(stored), 3);
  assert.deepEqual(decodeBlock(stored), events);
  assert.deepEqual(decodeBlock(stored, 1), events.slice(1));
  assert.deepEqual(decodeEventAt(stored, 1), events[1]);
  assert.equal(decodeEventAt(stored, 3), undefined);
});

Deno.test("a block's layout is what keys.ts documents: lengths, JSON and the body's bytes", () => {
  const event: StoredEvent = { type: "intent.accepted", intent: record("a", '{"b":1}') };
  const bytes = encodeBlock([event]);
  const view = new DataView(bytes.buffer);
  assert.equal(bytes[0], 1);
  const metaLength = view.getUint32(1);
  const meta = JSON.parse(new TextDecoder().decode(bytes.subarray(5, 5 + metaLength)));
  assert.equal(meta.type, "intent.accepted");
  assert.equal(meta.intent.id, "a");
  assert.equal(meta.intent.body, undefined);
  const bodyLength = view.getUint32(5 + metaLength);
  assert.equal(bodyLength, 7);
  assert.equal(new TextDecoder().decode(bytes.subarray(9 + metaLength)), '{"b":1}');
});

Deno.test("pointers, the head, documents and the configuration round-trip as bytes or KvU64", async () => {
  const pointer = await throughKv(encodePointer([123_456_789_012, 31]));
  assert.ok(pointer instanceof Uint8Array);
  assert.deepEqual(decodePointer(pointer), [123_456_789_012, 31]);

  const head = await throughKv(encodeHead(9_007_199_254_740_991));
  assert.ok(head instanceof Deno.KvU64);
  assert.equal(headPosition(head), 9_007_199_254_740_991);
  assert.equal(headPosition(null), 0);

  const doc = { contentType: "text/plain; charset=utf-8", bytes: new Uint8Array([0, 255, 10]) };
  const storedDoc = await throughKv(encodeDocument(doc));
  assert.ok(storedDoc instanceof Uint8Array);
  assert.deepEqual(decodeDocument(storedDoc), doc);
  assert.deepEqual(decodeDocument(encodeDocument({ contentType: "", bytes: new Uint8Array() })), {
    contentType: "",
    bytes: new Uint8Array(),
  });

  const config = {
    evidence_extractor_url: "https://x.example/",
    updated_at: "2026-11-25T00:00:00Z",
  };
  const storedConfig = await throughKv(encodeConfig(config));
  assert.ok(storedConfig instanceof Uint8Array);
  assert.deepEqual(decodeConfig(storedConfig), config);
});

Deno.test("values an earlier version wrote as JavaScript values still read", async () => {
  const event: StoredEvent = { type: "intent.accepted", intent: record("a", "{}") };
  assert.deepEqual(decodeBlock(await throughKv([event])), [event]);
  assert.deepEqual(decodeEventAt(await throughKv([event]), 0), event);
  assert.deepEqual(decodePointer(await throughKv([5, 2])), [5, 2]);
  assert.equal(headPosition(await throughKv(42)), 42);
  const doc = { contentType: "application/json", bytes: utf8.encode("{}") };
  assert.deepEqual(decodeDocument(await throughKv(doc)), doc);
  const config = { evidence_extractor_url: "", updated_at: "2026-01-01T00:00:00.000Z" };
  assert.deepEqual(decodeConfig(await throughKv(config)), config);
  assert.equal(isCurrentLayout([event]), false);
  assert.equal(isCurrentLayout(42), false);
});

Deno.test("a value of no known layout is refused, a malformed pointer reads as none", () => {
  assert.throws(() => decodeBlock(new Uint8Array([2])), LayoutError);
  assert.throws(() => decodeBlock(new Uint8Array([1, 0, 0, 0, 9, 123])), LayoutError);
  assert.throws(() => decodeBlock("text"), LayoutError);
  assert.throws(() => headPosition("7"), LayoutError);
  assert.throws(() => decodeDocument(new Uint8Array([9, 0, 0])), LayoutError);
  assert.throws(() => decodeConfig(utf8.encode("{")), LayoutError);
  assert.equal(decodePointer(utf8.encode("[1]")), null);
  assert.equal(decodePointer(utf8.encode("[0,1]")), null);
  assert.equal(decodePointer(new Uint8Array([0xff])), null);
  assert.equal(decodePointer(undefined), null);
});

Deno.test("a lease is UTF-8 JSON {holder, until}; one that cannot be read reads as none", () => {
  const bytes = encodeLease({ holder: "h", until: 5 });
  assert.equal(new TextDecoder().decode(bytes), '{"holder":"h","until":5}');
  assert.deepEqual(decodeLease(bytes), { holder: "h", until: 5 });
  assert.equal(decodeLease(null), null);
  assert.equal(decodeLease(utf8.encode('{"holder":1,"until":5}')), null);
  assert.equal(decodeLease(new Uint8Array([0xff])), null);
});
