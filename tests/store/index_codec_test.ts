/**
 * The values that say where events are (`src/storage/index_codec.ts`): the
 * feed index, the feed head of this version and of earlier ones, and an
 * intent's pointer into its commit's staged block, each read back through KV.
 */

import assert from "node:assert/strict";
import { LayoutError } from "../../src/storage/codec.ts";
import { encodeHead, encodeStagedHead } from "../../tools/store_upgrade/earlier_layouts.ts";
import {
  decodeFeedHead,
  decodeIndex,
  decodeIndexedHead,
  decodeStagedPointer,
  encodeIndex,
  encodeIndexedHead,
  encodeStagedPointer,
  nextVersionstamp,
} from "../../src/storage/index_codec.ts";
import { throughKv } from "../support/store_kit.ts";

Deno.test("a feed index names its staged blocks in order, with their counts", async () => {
  const refs = [
    { versionstamp: "0000000000000001a2f0", count: 9 },
    { versionstamp: "00000000000000ff0000", count: 1 },
    { versionstamp: "ffffffffffffffffffff", count: 65_535 },
  ];
  const stored = await throughKv(encodeIndex(refs));
  assert.deepEqual(decodeIndex(stored), refs);
  assert.equal((stored as Uint8Array).byteLength, 1 + 12 * refs.length);
  // Not an index: a block of earlier versions, other bytes, other values.
  assert.equal(decodeIndex(new Uint8Array([1, 0, 0, 0, 2])), null);
  assert.equal(decodeIndex(new Deno.KvU64(3n)), null);
  assert.throws(() => decodeIndex(new Uint8Array([4, 1, 2, 3])), LayoutError);
  assert.throws(() => encodeIndex([{ versionstamp: "xyz", count: 1 }]), RangeError);
});

Deno.test("the feed head says its position and the last staged block in the feed", async () => {
  for (
    const head of [{ position: 0, through: "" }, {
      position: 12_345,
      through: "0000000000000007b100",
    }]
  ) {
    const stored = await throughKv(encodeIndexedHead(head));
    assert.deepEqual(decodeIndexedHead(stored), head);
    assert.deepEqual(decodeFeedHead(stored), { ...head, form: "staged", indexed: true });
  }
  assert.throws(() => decodeIndexedHead(new Uint8Array([5, 0, 0])), LayoutError);
});

Deno.test("earlier heads read as naming no staged block: everything staged still waits", async () => {
  assert.deepEqual(decodeFeedHead(await throughKv(encodeStagedHead(42))), {
    position: 42,
    form: "staged",
    through: "",
    indexed: false,
  });
  assert.deepEqual(decodeFeedHead(await throughKv(encodeHead(7))), {
    position: 7,
    form: "head",
    through: "",
    indexed: false,
  });
  assert.deepEqual(decodeFeedHead(null), {
    position: 0,
    form: "empty",
    through: "",
    indexed: false,
  });
  assert.throws(() => decodeFeedHead(new Uint8Array([9])), LayoutError);
});

Deno.test("an intent's pointer says its event's index in its commit's staged block", async () => {
  for (const index of [0, 8, 65_535]) {
    assert.equal(decodeStagedPointer(await throughKv(encodeStagedPointer(index))), index);
  }
  // Earlier forms of the entry are not pointers of this kind.
  assert.equal(decodeStagedPointer(new TextEncoder().encode("[3,1]")), null);
  assert.equal(decodeStagedPointer(new Uint8Array([0, 0, 0, 9])), null);
  assert.equal(decodeStagedPointer(new Uint8Array([2, 0])), null);
});

Deno.test("the versionstamp after another sorts right after it", () => {
  assert.equal(nextVersionstamp(""), "00000000000000000000");
  assert.equal(nextVersionstamp("0000000000000000ffff"), "00000000000000010000");
  assert.ok(nextVersionstamp("0000000000000007b100") > "0000000000000007b100");
});
