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
import { TYPICAL_POLICY, TYPICAL_SIGNER, typicalRequest } from "./_typical_request.ts";

const body = new TextEncoder().encode(
  JSON.stringify(typicalRequest("7c0e2f5e-1f1a-4d7e-9a43-3c2b1d0e9f88")),
);

const events: StoredEvent[] = Array.from({ length: 32 }, (_, i) => {
  const intent: StoredIntent = {
    id: crypto.randomUUID(),
    variant: "B",
    refId: TYPICAL_POLICY,
    authorship: { kind: "Ed25519", signers: [TYPICAL_SIGNER] },
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
