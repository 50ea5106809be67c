/**
 * The prime-order subgroup check of a fresh Ed25519 key (a Multisig signer,
 * docs/interface.md §4), by the ways noble offers, against what decoding and
 * verifying the key cost: `deno bench -A bench/subgroup_bench.ts`. Each
 * iteration takes a key not seen before, as an attacker's fresh keys are.
 */

import { ed25519 } from "@noble/curves/ed25519.js";
import { Ed25519PublicKey, verifyEd25519 } from "../src/crypto/ed25519.ts";

const Point = ed25519.Point;
const L = Point.CURVE().n;
const COUNT = 512;
const message = new TextEncoder().encode('{"id":"order-1","policy_id":"p"}');
const secrets = Array.from({ length: COUNT }, () => ed25519.utils.randomSecretKey());
const keys = secrets.map((s) => ed25519.getPublicKey(s));
const signatures = secrets.map((s) => ed25519.sign(message, s));
let next = 0;
const fresh = () => next++ % COUNT;

Deno.bench("decode: the key object (point check)", { group: "key" }, () => {
  new Ed25519PublicKey(keys[fresh()]);
});

Deno.bench("verify a signature (fresh key, default backend)", { group: "key" }, async () => {
  const i = fresh();
  await verifyEd25519(new Ed25519PublicKey(keys[i]), message, signatures[i]);
});

Deno.bench("subgroup: isTorsionFree() (wNAF of L, width 4)", {
  group: "subgroup",
  baseline: true,
}, () => {
  Point.fromBytes(keys[fresh()], false).isTorsionFree();
});

Deno.bench("subgroup: multiplyUnsafe(L - 1) + A", { group: "subgroup" }, () => {
  const a = Point.fromBytes(keys[fresh()], false);
  a.multiplyUnsafe(L - 1n).add(a).is0();
});

Deno.bench("subgroup: precompute(8), then multiplyUnsafe(L - 1) + A", { group: "subgroup" }, () => {
  const a = Point.fromBytes(keys[fresh()], false);
  a.precompute(8, false);
  a.multiplyUnsafe(L - 1n).add(a).is0();
});

Deno.bench("subgroup: the key object's isPrimeOrder (as the service checks)", {
  group: "subgroup",
}, () => {
  new Ed25519PublicKey(keys[fresh()]).isPrimeOrder;
});
