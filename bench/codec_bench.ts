/**
 * What writing values as bytes costs against the V8 serialization Deno KV
 * applies to a JavaScript value: a block of 32 accepted intents (about 600
 * bytes of body each), encoded and decoded, per block. `node:v8`'s
 * `serialize` is the same V8 value serializer Deno KV uses for a non-byte
 * value.
 *
 * ```sh
 * deno bench -A bench/codec_bench.ts
 * ```
 */

import { deserialize, serialize } from "node:v8";
import type { StoredIntent } from "../src/domain/intent.ts";
import { decodeBlock, type StoredEvent } from "../src/storage/codec.ts";
import { encodeBlock } from "../tools/store_upgrade/earlier_layouts.ts";

const body = new TextEncoder().encode(JSON.stringify({
  authorship: {
    Signed: {
      Ed25519: {
        pub_key: "8Fk1nYtQx2yqSgdzv1Q5Xc3iYsT3B1v9oTQ7cq8mJ1Lb",
        signature: "4".repeat(88),
      },
    },
  },
  intent: {
    id: "7c0e2f5e-1f1a-4d7e-9a43-3c2b1d0e9f88",
    policy_id: "6HfDFDHLuS37kEwwzDq39utSWPkKriY1GkFC184uYXB",
    attrs: { fields: { amount: "1250.00", currency: "EUR", reference: "invoice 2025-0042" } },
  },
}));

const events: StoredEvent[] = Array.from({ length: 32 }, (_, i) => {
  const intent: StoredIntent = {
    id: crypto.randomUUID(),
    variant: "B",
    refId: "6HfDFDHLuS37kEwwzDq39utSWPkKriY1GkFC184uYXB",
    authorship: { kind: "Ed25519", signers: ["8Fk1nYtQx2yqSgdzv1Q5Xc3iYsT3B1v9oTQ7cq8mJ1Lb"] },
    body: body.slice(),
    receivedAt: new Date().toISOString(),
    position: 1_000_000 + i,
    state: "accepted",
  };
  return { type: "intent.accepted", intent };
});
const asBytes = encodeBlock(events);
const asV8 = serialize(events);

Deno.bench({ name: "bytes: encode a block of 32", group: "encode", baseline: true }, () => {
  encodeBlock(events);
});
Deno.bench({ name: "V8: serialize a block of 32", group: "encode" }, () => {
  serialize(events);
});
Deno.bench({ name: "bytes: decode a block of 32", group: "decode", baseline: true }, () => {
  decodeBlock(asBytes);
});
Deno.bench({ name: "V8: deserialize a block of 32", group: "decode" }, () => {
  deserialize(asV8);
});
console.log(`block of 32: ${asBytes.byteLength} bytes as bytes, ${asV8.byteLength} as V8`);
