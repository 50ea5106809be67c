/**
 * Byte-level checks of Ed25519 encodings (RFC 8032 §5.1.2–§5.1.3, §5.1.7),
 * written without noble's point decoder so that the Web Crypto path and the
 * noble path of the verifier are checked independently against each other.
 * Field and group constants come from noble's curve parameters.
 * @module
 */

import { ed25519, ED25519_TORSION_SUBGROUP } from "@noble/curves/ed25519.js";
import { bytesToNumberLE, numberToBytesLE } from "@noble/curves/utils.js";

const CURVE = ed25519.Point.CURVE();
const Fp = ed25519.Point.Fp;
const P = CURVE.p;
const D = CURVE.d;

/** The prime p = 2^255 − 19, little-endian. */
const P_LE = numberToBytesLE(P, 32);
/** The group order L = 2^252 + 27742317777372353535851937790883648493, little-endian. */
const L_LE = numberToBytesLE(CURVE.n, 32);

/**
 * The sign-masked y of the 8 points of order dividing 8. A point with a
 * canonical encoding has small order exactly when its y is one of these: the
 * set is closed under negation (x → −x), which only flips the sign bit. Derived
 * from noble's listing of the torsion subgroup, re-encoded canonically.
 */
export const SMALL_ORDER_Y: readonly Uint8Array[] = (() => {
  const seen = new Map<string, Uint8Array>();
  for (const hex of ED25519_TORSION_SUBGROUP) {
    // zip215 false: the listing must consist of strict RFC 8032 encodings.
    const y = ed25519.Point.fromHex(hex, false).toBytes();
    y[31] &= 0x7f;
    seen.set(y.join(","), y);
  }
  return [...seen.values()];
})();

/** `a[offset..offset+32)` < `bound`, both little-endian, with bit 255 of `a` cleared when `maskSign`. */
function lessThanLE(a: Uint8Array, offset: number, bound: Uint8Array, maskSign: boolean): boolean {
  for (let i = 31; i >= 0; i--) {
    const byte = i === 31 && maskSign ? a[offset + i] & 0x7f : a[offset + i];
    if (byte !== bound[i]) return byte < bound[i];
  }
  return false;
}

/** True when the scalar S in `signature[32..64)` is below L (RFC 8032 §5.1.7 step 1). */
export function isCanonicalS(signature: Uint8Array): boolean {
  return lessThanLE(signature, 32, L_LE, false);
}

/** True when the y of the point encoded at `bytes[offset..offset+32)` is below p. */
export function hasCanonicalY(bytes: Uint8Array, offset = 0): boolean {
  return lessThanLE(bytes, offset, P_LE, true);
}

/**
 * True when the encoding at `bytes[offset..offset+32)` has the y of a point of
 * order dividing 8. Only meaningful for encodings with canonical y.
 */
export function hasSmallOrderY(bytes: Uint8Array, offset = 0): boolean {
  outer: for (const y of SMALL_ORDER_Y) {
    for (let i = 0; i < 31; i++) {
      if (bytes[offset + i] !== y[i]) continue outer;
    }
    if ((bytes[offset + 31] & 0x7f) === y[31]) return true;
  }
  return false;
}

/**
 * True when `bytes` is a strict RFC 8032 §5.1.3 encoding of a curve point:
 * 32 bytes, y < p, x² = (y² − 1)/(d·y² + 1) has a root, and not x = 0 with the
 * sign bit set. Small-order points are accepted.
 */
export function isPointEncoding(bytes: Uint8Array): boolean {
  if (!(bytes instanceof Uint8Array) || bytes.length !== 32 || !hasCanonicalY(bytes)) return false;
  const sign = (bytes[31] & 0x80) !== 0;
  const masked = bytes.slice();
  masked[31] &= 0x7f;
  const y = bytesToNumberLE(masked);
  const y2 = Fp.sqr(y);
  const u = Fp.sub(y2, 1n);
  const v = Fp.add(Fp.mul(D, y2), 1n); // never 0: d is not a square mod p
  // x = 0 is the only root of x² = 0; RFC 8032 §5.1.3 step 4 rejects it with the sign bit set.
  if (u === 0n) return !sign;
  // u/v is a square exactly when u·v is (Euler's criterion; v ≠ 0).
  return Fp.pow(Fp.mul(u, v), (P - 1n) / 2n) === 1n;
}
