/**
 * Decoded Ed25519 public keys: strict point decoding checked against noble,
 * the small-order set, the prime-order subgroup, and private copies.
 */

import assert from "node:assert/strict";
import fc from "fast-check";
import { ed25519, ED25519_TORSION_SUBGROUP } from "@noble/curves/ed25519.js";
import { sha512 } from "@noble/hashes/sha2.js";
import { bytesToNumberLE, hexToBytes, numberToBytesLE } from "@noble/curves/utils.js";
import { hex as hexCodec } from "@scure/base";
import { type Ed25519Backend, Ed25519PublicKey, verifyEd25519 } from "../../src/crypto/ed25519.ts";
import { SMALL_ORDER_Y } from "../../src/crypto/_ed25519_encoding.ts";

const BACKENDS: readonly Ed25519Backend[] = ["node", "webcrypto", "noble"];
const { Point } = ed25519;
const L = Point.CURVE().n;
const P = Point.CURVE().p;
const utf8 = (s: string) => new TextEncoder().encode(s);
const hex = (bytes: Uint8Array) => hexCodec.encode(bytes);

const identityKey = new Uint8Array(32);
identityKey[0] = 1;

/** Noble's strict decoder, as the reference for point encodings. */
function nobleDecodes(bytes: Uint8Array): boolean {
  try {
    // zip215 false: RFC 8032 §5.1.3 strict decoding, the reference under test.
    Point.fromBytes(bytes, false);
    return true;
  } catch {
    return false;
  }
}

Deno.test("the small-order y set covers exactly the 8 points of order dividing 8", () => {
  assert.equal(SMALL_ORDER_Y.length, 5);
  const points = new Set<string>();
  for (const y of SMALL_ORDER_Y) {
    for (const sign of [0, 0x80]) {
      const encoding = y.slice();
      encoding[31] |= sign;
      if (!nobleDecodes(encoding)) continue;
      const point = Point.fromBytes(encoding, false);
      assert.equal(point.isSmallOrder(), true, hex(encoding));
      points.add(hex(point.toBytes()));
    }
  }
  // The curve has exactly 8 points of order dividing 8 (cofactor 8), so all are covered.
  assert.equal(points.size, 8);
  const expected = new Set(
    ED25519_TORSION_SUBGROUP.map((h) => hex(Point.fromHex(h, false).toBytes())),
  );
  assert.deepEqual(points, expected);
});

Deno.test("Ed25519PublicKey.isPoint agrees with noble's strict decoding", () => {
  const nearP = fc.tuple(fc.integer({ min: -40, max: 40 }), fc.boolean()).map(([delta, sign]) => {
    const y = (P + BigInt(delta) + (1n << 255n)) % (1n << 255n);
    const bytes = numberToBytesLE(y, 32);
    if (sign) bytes[31] |= 0x80;
    return bytes;
  });
  const small = fc.tuple(fc.integer({ min: 0, max: 40 }), fc.boolean()).map(([y, sign]) => {
    const bytes = numberToBytesLE(BigInt(y), 32);
    if (sign) bytes[31] |= 0x80;
    return bytes;
  });
  const onCurve = fc.bigInt({ min: 1n, max: L - 1n }).map((n) => Point.BASE.multiply(n).toBytes());
  const inputs = fc.oneof(fc.uint8Array({ minLength: 32, maxLength: 32 }), nearP, small, onCurve);
  let accepted = 0;
  fc.assert(
    fc.property(inputs, (bytes) => {
      const verdict = new Ed25519PublicKey(bytes).isPoint;
      if (verdict) accepted++;
      assert.equal(verdict, nobleDecodes(bytes), hex(bytes));
    }),
    { numRuns: 3000 },
  );
  assert.ok(accepted > 500 && accepted < 2900, `both verdicts exercised (${accepted} accepted)`);
  for (const h of ED25519_TORSION_SUBGROUP) {
    assert.equal(new Ed25519PublicKey(hexToBytes(h)).isPoint, true);
  }
  assert.throws(() => new Ed25519PublicKey(new Uint8Array(31)), TypeError);
  assert.throws(() => new Ed25519PublicKey(new Uint8Array(33)), TypeError);
  const negativeZero = identityKey.slice();
  negativeZero[31] |= 0x80; // x = 0 with the sign bit set
  assert.equal(new Ed25519PublicKey(negativeZero).isPoint, false);
});

Deno.test("Ed25519PublicKey knows small-order keys and keys outside the prime-order subgroup", () => {
  const a = bytesToNumberLE(sha512(utf8("prime order test"))) % L;
  const clean = new Ed25519PublicKey(Point.BASE.multiply(a).toBytes());
  assert.equal(clean.isSmallOrder, false);
  assert.equal(clean.isPrimeOrder, true);
  for (let t = 1; t < ED25519_TORSION_SUBGROUP.length; t++) {
    // zip215 false: the torsion listing consists of strict encodings.
    const torsion = Point.fromHex(ED25519_TORSION_SUBGROUP[t], false);
    const mixed = new Ed25519PublicKey(Point.BASE.multiply(a).add(torsion).toBytes());
    assert.equal(mixed.isPoint, true);
    assert.equal(mixed.isSmallOrder, false, `torsion ${t}`);
    assert.equal(mixed.isPrimeOrder, false, `torsion ${t}`);
    const small = new Ed25519PublicKey(torsion.toBytes());
    assert.equal(small.isSmallOrder, true, `torsion ${t}`);
    assert.equal(small.isPrimeOrder, false, `torsion ${t}`);
  }
  const offCurve = new Ed25519PublicKey(negativeZeroKey());
  assert.equal(offCurve.isPoint, false);
  assert.equal(offCurve.isPrimeOrder, false);
});

Deno.test("a key object is a private copy: changing the caller's bytes changes nothing", async () => {
  const secret = sha512(utf8("copy test")).subarray(0, 32);
  const bytes = ed25519.getPublicKey(secret);
  const key = new Ed25519PublicKey(bytes);
  const message = utf8("m");
  const signature = ed25519.sign(message, secret);
  bytes[0] ^= 1;
  for (const backend of BACKENDS) {
    assert.equal(await verifyEd25519(key, message, signature, { backend }), true, backend);
  }
});

function negativeZeroKey(): Uint8Array {
  const bytes = identityKey.slice();
  bytes[31] |= 0x80; // x = 0 with the sign bit set
  return bytes;
}
